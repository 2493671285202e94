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

/// The medians of a drive's main measures over the frames with a lane drawn (status not
/// `none`): the tracked radius (capped at `measure::RADIUS_CAP_M` on straight road), the signed
/// offset (positive right of the lane centre) and the lane width, metres. `None` without any
/// such frame. Shown in `lanes video`'s summary line, `summary.json` and `batch.csv`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DriveMedians {
    pub radius_median_m: Option<f64>,
    pub offset_median_m: Option<f64>,
    pub lane_width_median_m: Option<f64>,
}

impl DriveMedians {
    /// `median radius 812 m, offset 0.12 m right, lane width 3.61 m` (`-` where unknown; a
    /// radius above `straight_above_m`, the overlay's `render.straight_above_m`, is "straight").
    pub fn describe(&self, straight_above_m: f64) -> String {
        let radius = match self.radius_median_m {
            Some(r) if r > straight_above_m => "straight".to_string(),
            Some(r) => format!("{r:.0} m"),
            None => "-".into(),
        };
        let offset = match self.offset_median_m {
            Some(o) if o.abs() < 0.005 => "0.00 m (centred)".to_string(),
            Some(o) => format!(
                "{:.2} m {}",
                o.abs(),
                if o > 0.0 { "right" } else { "left" }
            ),
            None => "-".into(),
        };
        let width = self
            .lane_width_median_m
            .map(|w| format!("{w:.2} m"))
            .unwrap_or_else(|| "-".into());
        format!("median radius {radius}, offset {offset}, lane width {width}")
    }
}

/// Collects the values behind `DriveMedians`, one frame at a time (three numbers per frame).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MeasureSeries {
    radius_m: Vec<f64>,
    offset_m: Vec<f64>,
    lane_width_m: Vec<f64>,
}

impl MeasureSeries {
    /// Count one frame (frames without a lane drawn add nothing).
    pub fn add(&mut self, r: &FrameRecord) {
        if r.status == "none" {
            return;
        }
        let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
        self.radius_m.extend(finite(r.radius_m));
        self.offset_m.extend(finite(r.offset_m));
        self.lane_width_m.extend(finite(r.lane_width_m));
    }

    pub fn medians(&self) -> DriveMedians {
        DriveMedians {
            radius_median_m: crate::base::stats::median(&self.radius_m),
            offset_median_m: crate::base::stats::median(&self.offset_m),
            lane_width_median_m: crate::base::stats::median(&self.lane_width_m),
        }
    }
}

/// Frames after which a run that has drawn no lane at all says so while it runs (4 s at 25 fps).
pub const NO_LANE_HINT_AFTER_FRAMES: usize = 100;

/// Watches a run's records and gives, once, a hint when no lane has been drawn in the first
/// `NO_LANE_HINT_AFTER_FRAMES` frames (or, through `at_end`, in a shorter run): the geometry or
/// camera most likely does not fit the video.
#[derive(Debug, Clone, Default)]
pub struct NoLaneHint {
    frames: usize,
    with_lane: usize,
    given: bool,
    /// Frames before this one are not counted (the road geometry was found in frames from
    /// here on: what comes before it, a car park say, is expected to show no lane).
    from: usize,
}

impl NoLaneHint {
    /// A hint that counts the frames from `frame` on.
    pub fn from_frame(frame: usize) -> Self {
        Self {
            from: frame,
            ..Self::default()
        }
    }

    /// Count a record; `Some(hint)` the first time the rule fires.
    pub fn add(&mut self, r: &FrameRecord, video: &std::path::Path) -> Option<String> {
        if r.frame < self.from {
            return None;
        }
        self.frames += 1;
        if r.status != "none" {
            self.with_lane += 1;
        }
        (self.frames == NO_LANE_HINT_AFTER_FRAMES && self.with_lane == 0).then(|| self.hint(video))
    }

    /// The hint for a run that ended with no lane drawn, unless it was given already.
    pub fn at_end(&mut self, video: &std::path::Path) -> Option<String> {
        (self.frames > 0 && self.with_lane == 0 && !self.given).then(|| self.hint(video))
    }

