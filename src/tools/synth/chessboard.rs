//! Synthetic chessboard views through a known camera (K and lens distortion), with ground truth.
//!
//! A board of `cols` x `rows` inner corners has `(cols + 1) x (rows + 1)` squares on a white
//! sheet with a one-square margin, lying on the z = 0 plane of its own frame (x right, y down,
//! inner corner (0, 0) at the origin, row-major like OpenCV's detectors). Each view places it with
//! a random pose, projects densely sampled square outlines with `calib3d::project_points` (so
//! straight edges bend as the lens bends them), fills the squares on a 4x supersampled canvas and
//! averages down (`INTER_AREA`), then adds a little blur and sensor noise. Everything is
//! deterministic for a given seed.
//!
//! Accuracy of the ground truth: a square edge is a polyline of `edge_points` projected points,
//! so between samples it follows a chord; at 16 points per square edge the chord error is far
//! below 0.01 px for the distortions used here.

use crate::base::camera::Camera;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use nalgebra::{Rotation3, Vector3};
use opencv::core::{self, Mat, Point, Point2d, Point3d, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

/// Where the board is: OpenCV's `rvec` (axis-angle, radians) and `tvec` (board units), mapping
/// board coordinates into camera coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoardPose {
    pub rvec: [f64; 3],
    pub tvec: [f64; 3],
}

/// One rendered view and its ground truth.
#[derive(Debug, Clone)]
pub struct ChessboardView {
    pub frame: BgrFrame,
    pub pose: BoardPose,
    /// Distorted image positions of the inner corners, row-major (`cols * rows` of them).
    pub corners: Vec<[f64; 2]>,
}

/// How views are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderOptions {
    /// Supersampling factor per axis. 4 gives edges accurate to about 1/8 px.
    pub supersample: i32,
    /// Points per square edge projected through the lens (edges bend with the distortion).
    pub edge_points: i32,
    /// White margin around the squares, in squares (the detectors need a light border).
    pub margin: f64,
    /// Gaussian blur sigma in output pixels (a real lens is never perfectly sharp); 0: none.
    pub blur_sigma: f64,
    /// Standard deviation of added sensor noise, in gray levels; 0: none.
    pub noise: f64,
    /// Gray levels of the background, the white squares and the black squares.
    pub background: u8,
    pub white: u8,
    pub black: u8,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            supersample: 4,
            edge_points: 16,
            margin: 1.0,
            blur_sigma: 0.7,
            noise: 2.0,
            background: 90,
            white: 225,
            black: 30,
        }
    }
}

/// SplitMix64: a small deterministic generator (enough for poses and noise).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(1e-300);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// Project board-frame points through the camera (`calib3d::project_points`, with distortion).
pub fn project(camera: &Camera, pose: &BoardPose, pts: &[[f64; 3]]) -> Result<Vec<[f64; 2]>> {
    let obj: Vector<Point3d> = pts.iter().map(|p| Point3d::new(p[0], p[1], p[2])).collect();
    let rvec = Mat::from_slice(&pose.rvec)?.try_clone()?;
    let tvec = Mat::from_slice(&pose.tvec)?.try_clone()?;
    let mut out = Vector::<Point2d>::new();
    calib3d::project_points_def(
        &obj,
        &rvec,
        &tvec,
        &camera.k_mat()?,
        &camera.dist_mat()?,
        &mut out,
    )?;
    Ok(out.iter().map(|p| [p.x, p.y]).collect())
}

/// Camera-frame depth of board points under a pose.
fn depths(pose: &BoardPose, pts: &[[f64; 3]]) -> Vec<f64> {
    let r = Rotation3::from_scaled_axis(Vector3::from(pose.rvec));
    let t = Vector3::from(pose.tvec);
    pts.iter().map(|p| (r * Vector3::from(*p) + t).z).collect()
}

/// Ground-truth inner corners of a `cols` x `rows` board with squares of side `square`.
pub fn inner_corners(board: (i32, i32), square: f64) -> Vec<[f64; 3]> {
    let mut v = Vec::with_capacity((board.0 * board.1) as usize);
    for r in 0..board.1 {
        for c in 0..board.0 {
            v.push([c as f64 * square, r as f64 * square, 0.0]);
        }
    }
    v
}

/// Points along the outline of the axis-aligned rectangle [x0,x1]x[y0,y1] on the board plane,
/// `n` per unit `step` of side length (at least `n` per side), clockwise.
fn outline(x0: f64, y0: f64, x1: f64, y1: f64, per_side: usize) -> Vec<[f64; 3]> {
    let corners = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
    let mut v = Vec::with_capacity(4 * per_side);
    for i in 0..4 {
        let a = corners[i];
        let b = corners[(i + 1) % 4];
        for k in 0..per_side {
            let t = k as f64 / per_side as f64;
            v.push([a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), 0.0]);
        }
    }
    v
}

