//! The index page over a `lanes batch` output folder: every `telemetry.jsonl` under it gets its
//! drive report (`report.html` beside it), and the index lists the drives in a table sortable
//! by each column (a few lines of inline JavaScript), each row linking to its report. When the
//! folder's `summary.json` names an input video that exists, the report has thumbnails.

use super::{esc, read_warning, relative_href, write_drive_report, ReportOptions, STYLE};
use crate::base::atomic::write_atomic;
use crate::base::config::EventsConfig;
use crate::base::error::{Error, Result};
use crate::base::summary::{DriveMedians, DriveStats, MeasureSeries};
use crate::base::telemetry;
use crate::drive::events;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The file name `lanes batch` writes per video, looked for under the folder.
pub const TELEMETRY_NAME: &str = "telemetry.jsonl";
/// The per-video summary `lanes batch` writes; its `input.path` names the video.
pub const SUMMARY_NAME: &str = "summary.json";
/// The drive report written beside each telemetry file.
pub const REPORT_NAME: &str = "report.html";

/// One drive of the batch: its folder (relative to the batch folder) and what came of it.
#[derive(Debug)]
pub struct DriveOutcome {
    pub rel: String,
    pub report: Option<PathBuf>,
    pub stats: Option<DriveStats>,
    pub counts: Vec<usize>,
    /// Medians of radius, lane width and offset over the frames with a lane.
    pub medians: Option<DriveMedians>,
    /// The note of the drive's `summary.json` (`lanes batch`: the geometry found in the
    /// video, a quad reaching outside the frames).
    pub note: Option<String>,
    /// The error that stopped this drive's report (counted, the others go on).
    pub error: Option<String>,
    pub warnings: Vec<String>,
}

/// What `write_batch` did.
#[derive(Debug)]
pub struct BatchOutcome {
    pub drives: Vec<DriveOutcome>,
    /// Totals over the drives that have a report (`DriveStats::merge`).
    pub total: DriveStats,
}

impl BatchOutcome {
    pub fn failed(&self) -> usize {
        self.drives.iter().filter(|d| d.error.is_some()).count()
    }
}

/// Every `telemetry.jsonl` under `dir` (recursively), sorted by path.
pub fn find_telemetry(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| Error::Io {
            path: d.clone(),
            message: e.to_string(),
        })?;
        for entry in rd.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == TELEMETRY_NAME) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The input video named in a drive folder's `summary.json` (`input.path`, as `lanes batch`
