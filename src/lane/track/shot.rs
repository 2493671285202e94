//! Cuts between the shots of an edited video, followed over frames: each frame's luma grid is
//! compared with the one before (`lane::shot`), and a frame whose difference stands out from
//! the shot's own (`tracking.cut_ratio`) starts a new shot. The frame loop then restarts the
//! lane and pitch trackers, so that no lane of the shot before is predicted into a picture that
//! no longer shows it.
//!
//! A cut's new picture stays. A picture that comes back within [`CONFIRM_FRAMES`] frames (the
//! frame before the would-be cut and one of the next few differ by no more than the shot's own
//! motion) was a glitch, not a cut: a corrupt or dropped frame decoded grey or green, a flash,
//! something crossing the lens for a frame or two (an occlusion that stays longer, a wiper's
//! sweep, is not told from a cut). Such a frame is passed over (the next frame is compared
//! with the one before it) and the trackers go on through it, predicting, as through any frame
//! that shows no lane.
//!
//! A shot after a cut may come from another camera, or be a zoomed replay, for which the
//! geometry (given, or found in the video's opening) is wrong. A pair of lines a plausible lane
//! width apart and parallel in the bird's-eye view shows that it holds; a lone line shows
//! nothing of the kind (a car's edge passes a lone line's tests in a wrong view). So until a
//! frame of the new shot has shown both lines, its lone lines are not reported.

use crate::lane::confidence::{Detection, LaneStatus};
use crate::lane::shot::{is_cut, mean_abs_diff, LumaSample, RECENT_DIFFS, REPEAT_DIFF};
use std::collections::VecDeque;

/// Frames after a would-be cut compared with the frame before it: 3 (a tenth of a second at
/// 30 fps). A decoding glitch or a flash lasts a frame or two; a cut's new shot differs from
/// the old picture in every frame after it, however alike the two roads (the same drive 2 s
/// later: 0.043 of full scale, `lane::shot::MIN_CUT_EXCESS`), while the road moving on over
/// four frames stays within the rule's margin of the frame before.
pub const CONFIRM_FRAMES: usize = 3;

/// Follows the frames of a video for cuts.
#[derive(Debug, Clone)]
pub struct ShotTracker {
    ratio: f64,
    prev: Option<LumaSample>,
    /// The differences of the current shot's last frames, oldest first.
    recent: VecDeque<f64>,
    /// A frame of the current shot has shown both lines (the opening shot: its geometry was
    /// given for it or found in it).
    pair_seen: bool,
    /// Frames in a row, up to the last one, that repeated the frame before them.
    repeats: usize,
    /// At the last cut: how many frames before it repeated the frame before them.
    frozen_before: usize,
}

impl ShotTracker {
    /// A tracker that calls a frame a cut when it differs from the one before by `ratio` times
    /// the shot's usual difference (`lane::shot::is_cut`).
    pub fn new(ratio: f64) -> Self {
        Self {
            ratio,
            prev: None,
            recent: VecDeque::with_capacity(RECENT_DIFFS + 1),
            pair_seen: true,
            repeats: 0,
            frozen_before: 0,
        }
    }

    /// Whether a lone line of this frame may be reported: a frame of its shot has shown both.
    pub fn lone_lines_trusted(&self) -> bool {
        self.pair_seen
    }

    /// This frame's detection as the tracker may take it: a pair is noted as seen in the shot;
    /// a lone line before any pair of the shot is dropped (no line, status `None`).
    pub fn admit(&mut self, det: &mut Detection) {
        match (det.left.is_some(), det.right.is_some()) {
            (true, true) => self.pair_seen = true,
            (true, false) | (false, true) if !self.pair_seen => {
                det.left = None;
                det.right = None;
                det.confidence = 0.0;
                det.status = LaneStatus::None;
            }
            _ => {}
        }
    }

    /// Whether the current shot's lone lines are trusted from the start: its geometry was
    /// found in its own frames (`true`), or it is another shot's (`false`: a pair must show
    /// first).
    pub fn set_pair_seen(&mut self, seen: bool) {
        self.pair_seen = seen;
    }

