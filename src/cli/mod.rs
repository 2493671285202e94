//! Command-line interface: one file per subcommand; raw flags are resolved here and nothing
//! below the CLI reads them.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use lanes::base::camera::Camera;
use lanes::base::config::Config;
use std::path::{Path, PathBuf};

pub mod batch;
pub mod bench;
pub mod calibrate;
pub mod config_cmd;
pub mod eval;
pub mod events;
pub mod image;
pub mod perspective;
pub mod preset;
pub mod queue;
pub mod report;
pub mod synth;
pub mod tune;
pub mod undistort;
pub mod video;

#[derive(Parser)]
#[command(
    name = "lanes",
    version,
    about = "Lane detection for dashcam video on OpenCV"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Calibrate a camera from chessboard images and write an OpenCV camera file.
    Calibrate(calibrate::CalibrateArgs),
    /// Undistort images with a camera file.
    Undistort(undistort::UndistortArgs),
    /// Run the lane pipeline on still images.
    Image(image::ImageArgs),
    /// Process a dashcam video: overlay or diagnostic video, telemetry.
    Video(video::VideoArgs),
    /// Render synthetic road scenes, videos and chessboards with ground truth.
    Synth(synth::SynthArgs),
    /// Score the pipeline against ground truth (synthetic, TuSimple, CULane, masks).
    Eval(eval::EvalArgs),
    /// Live threshold tuner in the browser, or a headless parameter sweep.
    Tune(tune::TuneArgs),
    /// Estimate the perspective quad and metres-per-pixel from straight-road frames.
    Perspective(perspective::PerspectiveArgs),
    /// Many videos in one process: resumable, one output folder per video, batch.json/csv.
    Batch(batch::BatchArgs),
    /// Redis Streams job queue: push videos, run workers, show the queue's state.
    Queue(queue::QueueArgs),
    /// Measure decode, encode and pipeline speed on a video.
    Bench(bench::BenchArgs),
    /// Print or check configuration files.
    Config(config_cmd::ConfigArgs),
    /// Lane events of a drive's telemetry: lane lost, lane change, departure, tight bend.
    Events(events::EventsArgs),
    /// A self-contained HTML report of a drive (plots, events, thumbnails) or of a batch folder.
    Report(report::ReportArgs),
}

/// Parse the command line and run; returns the process exit code.
pub fn run() -> Result<i32> {
    let cli = Cli::parse();
    preset::set(match &cli.command {
        Command::Video(a) => &a.encode.preset.preset,
        Command::Batch(a) => &a.job.encode.preset.preset,
        Command::Queue(a) => match &a.cmd {
            queue::QueueCmd::Work { job, .. } => &job.encode.preset.preset,
            _ => &[],
        },
        Command::Image(a) => &a.preset.preset,
        Command::Eval(a) => &a.preset.preset,
        Command::Tune(a) => &a.preset.preset,
        Command::Bench(a) => &a.preset.preset,
        Command::Config(a) => &a.preset.preset,
        Command::Events(a) => &a.preset.preset,
        Command::Report(a) => &a.preset.preset,
        Command::Calibrate(_)
        | Command::Undistort(_)
        | Command::Synth(_)
        | Command::Perspective(_) => &[],
    });
    match cli.command {
        Command::Calibrate(a) => calibrate::run_calibrate(a),
        Command::Undistort(a) => undistort::run(a),
        Command::Image(a) => image::run(a),
        Command::Video(a) => video::run(a),
        Command::Synth(a) => synth::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Perspective(a) => perspective::run(a),
        Command::Batch(a) => batch::run(a),
        Command::Queue(a) => queue::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Config(a) => config_cmd::run(a),
        Command::Events(a) => events::run(a),
        Command::Report(a) => report::run(a),
    }
}

/// Load the config file if given over the run's preset (else the preset) and validate it.
pub fn load_config(path: Option<&Path>) -> Result<Config> {
    Ok(Config::load_over(path, preset())?)
}

/// The `--preset` chosen on the command line (robust by default).
pub fn preset() -> lanes::base::config::Preset {
    preset::config()
}

