//! Chessboard camera calibration: find the board (or its largest visible sub-grid) in each image,
//! calibrate once over all views, and report per-view reprojection errors.
//!
//! Detection tries OpenCV's sector-based detector (`find_chessboard_corners_sb`) first and falls
//! back to the classic detector refined with `corner_sub_pix`. When the full board is not found,
//! smaller sub-grids are tried in order of corner count: a view of part of a planar board is a
//! valid calibration view with its own object points (each view has its own pose).

pub mod report;
pub mod sanity;

use crate::base::camera::Camera;
use crate::base::error::{Error, Result};
use crate::base::frame::{BgrFrame, GrayImage};
use opencv::core::{self, Mat, Point2f, Point3f, Size, TermCriteria, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// A chessboard: inner corners per row (`cols`) and per column (`rows`), square side in the
/// caller's unit (the unit of the translation vectors; intrinsics do not depend on it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Board {
    pub cols: i32,
    pub rows: i32,
    pub square: f64,
}

impl Board {
    /// A board of `cols` x `rows` inner corners with squares of side `square`.
    pub fn new(cols: i32, rows: i32, square: f64) -> Result<Self> {
        if cols < 2 || rows < 2 {
            return Err(Error::Invalid(format!(
                "board {cols}x{rows}: need at least 2x2 inner corners"
            )));
        }
        if !(square.is_finite() && square > 0.0) {
            return Err(Error::Invalid(format!(
                "square size {square}: must be a positive number"
            )));
        }
        Ok(Self { cols, rows, square })
    }
}

/// Which OpenCV detector found the corners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detector {
    /// `find_chessboard_corners_sb` (sector-based, sub-pixel accurate by itself).
    SectorBased,
    /// `find_chessboard_corners` refined with `corner_sub_pix`.
    Classic,
}

impl Detector {
    /// Short name used in tables and JSON: `sb` or `classic`.
    pub fn name(self) -> &'static str {
        match self {
            Detector::SectorBased => "sb",
            Detector::Classic => "classic",
        }
    }
}

/// Corners found in one image: a `cols` x `rows` grid (row-major, as OpenCV orders them).
#[derive(Debug, Clone)]
pub struct Detection {
    pub detector: Detector,
    pub cols: i32,
    pub rows: i32,
    pub corners: Vector<Point2f>,
}

impl Detection {
    /// True when the grid is smaller than the full board.
    pub fn is_partial(&self, board: &Board) -> bool {
        self.cols * self.rows < board.cols * board.rows
    }
}

/// How hard to look for a board.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DetectOptions {
    /// Try sub-grids when the full board is not found.
    pub sub_grids: bool,
    /// Smallest sub-grid tried, as a fraction of the full board's corner count. 0.5 lets a 9x6
    /// board go down to 27 corners (e.g. 9x3 or 7x4): below that a view adds little and the
    /// search costs more time on images with no board at all.
    pub min_fraction: f64,
    /// Smallest sub-grid side, in corners. 3 is the least that fixes a plane's orientation well.
    pub min_side: i32,
    /// The detectors run on a copy scaled so its longer side is at most this (0: never scale);
    /// corners are refined at full resolution. At 800 px a 1280x720 image costs 3x less time in
    /// the sector-based detector, with the same refined corners (checked on rendered views and
    /// on the Udacity set: fx within 0.05 %).
    pub detect_long_side: i32,
}

impl Default for DetectOptions {
    fn default() -> Self {
        Self {
            sub_grids: true,
            min_fraction: 0.5,
            min_side: 3,
            detect_long_side: 800,
        }
    }
}

/// Grid sizes to try for a board, the full board first, then sub-grids by corner count
/// (largest first; ties: wider first).
pub fn candidate_grids(board: &Board, opts: &DetectOptions) -> Vec<(i32, i32)> {
    let mut v = vec![(board.cols, board.rows)];
    if opts.sub_grids {
        let full = (board.cols * board.rows) as f64;
        let mut subs: Vec<(i32, i32)> = Vec::new();
        for c in opts.min_side..=board.cols {
            for r in opts.min_side..=board.rows {
                if (c, r) != (board.cols, board.rows) && (c * r) as f64 >= opts.min_fraction * full
                {
                    subs.push((c, r));
                }
            }
        }
        subs.sort_by(|a, b| (b.0 * b.1).cmp(&(a.0 * a.1)).then(b.0.cmp(&a.0)));
        v.extend(subs);
    }
    v
}

fn term(max_count: i32, eps: f64) -> Result<TermCriteria> {
    Ok(TermCriteria::new(
        core::TermCriteria_Type::COUNT as i32 + core::TermCriteria_Type::EPS as i32,
        max_count,
        eps,
    )?)
}

