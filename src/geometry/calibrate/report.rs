//! What `lanes calibrate` reports: the per-view table, the JSON summary and the corner
//! pictures of a calibration run.

use super::{CalibrationRun, ViewOutcome};
use crate::base::camera::CalibrationInfo;
use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// One line into a `String` (writing to a `String` cannot fail).
macro_rules! outln {
    ($o:expr, $($t:tt)*) => {{
        let _ = writeln!($o, $($t)*);
    }};
}

/// One view in the JSON summary.
#[derive(Serialize)]
pub struct ViewJson {
    pub file: String,
    pub width: i32,
    pub height: i32,
    /// `found`, `no_board` or `unreadable`.
    pub status: &'static str,
    pub detector: Option<&'static str>,
    pub grid: Option<[i32; 2]>,
    pub error_px: Option<f64>,
    pub flagged: bool,
}

/// The JSON summary: the camera file's fields plus the per-view table and counts.
#[derive(Serialize)]
pub struct SummaryJson {
    pub output: String,
    pub image_width: i32,
    pub image_height: i32,
    pub board_width: i32,
    pub board_height: i32,
    pub square_size: f64,
    pub camera_matrix: [[f64; 3]; 3],
    pub distortion_coefficients: Vec<f64>,
    pub avg_reprojection_error: f64,
    pub per_view_reprojection_errors: Vec<f64>,
    pub images: Vec<String>,
    pub median_view_error: f64,
    pub flagged: Vec<String>,
    pub used: usize,
    pub inputs: usize,
    pub full_boards: usize,
    pub sub_grids: usize,
    pub no_board: usize,
    pub unreadable: usize,
    pub off_size: Vec<String>,
    pub views: Vec<ViewJson>,
    pub seconds: f64,
}

/// The grid found in a view, as the table shows it.
pub fn grid_str(run: &CalibrationRun, o: &ViewOutcome) -> String {
    match o {
        ViewOutcome::Found(d) if d.is_partial(&run.board) => {
            format!("{}x{} (part)", d.cols, d.rows)
        }
        ViewOutcome::Found(d) => format!("{}x{}", d.cols, d.rows),
        ViewOutcome::NoBoard { .. } => "none".into(),
        ViewOutcome::Unreadable => "-".into(),
    }
}

