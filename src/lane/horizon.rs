//! The road's horizon from a frame's two lines, and the bird's-eye view at another pitch.
//!
//! Two lines that are parallel on the road meet, in the undistorted image, on the horizon. The
//! fixed geometry (a config, or the one self-calibration found) maps its own horizon to the
//! bird's-eye view's far end. When the camera's pitch relative to the road changes (the road's
//! grade changes, the car brakes, the mount is bumped), the lines meet on another row and the
//! fixed view shows parallel lines converging or diverging: a straight road reads as a bend and
//! the lane narrows with distance, and a tracker that models the two lines as parallel makes a
//! bend of the disagreement. [`Horizon::observe`] turns a frame's two lines into the pitch they
//! imply; [`ViewMap`] maps lines from the fixed view into the view the same quad gives at
//! another pitch, and back (the camera turned about its x
//! axis: `K R K^-1` between the image and the fixed homography). The search stays in the fixed
//! view (its remap is built once); the tracker and the measurements work in the view of the
//! pitch. The filter that follows the pitch over frames is the tracker's
//! (`track::PitchTracker`).
//!
//! Assumptions, and where they fail: the camera's roll is small (the horizon is one row), and
//! the two lines are parallel on the road where they are seen (a lane that widens at an exit or
//! a merge implies a false pitch: the filter's gate and bound keep it small).

use crate::lane::confidence::Detection;
use crate::lane::fit::Poly2;
use crate::lane::warp::Perspective;
use nalgebra::{Matrix3, Vector3};

/// A line counts towards the horizon when its pixels cover at least this share of the rows of
/// each half of the view: its direction is then fixed by pixels at both ends, not extrapolated.
const MIN_HALF_SUPPORT: f64 = 0.15;

/// ... and its confidence is at least this.
const MIN_CONFIDENCE: f64 = 0.5;

/// The chord whose image gives a line's direction: from this fraction of the view's height to
/// its bottom row.
const CHORD_TOP: f64 = 0.3;

/// Rows of a line mapped into the view of another pitch, where the quadratic is refitted.
const MAP_ROWS: usize = 16;

/// The fixed geometry's horizon and what is needed to move it.
#[derive(Debug, Clone, PartialEq)]
pub struct Horizon {
    /// Undistorted frame -> nominal bird's-eye view, and back.
    m: Matrix3<f64>,
    minv: Matrix3<f64>,
    k: Matrix3<f64>,
    kinv: Matrix3<f64>,
    /// The geometry's own downward pitch, radians.
    base_pitch: f64,
    /// The view's height, rows.
    height: f64,
}

impl Horizon {
    /// The horizon of `persp` for a camera matrix `k` of the undistorted frame (the camera
    /// file's, or `base::camera::assumed_k`). `None` when the quad's sides are parallel in the
    /// image (no horizon: an affine warp), or `k` is singular.
    pub fn new(persp: &Perspective, k: &[[f64; 3]; 3]) -> Option<Self> {
        let k = Matrix3::from_fn(|r, c| k[r][c]);
        let kinv = k.try_inverse()?;
        // The view's along-road direction at infinity is the geometry's vanishing point.
        let v = persp.inverse() * Vector3::new(0.0, 1.0, 0.0);
        if v[2].abs() < 1e-12 || k[(1, 1)] <= 0.0 {
            return None;
        }
        let vy = v[1] / v[2];
        let base_pitch = ((k[(1, 2)] - vy) / k[(1, 1)]).atan();
        base_pitch.is_finite().then(|| Self {
            m: *persp.matrix(),
            minv: *persp.inverse(),
            k,
            kinv,
            base_pitch,
            height: persp.height as f64,
        })
    }

    /// The geometry's own downward pitch, radians.
    pub fn base_pitch(&self) -> f64 {
        self.base_pitch
    }

    /// The image row of the horizon at downward pitch `pitch` (radians).
    pub fn horizon_row(&self, pitch: f64) -> f64 {
        self.k[(1, 2)] - self.k[(1, 1)] * pitch.tan()
    }