/// writes it), when that file exists.
pub fn source_video(folder: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(folder.join(SUMMARY_NAME)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let p = PathBuf::from(v.get("input")?.get("path")?.as_str()?);
    p.is_file().then_some(p)
}

/// The note in a drive folder's `summary.json`, when there is one.
pub fn summary_note(folder: &Path) -> Option<String> {
    let text = std::fs::read_to_string(folder.join(SUMMARY_NAME)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(v.get("note")?.as_str()?.to_string()).filter(|n| !n.is_empty())
}

/// Write a report beside every telemetry file under `dir` and the index page to `out`. A
/// drive whose telemetry cannot be read is counted (its row says why); an empty folder is an
/// error.
pub fn write_batch(
    dir: &Path,
    out: &Path,
    cfg: &EventsConfig,
    thumbnails: usize,
) -> Result<BatchOutcome> {
    let files = find_telemetry(dir)?;
    let batch_failures = failures_in_batch_json(dir);
    if files.is_empty() && batch_failures.is_empty() {
        return Err(Error::Io {
            path: dir.to_path_buf(),
            message: format!("no {TELEMETRY_NAME} under this folder (expected a `lanes batch` output folder or a telemetry file)"),
        });
    }
    let mut drives = Vec::new();
    let mut total = DriveStats::default();
    for f in files {
        let folder = f.parent().unwrap_or(dir).to_path_buf();
        let rel = folder
            .strip_prefix(dir)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let rel = if rel.is_empty() { ".".to_string() } else { rel };
        let mut d = DriveOutcome {
            rel: rel.clone(),
            report: None,
            stats: None,
            counts: Vec::new(),
            medians: None,
            note: summary_note(&folder),
            error: None,
            warnings: Vec::new(),
        };
        let result = telemetry::read_jsonl(&f).and_then(|(records, w)| {
            let mut warnings: Vec<String> =
                read_warning(&f, &w, records.len()).into_iter().collect();
            let mut opts = ReportOptions {
                title: rel.clone(),
                video: source_video(&folder).filter(|_| thumbnails > 0),
                thumbnails,
                warnings: warnings.clone(),
                check_frame_count: false,
                player: None,
                geometry: d.note.clone(),
            };
            let path = folder.join(REPORT_NAME);
            // The drive's overlay (or diagnostic) video, when the batch wrote one, linked
            // beside; else (`--render none`) its input video, as `lanes video --no-render
            // --report` links it.
            let written = ["overlay.mp4", "diagnostic.mp4"]
                .iter()
                .map(|n| folder.join(n))
                .find(|p| p.is_file());
            opts.player = match written {
                Some(v) => super::Player::new(&v, &path, false, 0.0).ok(),
                // An input browsers cannot play is left out: no player rather than a warning.
                None => source_video(&folder)
                    .and_then(|v| super::Player::new(&v, &path, false, 0.0).ok())
                    .filter(|p| p.warning.is_none()),
            };
            let r = match write_drive_report(&records, cfg, &opts, &path) {
                Ok(r) => r,
                Err(e) if opts.video.is_some() => {
                    // The video named in summary.json is unreadable: a report without thumbnails.
                    warnings.push(format!("no thumbnails: {e}"));
                    opts.video = None;
                    opts.warnings = warnings.clone();
                    write_drive_report(&records, cfg, &opts, &path)?
                }
                Err(e) => return Err(e),
            };
            warnings.extend(r.warnings.iter().skip(opts.warnings.len()).cloned());
            let mut m = MeasureSeries::default();
            records.iter().for_each(|rec| m.add(rec));
            Ok((r, path, warnings, m.medians()))
        });
        match result {
            Ok((r, path, warnings, medians)) => {
                d.medians = Some(medians);
                total.merge(&r.stats);
                d.counts = events::count_by_kind(&r.events)
                    .iter()
                    .map(|c| c.1)
                    .collect();
                d.stats = Some(r.stats);
                d.report = Some(path);
                d.warnings = warnings;
            }
            Err(e) => d.error = Some(e.to_string()),
        }
        drives.push(d);
    }
    // Videos `lanes batch` could not process (no telemetry: an empty or unreadable file), and
    // those it stopped (a truncated input, whose telemetry has a report): listed as failed.
    for (rel, error) in batch_failures {
        match drives.iter_mut().find(|d| d.rel == rel) {
            Some(d) => d
                .warnings
                .insert(0, format!("lanes batch: failed: {error}")),
            None => drives.push(DriveOutcome {
                rel,
                report: None,
                stats: None,
                counts: Vec::new(),
                medians: None,
                note: None,
                error: Some(error),
                warnings: Vec::new(),
            }),
        }
    }
    let outcome = BatchOutcome { drives, total };
    let html = index_html(dir, out, &outcome);
    write_atomic(out, html.as_bytes())?;
    Ok(outcome)
}

/// The videos `lanes batch` recorded as failed or interrupted in `dir`'s `batch.json`: each
/// one's output folder (relative to `dir`) and its error; none without such a file.
fn failures_in_batch_json(dir: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(dir.join("batch.json")) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    let videos = v.get("videos").and_then(|x| x.as_array());
    videos
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let status = e.get("status")?.as_str()?;
            if status != "failed" && status != "interrupted" {
                return None;
            }
            let rel = e.get("path")?.as_str()?.to_string();
            let error = e
                .get("error")
                .and_then(|x| x.as_str())
                .unwrap_or(status)
                .to_string();
            Some((rel, error))
        })
        .collect()
}

