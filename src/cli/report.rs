//! `lanes report`: a self-contained HTML report of one drive's telemetry, or an index over a
//! `lanes batch` output folder with one report per drive.

use super::common::load_config;
use anyhow::Result;
use clap::Args;
use lanes::base::telemetry;
use lanes::drive::report::{self, index, ReportOptions};
use std::path::PathBuf;

#[derive(Args)]
pub struct ReportArgs {
    /// Telemetry (`lanes video --telemetry F.jsonl`) or a `lanes batch` output folder (every
    /// `telemetry.jsonl` under it gets a `report.html` beside it; `-o` is then the index).
    pub input: PathBuf,
    /// Output HTML file.
    #[arg(short, long, value_name = "report.html")]
    pub output: PathBuf,
    /// The drive's video (original or overlay): shown in the page (linked relative to it;
    /// clicking an event seeks to it) and the source of the event thumbnails.
    #[arg(long, value_name = "IN.mp4")]
    pub video: Option<PathBuf>,
    /// Embed the video in the page (a `data:` URI) instead of linking it: one file to share.
    #[arg(long, requires = "video")]
    pub embed: bool,
    /// At most N thumbnails (the first N events). For a batch folder, thumbnails come from the
    /// input video named in each drive's `summary.json` (0 = none).
    #[arg(long, default_value_t = 24, value_name = "N")]
    pub thumbnails: usize,
    /// Configuration TOML; its `[events]` section holds the event thresholds.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub preset: super::preset::ConfigPresetArgs,
}

pub fn run(a: ReportArgs) -> Result<i32> {
    super::common::check_outputs(
        &[
            ("telemetry", Some(&a.input)),
            ("video (--video)", a.video.as_deref()),
            ("config file (--config)", a.config.as_deref()),
        ],
        &[("-o path", Some(&a.output))],
    )?;
    let cfg = load_config(a.config.as_deref())?;
    if a.input.is_dir() {
        if a.video.is_some() {
            anyhow::bail!(
                "{}: --video applies to one drive's telemetry, not to a batch folder",
                a.input.display()
            );
        }
        let o = index::write_batch(&a.input, &a.output, &cfg.events, a.thumbnails)?;
        for d in &o.drives {
            for w in &d.warnings {
                eprintln!("lanes: {w}");
            }
            if let Some(e) = &d.error {
                eprintln!("lanes: {e}");
            }
        }
        eprintln!(
            "lanes report: {} ({} failed), {}, index {}",
            super::common::count(o.drives.len(), "drive", "drives"),
            o.failed(),
            super::common::count(o.total.frames, "frame", "frames"),
            a.output.display()
        );
        return Ok(if o.failed() > 0 { 1 } else { 0 });
    }
    let (records, w) = telemetry::read_jsonl(&a.input)?;
    let warnings: Vec<String> = report::read_warning(&a.input, &w, records.len())
        .into_iter()
        .collect();
    let player = a
        .video
        .as_deref()
        .map(|v| report::Player::new(v, &a.output, a.embed, 0.0))
        .transpose()?;
    let opts = ReportOptions {
        title: a.input.display().to_string(),
        video: a.video.clone(),
        thumbnails: a.thumbnails,
        warnings,
        check_frame_count: true,
        player,
        // A drive folder of `lanes batch` keeps the geometry's line in its summary.
        geometry: a.input.parent().and_then(index::summary_note),
    };
    let r = report::write_drive_report(&records, &cfg.events, &opts, &a.output)?;
    for w in &r.warnings {
        eprintln!("lanes: {w}");
    }
    eprintln!(
        "lanes report: {}, {}, {}, {:.0} KB, {}",
        super::common::count(r.stats.frames, "frame", "frames"),
        super::common::count(r.events.len(), "event", "events"),
        super::common::count(r.thumbnails, "thumbnail", "thumbnails"),
        r.html.len() as f64 / 1024.0,
        a.output.display()
    );
    Ok(0)
}
