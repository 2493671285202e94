//! The lane tracker (with `pitch`, the one stateful stage). It takes this frame's detection (the lines the
//! frame reports, with their confidences) and returns the lane to draw and its status.
//!
//! Two methods (`tracking.method`): a Kalman filter over the lane model in bird's-eye pixels
//! (default, here), and the reference's mean of the last n accepted fits per line with its
//! sanity checks (`average`).

use super::average::AverageTracker;
use super::output::{TrackOutput, Verdict};
use crate::base::config::{TrackingConfig, TrackingMethod, UnitsConfig};
use crate::lane::confidence::{Detection, LaneStatus};
use crate::lane::fit::{LaneFit, Poly2, SearchMode};
use nalgebra::{Matrix3, SMatrix, SVector, Vector3};

/// The Kalman state: [a, b, c, w, v] (see `KalmanTracker`).
type State = SVector<f64, 5>;
type Cov = SMatrix<f64, 5, 5>;
type Obs = SMatrix<f64, 3, 5>;

/// The lane model the Kalman tracker estimates, in nominal bird's-eye px, referred to the
/// bottom row `h`: the centre line is `x = a (y-h)^2 + b (y-h) + c` (curvature, heading and
/// position at the car), `w` is the lane width (the lines are the centre -/+ `w/2`) and `v`
/// the lateral velocity (px per frame: the car drifts, or changes lanes, at a steady rate).
/// Each frame `c` moves by `v`; the other terms are random walks.
#[derive(Debug, Clone)]
pub struct KalmanTracker {
    cfg: TrackingConfig,
    /// Bottom row of the nominal view.
    h: f64,
    /// The car's column in the nominal view (its centre).
    car_x: f64,
    /// Frames a gap may last (`max_gap_s` at the video's rate).
    max_gap_frames: usize,
    /// `TrackScene::crossing_px`.
    crossing_px: f64,
    /// Lane width assumed at a start with one line, px.
    default_width: f64,
    /// Measurement noise floor of one line's coefficients, view pixels (curvature from
    /// `tracking.curvature_floor_per_km` and the units).
    floor: [f64; 3],
    /// State [a, b, c, w] and its covariance; `None` until a first detection (or after a reset).
    x: Option<(State, Cov)>,
    /// Frames since a line was last accepted.
    missed: usize,
    /// Consecutive frames with only one line accepted.
    single: usize,
    /// Confidence of the last frame with an accepted line.
    last_confidence: f64,
    /// Width of the lane when it was last tracked, kept over a reset.
    last_width: Option<f64>,
}

/// Measurement noise (standard deviations) of one line's bottom-referred coefficients at
/// confidence 1: curvature (px^-1), heading, position (px). Less confident lines count less.
const LINE_NOISE: [f64; 3] = [2.0e-4, 0.08, 15.0];

/// Smallest measurement noise of a line's coefficients (added to the fit's covariance): the
/// marking's own width and the remap's resolution.
const LINE_NOISE_FLOOR: [f64; 3] = [1.0e-5, 0.01, 3.0];

/// What a tracker needs to know about the video and its view, besides its own config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackScene {
    /// The nominal bird's-eye view's height, rows.
    pub height: i32,
    /// Its width, columns: the car is at the centre column (as `measure` takes it).
    pub width: i32,
    /// The video's frame rate (25 when unknown or not finite).
    pub fps: f64,
    /// The lane width (px) to assume when a track starts from one line.
    pub default_width: f64,
    /// Metres per bird's-eye pixel (curvature noise and floor are given in metres).
    pub units: UnitsConfig,
    /// How near the car (px, at the car) a tracked line is still seen as the ego lane's
    /// (`confidence.crossing_line_distance_m`): nearer, the car is crossing it.
    pub crossing_px: f64,
}

/// A video's frame rate as the trackers use it: 25 when unknown or not finite.
pub fn frame_rate(fps: f64) -> f64 {
    if fps.is_finite() && fps > 0.0 {
        fps
    } else {
        25.0
    }
}