/// The per-view table `lanes calibrate` prints, with the camera summary under it.
pub fn table(run: &CalibrationRun) -> String {
    let mut out = String::new();
    let name_w = run
        .views
        .iter()
        .map(|v| v.file_name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    outln!(
        out,
        "{:<name_w$}  {:<8} {:<12} {:<10} {:>9}",
        "file",
        "detector",
        "grid",
        "size",
        "error px"
    );
    for v in &run.views {
        let det = match &v.outcome {
            ViewOutcome::Found(d) => d.detector.name(),
            _ => "-",
        };
        let size = if v.width > 0 {
            format!("{}x{}", v.width, v.height)
        } else {
            "-".into()
        };
        let err = v
            .error
            .map(|e| format!("{e:.3}"))
            .unwrap_or_else(|| "-".into());
        let mut note = String::new();
        if v.flagged {
            note.push_str("  FLAGGED: over 3x median");
        }
        if v.off_size(run.width, run.height) {
            note.push_str(&format!(
                "  size off {}x{}: used as is",
                run.width, run.height
            ));
        }
        match &v.outcome {
            ViewOutcome::Unreadable => note.push_str("  unreadable, skipped"),
            ViewOutcome::NoBoard { .. } => note.push_str("  no board, skipped"),
            ViewOutcome::Found(_) => {}
        }
        outln!(
            out,
            "{:<name_w$}  {:<8} {:<12} {:<10} {:>9}{}",
            v.file_name(),
            det,
            grid_str(run, &v.outcome),
            size,
            err,
            note
        );
    }
    let used: Vec<_> = run.used().collect();
    let partial = used
        .iter()
        .filter(|v| matches!(&v.outcome, ViewOutcome::Found(d) if d.is_partial(&run.board)))
        .count();
    outln!(
        out,
        "boards: {} of {} images used ({} full {}x{}, {} sub-grids); {} without a board, {} unreadable",
        used.len(),
        run.views.len(),
        used.len() - partial,
        run.board.cols,
        run.board.rows,
        partial,
        run.no_board(),
        run.unreadable()
    );
    let flagged: Vec<String> = run
        .views
        .iter()
        .filter(|v| v.flagged)
        .map(|v| v.file_name())
        .collect();
    outln!(
        out,
        "RMS {:.3} px; median view error {:.3} px; flagged (over 3x median = {:.3} px): {}",
        run.calibration.rms,
        run.median_error,
        3.0 * run.median_error,
        if flagged.is_empty() {
            "none".to_string()
        } else {
            flagged.join(", ")
        }
    );
    let c = &run.calibration.camera;
    outln!(
        out,
        "camera {}x{}: fx {:.1} fy {:.1} cx {:.1} cy {:.1}",
        c.width,
        c.height,
        c.fx(),
        c.fy(),
        c.cx(),
        c.cy()
    );
    let names = ["k1", "k2", "p1", "p2", "k3"];
    let d: Vec<String> = c
        .dist
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{} {:.5}", names.get(i).copied().unwrap_or("k"), v))
        .collect();
    outln!(out, "distortion: {}", d.join(" "));
    out
}

/// The JSON summary of a calibration run written to `out`.
pub fn summary_json(
    run: &CalibrationRun,
    info: &CalibrationInfo,
    out: &Path,
    seconds: f64,
) -> SummaryJson {
    let c = &run.calibration.camera;
    let used: Vec<_> = run.used().collect();
    let partial = used
        .iter()
        .filter(|v| matches!(&v.outcome, ViewOutcome::Found(d) if d.is_partial(&run.board)))
        .count();
    let views = run
        .views
        .iter()
        .map(|v| {
            let (status, detector, grid) = match &v.outcome {
                ViewOutcome::Found(d) => ("found", Some(d.detector.name()), Some([d.cols, d.rows])),
                ViewOutcome::NoBoard { .. } => ("no_board", None, None),
                ViewOutcome::Unreadable => ("unreadable", None, None),
            };
            ViewJson {
                file: v.file_name(),
                width: v.width,
                height: v.height,
                status,
                detector,
                grid,
                error_px: v.error,
                flagged: v.flagged,
            }
        })
        .collect();
    SummaryJson {
        output: out.display().to_string(),
        image_width: c.width,
        image_height: c.height,
        board_width: info.board_width,
        board_height: info.board_height,
        square_size: info.square_size,
        camera_matrix: c.k,
        distortion_coefficients: c.dist.clone(),
        avg_reprojection_error: info.avg_reprojection_error,
        per_view_reprojection_errors: info.per_view_reprojection_errors.clone(),
        images: info.images.clone(),
        median_view_error: run.median_error,
        flagged: run
            .views
            .iter()
            .filter(|v| v.flagged)
            .map(|v| v.file_name())
            .collect(),
        used: used.len(),
        inputs: run.views.len(),
        full_boards: used.len() - partial,
        sub_grids: partial,
        no_board: run.no_board(),
        unreadable: run.unreadable(),
        off_size: run
            .views
            .iter()
            .filter(|v| v.off_size(run.width, run.height))
            .map(|v| v.file_name())
            .collect(),
        views,
        seconds,
    }
}

/// Write `<stem>_corners.jpg` for every view with a board (views that share a file name get
/// their folders in it, `still::unique_names`).
pub fn write_corners(run: &CalibrationRun, dir: &Path) -> Result<()> {
    let paths: Vec<std::path::PathBuf> = run.views.iter().map(|v| v.path.clone()).collect();
    let names = crate::base::still::unique_names(&paths);
    run.views
        .par_iter()
        .zip(names.par_iter())
        .filter_map(|(v, name)| match &v.outcome {
            ViewOutcome::Found(d) => Some((v, d, name)),
            _ => None,
        })
        .try_for_each(|(v, d, name)| -> Result<()> {
            let frame = BgrFrame::read(&v.path)?;
            let drawn = super::draw_corners(&frame, d)?;
            let stem = crate::base::still::stem_of(name);
            drawn.write(&dir.join(format!("{stem}_corners.jpg")))?;
            Ok(())
        })
}
