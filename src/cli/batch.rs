//! `lanes batch`: many videos in one process, resumable, one output folder per video.

use super::{load_camera, load_config};
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lanes::base::cancel::Cancel;
use lanes::fleet::batch::{self, BatchReport, Event, Options, Setup, Shard, Status};
use lanes::video::RenderMode;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Flags shared by `lanes batch` and `lanes queue work`.
#[derive(Args, Clone)]
pub struct JobArgs {
    /// Output directory: one folder per video, named after its path relative to the input root.
    #[arg(short, long = "output", visible_alias = "out", value_name = "OUTDIR")]
    pub out: PathBuf,
    /// Camera file (OpenCV YAML from `lanes calibrate`).
    #[arg(long, value_name = "FILE")]
    pub camera: Option<PathBuf>,
    /// Configuration TOML.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// What video to write per input: none (telemetry only), overlay or diagnostic.
    #[arg(long, default_value = "none", value_parser = ["none", "overlay", "diagnostic"])]
    pub render: String,
    #[command(flatten)]
    pub encode: super::EncodeArgs,
    /// Process at most N frames of each video.
    #[arg(long, value_name = "N")]
    pub frames: Option<usize>,
    /// Redo videos already done.
    #[arg(long)]
    pub force: bool,
}

impl JobArgs {
    /// The resolved set-up and options.
    pub fn resolve(&self) -> Result<(Setup, Options)> {
        let cfg = load_config(self.config.as_deref())?;
        let camera = load_camera(self.camera.as_deref())?;
        let cam = match (camera, self.camera.as_deref()) {
            (Some(c), Some(p)) => Some((c, p)),
            _ => None,
        };
        let setup = Setup::new(cfg, cam)?.geometry_from(self.config.as_deref())?;
        let opts = Options {
            out_dir: self.out.clone(),
            render: match self.render.as_str() {
                "overlay" => RenderMode::Overlay,
                "diagnostic" => RenderMode::Diagnostic,
                _ => RenderMode::None,
            },
            codec: self.encode.codec(),
            frames: self.frames,
            force: self.force,
        };
        Ok((setup, opts))
    }
}

#[derive(Args)]
pub struct BatchArgs {
    /// Video files, directories (searched recursively) or @list.txt (one path a line).
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub job: JobArgs,
    /// Videos processed at the same time (threads in this process).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub jobs: usize,
    /// Only the inputs of shard I of N (by a stable hash of the relative path).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
}

/// The line printed for a finished video.
pub fn outcome_line(o: &batch::Outcome) -> String {
    let r = &o.report;
    match (r.status, o.skipped) {
        (Status::Done, true) => format!("skipped {} (already done)", o.item.rel),
        (Status::Done, false) => format!(
            "done    {}: {} frames, {:.1} fps, lane in {:.1}% of frames{}",
            o.item.rel,
            r.frames,
            r.fps,
            100.0 * r.stats.lane_share(),
            r.note
                .as_deref()
                .map(|n| format!(" (note: {n})"))
                .unwrap_or_default()
        ),
        (s, _) => format!(
            "{:<7} {}: {}",
            s.as_str(),
            o.item.rel,
            r.error.as_deref().unwrap_or("")
        ),
    }
}

pub fn run(a: BatchArgs) -> Result<i32> {
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let mut items = batch::collect_inputs(&a.inputs)?;
    if let Some(s) = shard {
        items.retain(|it| s.owns(&it.rel));
    }
    // Before anything is written: the output folder is not an input folder (its outputs would
    // be inputs next time), and no video's folder is an input (`lanes batch a.mp4 -o .`).
    let dirs: Vec<&std::path::Path> = a
        .inputs
        .iter()
        .filter(|p| p.is_dir())
        .map(|p| p.as_path())
        .collect();
    lanes::base::same_file::check_out_dir(&dirs, &a.job.out, "-o directory")?;
    let folders: Vec<PathBuf> = items.iter().map(|it| a.job.out.join(&it.rel)).collect();
    let mut inputs: Vec<(&str, Option<&std::path::Path>)> = items
        .iter()
        .map(|it| ("input video", Some(it.path.as_path())))
        .collect();
    inputs.push(("camera file (--camera)", a.job.camera.as_deref()));
    inputs.push(("config file (--config)", a.job.config.as_deref()));
    let outputs: Vec<(&str, Option<&std::path::Path>)> = folders
        .iter()
        .map(|p| ("output folder in -o", Some(p.as_path())))
        .collect();
    super::check_outputs(&inputs, &outputs)?;
    let (setup, opts) = a.job.resolve()?;
    batch::prepare_out_dir(&opts.out_dir)?;
    let cancel = Cancel::on_signals().context("installing signal handlers")?;
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(items.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} videos  {msg}  ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let frames = AtomicUsize::new(0);
    let on_event = |e: Event| match e {
        Event::Frames(n) => {
            let total = frames.fetch_add(n, Ordering::Relaxed) + n;
            let secs = started.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!("{:.1} frames/s", total as f64 / secs));
        }
        Event::Finished(o) => {
            let line = outcome_line(o);
            if bar.is_hidden() {
                eprintln!("{line}");
            } else {
                bar.println(line);
            }
            bar.inc(1);
        }
    };
    let outcomes = batch::run_batch(&setup, &items, &opts, a.jobs, &cancel, &on_event);
    bar.finish_and_clear();
    let report = BatchReport::new(&outcomes, started.elapsed().as_secs_f64());
    let stem = match shard {
        Some(s) => format!("batch-shard-{}-of-{}", s.index, s.count),
        None => "batch".to_string(),
    };
    report.write(&opts.out_dir, &stem)?;
    eprintln!(
        "lanes batch: {}: {} done ({} skipped), {} failed, {} interrupted, {} not started; {}, {:.1} frames/s; {}",
        super::count(items.len(), "video", "videos"),
        report.done,
        report.skipped,
        report.failed,
        report.interrupted,
        items.len() - outcomes.len(),
        super::count(report.totals.frames, "frame", "frames"),
        report.totals.fps,
        opts.out_dir.join(format!("{stem}.json")).display()
    );
    // Each failed video once more as an error line (its error names the file).
    for o in outcomes
        .iter()
        .filter(|o| o.report.status == Status::Failed)
    {
        eprintln!("lanes: {}", o.report.error.as_deref().unwrap_or("failed"));
    }
    if let Some(code) = cancel.exit_code() {
        return Ok(code);
    }
    Ok(if report.failed > 0 { 1 } else { 0 })
}
