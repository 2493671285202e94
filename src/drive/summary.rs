//! Drive statistics over telemetry records: the numbers a run's summary, `lanes batch`'s
//! per-video `summary.json`/`batch.csv` and `lanes report`'s header share. One accumulator so
//! that every place counts "a frame with a lane" the same way.

use crate::base::telemetry::FrameRecord;
use serde::{Deserialize, Serialize};

/// Counts and offset statistics of a drive (or of many drives, by `merge`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriveStats {
    pub frames: usize,
    /// Seconds of video covered (frames / fps, from the records' times).
    pub duration_s: f64,
    /// Frames by drawn status.
    pub both: usize,
    pub left_only: usize,
    pub right_only: usize,
    pub predicted: usize,
    pub none: usize,
    /// Frames where this frame's search did not find both lines (`detected` false).
    pub search_failed: usize,
    /// Frames with an offset (a lane drawn), and the sum and maximum of |offset|.
    pub offset_frames: usize,
    pub offset_abs_sum_m: f64,
    pub offset_abs_max_m: f64,
    /// Sum of the drawn lane's confidence over all frames.
    pub confidence_sum: f64,
}

impl DriveStats {
    /// Count one frame.
    pub fn add(&mut self, r: &FrameRecord) {
        // The video covered ends one frame period after the last frame starts: 200 frames at
        // 25 fps are 8.00 s (frame n starts at n / fps, so the period is time_s / frame).
        let end = if r.frame > 0 {
            r.time_s * (r.frame as f64 + 1.0) / r.frame as f64
        } else {
            r.time_s
        };
        if self.frames == 0 || end > self.duration_s {
            self.duration_s = end;
        }
        self.frames += 1;
        match r.status.as_str() {
            "both" => self.both += 1,
            "left_only" => self.left_only += 1,
            "right_only" => self.right_only += 1,
            "predicted" => self.predicted += 1,
            _ => self.none += 1,
        }
        if !r.detected {
            self.search_failed += 1;
        }
        if let Some(o) = r.offset_m.filter(|o| o.is_finite()) {
            self.offset_frames += 1;
            self.offset_abs_sum_m += o.abs();
            self.offset_abs_max_m = self.offset_abs_max_m.max(o.abs());
        }
        if r.confidence.is_finite() {
            self.confidence_sum += r.confidence;
        }
    }

    /// Statistics of a whole record list.
    pub fn of(records: &[FrameRecord]) -> Self {
        let mut s = Self::default();
        for r in records {
            s.add(r);
        }
        s
    }

    /// Totals over several drives (durations add up).
    pub fn merge(&mut self, o: &DriveStats) {
        self.frames += o.frames;
        self.duration_s += o.duration_s;
        self.both += o.both;
        self.left_only += o.left_only;
        self.right_only += o.right_only;
        self.predicted += o.predicted;
        self.none += o.none;
        self.search_failed += o.search_failed;
        self.offset_frames += o.offset_frames;
        self.offset_abs_sum_m += o.offset_abs_sum_m;
        self.offset_abs_max_m = self.offset_abs_max_m.max(o.offset_abs_max_m);
        self.confidence_sum += o.confidence_sum;
    }

    fn share(&self, n: usize) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            n as f64 / self.frames as f64
        }
    }

    /// Share of frames with a lane drawn (any status but `none`).
    pub fn lane_share(&self) -> f64 {
        self.share(self.frames - self.none)
    }

    /// Share of frames where the search did not find both lines.
    pub fn search_failed_share(&self) -> f64 {
        self.share(self.search_failed)
    }

    /// Mean |offset| over frames with a lane (None without any).
    pub fn offset_abs_mean_m(&self) -> Option<f64> {
        (self.offset_frames > 0).then(|| self.offset_abs_sum_m / self.offset_frames as f64)
    }

    /// Mean confidence of the drawn lane over all frames.
    pub fn mean_confidence(&self) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            self.confidence_sum / self.frames as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(frame: usize, status: &str, detected: bool, offset: Option<f64>) -> FrameRecord {
        FrameRecord {
            frame,
            time_s: frame as f64 / 10.0,
            search: "prior".into(),
            detected,
            status: status.into(),
            left_confidence: 0.5,
            right_confidence: 0.5,
            confidence: if status == "none" { 0.0 } else { 0.5 },
            left_fit: None,
            right_fit: None,
            radius_m: None,
            offset_m: offset,
            lane_width_m: None,
            left_pixels: 0,
            right_pixels: 0,
        }
    }

    #[test]
    fn counts_shares_and_offsets() {
        let rs = vec![
            rec(0, "both", true, Some(0.2)),
            rec(1, "left_only", false, Some(-0.4)),
            rec(2, "predicted", false, Some(0.1)),
            rec(3, "none", false, None),
        ];
        let s = DriveStats::of(&rs);
        assert_eq!(
            (s.frames, s.both, s.left_only, s.predicted, s.none),
            (4, 1, 1, 1, 1)
        );
        assert_eq!(s.search_failed, 3);
        assert!((s.lane_share() - 0.75).abs() < 1e-12);
        assert!((s.search_failed_share() - 0.75).abs() < 1e-12);
        assert!((s.offset_abs_mean_m().unwrap() - 0.7 / 3.0).abs() < 1e-12);
        assert!((s.offset_abs_max_m - 0.4).abs() < 1e-12);
        // Four frames at 10 fps (the last starts at 0.3 s) cover 0.4 s.
        assert!((s.duration_s - 0.4).abs() < 1e-12);
        let mut t = s.clone();
        t.merge(&s);
        assert_eq!(t.frames, 8);
        assert!((t.lane_share() - 0.75).abs() < 1e-12);
        assert!((t.mean_confidence() - 0.375).abs() < 1e-12);
    }
}
