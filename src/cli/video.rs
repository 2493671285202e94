//! `lanes video`: overlay or diagnostic video, telemetry, progress and a one-line summary.

use super::common::load_camera;
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lanes::base::telemetry;
use lanes::drive::outputs::DriveOutputs;
use lanes::video::{self, RenderMode, VideoJob};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args)]
pub struct VideoArgs {
    /// Camera file (OpenCV YAML from `lanes calibrate`); without it frames are not undistorted.
    #[arg(long, value_name = "FILE")]
    pub camera: Option<PathBuf>,
    /// Configuration TOML (see `lanes config --print-default`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Input video (any container and codec FFmpeg reads).
    pub input: PathBuf,
    /// More inputs (a shell's `*.mp4`): refused with the command that takes several.
    #[arg(hide = true)]
    pub more: Vec<PathBuf>,
    /// Output video (same size, frame rate and frame count as the input, its audio and subtitle
    /// tracks copied); the container follows the name (.mp4, .mkv, .mov, .avi, .ts). Not needed
    /// with --no-render.
    #[arg(short, long, value_name = "OUT.mp4")]
    pub output: Option<PathBuf>,
    /// Write the 2x2 diagnostic composite instead of the overlay.
    #[arg(long)]
    pub diagnostic: bool,
    /// Per-frame telemetry: JSON Lines, or CSV when the name ends in .csv; `-` streams JSON
    /// Lines to standard output.
    #[arg(long, value_name = "FILE")]
    pub telemetry: Option<PathBuf>,
    /// Analysis only: no video is written.
    #[arg(long)]
    pub no_render: bool,
    /// First frame to process (frames before it are skipped).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub start: usize,
    /// Process at most N frames.
    #[arg(long, value_name = "N", value_parser = super::common::frame_count)]
    pub frames: Option<usize>,
    #[command(flatten)]
    pub encode: super::common::EncodeArgs,
    /// Run everything on one thread (same results, slower).
    #[arg(long)]
    pub single_thread: bool,
    /// Write the lane events (`lanes events --json`) to this file at the end of the run.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Write the drive's HTML report (`lanes report`) at the end, thumbnails from the input;
    /// the page shows the video written (linked beside it).
    #[arg(long, value_name = "report.html")]
    pub report: Option<PathBuf>,
    /// Embed the video in the report page instead of linking it.
    #[arg(long, requires = "report")]
    pub embed: bool,
    #[command(flatten)]
    pub geometry: super::common::GeometryArgs,
}

