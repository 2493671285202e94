//! The reference's lane tracker (`tracking.method = "average"`): the mean of the last n accepted
//! fits per line, with its sanity checks (lane width, coefficient jumps).

use super::output::{TrackOutput, Verdict};
use crate::base::config::TrackingConfig;
use crate::lane::confidence::LaneStatus;
use crate::lane::fit::{LaneFit, Poly2, SearchMode};
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
