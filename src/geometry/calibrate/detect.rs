//! Finding the board in one image: the full grid or its largest visible sub-grid, by the
//! sector-based detector first and the classic one refined with `corner_sub_pix` after.

use crate::base::error::{Error, Result};
use crate::base::frame::GrayImage;
use opencv::core::{self, Mat, Point2f, Size, TermCriteria, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

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

pub(super) fn term(max_count: i32, eps: f64) -> Result<TermCriteria> {
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

/// The largest chessboard the sector-based detector sees, of at least `min_side` x `min_side`
/// corners (`CALIB_CB_LARGER` grows a minimal grid to the whole visible board and reports its
/// size): its inner corners, larger side first, or `None`. A cheap gate before the sub-grid
/// search: on images with no board, trying a dozen grid sizes with both detectors costs
/// seconds. The size is a lower bound of the board in view, not its size: the grown grid can
/// stop short (5x5 on Udacity `calibration5.jpg`, where a larger sub-grid is found), so it does
/// not bound the sub-grids tried; `sanity::probe_board` uses it across photos.
pub(super) fn largest_visible(img: &Mat, min_side: i32) -> Result<Option<(i32, i32)>> {
    let mut corners = Vector::<Point2f>::new();
    let mut meta = Mat::default();
    let flags = calib3d::CALIB_CB_NORMALIZE_IMAGE | calib3d::CALIB_CB_LARGER;
    let side = min_side.max(2);
    let found = calib3d::find_chessboard_corners_sb_with_meta(
        img,
        Size::new(side, side),
        &mut corners,
        flags,
        &mut meta,
    )?;
    if !found || corners.is_empty() || meta.empty() {
        return Ok(None);
    }
    let (c, r) = (meta.cols(), meta.rows());
    Ok(Some((c.max(r), c.min(r))))
}

/// `gray` scaled so its longer side is at most `opts.detect_long_side` (a copy at full size when
/// it is not larger), and the scale.
pub(super) fn scaled_for_detection(gray: &GrayImage, opts: &DetectOptions) -> Result<(Mat, f64)> {
    let long = gray.width().max(gray.height());
    if opts.detect_long_side <= 0 || long <= opts.detect_long_side {
        return Ok((gray.mat().clone(), 1.0));
    }
    let scale = opts.detect_long_side as f64 / long as f64;
    let mut m = Mat::default();
    imgproc::resize(
        gray.mat(),
        &mut m,
        Size::new(0, 0),
        scale,
        scale,
        imgproc::INTER_AREA,
    )?;
    Ok((m, scale))
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
/// sector-based detector sees some chessboard structure (see [`largest_visible`]). When nothing at all
/// is found on a scaled-down copy, the full board is tried once more at full resolution (a small
/// board in a large image).
pub fn find_board(gray: &GrayImage, board: &Board, opts: &DetectOptions) -> Result<BoardSearch> {
    let (small, scale) = scaled_for_detection(gray, opts)?;
    let grids = candidate_grids(board, opts);
    let mut tried = Vec::new();
    for (i, &(c, r)) in grids.iter().enumerate() {
        if i == 1 && largest_visible(&small, opts.min_side)?.is_none() {
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
