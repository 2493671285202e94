//! `batch.json` and `batch.csv`: a row per video and the totals.

use super::plan::LANES_VERSION;
use super::process::{io_err, remove_partials, Outcome, Status, VideoReport};
use crate::base::atomic::write_atomic;
use crate::base::error::{Error, Result};
use crate::base::summary::DriveStats;
use serde::Serialize;
use std::path::Path;

/// The line printed for a finished video; a video analysed to the end without a lane says so.
pub fn outcome_line(o: &Outcome) -> String {
    let r = &o.report;
    match (r.status, o.skipped) {
        (Status::Done, true) => format!("skipped {} (already done)", o.item.rel),
        (Status::Done, false) => format!(
            "done    {}: {} frames, {:.1} fps, lane in {:.1}% of frames{}{}{}",
            o.item.rel,
            r.frames,
            r.fps,
            100.0 * r.stats.lane_share(),
            if found_no_lane(o) {
                " (no lane found)"
            } else {
                ""
            },
            r.note
                .as_deref()
                .map(|n| format!(" (note: {n})"))
                .unwrap_or_default(),
            removed_note(&o.removed)
        ),
        (s, _) => format!(
            "{:<7} {}: {}",
            s.as_str(),
            o.item.rel,
            r.error.as_deref().unwrap_or("")
        ),
    }
}

fn removed_note(removed: &[String]) -> String {
    if removed.is_empty() {
        return String::new();
    }
    format!(
        "; removed {} of an earlier run with another --render",
        removed.join(", ")
    )
}

/// Analysed in this run, frames read, no lane on any of them.
fn found_no_lane(o: &Outcome) -> bool {
    o.report.status == Status::Done
        && !o.skipped
        && o.report.frames > 0
        && o.report.stats.lane_share() == 0.0
}

/// One hint for the videos of this run in which no lane was found (the batch's form of
/// `lanes video`'s hint: `summary::no_lane_advice`), naming up to three of them by name.
pub fn no_lane_hint(outcomes: &[Outcome]) -> Option<String> {
    let mut none: Vec<&Outcome> = outcomes.iter().filter(|o| found_no_lane(o)).collect();
    none.sort_by(|a, b| a.item.rel.cmp(&b.item.rel));
    let first = none.first()?.item.path.display();
    let none: Vec<&str> = none.iter().map(|o| o.item.rel.as_str()).collect();
    let shown = none.iter().take(3).copied().collect::<Vec<_>>().join(", ");
    let more = match none.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    let (n, what) = match none.len() {
        1 => (String::new(), "this video"),
        n => (format!("{n} videos: "), "these videos"),
    };
    Some(format!(
        "no lane found in {n}{shown}{more}: {}",
        crate::base::summary::no_lane_advice(what, &first.to_string())
    ))
}

/// One row of `batch.json`/`batch.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub path: String,
    pub status: String,
    pub skipped: bool,
    pub frames: usize,
    pub seconds: f64,
    pub fps: f64,
    pub lane_share: f64,
    pub search_failed_share: f64,
    pub offset_abs_mean_m: Option<f64>,
    pub offset_abs_max_m: Option<f64>,
    /// Medians over the frames with a lane (`summary::DriveMedians`; empty on the TOTAL row).
    pub radius_median_m: Option<f64>,
    pub lane_width_median_m: Option<f64>,
    pub offset_median_m: Option<f64>,
    /// Not among this run's inputs: kept from an earlier run into the same folder (its
    /// `summary.json` is still there).
    pub earlier_run: bool,
    pub camera: Option<String>,
    pub config: Option<String>,
    /// The video's note (`summary.json`: the geometry found in the video, or a quad that
    /// reaches outside the frames).
    pub note: Option<String>,
    pub error: Option<String>,
}

impl Row {
    fn total(stats: &DriveStats, frames: usize, seconds: f64, fps: f64) -> Self {
        Self {
            path: "TOTAL".into(),
            status: String::new(),
            skipped: false,
            frames,
            seconds,
            fps,
            lane_share: stats.lane_share(),
            search_failed_share: stats.search_failed_share(),
            offset_abs_mean_m: stats.offset_abs_mean_m(),
            offset_abs_max_m: (stats.offset_frames > 0).then_some(stats.offset_abs_max_m),
            radius_median_m: None,
            lane_width_median_m: None,
            offset_median_m: None,
            earlier_run: false,
            camera: None,
            config: None,
            note: None,
            error: None,
        }
    }

    /// The row of a video's report (`rel` names its folder).
    pub fn of_report(rel: &str, r: &VideoReport, skipped: bool, earlier_run: bool) -> Self {
        let s = &r.stats;
        Self {
            path: rel.to_string(),
            status: r.status.as_str().to_string(),
            skipped,
            frames: r.frames,
            seconds: r.seconds,
            fps: r.fps,
            radius_median_m: r.medians.radius_median_m,
            lane_width_median_m: r.medians.lane_width_median_m,
            offset_median_m: r.medians.offset_median_m,
            earlier_run,
            camera: r.camera.clone(),
            config: r.config.clone(),
            note: r.note.clone(),
            error: r.error.clone(),
            ..Self::total(s, 0, 0.0, 0.0)
        }
    }
}