/// How output videos are encoded (`lanes video`, `lanes batch`, `lanes queue work`); the
/// libx264 speed preset is the global `--preset` (`veryfast` unless given).
#[derive(clap::Args, Clone, Debug)]
pub struct EncodeArgs {
    /// Output codec: h264 (libx264, yuv420p, index at the front: plays in browsers) or mpeg4
    /// (MPEG-4 Part 2, fourcc mp4v, as older versions wrote; `mp4v` is the same).
    #[arg(long, default_value = "h264", value_parser = ["h264", "mpeg4", "mp4v"])]
    pub codec: String,
    /// libx264's constant rate factor, 0..=51: lower is better quality and larger files.
    #[arg(long, default_value_t = 23, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=51))]
    pub crf: u8,
    #[command(flatten)]
    pub preset: preset::VideoPresetArgs,
}

impl EncodeArgs {
    /// The codec these flags and the run's `--preset` give.
    pub fn codec(&self) -> lanes::video::Codec {
        match self.codec.as_str() {
            "mpeg4" | "mp4v" => lanes::video::Codec::Mp4v,
            _ => lanes::video::Codec::H264 {
                preset: preset::x264(),
                crf: self.crf,
            },
        }
    }
}

/// Load the camera file if given.
pub fn load_camera(path: Option<&Path>) -> Result<Option<Camera>> {
    path.map(|p| Camera::load(p).with_context(|| "loading camera".to_string()))
        .transpose()
}

/// Refuse a camera file made for another frame size than the video's, naming both files and
/// the fix (before any output is opened). A video that does not open is left to the run.
pub fn check_camera_fits_video(
    camera: Option<&Camera>,
    camera_file: Option<&Path>,
    video: &Path,
) -> Result<()> {
    if let Some(cam) = camera {
        if let Ok(src) = lanes::video::VideoSource::open(video) {
            cam.check_frame_size(video, camera_file, (src.width, src.height))?;
        }
    }
    Ok(())
}

/// "1 frame", "2 frames": a count with its noun.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Collect image files from a list of files and directories (directories: jpg/jpeg/png, sorted).
pub fn collect_images(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("{}: cannot read directory", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.extension()
                        .and_then(|e| e.to_str())
                        .map(|e| {
                            matches!(
                                e.to_ascii_lowercase().as_str(),
                                "jpg" | "jpeg" | "png" | "bmp"
                            )
                        })
                        .unwrap_or(false)
                })
                .collect();
            v.sort_by_key(|a| natural_key(a));
            if v.is_empty() {
                anyhow::bail!(
                    "{}: no images (.jpg, .jpeg, .png, .bmp) in directory",
                    p.display()
                );
            }
            out.extend(v);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            anyhow::bail!("{}: file not found", p.display());
        }
    }
    if out.is_empty() {
        anyhow::bail!("no input images given");
    }
    Ok(out)
}

/// The folder of frames sampled from video inputs by `lanes tune` (removed when dropped).
pub struct SampledStills(PathBuf);

impl SampledStills {
    pub fn new() -> Self {
        Self(std::env::temp_dir().join(format!("lanes-tune-{}", std::process::id())))
    }
}

