//! What a `lanes video` run writes from its records after the frame loop: the events file and
//! the drive report (whose player shows the overlay just written, or the input itself).

use crate::base::config::Config;
use crate::base::error::{Error, Result};
use crate::base::telemetry::FrameRecord;
use crate::drive::events::{self, Event};
use crate::drive::report::{self, Player, Report, ReportOptions};
use std::path::{Path, PathBuf};

/// Where a run's drive outputs go.
#[derive(Debug, Clone, Copy)]
pub struct DriveOutputs<'a> {
    /// The video that was analysed.
    pub input: &'a Path,
    /// The overlay video written by this run, if any (the report's player shows it).
    pub overlay: Option<&'a Path>,
    /// `--events FILE`.
    pub events: Option<&'a Path>,
    /// `--report FILE`.
    pub report: Option<&'a Path>,
    /// Embed the video in the page instead of linking it.
    pub embed: bool,
    /// Where the run's road geometry came from (found in the video, and how sure; or the
    /// config's), shown in the report.
    pub geometry: Option<&'a str>,
}

/// What was written.
#[derive(Debug, Default)]
pub struct Written {
    /// The events file and its events.
    pub events: Option<(PathBuf, Vec<Event>)>,
    /// The report file and what it holds.
    pub report: Option<(PathBuf, Report)>,
}

/// Write the events and the report `o` asks for from the run's `records`. No records with
/// anything asked for is an error naming the input.
pub fn write(records: &[FrameRecord], cfg: &Config, o: &DriveOutputs) -> Result<Written> {
    let mut written = Written::default();
    if o.events.is_none() && o.report.is_none() {
        return Ok(written);
    }
    if records.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: no frame was analysed: no events or report written",
            o.input.display()
        )));
    }
    let fps = events::fps_of(records, 25.0);
    if let Some(p) = o.events {
        let ev = events::detect(records, fps, &cfg.events);
        events::write_json(p, &ev)?;
        written.events = Some((p.to_path_buf(), ev));
    }
    if let Some(p) = o.report {
        // The overlay starts at the first analysed frame; the input at its own start.
        let player = match o.overlay {
            Some(v) => Player::new(v, p, o.embed, records[0].time_s)?,
            None => Player::new(o.input, p, o.embed, 0.0)?,
        };
        let opts = ReportOptions {
            title: o.input.display().to_string(),
            video: Some(o.input.to_path_buf()),
            thumbnails: 24,
            warnings: Vec::new(),
            check_frame_count: false,
            player: Some(player),
            geometry: o.geometry.map(str::to_string),
        };
        let r = report::write_drive_report(records, &cfg.events, &opts, p)?;
        written.report = Some((p.to_path_buf(), r));
    }
    Ok(written)
}