const SORT_JS: &str = "document.querySelectorAll('table.index th').forEach(function(th,i){th.style.cursor='pointer';th.addEventListener('click',function(){var tb=th.closest('table').tBodies[0];var rows=Array.prototype.slice.call(tb.rows);var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';rows.sort(function(a,b){var x=a.cells[i].dataset.v,y=b.cells[i].dataset.v;var nx=parseFloat(x),ny=parseFloat(y);var c=(isNaN(nx)||isNaN(ny))?x.localeCompare(y):nx-ny;return asc?c:-c;});rows.forEach(function(r){tb.appendChild(r);});});});";

fn index_html(dir: &Path, out: &Path, o: &BatchOutcome) -> String {
    let out_dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut h = String::new();
    let title = esc(&dir.display().to_string());
    let t = &o.total;
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lanes report: {title}</title><style>{STYLE}</style></head><body>\n<h1>lanes report: {title}</h1>\n<p>{} drives ({} failed), {} frames, {:.1} s; frames with a lane {:.1}%, no lane detected {:.1}%. Click a column to sort.</p>\n",
        o.drives.len(),
        o.failed(),
        t.frames,
        t.duration_s,
        100.0 * t.lane_share(),
        100.0 * t.search_failed_share()
    );
    h.push_str("<table class=\"index\"><thead><tr><th>drive</th><th>frames</th><th>duration (s)</th><th>lane %</th><th>no lane detected %</th><th>|offset| mean (m)</th><th>|offset| max (m)</th><th>radius median (m)</th><th>lane width median (m)</th><th>offset median (m)</th><th>confidence</th>");
    for k in events::KINDS {
        let _ = write!(h, "<th>{k}</th>");
    }
    h.push_str("<th>notes</th></tr></thead><tbody>\n");
    for d in &o.drives {
        let name = esc(&d.rel);
        let link = match &d.report {
            Some(p) => format!(
                "<a href=\"{}\">{name}</a>",
                esc(&relative_href(&out_dir, p))
            ),
            None => name.clone(),
        };
        let _ = write!(h, "<tr><td data-v=\"{name}\">{link}</td>");
        let cell = |h: &mut String, v: Option<f64>, digits: usize| {
            let _ = match v {
                Some(v) => write!(h, "<td data-v=\"{v}\">{v:.digits$}</td>"),
                None => write!(h, "<td data-v=\"-1e300\">-</td>"),
            };
        };
        let s = d.stats.as_ref();
        cell(&mut h, s.map(|s| s.frames as f64), 0);
        cell(&mut h, s.map(|s| s.duration_s), 1);
        cell(&mut h, s.map(|s| 100.0 * s.lane_share()), 1);
        cell(&mut h, s.map(|s| 100.0 * s.search_failed_share()), 1);
        cell(&mut h, s.and_then(|s| s.offset_abs_mean_m()), 2);
        cell(&mut h, s.map(|s| s.offset_abs_max_m), 2);
        let m = d.medians.as_ref();
        cell(&mut h, m.and_then(|m| m.radius_median_m), 0);
        cell(&mut h, m.and_then(|m| m.lane_width_median_m), 2);
        cell(&mut h, m.and_then(|m| m.offset_median_m), 2);
        cell(&mut h, s.map(|s| s.mean_confidence()), 2);
        for k in 0..events::KINDS.len() {
            cell(&mut h, d.counts.get(k).map(|n| *n as f64), 0);
        }
        let mut notes: Vec<String> = d.note.iter().map(|n| esc(n)).collect();
        match &d.error {
            Some(e) => notes.push(format!("<span class=\"warn\">{}</span>", esc(e))),
            None => notes.extend(d.warnings.iter().map(|w| esc(w))),
        }
        let _ = writeln!(
            h,
            "<td data-v=\"{}\">{}</td></tr>",
            notes.len(),
            notes.join("<br>")
        );
    }
    let _ = write!(
        h,
        "</tbody></table>\n<script>{SORT_JS}</script>\n</body></html>\n"
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_are_relative_and_escaped() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("out");
        let b = d.path().join("batch").join("my drive#1");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        assert_eq!(
            relative_href(&a, &b.join("report.html")),
            "../batch/my%20drive%231/report.html"
        );
        assert_eq!(relative_href(d.path(), &a), "out");
    }
}