impl Drop for SampledStills {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Stills from the inputs, in order: images and folders as they are; `frames` frames of each
/// video (`lanes::geometry::sample`), written as PNG into the temporary folder.
pub fn stills_of(inputs: &[PathBuf], frames: usize, tmp: &SampledStills) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if !(p.is_file() && lanes::geometry::sample::is_video_path(p)) {
            out.extend(collect_images(std::slice::from_ref(p))?);
            continue;
        }
        std::fs::create_dir_all(&tmp.0)
            .with_context(|| format!("{}: cannot create", tmp.0.display()))?;
        let stem =
            lanes::base::still::stem_of(&p.file_name().unwrap_or_default().to_string_lossy());
        let got = lanes::geometry::sample::sample_video_frames(p, frames)?;
        eprintln!(
            "lanes tune: {}: {} frames sampled ({})",
            p.display(),
            got.len(),
            got.iter()
                .map(|f| f.index.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for f in got {
            let still = tmp.0.join(format!("{stem}_frame{:06}.png", f.index));
            f.frame.write(&still)?;
            out.push(still);
        }
    }
    Ok(out)
}

/// Sort key that orders `calibration2` before `calibration10`.
fn natural_key(p: &Path) -> (String, u64, String) {
    let name = p
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let stem: String = name.chars().take_while(|c| !c.is_ascii_digit()).collect();
    let digits: String = name[stem.len()..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    (stem, digits.parse().unwrap_or(0), name)
}

/// Refuse, before anything is written, an output that is the same file as an input or as
/// another output (`lanes::base::same_file::check`), and an output file (a role ending in "path")
/// whose directory does not exist. Each entry is (role, path); `None` paths are options not
/// given.
pub fn check_outputs(
    inputs: &[(&str, Option<&Path>)],
    outputs: &[(&str, Option<&Path>)],
) -> Result<()> {
    use lanes::base::same_file::Named;
    let named = |v: &[(&str, Option<&Path>)]| -> Vec<(String, PathBuf)> {
        v.iter()
            .filter_map(|(r, p)| p.map(|p| (r.to_string(), p.to_path_buf())))
            .collect()
    };
    let (ins, outs) = (named(inputs), named(outputs));
    for (role, p) in &outs {
        if role.ends_with(" path") {
            lanes::base::atomic::check_parent_dir(p)?;
        }
    }
    let ins: Vec<Named> = ins.iter().map(|(r, p)| Named::new(r, p)).collect();
    let outs: Vec<Named> = outs.iter().map(|(r, p)| Named::new(r, p)).collect();
    Ok(lanes::base::same_file::check(&ins, &outs)?)
}

/// Create an output directory (its parent must exist).
pub fn ensure_out_dir(dir: &Path) -> Result<()> {
    if !dir.exists() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create output directory", dir.display()))?;
    }
    Ok(())
}

/// Where `lanes video` and `lanes batch` take the road geometry from.
#[derive(clap::Args, Clone)]
pub struct GeometryArgs {
    /// Lane width in metres: the scale across the road when the geometry is found in the video.
    #[arg(long, default_value_t = 3.7, value_name = "M")]
    pub lane_width: f64,
    /// Write the geometry found in the video as a config that `--config` accepts.
    #[arg(long, value_name = "FILE.toml")]
    pub save_geometry: Option<PathBuf>,
}

impl GeometryArgs {
    /// The configuration for one video: the `--config` file over the preset; its perspective
    /// as given when the file names `[perspective]`, else found in the video (printed).
    pub fn resolve(
        &self,
        input: &Path,
        config: Option<&Path>,
        camera: Option<&Camera>,
    ) -> Result<Config> {
        use lanes::geometry::selfcal::{self, GeometryChoice, SelfCalOptions};
        let cfg = load_config(config)?;
        let fixed = match config {
            Some(p) => Config::file_names_section(p, "perspective")?,
            None => false,
        };
        let mut opts = SelfCalOptions::default();
        opts.estimate.lane_width_m = self.lane_width;
        opts.estimate.validate()?;
        let choice = if fixed {
            GeometryChoice::Fixed
        } else {
            GeometryChoice::Find
        };
        let (cfg, found) = selfcal::resolve(input, &cfg, choice, camera, &opts)?;
        if let Some(g) = &found {
            eprintln!("lanes: {}: {}", input.display(), g.describe());
            for w in &g.warnings {
                eprintln!("lanes: warning: {}: {w}", input.display());
            }
            if let Some(out) = &self.save_geometry {
                let text = lanes::geometry::autoperspective::report::config_file_text(
                    &g.estimate,
                    &opts.estimate,
                    &cfg,
                    g.frames_used,
                    g.frames_sampled,
                    g.size,
                );
                lanes::base::atomic::write_atomic(out, text.as_bytes())
                    .with_context(|| format!("{}: cannot write the geometry", out.display()))?;
                eprintln!("lanes: wrote the geometry to {}", out.display());
            }
        } else if self.save_geometry.is_some() {
            anyhow::bail!(
                "--save-geometry: the geometry comes from {} (it names [perspective]); nothing found to save",
                config.map(|p| p.display().to_string()).unwrap_or_default()
            );
        }
        Ok(cfg)
    }
}