/// The whole batch: per video rows and totals.
#[derive(Debug, Clone, Serialize)]
pub struct BatchReport {
    pub lanes_version: String,
    pub videos: Vec<Row>,
    /// Totals: frames and seconds summed over the videos, fps = frames processed by this run
    /// (skipped videos and those of earlier runs left out) / its wall-clock seconds, shares
    /// over all frames.
    pub totals: Row,
    /// Videos by status, over every row (this run's and those kept from earlier runs).
    pub done: usize,
    pub failed: usize,
    pub interrupted: usize,
    /// This run's videos that were already done.
    pub skipped: usize,
    /// Rows kept from earlier runs into the same folder (`earlier_run`).
    pub earlier_runs: usize,
    pub wall_seconds: f64,
}

impl BatchReport {
    /// The report of this run's outcomes alone.
    pub fn new(outcomes: &[Outcome], wall_seconds: f64) -> Self {
        Self::with_earlier(outcomes, &[], wall_seconds)
    }

    /// This run's outcomes, then the reports of videos kept from earlier runs (`earlier`).
    pub fn with_earlier(outcomes: &[Outcome], earlier: &[VideoReport], wall_seconds: f64) -> Self {
        let mut total = DriveStats::default();
        let mut frames = 0;
        let mut processed_frames = 0;
        let mut seconds = 0.0;
        let mut rows = Vec::new();
        let (mut done, mut failed, mut interrupted, mut skipped) = (0, 0, 0, 0);
        let this_run = outcomes
            .iter()
            .map(|o| (o.item.rel.as_str(), &o.report, o.skipped, false));
        let kept = earlier.iter().map(|r| (r.rel.as_str(), r, false, true));
        for (rel, r, was_skipped, earlier_run) in this_run.chain(kept) {
            total.merge(&r.stats);
            frames += r.frames;
            seconds += r.seconds;
            match r.status {
                Status::Done => done += 1,
                Status::Failed => failed += 1,
                Status::Interrupted => interrupted += 1,
            }
            skipped += was_skipped as usize;
            if !was_skipped && !earlier_run {
                processed_frames += r.frames;
            }
            rows.push(Row::of_report(rel, r, was_skipped, earlier_run));
        }
        let fps = if wall_seconds > 0.0 {
            processed_frames as f64 / wall_seconds
        } else {
            0.0
        };
        Self {
            lanes_version: LANES_VERSION.to_string(),
            videos: rows,
            totals: Row::total(&total, frames, seconds, fps),
            done,
            failed,
            interrupted,
            skipped,
            earlier_runs: earlier.len(),
            wall_seconds,
        }
    }

    /// The CSV form: a header, one row per video, a TOTAL row.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("path,status,skipped,frames,seconds,fps,lane_share,search_failed_share,offset_abs_mean_m,offset_abs_max_m,radius_median_m,lane_width_median_m,offset_median_m,earlier_run,camera,config,note,error\n");
        let opt = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_default();
        let text = |v: &Option<String>| csv_field(v.as_deref().unwrap_or(""));
        for r in self.videos.iter().chain(std::iter::once(&self.totals)) {
            s += &format!(
                "{},{},{},{},{:.3},{:.2},{:.4},{:.4},{},{},{},{},{},{},{},{},{},{}\n",
                csv_field(&r.path),
                r.status,
                r.skipped,
                r.frames,
                r.seconds,
                r.fps,
                r.lane_share,
                r.search_failed_share,
                opt(r.offset_abs_mean_m),
                opt(r.offset_abs_max_m),
                r.radius_median_m
                    .map(|v| format!("{v:.1}"))
                    .unwrap_or_default(),
                opt(r.lane_width_median_m),
                opt(r.offset_median_m),
                r.earlier_run,
                text(&r.camera),
                text(&r.config),
                text(&r.note),
                text(&r.error)
            );
        }
        s
    }

    /// Write `<stem>.json` and `<stem>.csv` into `dir`, each atomically.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(|e| Error::Invalid(e.to_string()))?;
        write_atomic(
            &dir.join(format!("{stem}.json")),
            format!("{json}\n").as_bytes(),
        )?;
        write_atomic(&dir.join(format!("{stem}.csv")), self.to_csv().as_bytes())
    }
}

pub(super) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Check that OUTDIR can be created and written (before any video starts).
pub fn prepare_out_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| io_err(dir, format!("cannot create output directory: {e}")))?;
    let probe = dir.join(format!(".lanes-write-test.{}.partial", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| io_err(dir, format!("output directory is not writable: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    remove_partials(dir);
    Ok(())
}