impl KalmanTracker {
    pub fn new(cfg: TrackingConfig, scene: &TrackScene) -> Self {
        let TrackScene {
            height,
            width,
            fps,
            default_width,
            units,
            crossing_px,
        } = *scene;
        // Curvature kappa (1/m) of x = a*y^2 in view pixels: kappa = 2 a xm / ym^2.
        let to_a = |per_km: f64| per_km / 1000.0 / 2.0 * units.ym_per_px.powi(2) / units.xm_per_px;
        let a_floor = to_a(cfg.curvature_floor_per_km);
        let fps = frame_rate(fps);
        let mut cfg = cfg;
        if cfg.curvature_noise_per_km_s > 0.0 {
            // A random walk: the variance grows with time, so per frame sqrt(1 / fps).
            cfg.process_noise[0] = to_a(cfg.curvature_noise_per_km_s) / fps.sqrt();
        }
        Self {
            cfg,
            h: (height - 1) as f64,
            car_x: width as f64 / 2.0,
            max_gap_frames: (cfg.max_gap_s * fps).round() as usize,
            crossing_px,
            default_width,
            floor: [
                LINE_NOISE_FLOOR[0].max(a_floor),
                LINE_NOISE_FLOOR[1],
                LINE_NOISE_FLOOR[2],
            ],
            x: None,
            missed: 0,
            single: 0,
            last_confidence: 0.0,
            last_width: None,
        }
    }

    /// A line's bottom-referred coefficients [a, b, c].
    fn referred(&self, p: &Poly2) -> Vector3<f64> {
        let h = self.h;
        Vector3::new(p.a, 2.0 * p.a * h + p.b, p.eval(h))
    }

    /// The line at `side` (-1 left, +1 right) of state `x`, as a polynomial in y.
    fn line(&self, x: &State, side: f64) -> Poly2 {
        let (a, b, c) = (x[0], x[1], x[2] + side * x[3] / 2.0);
        let h = self.h;
        Poly2::new(a, b - 2.0 * a * h, c - b * h + a * h * h)
    }

    fn observation(side: f64) -> Obs {
        let mut hm = Obs::zeros();
        hm[(0, 0)] = 1.0;
        hm[(1, 1)] = 1.0;
        hm[(2, 2)] = 1.0;
        hm[(2, 3)] = side / 2.0;
        hm
    }

    /// Start a track from this frame's lines.
    fn start(&mut self, l: Option<&Poly2>, r: Option<&Poly2>) -> bool {
        let width = self.last_width.unwrap_or(self.default_width);
        let (centre, w) = match (l, r) {
            (Some(l), Some(r)) => {
                let (zl, zr) = (self.referred(l), self.referred(r));
                ((zl + zr) / 2.0, zr[2] - zl[2])
            }
            (Some(l), None) => {
                let z = self.referred(l);
                (Vector3::new(z[0], z[1], z[2] + width / 2.0), width)
            }
            (None, Some(r)) => {
                let z = self.referred(r);
                (Vector3::new(z[0], z[1], z[2] - width / 2.0), width)
            }
            (None, None) => return false,
        };
        let x = State::from([centre[0], centre[1], centre[2], w, 0.0]);
        let [na, nb, nc] = LINE_NOISE;
        let p = Cov::from_diagonal(&State::from([
            na * na,
            nb * nb,
            nc * nc,
            if l.is_some() && r.is_some() {
                2.0 * nc * nc
            } else {
                40.0 * 40.0
            },
            // Up to about 2 px (2 cm) per frame sideways.
            4.0,
        ]));
        self.x = Some((x, p));
        true
    }