    /// The downward pitch (radians) at which this frame's two lines are parallel on the road:
    /// the row where their chords meet in the image. `None` unless both lines are reported
    /// with pixels in both halves of the view.
    pub fn observe(&self, det: &Detection) -> Option<f64> {
        let (Some(l), Some(r)) = (det.left, det.right) else {
            return None;
        };
        for ev in [&det.left_evidence, &det.right_evidence] {
            if ev.confidence < MIN_CONFIDENCE
                || ev.near < MIN_HALF_SUPPORT
                || ev.far < MIN_HALF_SUPPORT
            {
                return None;
            }
        }
        let (y0, y1) = (CHORD_TOP * self.height, self.height - 1.0);
        let chord = |p: &Poly2| -> Vector3<f64> {
            let a = self.minv * Vector3::new(p.eval(y0), y0, 1.0);
            let b = self.minv * Vector3::new(p.eval(y1), y1, 1.0);
            a.cross(&b)
        };
        let vp = chord(&l).cross(&chord(&r));
        if vp[2].abs() < 1e-12 {
            return None;
        }
        let vy = vp[1] / vp[2];
        let pitch = ((self.k[(1, 2)] - vy) / self.k[(1, 1)]).atan();
        pitch.is_finite().then_some(pitch)
    }

    /// The homography from the fixed view to the view the same quad gives when the camera is
    /// pitched `pitch` (radians, downward) instead of the geometry's own pitch (`back`: from
    /// that view into the fixed one); `None` at the geometry's own pitch.
    fn view_homography(&self, pitch: f64, back: bool) -> Option<Matrix3<f64>> {
        let d = pitch - self.base_pitch;
        if d == 0.0 {
            return None;
        }
        // The camera turned by -d (forward: the image at `pitch` to the image at the
        // geometry's pitch) or by +d (back).
        let (s, c) = (if back { d } else { -d }).sin_cos();
        let rot = Matrix3::new(1.0, 0.0, 0.0, 0.0, c, -s, 0.0, s, c);
        Some(self.m * self.k * rot * self.kinv * self.minv)
    }
}

/// Lines mapped between the fixed view and the view of one pitch (either way), the homography
/// computed once for a frame's lines: the identity without a pitch or a horizon, or at the
/// geometry's own pitch.
#[derive(Debug, Clone, Copy)]
pub struct ViewMap {
    g: Option<Matrix3<f64>>,
    height: f64,
}

impl ViewMap {
    /// Into the view of `pitch` (radians, downward) through `horizon`; `back`: out of it into
    /// the fixed view.
    pub fn new(horizon: Option<&Horizon>, pitch: Option<f64>, back: bool) -> Self {
        match (horizon, pitch) {
            (Some(h), Some(p)) => Self {
                g: h.view_homography(p, back),
                height: h.height,
            },
            _ => Self {
                g: None,
                height: 0.0,
            },
        }
    }

    /// `line` mapped and refitted through `MAP_ROWS` points of the view; the line itself when
    /// it does not map (a row beyond the horizon).
    pub fn line(&self, line: Poly2) -> Poly2 {
        let Some(g) = self.g else {
            return line;
        };
        let mut pts = [(0.0, 0.0); MAP_ROWS];
        for (i, pt) in pts.iter_mut().enumerate() {
            let y = (self.height - 1.0) * i as f64 / (MAP_ROWS - 1) as f64;
            let v = g * Vector3::new(line.eval(y), y, 1.0);
            if v[2] <= 1e-9 {
                return line;
            }
            *pt = (v[1] / v[2], v[0] / v[2]);
        }
        Poly2::fit_points(&pts).unwrap_or(line)
    }

