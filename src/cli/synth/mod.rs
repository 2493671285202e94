//! `lanes synth`: render synthetic road stills, a road video, or chessboard views through a known
//! camera, with the camera file, the matching `lanes` config and the ground truth beside them.
//! One file per subcommand; `args.rs` holds the flags they share.

mod args;
mod chessboards;
mod road;
mod video;

use crate::cli::common::ensure_out_dir;
use anyhow::Result;
use clap::{Args, Subcommand};
use lanes::tools::synth::{self as synth};
use std::path::PathBuf;

#[derive(Args)]
pub struct SynthArgs {
    #[command(subcommand)]
    what: SynthCommand,
}

#[derive(Subcommand)]
enum SynthCommand {
    /// Road stills (one, or a standard suite) with truth JSON, camera file and config.
    Road(road::RoadArgs),
    /// A road video (MP4, mp4v) whose vehicle drives along the road, with per-frame truth.
    Video(video::VideoArgs),
    /// Chessboard calibration views through the known camera.
    Chessboards(chessboards::ChessboardArgs),
    /// Images with no lane (flat grey, noise, blurred noise, a flipped road, stripes), 1280x720
    /// PNG, for `lanes eval --negatives`.
    Negatives(NegativesArgs),
}

#[derive(Args)]
struct NegativesArgs {
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
}

pub fn run(a: SynthArgs) -> Result<i32> {
    match a.what {
        SynthCommand::Road(r) => road::run(r),
        SynthCommand::Video(v) => video::run(v),
        SynthCommand::Chessboards(c) => chessboards::run(c),
        SynthCommand::Negatives(n) => run_negatives(n),
    }
}

fn run_negatives(a: NegativesArgs) -> Result<i32> {
    ensure_out_dir(&a.output, "-o")?;
    let set = synth::negatives::negatives()?;
    for n in &set {
        let p = a.output.join(format!("{}.png", n.name));
        n.image.write(&p)?;
        eprintln!("{}", p.display());
    }
    eprintln!(
        "lanes synth negatives: {} images ({}x{}) in {}",
        set.len(),
        synth::negatives::WIDTH,
        synth::negatives::HEIGHT,
        a.output.display()
    );
    Ok(0)
}
