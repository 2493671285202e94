//! Chessboard camera calibration: find the board (or its largest visible sub-grid) in each image,
//! calibrate once over all views, and report per-view reprojection errors.
//!
//! Detection tries OpenCV's sector-based detector (`find_chessboard_corners_sb`) first and falls
//! back to the classic detector refined with `corner_sub_pix`. When the full board is not found,
//! smaller sub-grids are tried in order of corner count: a view of part of a planar board is a
//! valid calibration view with its own object points (each view has its own pose).

mod detect;
pub mod report;
pub mod sanity;

use detect::term;
pub use detect::{
    candidate_grids, detect_grid, find_board, grid_irregularity, Board, BoardSearch, DetectOptions,
    Detection, Detector, MAX_IRREGULARITY,
};

use crate::base::camera::Camera;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use opencv::calib3d;
use opencv::core::{self, Mat, Point2f, Point3f, Size, Vector};
use opencv::prelude::*;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Object points of a `cols` x `rows` grid on the z = 0 plane, row-major like the detectors.
pub fn object_points(cols: i32, rows: i32, square: f64) -> Vector<Point3f> {
    let mut v = Vector::with_capacity((cols * rows) as usize);
    for r in 0..rows {
        for c in 0..cols {
            v.push(Point3f::new(
                (c as f64 * square) as f32,
                (r as f64 * square) as f32,
                0.0,
            ));
        }
    }
    v
}

/// The result of one calibration over all views.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub camera: Camera,
    /// Overall RMS reprojection error over all corners, in pixels.
    pub rms: f64,
    /// RMS reprojection error of each view, in pixels, in the order of the views given.
    pub per_view: Vec<f64>,
}

/// Calibrate once over all detections (OpenCV's default model: k1, k2, p1, p2, k3).
pub fn calibrate(
    views: &[&Detection],
    square: f64,
    width: i32,
    height: i32,
) -> Result<Calibration> {
    if views.is_empty() {
        return Err(Error::Invalid("calibrate: no views".into()));
    }
    let mut obj = Vector::<Vector<Point3f>>::new();
    let mut img = Vector::<Vector<Point2f>>::new();
    for d in views {
        obj.push(object_points(d.cols, d.rows, square));
        img.push(d.corners.clone());
    }
    let mut k = Mat::default();
    let mut dist = Mat::default();
    let mut rvecs = Vector::<Mat>::new();
    let mut tvecs = Vector::<Mat>::new();
    let mut std_i = Mat::default();
    let mut std_e = Mat::default();
    let mut per_view = Mat::default();
    let rms = calib3d::calibrate_camera_extended(
        &obj,
        &img,
        Size::new(width, height),
        &mut k,
        &mut dist,
        &mut rvecs,
        &mut tvecs,
        &mut std_i,
        &mut std_e,
        &mut per_view,
        // LU instead of SVD in the Levenberg-Marquardt steps: same result here, 6x faster.
        calib3d::CALIB_USE_LU,
        term(30, f64::EPSILON)?,
    )?;
    let mut errs = Vec::with_capacity(views.len());
    let mut pv = Mat::default();
    per_view.convert_to_def(&mut pv, core::CV_64F)?;
    for i in 0..pv.total() {
        errs.push(*pv.at::<f64>(i as i32)?);
    }
    let camera = Camera::from_mats(width, height, &k, &dist)?;
    Ok(Calibration {
        camera,
        rms,
        per_view: errs,
    })
}

/// Median of a list (0 when empty).
pub fn median(v: &[f64]) -> f64 {
    crate::base::stats::median(v).unwrap_or(0.0)
}

/// Which views have an error over `factor` times the median error.
pub fn flag_outliers(per_view: &[f64], factor: f64) -> Vec<bool> {
    let m = median(per_view);
    per_view.iter().map(|&e| e > factor * m).collect()
}

