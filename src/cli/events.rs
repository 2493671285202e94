//! `lanes events`: the lane events of a drive's telemetry (text or JSON).

use super::common::load_config;
use anyhow::Result;
use clap::Args;
use lanes::base::telemetry::{self, FrameRecord};
use lanes::drive::events;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct EventsArgs {
    /// Telemetry written by `lanes video --telemetry F.jsonl`.
    pub telemetry: PathBuf,
    /// Print the events as a JSON array instead of text.
    #[arg(long)]
    pub json: bool,
    /// Configuration TOML; its `[events]` section holds the thresholds.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub preset: super::preset::ConfigPresetArgs,
}

/// Read a telemetry file; bad lines and out-of-order records are counted in one warning line
/// on stderr (the run goes on without them).
pub fn load_telemetry(path: &Path) -> Result<Vec<FrameRecord>> {
    let (records, w) = telemetry::read_jsonl(path)?;
    if let Some(line) = lanes::drive::report::read_warning(path, &w, records.len()) {
        eprintln!("lanes: {line}");
    }
    Ok(records)
}

pub fn run(a: EventsArgs) -> Result<i32> {
    let cfg = load_config(a.config.as_deref())?;
    let records = load_telemetry(&a.telemetry)?;
    let fps = events::fps_of(&records, 25.0);
    let ev = events::detect(&records, fps, &cfg.events);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&ev)?);
        return Ok(0);
    }
    let counts: Vec<String> = events::count_by_kind(&ev)
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    outln!(
        "{}: {} at {:.2} fps, {}: {}",
        a.telemetry.display(),
        super::common::count(records.len(), "frame", "frames"),
        fps,
        super::common::count(ev.len(), "event", "events"),
        counts.join(", ")
    );
    for e in &ev {
        outln!("{}", e.describe());
    }
    Ok(0)
}