    /// The next frame's search: a band around the tracked lines while lines are being
    /// accepted, sliding windows after a miss or a long run of one-line frames (to find the
    /// other line again).
    pub fn next_search(&self) -> (SearchMode, Option<(Poly2, Poly2)>) {
        match &self.x {
            Some((x, _)) if self.missed == 0 && self.single < 10 => (
                SearchMode::Prior,
                Some((self.line(x, -1.0), self.line(x, 1.0))),
            ),
            _ => (SearchMode::Sliding, None),
        }
    }

    /// Frames without a line the gap may last now: `max_gap_s`, or twice that while the car
    /// is over one of the tracked lane's lines (within `crossing_px`), where no frame can show
    /// it as the ego lane's: a lane change crosses that zone (0.3 m at the default) in under a
    /// second at a lateral speed of 0.3 m/s or more, and the track moves to the new lane
    /// (`update`) before it is forgotten.
    fn gap_limit(&self) -> usize {
        let crossing = self.x.as_ref().is_some_and(|(x, _)| {
            let (l, r) = (x[2] - x[3] / 2.0, x[2] + x[3] / 2.0);
            (self.car_x - l).abs().min((self.car_x - r).abs()) <= self.crossing_px
        });
        if crossing {
            2 * self.max_gap_frames
        } else {
            self.max_gap_frames
        }
    }

    /// The lane the track holds (also through a gap, until it is forgotten): what a frame
    /// lacking a line is checked against (`confidence::confirm_with_expected`).
    pub fn expected(&self) -> Option<(Poly2, Poly2)> {
        let (x, _) = self.x.as_ref()?;
        Some((self.line(x, -1.0), self.line(x, 1.0)))
    }

