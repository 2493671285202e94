//! `lanes batch`: many videos in one process, resumable, one output folder per video.

use super::common::{load_camera, load_config};
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lanes::base::cancel::Cancel;
use lanes::fleet::batch::{self, outcome_line, BatchReport, Event, Options, Setup, Shard, Status};
use lanes::video::RenderMode;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
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
    pub encode: super::common::EncodeArgs,
    /// Process at most N frames of each video.
    #[arg(long, value_name = "N", value_parser = super::common::frame_count)]
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
            videos_at_once: 1,
        };
        Ok((setup, opts))
    }
}

#[derive(Args)]
pub struct BatchArgs {
    /// Video files, directories (searched recursively) or @list.txt (one path a line).
    #[arg(required_unless_present = "manifest", value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Videos with a camera and config each (mixed fleets): CSV with the header
    /// input,camera,config or JSON lines {"input": .., "camera": .., "config": ..}; an empty
    /// cell takes --camera/--config; paths relative to the manifest's folder.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    #[command(flatten)]
    pub job: JobArgs,
    /// Videos processed at the same time (threads in this process) [default: the number of
    /// cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Only the inputs of shard I of N (by a stable hash of the relative path).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
}

pub fn run(a: BatchArgs) -> Result<i32> {
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let items = if a.inputs.is_empty() {
        Vec::new()
    } else {
        batch::collect_inputs(&a.inputs)?
    };
    // Every video's set-up (a manifest row's camera and config) is loaded before any work.
    let (setup, opts) = a.job.resolve()?;
    let mut tasks = lanes::fleet::manifest::tasks(
        items,
        a.manifest.as_deref(),
        Arc::new(setup),
        super::common::preset(),
    )?;
    if let Some(s) = shard {
        tasks.retain(|t| s.owns(&t.item.rel));
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
    super::common::check_out_dir_name(&a.job.out, "-o")?;
    let folders: Vec<PathBuf> = tasks.iter().map(|t| a.job.out.join(&t.item.rel)).collect();
    let mut inputs: Vec<(&str, Option<&Path>)> = Vec::new();
    for t in &tasks {
        inputs.push(("input video", Some(t.item.path.as_path())));
    }
    // The manifest rows' camera and config files, each once (after the flags' own, whose
    // names an error then uses).
    let mut files = std::collections::BTreeSet::new();
    for t in &tasks {
        files.insert(("camera file", t.setup.camera_file.as_deref()));
        files.insert(("config file", t.setup.config_file.as_deref()));
    }
    inputs.push(("camera file (--camera)", a.job.camera.as_deref()));
    inputs.push(("config file (--config)", a.job.config.as_deref()));
    inputs.push(("manifest (--manifest)", a.manifest.as_deref()));
    inputs.extend(files);
    let outputs: Vec<(&str, Option<&Path>)> = folders
        .iter()
        .map(|p| ("output folder in -o", Some(p.as_path())))
        .collect();
    super::common::check_outputs(&inputs, &outputs)?;
    batch::prepare_out_dir(&opts.out_dir)?;
    let cancel = Cancel::on_signals().context("installing signal handlers")?;
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(tasks.len() as u64)
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
    let jobs = a.jobs.unwrap_or_else(batch::default_jobs);
    let outcomes = batch::run_batch(&tasks, &opts, jobs, &cancel, &on_event);
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let report = BatchReport::new(&outcomes, wall);
    let stem = match shard {
        Some(s) => format!("batch-shard-{}-of-{}", s.index, s.count),
        None => "batch".to_string(),
    };
    // The index keeps the videos of earlier runs into this folder (`batch_index`).
    let owns = |rel: &str| shard.is_none_or(|s| s.owns(rel));
    let (index, merge) =
        lanes::fleet::batch_index::merged(&opts.out_dir, &stem, &outcomes, wall, &owns);
    index.write(&opts.out_dir, &stem)?;
    let removed: usize = outcomes.iter().map(|o| o.removed.len()).sum();
    let removed = match removed {
        0 => String::new(),
        n => format!(
            "; removed {} of earlier runs with another --render",
            super::common::count(n, "output", "outputs")
        ),
    };
    eprintln!(
        "lanes batch: {}: {} done ({} skipped), {} failed, {} interrupted, {} not started; {}, {:.1} frames/s{removed}; {}",
        super::common::count(tasks.len(), "video", "videos"),
        report.done,
        report.skipped,
        report.failed,
        report.interrupted,
        tasks.len() - outcomes.len(),
        // The frames of this run (frames/s is theirs over the wall time); a skipped video's
        // were counted by the run that did it.
        super::common::count(
            outcomes
                .iter()
                .filter(|o| !o.skipped)
                .map(|o| o.report.frames)
                .sum(),
            "frame",
            "frames"
        ),
        report.totals.fps,
        opts.out_dir.join(format!("{stem}.json")).display()
    );
    if let Some(line) = merge.describe(&opts.out_dir.join(format!("{stem}.json"))) {
        eprintln!("lanes batch: {line}");
    }
    if let Some(hint) = batch::no_lane_hint(&outcomes) {
        eprintln!("lanes: warning: {hint}");
    }
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