    /// At the last cut, how many frames before it showed an unchanging picture (each repeated
    /// the one before it: a recording that froze, a paused camera), 0 for none.
    pub fn frozen_before_cut(&self) -> usize {
        self.frozen_before
    }

    /// Whether this frame starts a new shot. `ahead(k)` gives the luma grid of the `k`-th frame
    /// after this one (`None` past the end): a would-be cut whose old picture comes back within
    /// [`CONFIRM_FRAMES`] frames is no cut, and this frame is passed over. After a cut (and
    /// after a change of frame size) the new shot's usual difference is learnt again from its
    /// own frames.
    pub fn update(
        &mut self,
        sample: LumaSample,
        ahead: &mut dyn FnMut(usize) -> Option<LumaSample>,
    ) -> bool {
        let Some(diff) = self.prev.as_ref().and_then(|p| mean_abs_diff(p, &sample)) else {
            self.prev = Some(sample);
            self.recent.clear();
            self.repeats = 0;
            return false;
        };
        let recent = self.recent.make_contiguous();
        let cut = is_cut(diff, recent, self.ratio) == Some(true);
        if cut {
            let before = self.prev.as_ref();
            let comes_back = (0..CONFIRM_FRAMES).map_while(&mut *ahead).any(|later| {
                before
                    .and_then(|b| mean_abs_diff(b, &later))
                    .and_then(|d| is_cut(d, recent, self.ratio))
                    == Some(false)
            });
            if comes_back {
                return false;
            }
            self.prev = Some(sample);
            self.recent.clear();
            self.pair_seen = false;
            self.frozen_before = self.repeats;
            self.repeats = 0;
        } else {
            self.prev = Some(sample);
            self.repeats = if diff < REPEAT_DIFF {
                self.repeats + 1
            } else {
                0
            };
            self.recent.push_back(diff);
            if self.recent.len() > RECENT_DIFFS {
                self.recent.pop_front();
            }
        }
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lane::fit::Poly2;

    fn frame(v: u8, jitter: u8, i: usize) -> LumaSample {
        LumaSample {
            size: (80, 40),
            values: (0..50)
                .map(|k| v.saturating_add(((k * 7 + i * 3) % (jitter as usize + 1)) as u8))
                .collect(),
        }
    }

    /// The frames at which a tracker that sees each frame's successors finds cuts.
    fn cuts_in(frames: &[LumaSample]) -> Vec<usize> {
        let mut t = ShotTracker::new(4.0);
        (0..frames.len())
            .filter(|&i| t.update(frames[i].clone(), &mut |k| frames.get(i + 1 + k).cloned()))
            .collect()
    }

    #[test]
    fn a_picture_that_comes_back_within_three_frames_was_no_cut() {
        let road = |i: usize| frame(100, 6, i);
        // One grey frame (a corrupt frame decoded grey) in a drive, and a flash of two.
        let mut frames: Vec<LumaSample> = (0..40).map(road).collect();
        frames[20] = frame(200, 6, 20);
        frames[30] = frame(20, 6, 30);
        frames[31] = frame(240, 6, 31);
        assert_eq!(cuts_in(&frames), Vec::<usize>::new());
        // Without the frames after it, the grey frame alone looks like a cut.
        let mut t = ShotTracker::new(4.0);
        let seen: Vec<bool> = frames[..21]
            .iter()
            .map(|f| t.update(f.clone(), &mut |_| None))
            .collect();
        assert_eq!(seen.iter().filter(|c| **c).count(), 1);
        assert!(seen[20]);
        // A cut's new picture stays: found at its first frame, with its successors seen.
        let cut: Vec<LumaSample> = (0..40)
            .map(|i| if i < 25 { road(i) } else { frame(40, 6, i) })
            .collect();
        assert_eq!(cuts_in(&cut), vec![25]);
        // A picture that stays away longer than three frames (four frames of another view,
        // then the road again) was a cut (its way back comes before the new shot's own motion
        // is known, so it is not a second).
        let mut away: Vec<LumaSample> = (0..40).map(road).collect();
        for (i, f) in away.iter_mut().enumerate().skip(20).take(4) {
            *f = frame(200, 6, i);
        }
        assert_eq!(cuts_in(&away), vec![20]);
        // A change in the last frame of a video has no frame after it: a cut, as before.
        let mut last: Vec<LumaSample> = (0..30).map(road).collect();
        last[29] = frame(200, 6, 29);
        assert_eq!(cuts_in(&last), vec![29]);
    }

    #[test]
    fn a_cut_after_an_unchanging_picture_says_how_long_it_stood_still() {
        // A drive, then its picture frozen (frame 20 shown five more times), then the drive
        // again where it has got to: a cut, after 5 repeated frames.
        let mut frames: Vec<LumaSample> = (0..20).map(|i| frame(100, 6, i)).collect();
        frames.extend((0..5).map(|_| frame(100, 6, 19)));
        frames.extend((25..40).map(|i| frame(150, 6, i)));
        let mut t = ShotTracker::new(4.0);
        let cuts: Vec<usize> = (0..frames.len())
            .filter(|&i| t.update(frames[i].clone(), &mut |k| frames.get(i + 1 + k).cloned()))
            .collect();
        assert_eq!(cuts, vec![25]);
        assert_eq!(t.frozen_before_cut(), 5);
        // A cut out of a moving picture: no frame before it repeated.
        let mut t = ShotTracker::new(4.0);
        let moving: Vec<LumaSample> = (0..40)
            .map(|i| frame(if i < 25 { 100 } else { 40 }, 6, i))
            .collect();
        let cuts: Vec<usize> = (0..moving.len())
            .filter(|&i| t.update(moving[i].clone(), &mut |k| moving.get(i + 1 + k).cloned()))
            .collect();
        assert_eq!(cuts, vec![25]);
        assert_eq!(t.frozen_before_cut(), 0);
    }

    #[test]
    fn a_cut_is_found_once_and_motion_is_not() {
        let mut t = ShotTracker::new(4.0);
        assert!(
            t.lone_lines_trusted(),
            "the opening shot's geometry is its own"
        );
        // A road moving past: small frame-to-frame changes.
        let mut cuts = Vec::new();
        for i in 0..30 {
            if t.update(frame(100, 6, i), &mut |_| None) {
                cuts.push(i);
            }
        }
        // The next clip of a compilation: much darker everywhere, then moving again; and a
        // second cut as soon as the new shot's own differences are known.
        for i in 30..60 {
            if t.update(frame(40, 6, i), &mut |_| None) {
                cuts.push(i);
            }
        }
        for i in 60..70 {
            if t.update(frame(160, 6, i), &mut |_| None) {
                cuts.push(i);
            }
        }
        assert_eq!(cuts, vec![30, 60]);
        // Lone lines wait for a pair after a cut: a lone line is dropped, a pair admitted,
        // then lone lines too.
        assert!(!t.lone_lines_trusted());
        let line = Some(Poly2::new(0.0, 0.0, 400.0));
        let det = |left, right, status| Detection {
            left,
            right,
            left_confidence: 0.9,
            right_confidence: 0.9,
            confidence: 0.9,
            status,
            left_evidence: Default::default(),
            right_evidence: Default::default(),
        };
        let mut lone = det(line, None, LaneStatus::LeftOnly);
        t.admit(&mut lone);
        assert_eq!(
            (lone.left, lone.status, lone.confidence),
            (None, LaneStatus::None, 0.0)
        );
        assert!(!t.lone_lines_trusted());
        let mut pair = det(line, line, LaneStatus::Both);
        t.admit(&mut pair);
        assert_eq!(pair.status, LaneStatus::Both);
        assert!(t.lone_lines_trusted());
        let mut lone = det(None, line, LaneStatus::RightOnly);
        t.admit(&mut lone);
        assert_eq!(lone.status, LaneStatus::RightOnly);
        assert!(!t.update(frame(160, 6, 70), &mut |_| None));
        assert!(t.lone_lines_trusted());
        // A frame of another size (a different stream) is not compared.
        let other = LumaSample {
            size: (160, 80),
            values: vec![250; 50],
        };
        assert!(!t.update(other, &mut |_| None));
    }
}
