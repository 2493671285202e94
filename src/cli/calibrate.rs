//! `lanes calibrate`: chessboard images -> OpenCV camera file (`lanes undistort` is in
//! `undistort.rs`).

use super::common::ensure_out_dir;
use anyhow::{bail, Context, Result};
use clap::Args;
use lanes::base::camera::CalibrationInfo;
use lanes::geometry::calibrate::{self, report, Board, DetectOptions, RunOptions, ViewOutcome};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct CalibrateArgs {
    /// Chessboard images, directories of them (.jpg, .jpeg, .png, .bmp, .tif, .tiff, .webp), or
    /// videos of the board (a dashcam records nothing else): `--frames` frames sampled from each.
    #[arg(required = true, value_name = "DIR|IMAGE|VIDEO")]
    inputs: Vec<PathBuf>,
    /// Frames sampled from each video input, spread evenly over it (frames where the board is
    /// blurred or cut off are reported and left out, as photos are).
    #[arg(long, value_name = "N", default_value_t = 40, value_parser = super::common::frame_count)]
    frames: usize,
    /// Inner corners per row x per column, e.g. 9x6. Where the whole board is not visible the
    /// largest visible sub-grid (down to half the corners) is used.
    #[arg(long, value_name = "COLSxROWS", value_parser = parse_board)]
    board: (i32, i32),
    /// Side of one square, in the unit you want translations in (does not change the intrinsics).
    #[arg(long, value_name = "SIZE", default_value_t = 1.0)]
    square_size: f64,
    /// Camera file to write (OpenCV FileStorage YAML, field names of OpenCV's calibration sample).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Write each image with its detected corners drawn into this directory.
    #[arg(long, value_name = "DIR")]
    corners_dir: Option<PathBuf>,
    /// Print the summary as one JSON object on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Images whose size is off the most common size by at most this many pixels per axis are
    /// used as they are (same top-left origin) and marked in the table; larger differences are an
    /// error naming the image. 0 makes any difference an error.
    #[arg(long, value_name = "PX", default_value_t = 2)]
    size_tolerance: i32,
    /// Use full boards only (no sub-grid search).
    #[arg(long)]
    no_sub_grids: bool,
    /// Use --board as given: no check, before the search, that the photos show a board of
    /// that size (the check replaces a size that does not fit with the one the photos show).
    #[arg(long)]
    board_as_given: bool,
}

/// Parse `9x6` into (9, 6).
fn parse_board(s: &str) -> std::result::Result<(i32, i32), String> {
    let (a, b) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{s:?}: expected COLSxROWS inner corners, e.g. 9x6"))?;
    let c: i32 = a
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: {a:?} is not a whole number"))?;
    let r: i32 = b
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: {b:?} is not a whole number"))?;
    if !(2..=100).contains(&c) || !(2..=100).contains(&r) {
        return Err(format!("{s:?}: each side must be 2..=100 inner corners"));
    }
    Ok((c, r))
}