pub fn run(a: VideoArgs) -> Result<i32> {
    super::inputs::one_video(&a.input, &a.more)?;
    if a.output.is_none() && !a.no_render {
        anyhow::bail!(
            "{}: no output named: give -o OUT.mp4 for the overlay video, or --no-render (with --telemetry FILE) for the analysis only",
            a.input.display()
        );
    }
    super::common::check_outputs(
        &[
            ("input video", Some(&a.input)),
            ("camera file (--camera)", a.camera.as_deref()),
            ("config file (--config)", a.config.as_deref()),
        ],
        &[
            ("-o path", a.output.as_deref().filter(|_| !a.no_render)),
            (
                "--telemetry path",
                a.telemetry.as_deref().filter(|t| !telemetry::is_stdout(t)),
            ),
            ("--events path", a.events.as_deref()),
            ("--report path", a.report.as_deref()),
            ("--save-geometry path", a.geometry.save_geometry.as_deref()),
        ],
    )?;
    // A still given to `lanes video` (FFmpeg would read it as a one-frame video, too short for
    // a geometry): named as what it is.
    if lanes::base::still::is_still_path(&a.input) {
        anyhow::bail!(
            "{}: a still image, not a video: `lanes image` processes stills",
            a.input.display()
        );
    }
    // The container follows the output's name: a name no container fits is refused now, not
    // after the geometry search.
    if let Some(o) = a.output.as_deref().filter(|_| !a.no_render) {
        lanes::video::container_for(o)?;
    }
    // Both asked for: the analysis only, as --no-render says; the -o that is not written is
    // named now, not left for the summary's "no output" to reveal.
    if let (Some(o), true) = (a.output.as_deref(), a.no_render) {
        eprintln!(
            "lanes: note: {}: not written: --no-render analyses only (leave it out to write the {} video)",
            o.display(),
            if a.diagnostic { "diagnostic" } else { "overlay" }
        );
    }
    if let Some(n) = lanes::video::other_streams_note(&a.input) {
        eprintln!("lanes: note: {}: {n}", a.input.display());
    }
    lanes::video::check_start(&a.input, a.start)?;
    let camera = load_camera(a.camera.as_deref())?;
    super::common::check_camera_fits_video(camera.as_ref(), a.camera.as_deref(), &a.input)?;
    let super::common::Resolved {
        cfg,
        source,
        found_from,
        note: geometry_note,
        shot_search,
        opening_cut,
    } = a
        .geometry
        .resolve(&a.input, a.config.as_deref(), camera.as_ref())?;
    let render = if a.no_render {
        RenderMode::None
    } else if a.diagnostic {
        RenderMode::Diagnostic
    } else {
        RenderMode::Overlay
    };
    let job = VideoJob {
        input: a.input.clone(),
        output: if a.no_render { None } else { a.output.clone() },
        render,
        telemetry: a.telemetry.clone(),
        start: a.start,
        max_frames: a.frames,
        codec: a.encode.codec(),
        threaded: !a.single_thread,
        // SIGINT/SIGTERM: finish the frames in flight, finalise, exit 130/143.
        cancel: lanes::base::cancel::Cancel::on_signals()?,
        shot_search,
        opening_cut,
    };
    let bar = if std::io::stderr().is_terminal() {
        let total = source.announced_frames.max(0) as u64;
        let total = match a.frames {
            Some(n) => (n as u64).min(total.saturating_sub(a.start as u64)),
            None => total.saturating_sub(a.start as u64),
        };
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} frames  {fps}  ETA {eta}")
                .map(|st| {
                    st.with_key(
                        "fps",
                        |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = write!(w, "{:.1} fps", s.per_sec());
                        },
                    )
                })
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Some(pb)
    } else {
        None
    };
    let progress = |n: usize| {
        if let Some(pb) = &bar {
            pb.set_position(n as u64);
        }
    };
    let keep = a.events.is_some() || a.report.is_some();
    let mut records: Vec<lanes::base::telemetry::FrameRecord> = Vec::new();
    // A run that draws no lane at all says so while it runs, once (counting from the first
    // frame the geometry was found in: a drive that opens in a car park shows no lane before).
    let mut hint = lanes::base::summary::NoLaneHint::from_frame(found_from);
    let summary = video::run(
        &job,
        &cfg,
        camera.as_ref(),
        Some(source),
        &mut |r| {
            if keep {
                records.push(r.clone());
            }
            if let Some(h) = hint.add(r, &a.input) {
                match &bar {
                    Some(pb) => pb.println(format!("lanes: warning: {h}")),
                    None => eprintln!("lanes: warning: {h}"),
                }
            }
        },
        &progress,
    );
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    let s = summary?;
    if let Some(h) = hint.at_end(&a.input) {
        eprintln!("lanes: warning: {h}");
    }
    let out = match (&s.output, &a.telemetry) {
        (Some(o), _) => format!("output {}", o.display()),
        (None, Some(t)) if telemetry::is_stdout(t) => "telemetry to standard output".to_string(),
        (None, Some(t)) => format!("telemetry {}", t.display()),
        (None, None) => "no output".to_string(),
    };
    let codec = s
        .encoder
        .as_ref()
        .map(|c| format!(", codec {c}"))
        .unwrap_or_default();
    let trunc = match s.truncated_at {
        Some(n) => format!(
            ", STOPPED at frame {n} of {} (truncated or corrupt input)",
            s.announced_frames
        ),
        None if s.undecodable > 0 => format!(
            ", {} frames undecodable (corrupt data; the file was read to its end)",
            s.undecodable
        ),
        None => String::new(),
    };
    let interrupted = match s.interrupted_at {
        Some(n) => format!(", interrupted at frame {n}"),
        None => String::new(),
    };
    eprintln!(
        "lanes video: {} read, {} with a lane drawn, {} search failed, {} rejected by tracking, {}, {:.1} fps{codec}, {out}{trunc}{interrupted}",
        super::common::count(s.frames_read, "frame", "frames"),
        s.frames_drawn,
        s.search_failed,
        s.rejected,
        s.measures.medians().describe(cfg.render.straight_above_m),
        s.fps()
    );
    if let Some(n) = &s.quad_note {
        eprintln!("lanes: note: {}: {n}", a.input.display());
    }
    if let Some(c) = s.cuts_note() {
        eprintln!("lanes: note: {}: {c}", a.input.display());
    }
    if let Some(n) = s.noise_note() {
        eprintln!("lanes: note: {}: {n}", a.input.display());
    }
    for (frame, found) in &s.shot_geometry {
        match found {
            Ok(n) => eprintln!(
                "lanes: {}: shot at frame {frame}: {}",
                a.input.display(),
                n.text
            ),
            Err(why) => eprintln!(
                "lanes: {}: shot at frame {frame}: {why}; analysed with the opening's geometry, a lone line only after both lines were seen in it",
                a.input.display()
            ),
        }
    }
    let outputs = DriveOutputs {
        input: &a.input,
        overlay: a.output.as_deref().filter(|_| !a.no_render),
        events: a.events.as_deref(),
        report: a.report.as_deref(),
        embed: a.embed,
        geometry: Some(&geometry_note),
    };
    let written = lanes::drive::outputs::write(&records, &cfg, &outputs)?;
    if let Some((p, ev)) = &written.events {
        let n = super::common::count(ev.len(), "event", "events");
        eprintln!("lanes video: {n}, {}", p.display());
    }
    if let Some((p, r)) = &written.report {
        for w in &r.warnings {
            eprintln!("lanes: {w}");
        }
        let n = super::common::count(r.events.len(), "event", "events");
        eprintln!("lanes video: report {} ({n})", p.display());
    }
    if s.interrupted_at.is_some() {
        return Ok(job.cancel.exit_code().unwrap_or(130));
    }
    if let Some(n) = s.truncated_at {
        eprintln!(
            "lanes: {}: decoding stopped at frame {n}; the {} frames read were written",
            a.input.display(),
            s.frames_read
        );
        return Ok(1);
    }
    if s.undecodable > 0 {
        eprintln!(
            "lanes: {}: {} frames could not be decoded (corrupt data in the file); the {} others were analysed and written",
            a.input.display(),
            s.undecodable,
            s.frames_read
        );
        return Ok(1);
    }
    Ok(0)
}
