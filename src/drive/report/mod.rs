//! `lanes report`: one self-contained HTML page per drive (header statistics, plots against
//! time, event markers, the event table with thumbnails) and an index page over a batch output
//! folder. No external resources: plots are inline SVG (`plots.rs`, drawn with `plotters`),
//! thumbnails are JPEG `data:` URIs (`thumbs.rs`), the index's sorting is a few lines of
//! inline JavaScript (`index.rs`). The drive's video is a `<video>` element linked relative to
//! the page (or embedded as a `data:` URI), and clicking an event row seeks it to the event.
//! Pages are written atomically (temp name + rename).

pub mod index;
pub mod plots;
pub mod thumbs;

use crate::base::config::EventsConfig;
use crate::base::error::Result;
use crate::base::summary::DriveStats;
use crate::base::telemetry::{FrameRecord, ReadWarnings};
use crate::drive::events::{self, Detail, Event};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// What a drive report is made of besides the records.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Page title (the telemetry or video name).
    pub title: String,
    /// The video the telemetry came from (original or overlay), for thumbnails.
    pub video: Option<PathBuf>,
    /// At most this many thumbnails (the first events in time). 0 = none.
    pub thumbnails: usize,
    /// Warnings met while reading (shown on the page).
    pub warnings: Vec<String>,
    /// Warn when the video's frame count differs from the telemetry's (off for `lanes video
    /// --report`, whose telemetry comes from the video itself, `--start`/`--frames` included).
    pub check_frame_count: bool,
    /// The drive's video shown in the page (`<video>`; clicking an event row seeks to it).
    pub player: Option<Player>,
    /// Where the drive's road geometry came from: the line `lanes video` printed when it found
    /// it in the video (how sure, the camera's height, pitch and yaw, the scales), or the
    /// config's.
    pub geometry: Option<String>,
}

/// A video shown in a report page.
#[derive(Debug, Clone)]
pub struct Player {
    /// The `src` of the `<video>` element: a link relative to the page, or a `data:` URI.
    pub src: String,
    /// The telemetry time (s) at which the video starts: event times minus this are the
    /// video's own times (an overlay written from `--start N` starts at frame N's time).
    pub starts_at_s: f64,
    /// A warning for the page when browsers cannot play the video's codec.
    pub warning: Option<String>,
}

/// Video codecs that browsers play in MP4.
const BROWSER_CODECS: [&str; 4] = ["h264", "vp9", "av1", "vp8"];

impl Player {
    /// Show `video` in the page written to `page`: linked relative to the page's folder, or
    /// embedded whole as a `data:` URI (`embed`; the page then stands alone, at the video's
    /// size and a third more).
    pub fn new(video: &Path, page: &Path, embed: bool, starts_at_s: f64) -> Result<Self> {
        let codec = crate::video::VideoSource::open(video)?.codec_name;
        let warning = (!BROWSER_CODECS.contains(&codec.as_str())).then(|| {
            format!(
                "{}: warning: the video is {codec}, which browsers do not play (`lanes video` writes H.264 unless --codec mpeg4)",
                video.display()
            )
        });
        let src = if embed {
            let bytes = std::fs::read(video).map_err(|e| crate::base::error::Error::Io {
                path: video.to_path_buf(),
                message: e.to_string(),
            })?;
            use base64::Engine;
            format!(
                "data:video/mp4;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(bytes)
            )
        } else {
            let dir = page
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            relative_href(dir, video)
        };
        Ok(Self {
            src,
            starts_at_s,
            warning,
        })
    }
}

/// A finished page and what was counted on the way.
#[derive(Debug)]
pub struct Report {
    pub html: String,
    pub events: Vec<Event>,
    pub stats: DriveStats,
    pub thumbnails: usize,
    /// Warnings (bad lines, a video that does not match): also on the page.
    pub warnings: Vec<String>,
}

/// One warning line for what `telemetry::read_jsonl` skipped (`None` when nothing was).
pub fn read_warning(path: &Path, w: &ReadWarnings, used: usize) -> Option<String> {
    if w.is_empty() {
        return None;
    }
    let first: Vec<String> = w.bad_lines.iter().take(3).map(|n| n.to_string()).collect();
    let more = if w.bad_lines.len() > 3 { ", ..." } else { "" };
    let lines = if first.is_empty() {
        String::new()
    } else {
        format!(" (line {}{more})", first.join(", "))
    };
    Some(format!(
        "{}: warning: {} lines did not parse{lines}, {} records out of frame order dropped; {used} records used",
        path.display(),
        w.bad_lines.len(),
        w.out_of_order
    ))
}

/// `to` relative to the directory `from`, with `/` separators, for an `href`.
pub fn relative_href(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (abs(from), abs(to));
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); f.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().to_string()),
    );
    parts
        .join("/")
        .replace('%', "%25")
        .replace(' ', "%20")
        .replace('#', "%23")
        .replace('?', "%3F")
}

/// Escape text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The frame a thumbnail shows: the warning's first frame for a departure, else the middle.
pub fn thumb_frame(e: &Event) -> usize {
    match e.detail {
        Detail::LaneDeparture { .. } => e.start_frame,
        _ => e.start_frame + (e.end_frame - e.start_frame) / 2,
    }
}