    /// Feed this frame's detection; returns the lane to draw.
    pub fn update(&mut self, det: &Detection) -> TrackOutput {
        let q = self.cfg.process_noise;
        let mut verdicts = [Verdict::NotFound, Verdict::NotFound];
        let mut diffs = [None, None];
        let lines = [det.left, det.right];
        let confs = [det.left_confidence, det.right_confidence];
        let mut accepted = [false, false];
        if self.x.is_none() {
            if self.start(det.left.as_ref(), det.right.as_ref()) {
                accepted = [det.left.is_some(), det.right.is_some()];
            }
        } else if let Some((mut x, mut p)) = self.x.take() {
            // Predict: c moves by v; the rest is a random walk.
            let mut f = Cov::identity();
            f[(2, 4)] = 1.0;
            x = f * x;
            p = f * p * f.transpose()
                + Cov::from_diagonal(&State::from([
                    q[0] * q[0],
                    q[1] * q[1],
                    q[2] * q[2],
                    q[3] * q[3],
                    q[4] * q[4],
                ]));
            for (i, side) in [-1.0, 1.0].into_iter().enumerate() {
                let Some(line) = lines[i] else { continue };
                let z = self.referred(&line);
                let hm = Self::observation(side);
                let innov = z - hm * x;
                diffs[i] = Some([innov[0].abs(), innov[1].abs(), innov[2].abs()]);
                if innov[2].abs() > self.cfg.gate_px {
                    verdicts[i] = Verdict::TooDifferent;
                    continue;
                }
                // The fit's own covariance (few or bunched rows fix the heading and curvature
                // poorly), inflated for less confident lines, plus a floor.
                let ev = if i == 0 {
                    det.left_evidence
                } else {
                    det.right_evidence
                };
                let conf = confs[i].clamp(0.05, 1.0);
                let mut r = Matrix3::from_fn(|a, b| ev.cov[a][b] / conf);
                for (k, f) in self.floor.iter().enumerate() {
                    r[(k, k)] += f * f;
                }
                let s = hm * p * hm.transpose() + r;
                let Some(s_inv) = s.try_inverse() else {
                    continue;
                };
                let k = p * hm.transpose() * s_inv;
                x += k * innov;
                p = (Cov::identity() - k * hm) * p;
                accepted[i] = true;
            }
            self.x = Some((x, p));
        }
        for i in 0..2 {
            if accepted[i] {
                verdicts[i] = Verdict::Accepted;
            }
        }
        let any = accepted[0] || accepted[1];
        if any {
            self.missed = 0;
            self.last_confidence = (if accepted[0] { confs[0] } else { 0.0 }
                + if accepted[1] { confs[1] } else { 0.0 })
                / 2.0;
            self.single = if accepted[0] && accepted[1] {
                0
            } else {
                self.single + 1
            };
        } else {
            // Both lines of a pair that passed the confidence rules, gated out while the track
            // has had no line for a frame or more: the track is a prediction with nothing to
            // hold it, the pair is this frame's evidence. It is not waited out
            // (`max_gap_s`: the pair's frames were "predicted" from a stale track).
            let fresh_pair = self.missed >= 1
                && det.status == LaneStatus::Both
                && verdicts == [Verdict::TooDifferent, Verdict::TooDifferent];
            self.missed += 1;
            if fresh_pair || self.missed > self.gap_limit() {
                // A long gap: forget the lane (keeping its width), and start again from this
                // frame's lines if it has any (they were gated out of the old track: a lane
                // change, or the old track was wrong).
                if let Some((x, _)) = &self.x {
                    self.last_width = Some(x[3]);
                }
                self.x = None;
                if self.start(det.left.as_ref(), det.right.as_ref()) {
                    accepted = [det.left.is_some(), det.right.is_some()];
                    for i in 0..2 {
                        verdicts[i] = if accepted[i] {
                            Verdict::Accepted
                        } else {
                            Verdict::NotFound
                        };
                    }
                    self.missed = 0;
                    self.single = 0;
                    self.last_confidence = det.confidence;
                }
            }
        }
        if let Some((x, _)) = &mut self.x {
            // The ego lane is the lane the car is in: once the tracked lane's centre lies more
            // than half its width (and a twentieth, 18 cm, for hysteresis: the centre's noise is a few
            // cm a frame) to one side of the car, the car
            // has crossed a line (a lane change) and the track moves to the neighbouring lane,
            // one width over; the line just crossed is its other line, searched for from the
            // next frame on. Without this the track held the lane left behind until it was
            // lost and started again: about a second without a lane in each change.
            let d = self.car_x - x[2];
            if x[3] > 0.0 && d.abs() > 0.55 * x[3] {
                x[2] += d.signum() * x[3];
            }
            self.last_width = Some(x[3]);
        }
        let status = match (&self.x, accepted) {
            (None, _) => LaneStatus::None,
            (Some(_), [true, true]) => LaneStatus::Both,
            (Some(_), [true, false]) => LaneStatus::LeftOnly,
            (Some(_), [false, true]) => LaneStatus::RightOnly,
            (Some(_), [false, false]) => LaneStatus::Predicted,
        };
        let confidence = match status {
            LaneStatus::None => 0.0,
            LaneStatus::Predicted => {
                self.last_confidence
                    * (1.0 - self.missed as f64 / (self.gap_limit() + 1) as f64).max(0.0)
            }
            _ => self.last_confidence,
        };
        let (left, right) = match &self.x {
            Some((x, _)) => (Some(self.line(x, -1.0)), Some(self.line(x, 1.0))),
            None => (None, None),
        };
        TrackOutput {
            left,
            right,
            left_verdict: verdicts[0],
            right_verdict: verdicts[1],
            left_diff: diffs[0],
            right_diff: diffs[1],
            detected: accepted[0] && accepted[1],
            status,
            confidence,
        }
    }
}

/// The tracker of a run: one of the two methods. One per video, made once and never moved in
/// the frame loop: boxing the Kalman variant (about 500 bytes) would gain nothing.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum LaneTracker {
    Kalman(KalmanTracker),
    Average(AverageTracker),
}

