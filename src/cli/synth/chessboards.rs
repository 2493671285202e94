//! `lanes synth chessboards`: views of a board through a known camera, with their truth.

use crate::cli::common::ensure_out_dir;
use anyhow::{Context, Result};
use clap::Args;
use lanes::base::camera::Camera;
use lanes::tools::synth::chessboard;
use lanes::tools::synth::rig::Rig;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub(super) struct ChessboardArgs {
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub(super) output: PathBuf,
    /// Number of views.
    #[arg(long, default_value_t = 20)]
    pub(super) views: usize,
    /// Inner corners per row x per column.
    #[arg(long, default_value = "9x6", value_name = "COLSxROWS")]
    pub(super) board: String,
    /// Side of one square (the unit of the poses in the truth; intrinsics do not depend on it).
    #[arg(long, default_value_t = 1.0)]
    pub(super) square: f64,
    /// Seed of the board poses and the noise.
    #[arg(long, default_value_t = 1)]
    pub(super) seed: u64,
    /// Camera to render through (default: the synthetic road camera of `lanes synth road`).
    #[arg(long, value_name = "FILE")]
    pub(super) camera: Option<PathBuf>,
}

/// Truth of a chessboard set: the camera and each view's pose and corner positions.
#[derive(Serialize)]
pub(super) struct ChessboardTruth {
    pub(super) kind: &'static str,
    pub(super) camera: String,
    pub(super) board: [i32; 2],
    pub(super) square: f64,
    pub(super) views: Vec<ChessboardViewTruth>,
}

#[derive(Serialize)]
pub(super) struct ChessboardViewTruth {
    pub(super) image: String,
    pub(super) rvec: [f64; 3],
    pub(super) tvec: [f64; 3],
    /// Distorted image positions of the inner corners, row-major.
    pub(super) corners: Vec<[f64; 2]>,
}

fn parse_board(s: &str) -> Result<(i32, i32)> {
    let bad = || anyhow::anyhow!("--board {s:?} (expected COLSxROWS, e.g. 9x6, each 2..=50)");
    let (c, r) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (c, r): (i32, i32) = (
        c.trim().parse().map_err(|_| bad())?,
        r.trim().parse().map_err(|_| bad())?,
    );
    if !(2..=50).contains(&c) || !(2..=50).contains(&r) {
        return Err(bad());
    }
    Ok((c, r))
}

pub(super) fn run(a: ChessboardArgs) -> Result<i32> {
    let board = parse_board(&a.board)?;
    if !(1..=200).contains(&a.views) {
        anyhow::bail!("--views = {} (expected 1..=200)", a.views);
    }
    if !(a.square.is_finite() && a.square > 0.0) {
        anyhow::bail!("--square = {} (expected > 0)", a.square);
    }
    super::args::check_camera_output(a.camera.as_deref(), &a.output, None)?;
    let camera = match &a.camera {
        Some(p) => Camera::load(p).with_context(|| "loading camera".to_string())?,
        None => Rig::default().camera,
    };
    ensure_out_dir(&a.output, "-o")?;
    let t0 = Instant::now();
    let views = chessboard::render_views(&camera, board, a.square, a.views, a.seed)?;
    let cam = "camera.yml";
    camera.save(&a.output.join(cam), None)?;
    let mut truth = ChessboardTruth {
        kind: "lanes-synth-chessboards",
        camera: cam.into(),
        board: [board.0, board.1],
        square: a.square,
        views: Vec::new(),
    };
    for (i, v) in views.iter().enumerate() {
        let name = format!("view{i:02}.png");
        v.frame.write(&a.output.join(&name))?;
        truth.views.push(ChessboardViewTruth {
            image: name,
            rvec: v.pose.rvec,
            tvec: v.pose.tvec,
            corners: v.corners.clone(),
        });
    }
    let tpath = a.output.join("chessboards.json");
    std::fs::write(&tpath, serde_json::to_string_pretty(&truth)? + "\n")
        .with_context(|| format!("{}: cannot write", tpath.display()))?;
    eprintln!(
        "lanes synth chessboards: {} views of a {}x{} board in {:.1} s, camera {cam}, truth chessboards.json in {}",
        views.len(),
        board.0,
        board.1,
        t0.elapsed().as_secs_f64(),
        a.output.display()
    );
    Ok(0)
}