    /// Both lines of a lane.
    pub fn lane(&self, lane: (Poly2, Poly2)) -> (Poly2, Poly2) {
        (self.line(lane.0), self.line(lane.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::camera::assumed_k;
    use crate::lane::confidence::LineEvidence;

    /// Ground point (x right, z ahead, metres) seen by a camera `h` m up, pitched down `p`.
    fn project(k: &[[f64; 3]; 3], h: f64, p: f64, x: f64, z: f64) -> (f64, f64) {
        let (s, c) = p.sin_cos();
        // Camera axes: x right, y down, z forward; the road is y = h below the camera.
        let yc = h * c - z * s;
        let zc = h * s + z * c;
        (k[0][0] * x / zc + k[0][2], k[1][1] * yc / zc + k[1][2])
    }

    /// The quad of a ground rectangle (3.7 m wide, 8 to 30 m ahead) at pitch `p`, mapped to
    /// the Udacity view.
    fn persp_at(k: &[[f64; 3]; 3], p: f64) -> Perspective {
        let q = |x, z| {
            let (u, v) = project(k, 1.5, p, x, z);
            [u, v]
        };
        let src = [q(-1.85, 30.0), q(1.85, 30.0), q(-1.85, 8.0), q(1.85, 8.0)];
        let dst = [[450.0, 0.0], [830.0, 0.0], [450.0, 720.0], [830.0, 720.0]];
        Perspective::new(&src, &dst, 1280, 720).unwrap()
    }

    /// A lane's lines, 3.7 m apart on a straight road, seen at pitch `p` through the view of
    /// the fixed geometry `persp`: the quadratics the search would fit.
    fn lines_seen(k: &[[f64; 3]; 3], persp: &Perspective, p: f64) -> (Poly2, Poly2) {
        let line = |x: f64| {
            let pts: Vec<(f64, f64)> = (0..40)
                .map(|i| {
                    let (u, v) = project(k, 1.5, p, x, 6.0 + i as f64);
                    let (bx, by) = persp.to_birdseye(u, v);
                    (by, bx)
                })
                .filter(|&(y, _)| (0.0..720.0).contains(&y))
                .collect();
            Poly2::fit_points(&pts).unwrap()
        };
        (line(-1.85), line(1.85))
    }

    fn detection(l: Poly2, r: Poly2) -> Detection {
        let ev = LineEvidence {
            support: 1.0,
            spread: 1.0,
            near: 1.0,
            far: 1.0,
            concentration: 1.0,
            confidence: 1.0,
            cov: [[0.0; 3]; 3],
        };
        Detection {
            left: Some(l),
            right: Some(r),
            left_confidence: 1.0,
            right_confidence: 1.0,
            confidence: 1.0,
            status: crate::lane::confidence::LaneStatus::Both,
            left_evidence: ev,
            right_evidence: ev,
        }
    }

    #[test]
    fn the_geometry_pitch_and_a_changed_pitch_are_found_and_undone() {
        let k = assumed_k(1280, 720);
        let base = 2.0f64.to_radians();
        let persp = persp_at(&k, base);
        let hz = Horizon::new(&persp, &k).unwrap();
        assert!((hz.base_pitch() - base).abs() < 1e-6, "{}", hz.base_pitch());
        for change_deg in [-1.5f64, 1.0, 2.5] {
            let p = base + change_deg.to_radians();
            let (l, r) = lines_seen(&k, &persp, p);
            // In the fixed view the lines are not parallel: the width changes with distance.
            let w = |l: &Poly2, r: &Poly2, y: f64| r.eval(y) - l.eval(y);
            assert!((w(&l, &r, 100.0) - w(&l, &r, 700.0)).abs() > 20.0);
            let seen = hz.observe(&detection(l, r)).unwrap();
            assert!(
                (seen - p).abs() < 0.01f64.to_radians(),
                "change {change_deg}: seen {} deg",
                seen.to_degrees()
            );
            // At that pitch they are parallel again, 380 px (3.7 m) apart.
            let (lc, rc) = ViewMap::new(Some(&hz), Some(seen), false).lane((l, r));
            for y in [100.0, 400.0, 719.0] {
                assert!(
                    (w(&lc, &rc, y) - 380.0).abs() < 1.0,
                    "{y}: {}",
                    w(&lc, &rc, y)
                );
            }
            assert!(lc.a.abs() < 1e-6 && rc.a.abs() < 1e-6, "{lc:?} {rc:?}");
            // And back.
            let lb = ViewMap::new(Some(&hz), Some(seen), true).line(lc);
            for y in [0.0, 360.0, 719.0] {
                assert!((lb.eval(y) - l.eval(y)).abs() < 0.5, "{y}: {lb:?} {l:?}");
            }
        }
    }

    #[test]
    fn a_line_seen_in_one_half_only_gives_no_horizon() {
        let k = assumed_k(1280, 720);
        let persp = persp_at(&k, 0.03);
        let hz = Horizon::new(&persp, &k).unwrap();
        let (l, r) = lines_seen(&k, &persp, 0.03);
        let mut det = detection(l, r);
        det.right_evidence.far = 0.0;
        assert_eq!(hz.observe(&det), None);
    }
}