impl LaneTracker {
    /// The tracker `cfg.method` names, for the video and view `scene` describes.
    pub fn new(cfg: TrackingConfig, scene: &TrackScene) -> Self {
        match cfg.method {
            TrackingMethod::Kalman => LaneTracker::Kalman(KalmanTracker::new(cfg, scene)),
            TrackingMethod::Average => LaneTracker::Average(AverageTracker::new(cfg)),
        }
    }

    /// The search to run on the next frame (and the prior fits for a band search).
    pub fn next_search(&self) -> (SearchMode, Option<(Poly2, Poly2)>) {
        match self {
            LaneTracker::Kalman(k) => k.next_search(),
            LaneTracker::Average(a) => a.next_search(),
        }
    }

    /// The lane the Kalman tracker holds (`KalmanTracker::expected`); the reference tracker
    /// does not lend its lane to the detection.
    pub fn expected(&self) -> Option<(Poly2, Poly2)> {
        match self {
            LaneTracker::Kalman(k) => k.expected(),
            LaneTracker::Average(_) => None,
        }
    }

    /// Feed this frame's detection (nominal bird's-eye view of `height` rows).
    pub fn update(&mut self, det: &Detection, height: i32) -> TrackOutput {
        match self {
            LaneTracker::Kalman(k) => k.update(det),
            LaneTracker::Average(a) => {
                let fit = LaneFit {
                    left: det.left,
                    right: det.right,
                    left_pixels: 0,
                    right_pixels: 0,
                };
                let mut o = a.update(&fit, height);
                o.confidence = if o.detected { det.confidence } else { 0.0 };
                o
            }
        }
    }