/// Smallest distance between neighbouring corners of a row-major grid.
fn min_spacing(corners: &Vector<Point2f>, cols: i32, rows: i32) -> f32 {
    let p = |c: i32, r: i32| corners.get((r * cols + c) as usize).unwrap_or_default();
    let mut best = f32::MAX;
    for r in 0..rows {
        for c in 0..cols {
            let a = p(c, r);
            if c + 1 < cols {
                let b = p(c + 1, r);
                best = best.min(((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt());
            }
            if r + 1 < rows {
                let b = p(c, r + 1);
                best = best.min(((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt());
            }
        }
    }
    best
}

/// How far a detected grid is from regular: the largest change between consecutive steps along
/// any row or column, relative to the longer step (0 for a perfect lattice). Perspective and
/// lens distortion change steps gradually (at most 0.15 on the Udacity and OpenCV sets, 0.23 on
/// strongly tilted rendered views); a grid that skips a row or column jumps by 0.4 or more.
pub fn grid_irregularity(corners: &Vector<Point2f>, cols: i32, rows: i32) -> f32 {
    let p = |c: i32, r: i32| corners.get((r * cols + c) as usize).unwrap_or_default();
    let step = |a: Point2f, b: Point2f| (b.x - a.x, b.y - a.y);
    let mut worst = 0.0f32;
    let mut check = |a: Point2f, b: Point2f, c: Point2f| {
        let (u, v) = (step(a, b), step(b, c));
        let len = (u.0.hypot(u.1)).max(v.0.hypot(v.1));
        if len > 0.0 {
            worst = worst.max((v.0 - u.0).hypot(v.1 - u.1) / len);
        } else {
            worst = f32::INFINITY;
        }
    };
    for r in 0..rows {
        for c in 1..cols - 1 {
            check(p(c - 1, r), p(c, r), p(c + 1, r));
        }
    }
    for c in 0..cols {
        for r in 1..rows - 1 {
            check(p(c, r - 1), p(c, r), p(c, r + 1));
        }
    }
    worst
}

/// Largest [`grid_irregularity`] accepted from a detector. The sector-based detector asked for a
/// grid smaller than the board in view can return one that skips columns (seen on Udacity
/// `calibration4.jpg` at 640 px: steps of 190, 170, 100 px); such a grid is not a planar lattice
/// and would wreck the calibration.
pub const MAX_IRREGULARITY: f32 = 0.35;

/// Run the sector-based, then the classic detector on `img` for exactly a `cols` x `rows` grid.
/// Corners are in `img`'s pixels and not refined. Irregular grids are rejected.
fn locate(img: &Mat, cols: i32, rows: i32) -> Result<Option<(Detector, Vector<Point2f>)>> {
    let n = (cols * rows) as usize;
    let size = Size::new(cols, rows);
    let ok =
        |c: &Vector<Point2f>| c.len() == n && grid_irregularity(c, cols, rows) <= MAX_IRREGULARITY;
    let mut corners = Vector::<Point2f>::new();
    if calib3d::find_chessboard_corners_sb(
        img,
        size,
        &mut corners,
        calib3d::CALIB_CB_NORMALIZE_IMAGE,
    )? && ok(&corners)
    {
        return Ok(Some((Detector::SectorBased, corners)));
    }
    let mut corners = Vector::<Point2f>::new();
    // FAST_CHECK: without it the quad grouping can run for minutes on some images (seen on a
    // small, strongly sheared synthetic board: over 2 min; with it, 24 ms).
    let flags = calib3d::CALIB_CB_ADAPTIVE_THRESH
        | calib3d::CALIB_CB_NORMALIZE_IMAGE
        | calib3d::CALIB_CB_FAST_CHECK;
    if calib3d::find_chessboard_corners(img, size, &mut corners, flags)? && ok(&corners) {
        return Ok(Some((Detector::Classic, corners)));
    }
    Ok(None)
}

/// Largest shift accepted from `corner_sub_pix` on a sector-based corner, as a fraction of the
/// smallest corner spacing. Refinement moves corners found on a scaled-down copy by up to ~4 px
/// on the (blurry) Udacity images; a corner that jumps a quarter square has locked on to
/// something else.
const MAX_REFINE_SHIFT: f32 = 0.25;

/// `corner_sub_pix` with a window of half-size 0.4 x the smallest corner spacing, clamped to
/// 2..=11 px (11 is OpenCV's sample; a window near a whole square reaches the next corner).
///
/// Measured on rendered views with known corners (20 views, 4 seeds): mean corner error 0.10 px
/// for the sector-based detector alone, 0.07 px refined; calibration RMS on OpenCV's set drops
/// from 0.26 to 0.18 px and on the Udacity set from 0.92 to 0.87 px.
fn refine(gray: &Mat, corners: &mut Vector<Point2f>, cols: i32, rows: i32) -> Result<()> {
    let half = (min_spacing(corners, cols, rows) * 0.4)
        .floor()
        .clamp(2.0, 11.0) as i32;
    imgproc::corner_sub_pix(
        gray,
        corners,
        Size::new(half, half),
        Size::new(-1, -1),
        term(30, 0.001)?,
    )?;
    Ok(())
}

/// Map corners found on a copy scaled by `scale` back to full resolution (pixel centres), then
/// refine them there. A sector-based corner that `corner_sub_pix` moves more than
/// [`MAX_REFINE_SHIFT`] of the corner spacing keeps its first position.
fn finish(
    gray: &GrayImage,
    detector: Detector,
    found: &Vector<Point2f>,
    scale: f64,
    cols: i32,
    rows: i32,
) -> Result<Detection> {
    let inv = (1.0 / scale) as f32;
    let off = 0.5 * inv - 0.5;
    let first: Vector<Point2f> = found
        .iter()
        .map(|p| Point2f::new(p.x * inv + off, p.y * inv + off))
        .collect();
    let mut corners = first.clone();
    refine(gray.mat(), &mut corners, cols, rows)?;
    if detector == Detector::SectorBased {
        let max_shift = MAX_REFINE_SHIFT * min_spacing(&first, cols, rows);
        corners = first
            .iter()
            .zip(corners.iter())
            .map(|(a, b)| {
                if ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt() > max_shift {
                    a
                } else {
                    b
                }
            })
            .collect();
    }
    Ok(Detection {
        detector,
        cols,
        rows,
        corners,
    })
}

/// Does the sector-based detector see any chessboard of at least `min_side` x `min_side`
/// corners (`CALIB_CB_LARGER`)? A cheap gate before the sub-grid search: on images with no
/// board, trying a dozen grid sizes with both detectors costs seconds.
fn any_grid(img: &Mat, min_side: i32) -> Result<bool> {
    let mut corners = Vector::<Point2f>::new();
    let mut meta = Mat::default();
    let flags = calib3d::CALIB_CB_NORMALIZE_IMAGE | calib3d::CALIB_CB_LARGER;
    let side = min_side.max(2);
    Ok(calib3d::find_chessboard_corners_sb_with_meta(
        img,
        Size::new(side, side),
        &mut corners,
        flags,
        &mut meta,
    )? && !corners.is_empty())
}

/// Look for exactly a `cols` x `rows` grid at full resolution: sector-based detector first, then
/// the classic one; the corners are refined with `corner_sub_pix` either way.
pub fn detect_grid(gray: &GrayImage, cols: i32, rows: i32) -> Result<Option<Detection>> {
    match locate(gray.mat(), cols, rows)? {
        Some((det, c)) => Ok(Some(finish(gray, det, &c, 1.0, cols, rows)?)),
        None => Ok(None),
    }
}

/// What [`find_board`] found, and the grid sizes it tried, in order.
#[derive(Debug, Clone)]
pub struct BoardSearch {
    pub detection: Option<Detection>,
    pub tried: Vec<(i32, i32)>,
}

/// Find the full board, or else the largest visible sub-grid.
///
/// The detectors run on a copy scaled so its longer side is at most `opts.detect_long_side`
/// (grid sizes in [`candidate_grids`] order, sector-based then classic for each); the corners
/// are then refined on the full-resolution image. Sub-grids are searched only when the
/// sector-based detector sees some chessboard structure (see [`any_grid`]). When nothing at all
/// is found on a scaled-down copy, the full board is tried once more at full resolution (a small
/// board in a large image).
pub fn find_board(gray: &GrayImage, board: &Board, opts: &DetectOptions) -> Result<BoardSearch> {
    let long = gray.width().max(gray.height());
    let scale = if opts.detect_long_side > 0 && long > opts.detect_long_side {
        opts.detect_long_side as f64 / long as f64
    } else {
        1.0
    };
    let small = if scale < 1.0 {
        let mut m = Mat::default();
        imgproc::resize(
            gray.mat(),
            &mut m,
            Size::new(0, 0),
            scale,
            scale,
            imgproc::INTER_AREA,
        )?;
        m
    } else {
        gray.mat().clone()
    };
    let grids = candidate_grids(board, opts);
    let mut tried = Vec::new();
    for (i, &(c, r)) in grids.iter().enumerate() {
        if i == 1 && !any_grid(&small, opts.min_side)? {
            break;
        }
        tried.push((c, r));
        if let Some((det, found)) = locate(&small, c, r)? {
            return Ok(BoardSearch {
                detection: Some(finish(gray, det, &found, scale, c, r)?),
                tried,
            });
        }
    }
    if scale < 1.0 {
        if let Some(d) = detect_grid(gray, board.cols, board.rows)? {
            return Ok(BoardSearch {
                detection: Some(d),
                tried,
            });
        }
    }
    Ok(BoardSearch {
        detection: None,
        tried,
    })
}

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
    for v in views
        .iter()
        .filter(|v| !matches!(v.outcome, ViewOutcome::Unreadable))
    {
        if (v.width - width).abs() > opts.size_tolerance
            || (v.height - height).abs() > opts.size_tolerance
        {
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