/// Random poses that keep the whole sheet (squares and margin) inside the image, in front of the
/// camera, tilted up to 35 degrees about x and y and turned up to 20 degrees about the optical
/// axis, spread over the frame, with the sheet as wide as 40-85 % of the image (before tilt).
pub fn random_poses(
    camera: &Camera,
    board: (i32, i32),
    square: f64,
    n: usize,
    seed: u64,
) -> Result<Vec<BoardPose>> {
    let opts = RenderOptions::default();
    let mut rng = SplitMix64::new(seed ^ 0xC0FF_EE00_D15E_A5E5);
    let m = opts.margin * square;
    let bw = (board.0 + 1) as f64 * square + 2.0 * m;
    let sheet = outline(
        -square - m,
        -square - m,
        board.0 as f64 * square + m,
        board.1 as f64 * square + m,
        8,
    );
    let centre = [
        (board.0 - 1) as f64 * square / 2.0,
        (board.1 - 1) as f64 * square / 2.0,
        0.0,
    ];
    let (w, h) = (camera.width as f64, camera.height as f64);
    let mut poses = Vec::with_capacity(n);
    let mut attempts = 0usize;
    while poses.len() < n {
        attempts += 1;
        if attempts > 20_000 * n.max(1) {
            return Err(Error::Invalid(format!(
                "could not place {n} chessboard views of {}x{} in {}x{}",
                board.0, board.1, camera.width, camera.height
            )));
        }
        let deg = std::f64::consts::PI / 180.0;
        let rx = rng.range(-35.0, 35.0) * deg;
        let ry = rng.range(-35.0, 35.0) * deg;
        let rz = rng.range(-20.0, 20.0) * deg;
        let frac = rng.range(0.40, 0.85);
        let z = camera.fx() * bw / (frac * w);
        let (u, v) = (rng.range(0.0, w), rng.range(0.0, h));
        let c_cam = Vector3::new(
            (u - camera.cx()) / camera.fx() * z,
            (v - camera.cy()) / camera.fy() * z,
            z,
        );
        let rot = Rotation3::from_euler_angles(rx, ry, rz);
        let t = c_cam - rot * Vector3::from(centre);
        let sa = rot.scaled_axis();
        let pose = BoardPose {
            rvec: [sa.x, sa.y, sa.z],
            tvec: [t.x, t.y, t.z],
        };
        if depths(&pose, &sheet).iter().any(|&d| d < 0.2 * z) {
            continue;
        }
        // The distortion model is only trusted where the undistorted ray stays within the
        // image's own field of view (beyond it the polynomial can fold back).
        let r = Rotation3::from_scaled_axis(Vector3::from(pose.rvec));
        let max_r2 = {
            let xs = [
                (0.0 - camera.cx()) / camera.fx(),
                (w - camera.cx()) / camera.fx(),
            ];
            let ys = [
                (0.0 - camera.cy()) / camera.fy(),
                (h - camera.cy()) / camera.fy(),
            ];
            xs.iter()
                .flat_map(|x| ys.iter().map(move |y| x * x + y * y))
                .fold(0.0, f64::max)
        };
        let inside_fov = sheet.iter().all(|p| {
            let q = r * Vector3::from(*p) + t;
            let (x, y) = (q.x / q.z, q.y / q.z);
            x * x + y * y <= max_r2
        });
        if !inside_fov {
            continue;
        }
        let px = project(camera, &pose, &sheet)?;
        let pad = 4.0;
        if px
            .iter()
            .all(|p| p[0] >= pad && p[0] <= w - 1.0 - pad && p[1] >= pad && p[1] <= h - 1.0 - pad)
        {
            poses.push(pose);
        }
    }
    Ok(poses)
}