/// Hex colour of an event kind.
fn css(c: plotters::style::RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

pub(crate) const STYLE: &str =
    "body{font-family:sans-serif;margin:16px;color:#222;max-width:1140px}\
h1{font-size:20px}h2{font-size:16px;margin-top:22px}table{border-collapse:collapse}\
td,th{border:1px solid #ccc;padding:3px 7px;font-size:13px;text-align:left;vertical-align:top}\
th{background:#f2f2f2}.stats td:first-child{color:#555}.plot svg{display:block;margin:4px 0}\
.kind{display:inline-block;width:10px;height:10px;margin-right:5px}.warn{color:#a40}\
img.thumb{width:240px;display:block}video.drive{width:960px;max-width:100%;background:#000}\
tr[data-t]{cursor:pointer}tr[data-t]:hover{background:#eef}";

/// Clicking an event row seeks the drive's video to the row's time (`data-t`, seconds).
const SEEK_SCRIPT: &str = "<script>document.querySelectorAll('tr[data-t]').forEach(function(r){\
r.addEventListener('click',function(){var v=document.getElementById('drive');if(!v)return;\
v.currentTime=parseFloat(r.dataset.t);v.scrollIntoView({block:'nearest'});});});</script>\n";

/// Build a drive's report page.
pub fn drive_report(
    records: &[FrameRecord],
    cfg: &EventsConfig,
    opts: &ReportOptions,
) -> Result<Report> {
    let fps = events::fps_of(records, 25.0);
    let evs = events::detect(records, fps, cfg);
    let stats = DriveStats::of(records);
    let mut warnings = opts.warnings.clone();
    let mut thumbs = thumbs::Thumbnails::default();
    if let Some(video) = &opts.video {
        let frames: Vec<usize> = evs.iter().take(opts.thumbnails).map(thumb_frame).collect();
        let last = records.last().map_or(0, |r| r.frame);
        thumbs = thumbs::read(video, &frames, opts.check_frame_count.then_some(last))?;
        warnings.extend(thumbs.warnings.iter().cloned());
    }
    let tl = plots::Timeline::new(records, &evs, fps, cfg.car_width_m);
    let mut svgs = vec![
        plots::event_strip(&tl)?,
        plots::offset(&tl)?,
        plots::curvature(&tl)?,
        plots::lane_width(&tl)?,
    ];
    svgs.extend(plots::pitch(&tl)?);
    svgs.push(plots::status(&tl)?);
    svgs.push(plots::search(&tl)?);
    let mut h = String::with_capacity(svgs.iter().map(|s| s.len()).sum::<usize>() + 20_000);
    let title = esc(&opts.title);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lanes report: {title}</title><style>{STYLE}</style></head><body>\n<h1>lanes report: {title}</h1>\n"
    );
    if let Some(w) = opts.player.as_ref().and_then(|p| p.warning.clone()) {
        warnings.push(w);
    }
    for w in &warnings {
        let _ = writeln!(h, "<p class=\"warn\">{}</p>", esc(w));
    }
    if let Some(p) = &opts.player {
        let _ = writeln!(
            h,
            "<video id=\"drive\" class=\"drive\" controls preload=\"metadata\" src=\"{}\"></video>\n<p style=\"color:#777;font-size:12px\">Click an event below to see it in the video.</p>",
            esc(&p.src)
        );
    }
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    let counts = events::count_by_kind(&evs);
    let by_kind: Vec<String> = counts
        .iter()
        .map(|(k, n)| {
            format!(
                "<span class=\"kind\" style=\"background:{}\"></span>{k}: {n}",
                css(plots::kind_colour(k))
            )
        })
        .collect();
    let rows: [(&str, String); 9] = [
        (
            "road geometry",
            opts.geometry
                .as_deref()
                .map_or_else(|| "not recorded".into(), esc),
        ),
        (
            "duration",
            format!(
                "{:.2} s ({} frames at {fps:.2} fps)",
                stats.duration_s, stats.frames
            ),
        ),
        (
            "frames with a lane",
            format!(
                "{} (both lines {}, one line {}, predicted {}, none {})",
                pct(stats.lane_share()),
                stats.both,
                stats.left_only + stats.right_only,
                stats.predicted,
                stats.none
            ),
        ),
        (
            // `lanes video` counts these two apart ("N search failed, M rejected by tracking").
            "no lane detected",
            format!(
                "{} ({} frames: the search found no lane, or tracking rejected it)",
                pct(stats.search_failed_share()),
                stats.search_failed
            ),
        ),
        (
            "offset |mean| / max",
            match stats.offset_abs_mean_m() {
                Some(m) => format!("{m:.2} m / {:.2} m", stats.offset_abs_max_m),
                None => "-".into(),
            },
        ),
        ("mean confidence", format!("{:.2}", stats.mean_confidence())),
        (
            "events",
            format!("{}: {}", evs.len(), by_kind.join(" &nbsp; ")),
        ),
        ("car width", format!("{:.2} m", cfg.car_width_m)),
        (
            "thumbnails",
            match &opts.video {
                Some(v) => format!(
                    "{} from {}",
                    thumbs.by_frame.len(),
                    esc(&v.display().to_string())
                ),
                None => "none (no --video)".into(),
            },
        ),
    ];
    h.push_str("<table class=\"stats\">\n");
    for (k, v) in rows {
        let _ = writeln!(h, "<tr><td>{k}</td><td>{v}</td></tr>");
    }
    h.push_str("</table>\n<h2>Plots</h2>\n");
    for s in &svgs {
        let _ = writeln!(h, "<div class=\"plot\">{s}</div>");
    }
    h.push_str("<h2>Events</h2>\n");
    if evs.is_empty() {
        h.push_str("<p>No events.</p>\n");
    } else {
        h.push_str("<table class=\"events\"><tr><th>#</th><th>kind</th><th>start (s)</th><th>end (s)</th><th>frames</th><th>details</th><th>frame</th></tr>\n");
        for (i, e) in evs.iter().enumerate() {
            let tf = thumb_frame(e);
            let img = match thumbs.by_frame.get(&tf) {
                Some(uri) => format!(
                    "<img class=\"thumb\" alt=\"frame {tf}\" src=\"{uri}\">frame {tf}, {:.2} s",
                    records
                        .iter()
                        .find(|r| r.frame == tf)
                        .map_or(tf as f64 / fps, |r| r.time_s)
                ),
                None => "-".into(),
            };
            let desc = e.describe();
            let details = desc.split_once(e.kind()).map_or("", |(_, d)| d.trim());
            let seek = match &opts.player {
                Some(p) => format!(
                    " data-t=\"{:.3}\" title=\"show in the video\"",
                    (e.start_s - p.starts_at_s).max(0.0)
                ),
                None => String::new(),
            };
            let _ = writeln!(
                h,
                "<tr{seek}><td>{}</td><td><span class=\"kind\" style=\"background:{}\"></span>{}</td><td>{:.2}</td><td>{:.2}</td><td>{}-{}</td><td>{}</td><td>{img}</td></tr>",
                i + 1,
                css(plots::kind_colour(e.kind())),
                e.kind(),
                e.start_s,
                e.end_s,
                e.start_frame,
                e.end_frame,
                esc(details)
            );
        }
        h.push_str("</table>\n");
    }
    if opts.player.is_some() {
        h.push_str(SEEK_SCRIPT);
    }
    h.push_str("<p style=\"color:#777;font-size:12px\">Made by <code>lanes report</code>. Offsets are positive right of the lane centre; curvature is positive for bends to the left. Event definitions: docs/report.md.</p>\n</body></html>\n");
    Ok(Report {
        html: h,
        thumbnails: thumbs.by_frame.len(),
        events: evs,
        stats,
        warnings,
    })
}

