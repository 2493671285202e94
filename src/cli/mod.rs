//! Command-line interface: one file per subcommand; raw flags are resolved here and nothing
//! below the CLI reads them.

use anyhow::Result;
use clap::{Parser, Subcommand};

/// `println!` that returns an error from the calling function, instead of panicking, when
/// standard output is closed: `lanes image DIR --json | head -1` stops quietly (see
/// [`out::stdout_closed`]).
macro_rules! outln {
    () => {
        outln!("")
    };
    ($($arg:tt)*) => {
        if let Err(e) = $crate::cli::out::write_line(format_args!($($arg)*)) {
            return Err(e.into());
        }
    };
}

pub mod batch;
pub mod bench;
pub mod calibrate;
pub mod common;
pub mod config_cmd;
pub mod eval;
pub mod events;
pub mod image;
pub mod inputs;
pub mod out;
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