    fn hint(&mut self, video: &std::path::Path) -> String {
        self.given = true;
        let v = video.display();
        let n = self.frames;
        let which = if self.from == 0 {
            format!("the first {n} frame{}", if n == 1 { "" } else { "s" })
        } else {
            format!(
                "{n} frame{} from frame {}",
                if n == 1 { "" } else { "s" },
                self.from
            )
        };
        format!(
            "{v}: no lane found in {which}: {}",
            no_lane_advice("this video", &v.to_string())
        )
    }
}

/// What to do when no lane is found in `what` ("this video"), with `example` in the command.
pub fn no_lane_advice(what: &str, example: &str) -> String {
    format!(
        "the perspective (or camera) most likely does not fit {what}; check the quad that \
         `lanes perspective {example} -o lanes.toml` draws, give the camera's --camera/--config, \
         or leave out --config to find the geometry in the video (docs/any-camera.md)"
    )
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
            pitch_deg: None,
            horizon_y: None,
            cut: false,
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

    #[test]
    fn medians_use_frames_with_a_lane_only() {
        let mut m = MeasureSeries::default();
        for (i, (status, r, o, w)) in [
            ("both", 500.0, 0.2, 3.6),
            ("both", 700.0, -0.1, 3.7),
            ("predicted", 900.0, 0.1, 3.5),
            ("none", 10.0, 5.0, 9.0),
        ]
        .into_iter()
        .enumerate()
        {
            let mut rec = rec(i, status, true, Some(o));
            rec.radius_m = Some(r);
            rec.lane_width_m = Some(w);
            m.add(&rec);
        }
        let d = m.medians();
        assert_eq!(d.radius_median_m, Some(700.0));
        assert_eq!(d.offset_median_m, Some(0.1));
        assert_eq!(d.lane_width_median_m, Some(3.6));
        assert_eq!(
            d.describe(3000.0),
            "median radius 700 m, offset 0.10 m right, lane width 3.60 m"
        );
        assert_eq!(
            DriveMedians::default().describe(3000.0),
            "median radius -, offset -, lane width -"
        );
        let straight = DriveMedians {
            radius_median_m: Some(1e6),
            offset_median_m: Some(-0.25),
            lane_width_median_m: None,
        };
        assert_eq!(
            straight.describe(3000.0),
            "median radius straight, offset 0.25 m left, lane width -"
        );
    }

    #[test]
    fn the_no_lane_hint_fires_once_after_100_frames_or_at_the_end() {
        let v = std::path::Path::new("clip.mp4");
        let mut h = NoLaneHint::default();
        let fired: Vec<usize> = (0..300)
            .filter(|&i| h.add(&rec(i, "none", false, None), v).is_some())
            .collect();
        assert_eq!(fired, vec![NO_LANE_HINT_AFTER_FRAMES - 1]);
        assert!(h.at_end(v).is_none(), "given once only");
        // One frame with a lane: no hint.
        let mut h = NoLaneHint::default();
        h.add(&rec(0, "both", true, Some(0.0)), v);
        assert!((1..300).all(|i| h.add(&rec(i, "none", false, None), v).is_none()));
        assert!(h.at_end(v).is_none());
        // A short run with no lane gets it at the end.
        let mut h = NoLaneHint::default();
        for i in 0..5 {
            assert!(h.add(&rec(i, "none", false, None), v).is_none());
        }
        let hint = h.at_end(v).unwrap();
        assert!(
            hint.starts_with("clip.mp4: no lane found in the first 5 frames")
                && hint.contains("lanes perspective clip.mp4"),
            "{hint}"
        );
        // Counting from frame 800 (where the geometry was found): the 800 frames before it
        // do not count.
        let mut h = NoLaneHint::from_frame(800);
        let fired: Vec<usize> = (0..1000)
            .filter(|&i| h.add(&rec(i, "none", false, None), v).is_some())
            .collect();
        assert_eq!(fired, vec![800 + NO_LANE_HINT_AFTER_FRAMES - 1]);
        let mut h = NoLaneHint::from_frame(800);
        for i in 0..1000 {
            h.add(
                &rec(i, if i < 800 { "none" } else { "both" }, false, None),
                v,
            );
        }
        assert!(h.at_end(v).is_none());
    }
}
