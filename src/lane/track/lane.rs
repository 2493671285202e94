//! The lane tracker (with `pitch`, the one stateful stage). It takes this frame's detection (the lines the
//! frame reports, with their confidences) and returns the lane to draw and its status.
//!
//! Two methods (`tracking.method`): a Kalman filter over the lane model in bird's-eye pixels
//! (default), and the reference's mean of the last n accepted fits per line with its sanity
//! checks.

use crate::base::config::{TrackingConfig, TrackingMethod, UnitsConfig};
use crate::lane::confidence::{Detection, LaneStatus};
use crate::lane::fit::{LaneFit, Poly2, SearchMode};
use nalgebra::{Matrix3, SMatrix, SVector, Vector3};

/// The Kalman state: [a, b, c, w, v] (see `KalmanTracker`).
type State = SVector<f64, 5>;
type Cov = SMatrix<f64, 5, 5>;
type Obs = SMatrix<f64, 3, 5>;
use std::collections::VecDeque;

/// Per-line history of accepted fits.
#[derive(Debug, Clone, Default)]
pub struct LineTrack {
    kept: VecDeque<Poly2>,
    /// Mean of the kept fits, kept after the history empties (as the reference's `best_fit`).
    best: Option<Poly2>,
}

impl LineTrack {
    /// Mean of the kept fits; the last such mean when none are kept.
    pub fn smoothed(&self) -> Option<Poly2> {
        self.best
    }
    fn refresh(&mut self) {
        if let Some(m) = Poly2::mean(self.kept.make_contiguous()) {
            self.best = Some(m);
        }
    }
    pub fn kept(&self) -> impl Iterator<Item = &Poly2> {
        self.kept.iter()
    }
    pub fn len(&self) -> usize {
        self.kept.len()
    }
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

/// Why a line's fit of this frame was rejected (or `Accepted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    NotFound,
    LaneWidth,
    TooDifferent,
}

impl Verdict {
    /// The verdict as the diagnostic panel prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::NotFound => "not found",
            Verdict::LaneWidth => "lane width",
            Verdict::TooDifferent => "too different",
        }
    }
}

/// What the tracker decided for one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackOutput {
    pub left: Option<Poly2>,
    pub right: Option<Poly2>,
    pub left_verdict: Verdict,
    pub right_verdict: Verdict,
    /// Coefficient differences of this frame's fits from the smoothed fits before this frame.
    pub left_diff: Option<[f64; 3]>,
    pub right_diff: Option<[f64; 3]>,
    /// Both of this frame's fits were accepted.
    pub detected: bool,
    /// What is drawn: both lines seen, one seen (the other from the lane model), a prediction
    /// through a short gap, or nothing.
    pub status: LaneStatus,
    /// Confidence of the drawn lane, 0..1: the accepted lines' confidences (a line not seen
    /// counts 0), decaying over a predicted gap.
    pub confidence: f64,
}

/// The reference's tracker: the mean of the last `keep` accepted fits per line.
#[derive(Debug, Clone)]
pub struct AverageTracker {
    cfg: TrackingConfig,
    pub left: LineTrack,
    pub right: LineTrack,
    left_detected: bool,
    right_detected: bool,
}

fn diff(a: &Poly2, b: &Poly2) -> [f64; 3] {
    [(a.a - b.a).abs(), (a.b - b.b).abs(), (a.c - b.c).abs()]
}

impl AverageTracker {
    pub fn new(cfg: TrackingConfig) -> Self {
        Self {
            cfg,
            left: LineTrack::default(),
            right: LineTrack::default(),
            left_detected: false,
            right_detected: false,
        }
    }

    /// The search to run on the next frame: the prior band around the smoothed fits when both
    /// lines were accepted on the last frame, else sliding windows.
    pub fn next_search(&self) -> (SearchMode, Option<(Poly2, Poly2)>) {
        if self.left_detected && self.right_detected {
            if let (Some(l), Some(r)) = (self.left.smoothed(), self.right.smoothed()) {
                return (SearchMode::Prior, Some((l, r)));
            }
        }
        (SearchMode::Sliding, None)
    }

    fn update_line(
        cfg: &TrackingConfig,
        track: &mut LineTrack,
        fit: Option<Poly2>,
    ) -> (Verdict, Option<[f64; 3]>) {
        let keep = cfg.keep as usize;
        match fit {
            None => {
                track.kept.pop_front();
                track.refresh();
                (Verdict::NotFound, None)
            }
            Some(f) => {
                let d = track.smoothed().map(|s| diff(&f, &s));
                let too_different = match d {
                    Some(d) => (0..3).any(|i| d[i] > cfg.max_coeff_diff[i]),
                    None => false,
                };
                if too_different && !track.kept.is_empty() {
                    // Rejected: the history is left as it is (as in the reference pipeline).
                    (Verdict::TooDifferent, d)
                } else {
                    track.kept.push_back(f);
                    while track.kept.len() > keep {
                        track.kept.pop_front();
                    }
                    track.refresh();
                    (Verdict::Accepted, d)
                }
            }
        }
    }