/// A copy of the frame with the detected corners drawn (OpenCV's coloured rows).
pub fn draw_corners(frame: &BgrFrame, det: &Detection) -> Result<BgrFrame> {
    let mut out = frame.clone();
    calib3d::draw_chessboard_corners(
        out.mat_mut(),
        Size::new(det.cols, det.rows),
        &det.corners,
        true,
    )?;
    Ok(out)
}

/// What happened to one input image.
#[derive(Debug, Clone)]
pub enum ViewOutcome {
    /// The file could not be read as an image (skipped, counted).
    Unreadable,
    /// Readable, but no board or sub-grid was found; the grid sizes tried are listed.
    NoBoard { tried: Vec<(i32, i32)> },
    /// A board was found.
    Found(Detection),
}

/// One input image of a calibration run.
#[derive(Debug, Clone)]
pub struct ViewReport {
    pub path: PathBuf,
    /// Image size as read (0x0 when unreadable).
    pub width: i32,
    pub height: i32,
    pub outcome: ViewOutcome,
    /// RMS reprojection error of this view after calibration (views with a board only).
    pub error: Option<f64>,
    /// Error over 3x the median.
    pub flagged: bool,
}

impl ViewReport {
    /// The file name (no directories), as stored in the camera file.
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
    /// True when this image differs in size from the calibration size (within the tolerance).
    pub fn off_size(&self, width: i32, height: i32) -> bool {
        matches!(
            self.outcome,
            ViewOutcome::Found(_) | ViewOutcome::NoBoard { .. }
        ) && (self.width, self.height) != (width, height)
    }
}

/// Options of a whole calibration run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunOptions {
    pub detect: DetectOptions,
    /// Images whose size differs from the majority by at most this many pixels per axis are used
    /// as they are (corner coordinates share the top-left origin); larger differences are an
    /// error. 2 px admits the two 1281x721 images of the Udacity set; 0 makes any difference an error.
    pub size_tolerance: i32,
    /// Views with an error over this factor times the median are flagged.
    pub flag_factor: f64,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            detect: DetectOptions::default(),
            size_tolerance: 2,
            flag_factor: 3.0,
        }
    }
}

/// Everything a calibration run found and computed.
#[derive(Debug, Clone)]
pub struct CalibrationRun {
    pub board: Board,
    /// The calibration image size (the most common size among the readable images).
    pub width: i32,
    pub height: i32,
    /// One report per input, in input order.
    pub views: Vec<ViewReport>,
    pub calibration: Calibration,
    /// Median of the per-view errors.
    pub median_error: f64,
    /// Wall-clock seconds spent reading images and finding boards, and calibrating.
    pub detect_seconds: f64,
    pub calibrate_seconds: f64,
}

impl CalibrationRun {
    /// Reports of the views used in the calibration, in input order.
    pub fn used(&self) -> impl Iterator<Item = &ViewReport> {
        self.views
            .iter()
            .filter(|v| matches!(v.outcome, ViewOutcome::Found(_)))
    }
    /// Number of unreadable inputs.
    pub fn unreadable(&self) -> usize {
        self.views
            .iter()
            .filter(|v| matches!(v.outcome, ViewOutcome::Unreadable))
            .count()
    }
    /// Number of readable inputs where no board was found.
    pub fn no_board(&self) -> usize {
        self.views
            .iter()
            .filter(|v| matches!(v.outcome, ViewOutcome::NoBoard { .. }))
            .count()
    }
}

/// Read one image and look for the board.
fn examine(path: &Path, board: &Board, opts: &DetectOptions) -> Result<ViewReport> {
    let frame = match BgrFrame::read(path) {
        Ok(f) => f,
        // Unreadable, corrupt or oversized: reported and skipped like a view with no board.
        Err(
            Error::UnreadableImage { .. } | Error::CorruptImage { .. } | Error::ImageSize { .. },
        ) => {
            return Ok(ViewReport {
                path: path.to_path_buf(),
                width: 0,
                height: 0,
                outcome: ViewOutcome::Unreadable,
                error: None,
                flagged: false,
            })
        }
        Err(e) => return Err(e),
    };
    let gray = frame.to_gray()?;
    let search = find_board(&gray, board, opts)?;
    let outcome = match search.detection {
        Some(d) => ViewOutcome::Found(d),
        None => ViewOutcome::NoBoard {
            tried: search.tried,
        },
    };
    Ok(ViewReport {
        path: path.to_path_buf(),
        width: frame.width(),
        height: frame.height(),
        outcome,
        error: None,
        flagged: false,
    })
}