pub fn run_calibrate(a: CalibrateArgs) -> Result<i32> {
    let t0 = Instant::now();
    let board = Board::new(a.board.0, a.board.1, a.square_size).context("--board/--square-size")?;
    if a.size_tolerance < 0 {
        bail!("--size-tolerance {}: must be 0 or more", a.size_tolerance);
    }
    // Videos of the board are sampled into a temporary folder, removed at the end.
    let sampled = super::inputs::SampledStills::new("calibrate");
    let paths = super::inputs::stills_of(&a.inputs, a.frames, &sampled)?;
    // Every board image (folders expanded) and every video sampled: none may be an output.
    let inputs: Vec<(&str, Option<&std::path::Path>)> = paths
        .iter()
        .map(|p| ("board image", Some(p.as_path())))
        .chain(
            a.inputs
                .iter()
                .filter(|p| p.is_file() && lanes::video::is_video_path(p))
                .map(|p| ("board video", Some(p.as_path()))),
        )
        .collect();
    let corner_pictures: Vec<PathBuf> = match &a.corners_dir {
        Some(d) => lanes::base::still::unique_names(&paths)
            .iter()
            .map(|n| d.join(format!("{}_corners.jpg", lanes::base::still::stem_of(n))))
            .collect(),
        None => Vec::new(),
    };
    let mut outputs = vec![("-o path", Some(a.output.as_path()))];
    outputs.extend(
        corner_pictures
            .iter()
            .map(|p| ("--corners-dir", Some(p.as_path()))),
    );
    super::common::check_outputs(&inputs, &outputs)?;
    for p in &paths {
        if !lanes::base::still::is_still_path(p) {
            bail!(
                "{}: not an image file (expected .{}, or a video of the board)",
                p.display(),
                lanes::base::still::STILL_EXTENSIONS.join(", .")
            );
        }
    }
    if let Some(parent) = a.output.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            bail!(
                "{}: output directory {} does not exist",
                a.output.display(),
                parent.display()
            );
        }
    }
    if let Some(d) = &a.corners_dir {
        ensure_out_dir(d, "--corners-dir")?;
    }
    let opts = RunOptions {
        detect: DetectOptions {
            sub_grids: !a.no_sub_grids,
            ..DetectOptions::default()
        },
        size_tolerance: a.size_tolerance,
        ..RunOptions::default()
    };
    // The usual --board mistakes (squares counted, a grid smaller than the board), caught on a
    // few photos before the search: the size that fits is used and named.
    let mut board = board;
    let suggestion = if a.board_as_given {
        None
    } else {
        let probe = calibrate::sanity::probe_board(&paths, &opts.detect)?;
        calibrate::sanity::suggest_board((board.cols, board.rows), &probe, opts.detect.min_fraction)
    };
    if let Some(s) = suggestion {
        eprintln!(
            "warning: --board {}x{} does not fit: {}; calibrating with --board {}x{} instead (--board-as-given keeps {}x{})",
            board.cols, board.rows, s.reason, s.cols, s.rows, board.cols, board.rows
        );
        board = Board::new(s.cols, s.rows, a.square_size).context("--board")?;
    }
    let run = calibrate::calibrate_images(&paths, &board, &opts)?;
    for w in calibrate::sanity::warnings(&run.calibration) {
        eprintln!("warning: {}: {w}", a.output.display());
    }
    let calib_s = t0.elapsed().as_secs_f64();

    for v in &run.views {
        match &v.outcome {
            ViewOutcome::Unreadable => eprintln!(
                "warning: {} (skipped)",
                // The reason (corrupt, too large, not an image), read again for the message.
                lanes::base::still::read_bgr(&v.path)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| format!("{}: cannot read as an image", v.path.display()))
            ),
            ViewOutcome::NoBoard { tried } => eprintln!(
                "warning: {}: no chessboard found (tried {}) (skipped)",
                v.path.display(),
                tried
                    .iter()
                    .map(|(c, r)| format!("{c}x{r}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ViewOutcome::Found(_) => {}
        }
    }

    let used: Vec<_> = run.used().collect();
    let info = CalibrationInfo {
        board_width: board.cols,
        board_height: board.rows,
        square_size: board.square,
        avg_reprojection_error: run.calibration.rms,
        per_view_reprojection_errors: run.calibration.per_view.clone(),
        images: used.iter().map(|v| v.file_name()).collect(),
    };
    run.calibration.camera.save(&a.output, Some(&info))?;

    if let Some(dir) = &a.corners_dir {
        report::write_corners(&run, dir)?;
    }
    let total_s = t0.elapsed().as_secs_f64();

    if a.json {
        let s = report::summary_json(&run, &info, &a.output, total_s);
        outln!("{}", serde_json::to_string(&s)?);
    } else {
        outln!("{}", report::table(&run).trim_end_matches('\n'));
        outln!("wrote {}", a.output.display());
        if let Some(dir) = &a.corners_dir {
            outln!("wrote corner pictures to {}", dir.display());
        }
        outln!(
            "time: {calib_s:.2} s to read, detect and calibrate ({} images: detect {:.2} s on {} threads, calibrate {:.2} s), {total_s:.2} s in all",
            run.views.len(),
            run.detect_seconds,
            rayon::current_num_threads(),
            run.calibrate_seconds
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::parse_board;

    #[test]
    fn parse_board_accepts_and_rejects() {
        assert_eq!(parse_board("9x6"), Ok((9, 6)));
        assert_eq!(parse_board("7X5"), Ok((7, 5)));
        assert!(parse_board("9").is_err());
        assert!(parse_board("9x").is_err());
        assert!(parse_board("1x6").is_err());
        assert!(parse_board("axb").is_err());
    }
}