    /// The fits the reference tracker keeps per line (empty for the Kalman tracker).
    pub fn kept(&self) -> (Vec<Poly2>, Vec<Poly2>) {
        match self {
            LaneTracker::Average(a) => (
                a.left.kept().copied().collect(),
                a.right.kept().copied().collect(),
            ),
            LaneTracker::Kalman(_) => (Vec::new(), Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1280x720 view at 25 fps, lanes 380 px wide, a line under the car within 30 px.
    fn scene() -> TrackScene {
        TrackScene {
            height: 720,
            width: 1280,
            fps: 25.0,
            default_width: 380.0,
            units: crate::base::config::UnitsConfig::default(),
            crossing_px: 30.0,
        }
    }

    /// The Kalman track through a lane change: the road's lines every 380 px, the car drifting
    /// right by 8 px a frame (472 px in all, more than a lane), each frame reporting the road's
    /// lines nearest to the track's (as a search around them does).
    #[test]
    fn a_lane_change_moves_the_track_to_the_lane_the_car_is_in() {
        use crate::lane::confidence::{LaneStatus, LineEvidence};
        let scene = scene();
        let mut t = KalmanTracker::new(TrackingConfig::default(), &scene);
        let ev = LineEvidence {
            confidence: 1.0,
            ..Default::default()
        };
        let bottom = |p: Option<Poly2>| p.map(|p| p.eval(719.0)).unwrap_or(f64::NAN);
        for k in 0..60 {
            let road: Vec<f64> = (-2..4)
                .map(|j| 450.0 + 380.0 * j as f64 - 8.0 * k as f64)
                .collect();
            let near = |x: f64| {
                road.iter()
                    .copied()
                    .min_by(|a, b| (a - x).abs().total_cmp(&(b - x).abs()))
                    .unwrap()
            };
            let (el, er) = t
                .expected()
                .map(|(l, r)| (l.eval(719.0), r.eval(719.0)))
                .unwrap_or((450.0, 830.0));
            let o = t.update(&Detection {
                left: Some(Poly2::new(0.0, 0.0, near(el))),
                right: Some(Poly2::new(0.0, 0.0, near(er))),
                left_confidence: 1.0,
                right_confidence: 1.0,
                confidence: 1.0,
                status: LaneStatus::Both,
                left_evidence: ev,
                right_evidence: ev,
            });
            let (l, r) = (bottom(o.left), bottom(o.right));
            assert_eq!(o.status, LaneStatus::Both, "frame {k}");
            // The car (column 640) is never more than a twentieth of a lane outside the lane drawn.
            let off = 640.0 - (l + r) / 2.0;
            assert!(
                off.abs() <= 0.55 * 380.0 + 10.0,
                "frame {k}: lane {l:.0}..{r:.0}"
            );
            if k == 59 {
                // Past the change: the lane drawn is the new one, around the car, on the road's lines.
                assert!(l < 640.0 && 640.0 < r, "lane {l:.0}..{r:.0}");
                assert!(
                    road.iter().any(|x| (x - l).abs() < 10.0),
                    "left {l:.0}: {road:?}"
                );
            }
        }
    }

    /// A detection of straight vertical lines at bottom positions `l` and `r` (view px), each
    /// of confidence 1.
    fn straight_lines(l: Option<f64>, r: Option<f64>) -> Detection {
        let ev = crate::lane::confidence::LineEvidence {
            confidence: 1.0,
            ..Default::default()
        };
        Detection {
            left: l.map(|c| Poly2::new(0.0, 0.0, c)),
            right: r.map(|c| Poly2::new(0.0, 0.0, c)),
            left_confidence: 1.0,
            right_confidence: 1.0,
            confidence: 1.0,
            status: LaneStatus::of(l.is_some(), r.is_some()),
            left_evidence: ev,
            right_evidence: ev,
        }
    }

    /// A gap while the car is over one of the tracked lane's lines (within `crossing_px`) is
    /// bridged twice as long: no frame can show that line as the ego lane's then.
    #[test]
    fn a_gap_over_a_line_is_bridged_twice_as_long() {
        let scene = scene();
        let det = straight_lines;
        // Frames predicted before the lane is forgotten, from a lane with lines at `l`, `r`.
        let bridged = |l: f64, r: f64| {
            let mut t = KalmanTracker::new(TrackingConfig::default(), &scene);
            t.update(&det(Some(l), Some(r)));
            (0..100)
                .take_while(|_| t.update(&det(None, None)).status == LaneStatus::Predicted)
                .count()
        };
        // 0.5 s at 25 fps: 13 frames (12.5 rounded). Centred, the car 190 px from each line.
        assert_eq!(bridged(450.0, 830.0), 13);
        // The right line 20 px from the car (column 640): 26 frames.
        assert_eq!(bridged(280.0, 660.0), 26);
    }

    /// A pair of confident lines gated out of a track that had no line on the frame before
    /// starts the track again at once; while lines are being accepted, one such frame is
    /// still gated out (a glitch does not move the lane).
    #[test]
    fn a_pair_gated_out_of_a_coasting_track_starts_it_again() {
        let scene = scene();
        let det = |lr: Option<(f64, f64)>| straight_lines(lr.map(|p| p.0), lr.map(|p| p.1));
        let bottom = |p: Option<Poly2>| p.map(|p| p.eval(719.0)).unwrap_or(f64::NAN);
        // Tracked: 450..830. A pair 120 px to the right (over the 60 px gate).
        let moved = Some((570.0, 950.0));
        let mut t = KalmanTracker::new(TrackingConfig::default(), &scene);
        t.update(&det(Some((450.0, 830.0))));
        let o = t.update(&det(moved));
        assert_eq!(o.status, LaneStatus::Predicted);
        assert_eq!(o.left_verdict, Verdict::TooDifferent);
        // The track had no line on that frame: the next such pair starts it again.
        let o = t.update(&det(moved));
        assert_eq!(o.status, LaneStatus::Both);
        assert!((bottom(o.left) - 570.0).abs() < 1.0, "{:?}", o.left);
        assert!((bottom(o.right) - 950.0).abs() < 1.0, "{:?}", o.right);
        // And stays: the lane is tracked from it.
        let o = t.update(&det(Some((572.0, 952.0))));
        assert_eq!(o.status, LaneStatus::Both);
    }
}