/// The most common size among readable images (ties: the first seen) and how many have it.
fn majority_size(views: &[ViewReport]) -> Option<((i32, i32), usize)> {
    let mut counts: Vec<((i32, i32), usize)> = Vec::new();
    for v in views
        .iter()
        .filter(|v| !matches!(v.outcome, ViewOutcome::Unreadable))
    {
        let s = (v.width, v.height);
        match counts.iter_mut().find(|(k, _)| *k == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((s, 1)),
        }
    }
    let mut best: Option<((i32, i32), usize)> = None;
    for (s, n) in counts {
        if best.map(|(_, bn)| n > bn).unwrap_or(true) {
            best = Some((s, n));
        }
    }
    best
}

/// Calibrate from image files: detect in parallel, check sizes, calibrate once over all views.
///
/// Unreadable images and images with no board are kept in the report (and skipped); it is an
/// error when no image is readable, when no board is found anywhere (the error lists the grids
/// tried), or when an image's size is off the majority by more than the tolerance (named).
pub fn calibrate_images(
    paths: &[PathBuf],
    board: &Board,
    opts: &RunOptions,
) -> Result<CalibrationRun> {
    if paths.is_empty() {
        return Err(Error::Invalid("no input images".into()));
    }
    let t0 = std::time::Instant::now();
    let mut views: Vec<ViewReport> = paths
        .par_iter()
        .map(|p| examine(p, board, &opts.detect))
        .collect::<Result<Vec<_>>>()?;
    let Some(((width, height), n_major)) = majority_size(&views) else {
        let names: Vec<String> = views.iter().map(|v| v.file_name()).collect();
        return Err(Error::Invalid(format!(
            "none of the {} inputs is a readable image: {}",
            views.len(),
            names.join(", ")
        )));
    };
    let readable = views
        .iter()
        .filter(|v| !matches!(v.outcome, ViewOutcome::Unreadable))
        .count();
    let off = |v: &ViewReport, (w, h): (i32, i32)| {
        (v.width - w).abs() > opts.size_tolerance || (v.height - h).abs() > opts.size_tolerance
    };
    // Photos of the majority's size turned (a phone held upright): one calibration is of one
    // orientation, and which way each was turned is unknown; all of them named at once.
    let turned: Vec<String> = views
        .iter()
        .filter(|v| !matches!(v.outcome, ViewOutcome::Unreadable))
        .filter(|v| off(v, (width, height)) && !off(v, (height, width)))
        .map(|v| v.file_name())
        .collect();
    if !turned.is_empty() {
        return Err(Error::Invalid(format!(
            "{} of {} readable images are {}x{}, the others {}x{}: the same camera turned (photos taken upright); a calibration is of one orientation, so leave these out or turn them all one way: {}",
            turned.len(),
            readable,
            height,
            width,
            width,
            height,
            turned.join(", ")
        )));
    }
    for v in views
        .iter()
        .filter(|v| !matches!(v.outcome, ViewOutcome::Unreadable))
    {
        if off(v, (width, height)) {
            return Err(Error::Invalid(format!(
                "{}: image is {}x{}, the other images are {}x{} ({} of {} readable images); all must have one size",
                v.path.display(),
                v.width,
                v.height,
                width,
                height,
                n_major,
                readable
            )));
        }
    }
    let found: Vec<&Detection> = views
        .iter()
        .filter_map(|v| match &v.outcome {
            ViewOutcome::Found(d) => Some(d),
            _ => None,
        })
        .collect();
    if found.is_empty() {
        let grids = candidate_grids(board, &opts.detect);
        let grid_list: Vec<String> = grids.iter().map(|(c, r)| format!("{c}x{r}")).collect();
        let names: Vec<String> = views
            .iter()
            .filter(|v| !matches!(v.outcome, ViewOutcome::Unreadable))
            .map(|v| v.file_name())
            .collect();
        return Err(Error::NoBoards {
            count: readable,
            tried: format!(
                "{} (tried the sector-based and classic detectors on grids {}; sub-grids only where a chessboard pattern was seen)",
                names.join(", "),
                grid_list.join(", ")
            ),
        });
    }
    let detect_seconds = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    let calibration = calibrate(&found, board.square, width, height)?;
    let calibrate_seconds = t1.elapsed().as_secs_f64();
    let flags = flag_outliers(&calibration.per_view, opts.flag_factor);
    let mut i = 0;
    for v in views.iter_mut() {
        if matches!(v.outcome, ViewOutcome::Found(_)) {
            v.error = calibration.per_view.get(i).copied();
            v.flagged = flags.get(i).copied().unwrap_or(false);
            i += 1;
        }
    }
    let median_error = median(&calibration.per_view);
    Ok(CalibrationRun {
        board: *board,
        width,
        height,
        views,
        calibration,
        median_error,
        detect_seconds,
        calibrate_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_grids_start_with_full_board_and_shrink() {
        let b = Board::new(9, 6, 1.0).unwrap();
        let g = candidate_grids(&b, &DetectOptions::default());
        assert_eq!(g[0], (9, 6));
        assert_eq!(g[1], (8, 6));
        assert_eq!(g[2], (9, 5));
        assert!(g
            .windows(2)
            .skip(1)
            .all(|w| w[0].0 * w[0].1 >= w[1].0 * w[1].1));
        assert!(g.iter().all(|&(c, r)| c * r >= 27 && c >= 3 && r >= 3));
        assert_eq!(g.last(), Some(&(9, 3)));
        let none = candidate_grids(
            &b,
            &DetectOptions {
                sub_grids: false,
                ..Default::default()
            },
        );
        assert_eq!(none, vec![(9, 6)]);
    }

    #[test]
    fn object_points_are_row_major_on_z0() {
        let p = object_points(3, 2, 2.5);
        assert_eq!(p.len(), 6);
        assert_eq!(p.get(1).unwrap(), Point3f::new(2.5, 0.0, 0.0));
        assert_eq!(p.get(3).unwrap(), Point3f::new(0.0, 2.5, 0.0));
        assert_eq!(p.get(5).unwrap(), Point3f::new(5.0, 2.5, 0.0));
    }

    #[test]
    fn median_and_flags() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        let f = flag_outliers(&[0.5, 0.6, 0.4, 2.0, 0.5], 3.0);
        assert_eq!(f, vec![false, false, false, true, false]);
    }

    #[test]
    fn grid_irregularity_flags_a_skipped_column() {
        let lattice = |xs: &[f32]| -> Vector<Point2f> {
            let mut v = Vector::new();
            for r in 0..3 {
                for &x in xs {
                    v.push(Point2f::new(x, 10.0 + 50.0 * r as f32));
                }
            }
            v
        };
        let regular = lattice(&[0.0, 50.0, 100.0, 150.0]);
        assert!(grid_irregularity(&regular, 4, 3) < 1e-6);
        // Perspective: steps shrinking by 10 % each are fine.
        let perspective = lattice(&[0.0, 50.0, 95.0, 135.5]);
        assert!(grid_irregularity(&perspective, 4, 3) < 0.15);
        // The shape seen from the sector-based detector on calibration4.jpg: steps 190, 170, 100.
        let skipped = lattice(&[270.0, 460.0, 630.0, 730.0]);
        assert!(grid_irregularity(&skipped, 4, 3) > MAX_IRREGULARITY);
    }

    #[test]
    fn board_rejects_bad_sizes() {
        assert!(Board::new(1, 6, 1.0).is_err());
        assert!(Board::new(9, 6, 0.0).is_err());
        assert!(Board::new(9, 6, f64::NAN).is_err());
    }
}