/// Render one view of the board at a pose; returns the frame (BGR, gray content).
pub fn render_view(
    camera: &Camera,
    board: (i32, i32),
    square: f64,
    pose: &BoardPose,
    opts: &RenderOptions,
    seed: u64,
) -> Result<BgrFrame> {
    let s = opts.supersample.max(1);
    let shift = 4;
    let (w, h) = (camera.width, camera.height);
    let mut canvas = Mat::new_rows_cols_with_default(
        h * s,
        w * s,
        core::CV_8UC1,
        Scalar::all(opts.background as f64),
    )?;
    let scale = (1 << shift) as f64;
    // Output pixel centre u sits at supersampled coordinate s*u + (s-1)/2.
    let to_pt = |p: &[f64; 2]| {
        Point::new(
            ((p[0] * s as f64 + (s - 1) as f64 / 2.0) * scale).round() as i32,
            ((p[1] * s as f64 + (s - 1) as f64 / 2.0) * scale).round() as i32,
        )
    };
    let per = opts.edge_points.max(2) as usize;
    let m = opts.margin * square;
    let sheet = outline(
        -square - m,
        -square - m,
        board.0 as f64 * square + m,
        board.1 as f64 * square + m,
        per * (board.0.max(board.1) as usize + 3),
    );
    let sheet_px: Vector<Point> = project(camera, pose, &sheet)?.iter().map(to_pt).collect();
    let mut polys = Vector::<Vector<Point>>::new();
    polys.push(sheet_px);
    imgproc::fill_poly(
        &mut canvas,
        &polys,
        Scalar::all(opts.white as f64),
        imgproc::LINE_8,
        shift,
        Point::new(0, 0),
    )?;
    let mut squares = Vector::<Vector<Point>>::new();
    for b in -1..board.1 {
        for a in -1..board.0 {
            if (a + b).rem_euclid(2) != 0 {
                continue;
            }
            let (x0, y0) = (a as f64 * square, b as f64 * square);
            let pts = outline(x0, y0, x0 + square, y0 + square, per);
            squares.push(project(camera, pose, &pts)?.iter().map(to_pt).collect());
        }
    }
    for sq in squares.iter() {
        let mut one = Vector::<Vector<Point>>::new();
        one.push(sq);
        imgproc::fill_poly(
            &mut canvas,
            &one,
            Scalar::all(opts.black as f64),
            imgproc::LINE_8,
            shift,
            Point::new(0, 0),
        )?;
    }
    let mut small = Mat::default();
    imgproc::resize(
        &canvas,
        &mut small,
        Size::new(w, h),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )?;
    drop(canvas);
    if opts.blur_sigma > 0.0 {
        let mut b = Mat::default();
        imgproc::gaussian_blur(
            &small,
            &mut b,
            Size::new(0, 0),
            opts.blur_sigma,
            opts.blur_sigma,
            core::BORDER_REPLICATE,
        )?;
        small = b;
    }
    if opts.noise > 0.0 {
        let mut rng = SplitMix64::new(seed);
        for px in small.data_bytes_mut()?.iter_mut() {
            let v = *px as f64 + opts.noise * rng.normal();
            *px = v.round().clamp(0.0, 255.0) as u8;
        }
    }
    let mut bgr = Mat::default();
    imgproc::cvt_color_def(&small, &mut bgr, imgproc::COLOR_GRAY2BGR)?;
    BgrFrame::new(bgr)
}

/// Render `n_views` views of a `cols` x `rows` board (squares of side `square`) through the
/// camera at the camera's image size, with random poses from `seed`. Same seed, same views.
pub fn render_views(
    camera: &Camera,
    board: (i32, i32),
    square: f64,
    n_views: usize,
    seed: u64,
) -> Result<Vec<ChessboardView>> {
    if board.0 < 2 || board.1 < 2 || !square.is_finite() || square <= 0.0 {
        return Err(Error::Invalid(format!(
            "board {}x{} with square {square}: need 2x2 or more and square > 0",
            board.0, board.1
        )));
    }
    let opts = RenderOptions::default();
    let poses = random_poses(camera, board, square, n_views, seed)?;
    let corners3 = inner_corners(board, square);
    poses
        .iter()
        .enumerate()
        .map(|(i, pose)| {
            let frame = render_view(
                camera,
                board,
                square,
                pose,
                &opts,
                seed.wrapping_add(i as u64 + 1),
            )?;
            let corners = project(camera, pose, &corners3)?;
            Ok(ChessboardView {
                frame,
                pose: *pose,
                corners,
            })
        })
        .collect()
}

/// The camera used by tests and the synthetic set: 1280x720, Udacity-like barrel distortion.
pub fn reference_camera() -> Camera {
    Camera {
        width: 1280,
        height: 720,
        k: [[1100.0, 0.0, 652.0], [0.0, 1092.0, 366.0], [0.0, 0.0, 1.0]],
        dist: vec![-0.24, 0.07, 0.0006, -0.0004, -0.01],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::calibrate::detect_grid;

    #[test]
    fn poses_are_deterministic_and_keep_the_sheet_inside() {
        let cam = reference_camera();
        let a = random_poses(&cam, (9, 6), 1.0, 5, 7).unwrap();
        let b = random_poses(&cam, (9, 6), 1.0, 5, 7).unwrap();
        assert_eq!(a, b);
        for p in &a {
            let px = project(&cam, p, &inner_corners((9, 6), 1.0)).unwrap();
            assert!(px
                .iter()
                .all(|q| q[0] > 0.0 && q[0] < 1279.0 && q[1] > 0.0 && q[1] < 719.0));
        }
    }

    #[test]
    fn rendered_corners_match_ground_truth() {
        let cam = reference_camera();
        let views = render_views(&cam, (9, 6), 1.0, 3, 11).unwrap();
        for v in &views {
            let gray = v.frame.to_gray().unwrap();
            let d = detect_grid(&gray, 9, 6).unwrap().expect("board found");
            // The detector may number the grid from either end; compare with the closer order.
            let n = v.corners.len();
            let err = |rev: bool| {
                (0..n)
                    .map(|i| {
                        let p = d.corners.get(if rev { n - 1 - i } else { i }).unwrap();
                        let q = v.corners[i];
                        ((p.x as f64 - q[0]).powi(2) + (p.y as f64 - q[1]).powi(2)).sqrt()
                    })
                    .sum::<f64>()
                    / n as f64
            };
            let e = err(false).min(err(true));
            assert!(e < 0.15, "mean corner error {e:.3} px");
        }
    }
}