/// Build a drive's report and write it to `out` atomically.
pub fn write_drive_report(
    records: &[FrameRecord],
    cfg: &EventsConfig,
    opts: &ReportOptions,
    out: &Path,
) -> Result<Report> {
    let r = drive_report(records, cfg, opts)?;
    crate::base::atomic::write_atomic(out, r.html.as_bytes())?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(frame: usize, offset: Option<f64>) -> FrameRecord {
        let mut r = FrameRecord::sample(frame, offset, 900.0);
        if frame.is_multiple_of(50) {
            r.search = "sliding".into();
        }
        r
    }

    #[test]
    fn page_has_stats_six_plots_and_a_row_per_event() {
        // 20 frames lost (0.8 s), then a drift over the right line for 0.6 s.
        let rs: Vec<FrameRecord> = (0..200)
            .map(|f| match f {
                40..=59 => rec(f, None),
                120..=134 => rec(f, Some(1.2)),
                _ => rec(f, Some(0.1)),
            })
            .collect();
        let opts = ReportOptions {
            title: "drive <1> & co".into(),
            warnings: vec!["t.jsonl: warning: 1 lines did not parse".into()],
            ..Default::default()
        };
        let r = drive_report(&rs, &EventsConfig::default(), &opts).unwrap();
        let kinds: Vec<&str> = r.events.iter().map(|e| e.kind()).collect();
        assert_eq!(kinds, vec!["lane_lost", "lane_departure"]);
        assert_eq!(r.stats.none, 20);
        let h = &r.html;
        assert!(h.contains("lanes report: drive &lt;1&gt; &amp; co"));
        assert!(h.contains("<p class=\"warn\">t.jsonl: warning: 1 lines did not parse</p>"));
        assert!(
            h.contains("<td>frames with a lane</td><td>90.0%"),
            "lane share"
        );
        assert_eq!(h.matches("<svg").count(), 6);
        assert!(h.matches("<polyline").count() >= 6);
        // Nine summary rows, the first where the geometry came from (unknown here).
        assert!(h.contains("<tr><td>road geometry</td><td>not recorded</td></tr>"));
        assert_eq!(
            h.matches("<tr><td>").count() - 9,
            2,
            "one table row per event"
        );
        assert!(!h.contains("<img"), "no thumbnails without a video");
    }
}