    /// Feed this frame's fits (bird's-eye view of `height` rows); returns the lane to draw.
    pub fn update(&mut self, fit: &LaneFit, height: i32) -> TrackOutput {
        let y = (height - 1) as f64;
        let (mut lf, mut rf) = (fit.left, fit.right);
        let mut width_rejected = false;
        if let (Some(l), Some(r)) = (lf, rf) {
            let sep = (r.eval(y) - l.eval(y)).abs();
            if (sep - self.cfg.lane_width_px).abs() > self.cfg.lane_width_tolerance_px {
                lf = None;
                rf = None;
                width_rejected = true;
            }
        }
        let (mut lv, ld) = Self::update_line(&self.cfg, &mut self.left, lf);
        let (mut rv, rd) = Self::update_line(&self.cfg, &mut self.right, rf);
        if width_rejected {
            lv = Verdict::LaneWidth;
            rv = Verdict::LaneWidth;
        }
        self.left_detected = lv == Verdict::Accepted;
        self.right_detected = rv == Verdict::Accepted;
        let (left, right) = (self.left.smoothed(), self.right.smoothed());
        let detected = self.left_detected && self.right_detected;
        let status = match (left.is_some() && right.is_some(), detected) {
            (false, _) => LaneStatus::None,
            (true, true) => LaneStatus::Both,
            (true, false) => LaneStatus::Predicted,
        };
        TrackOutput {
            left,
            right,
            left_verdict: lv,
            right_verdict: rv,
            left_diff: ld,
            right_diff: rd,
            detected,
            status,
            confidence: 0.0,
        }
    }
}

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
            self.missed += 1;
            if self.missed > self.max_gap_frames {
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
                    * (1.0 - self.missed as f64 / (self.max_gap_frames + 1) as f64).max(0.0)
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

    fn lane(lc: f64, rc: f64) -> LaneFit {
        LaneFit {
            left: Some(Poly2::new(0.0, 0.0, lc)),
            right: Some(Poly2::new(0.0, 0.0, rc)),
            left_pixels: 100,
            right_pixels: 100,
        }
    }

    #[test]
    fn good_frames_are_kept_and_averaged() {
        let mut t = AverageTracker::new(TrackingConfig::default());
        assert_eq!(t.next_search().0, SearchMode::Sliding);
        let o1 = t.update(&lane(450.0, 800.0), 720);
        assert!(o1.detected);
        let o2 = t.update(&lane(460.0, 810.0), 720);
        assert_eq!(o2.left.unwrap().c, 455.0);
        assert_eq!(t.next_search().0, SearchMode::Prior);
    }

    /// The Kalman track through a lane change: the road's lines every 380 px, the car drifting
    /// right by 8 px a frame (472 px in all, more than a lane), each frame reporting the road's
    /// lines nearest to the track's (as a search around them does).
    #[test]
    fn a_lane_change_moves_the_track_to_the_lane_the_car_is_in() {
        use crate::lane::confidence::{LaneStatus, LineEvidence};
        let scene = TrackScene {
            height: 720,
            width: 1280,
            fps: 25.0,
            default_width: 380.0,
            units: crate::base::config::UnitsConfig::default(),
        };
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

    #[test]
    fn wrong_lane_width_rejects_both_and_falls_back() {
        let mut t = AverageTracker::new(TrackingConfig::default());
        t.update(&lane(450.0, 800.0), 720);
        let o = t.update(&lane(450.0, 1000.0), 720); // 550 px apart: outside 350 +/- 100
        assert!(!o.detected);
        assert_eq!(o.left_verdict, Verdict::LaneWidth);
        // The oldest (only) fit is dropped; the last smoothed lane is still drawn.
        assert_eq!(t.left.len(), 0);
        assert_eq!(o.left.unwrap().c, 450.0);
        assert_eq!(t.next_search().0, SearchMode::Sliding);
    }

    #[test]
    fn at_most_keep_fits_and_outlier_rejected() {
        let mut t = AverageTracker::new(TrackingConfig::default());
        for i in 0..8 {
            t.update(&lane(450.0 + i as f64, 800.0), 720);
        }
        assert_eq!(t.left.len(), 5);
        let o = t.update(&lane(700.0, 1050.0), 720); // c jumps by ~250 > 100
        assert_eq!(o.left_verdict, Verdict::TooDifferent);
        assert_eq!(t.left.len(), 5);
        assert!((o.left.unwrap().c - 455.0).abs() < 1e-9);
    }
}
