//! Scoring against synthetic truth (`lanes synth`): radius relative error, offset and lane-width
//! errors at the bird's-eye bottom row, detection rate, and TuSimple accuracy of the lines.

use super::tusimple::{self, Bench};
use super::{median_p90, sample_rows, Polyline};
use crate::tools::synth::truth::FrameTruth;
use serde::Serialize;

/// Truth radii above this are scored as straight roads, m.
pub const STRAIGHT_TRUTH_ABOVE_M: f64 = 10_000.0;
/// A straight road is recognised when the reported radius is above this, m.
pub const STRAIGHT_REPORTED_ABOVE_M: f64 = 2_000.0;

/// What the pipeline produced for one frame.
#[derive(Debug, Clone, Default)]
pub struct Prediction {
    /// The lines drawn (in the original image), left and right.
    pub left: Option<Polyline>,
    pub right: Option<Polyline>,
    /// Both lines were found in this frame (for videos: both accepted by the tracker).
    pub detected: bool,
    /// What was reported for this frame: radius (mean of both lines), offset, lane width.
    pub radius_m: Option<f64>,
    pub offset_m: Option<f64>,
    pub lane_width_m: Option<f64>,
}

/// The score of one frame.
#[derive(Debug, Clone, Serialize)]
pub struct FrameScore {
    pub file: String,
    pub frame: usize,
    pub detected: bool,
    pub radius_true_m: Option<f64>,
    pub radius_m: Option<f64>,
    /// |reported - true| / true, for curved roads.
    pub radius_rel_error: Option<f64>,
    /// |reported - ideal quadratic| / ideal quadratic (`radius_quadratic_m`), for curved roads.
    pub radius_quadratic_rel_error: Option<f64>,
    /// The reported radius is over 2 km, for straight roads.
    pub straight_ok: Option<bool>,
    pub offset_true_m: f64,
    pub offset_m: Option<f64>,
    pub offset_error_cm: Option<f64>,
    pub lane_width_true_m: f64,
    pub lane_width_m: Option<f64>,
    pub lane_width_error_cm: Option<f64>,
    /// TuSimple bench over every labelled row (lines to 100 m).
    pub tusimple: Bench,
    /// TuSimple bench over the rows inside the bird's-eye view (`birdseye_rows`).
    pub tusimple_birdseye: Bench,
}

/// Score one frame of an image `width` px wide.
pub fn score_frame(file: &str, truth: &FrameTruth, pred: &Prediction, width: i32) -> FrameScore {
    let m = pred.radius_m;
    let true_r = truth.radius_m.filter(|r| *r <= STRAIGHT_TRUTH_ABOVE_M);
    let radius_rel_error = match (true_r, m) {
        (Some(t), Some(m)) => Some((m - t).abs() / t),
        _ => None,
    };
    let radius_quadratic_rel_error = match (true_r, m) {
        (Some(_), Some(m)) => Some((m - truth.radius_quadratic_m).abs() / truth.radius_quadratic_m),
        _ => None,
    };
    let straight_ok = match (true_r, m) {
        (None, Some(m)) => Some(m > STRAIGHT_REPORTED_ABOVE_M),
        (None, None) => Some(false),
        _ => None,
    };
    let pred_rows: Vec<Vec<f64>> = [&pred.left, &pred.right]
        .into_iter()
        .flatten()
        .map(|p| sample_rows(p, &truth.h_samples, width))
        .collect();
    let gt: Vec<Vec<f64>> = truth
        .lanes
        .iter()
        .filter(|l| l.iter().any(|x| *x >= 0.0))
        .cloned()
        .collect();
    // The same restricted to rows inside the bird's-eye view.
    let [top, bottom] = truth.birdseye_rows;
    let keep: Vec<usize> = (0..truth.h_samples.len())
        .filter(|&i| truth.h_samples[i] > top && truth.h_samples[i] < bottom)
        .collect();
    let sub = |v: &Vec<f64>| keep.iter().map(|&i| v[i]).collect::<Vec<f64>>();
    let rows_in: Vec<f64> = keep.iter().map(|&i| truth.h_samples[i]).collect();
    let pred_in: Vec<Vec<f64>> = pred_rows.iter().map(sub).collect();
    let gt_in: Vec<Vec<f64>> = gt.iter().map(sub).collect();
    FrameScore {
        file: file.to_string(),
        frame: truth.frame,
        detected: pred.detected,
        radius_true_m: truth.radius_m,
        radius_m: m,
        radius_rel_error,
        radius_quadratic_rel_error,
        straight_ok,
        offset_true_m: truth.offset_m,
        offset_m: pred.offset_m,
        offset_error_cm: pred.offset_m.map(|o| (o - truth.offset_m).abs() * 100.0),
        lane_width_true_m: truth.lane_width_lateral_m,
        lane_width_m: pred.lane_width_m,
        lane_width_error_cm: pred
            .lane_width_m
            .map(|w| (w - truth.lane_width_lateral_m).abs() * 100.0),
        tusimple: tusimple::bench(
            &pred_rows,
            &gt,
            &truth.h_samples,
            tusimple::thresh_for_width(width),
        ),
        tusimple_birdseye: tusimple::bench(
            &pred_in,
            &gt_in,
            &rows_in,
            tusimple::thresh_for_width(width),
        ),
    }
}

/// Summary over frames.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub frames: usize,
    pub detected: usize,
    pub detection_rate: f64,
    pub curved_frames: usize,
    pub radius_rel_error_median: Option<f64>,
    pub radius_rel_error_p90: Option<f64>,
    /// Against the radius a quadratic fit to the true lines reports (the model limit removed).
    pub radius_quadratic_rel_error_median: Option<f64>,
    pub radius_quadratic_rel_error_p90: Option<f64>,
    pub straight_frames: usize,
    pub straight_over_2km: usize,
    pub offset_error_cm_median: Option<f64>,
    pub offset_error_cm_p90: Option<f64>,
    pub lane_width_error_cm_median: Option<f64>,
    pub lane_width_error_cm_p90: Option<f64>,
    pub tusimple_accuracy: f64,
    pub tusimple_fp: f64,
    pub tusimple_fn: f64,
    pub tusimple_birdseye_accuracy: f64,
    pub tusimple_birdseye_fp: f64,
    pub tusimple_birdseye_fn: f64,
}

/// Summarise frame scores (errors over frames with a measurement).
pub fn summarize(scores: &[FrameScore]) -> Summary {
    let n = scores.len();
    let collect =
        |f: &dyn Fn(&FrameScore) -> Option<f64>| scores.iter().filter_map(f).collect::<Vec<f64>>();
    let radius = collect(&|s| s.radius_rel_error);
    let radius_q = collect(&|s| s.radius_quadratic_rel_error);
    let offset = collect(&|s| s.offset_error_cm);
    let width = collect(&|s| s.lane_width_error_cm);
    let detected = scores.iter().filter(|s| s.detected).count();
    let straight: Vec<bool> = scores.iter().filter_map(|s| s.straight_ok).collect();
    let mean = |f: &dyn Fn(&FrameScore) -> f64| {
        if n == 0 {
            0.0
        } else {
            scores.iter().map(f).sum::<f64>() / n as f64
        }
    };
    let (rm, rp) = median_p90(&radius).unzip();
    let (qm, qp) = median_p90(&radius_q).unzip();
    let (om, op) = median_p90(&offset).unzip();
    let (wm, wp) = median_p90(&width).unzip();
    Summary {
        frames: n,
        detected,
        detection_rate: if n == 0 {
            0.0
        } else {
            detected as f64 / n as f64
        },
        curved_frames: scores
            .iter()
            .filter(|s| {
                s.radius_true_m
                    .map(|r| r <= STRAIGHT_TRUTH_ABOVE_M)
                    .unwrap_or(false)
            })
            .count(),
        radius_rel_error_median: rm,
        radius_rel_error_p90: rp,
        radius_quadratic_rel_error_median: qm,
        radius_quadratic_rel_error_p90: qp,
        straight_frames: straight.len(),
        straight_over_2km: straight.iter().filter(|b| **b).count(),
        offset_error_cm_median: om,
        offset_error_cm_p90: op,
        lane_width_error_cm_median: wm,
        lane_width_error_cm_p90: wp,
        tusimple_accuracy: mean(&|s| s.tusimple.accuracy),
        tusimple_fp: mean(&|s| s.tusimple.fp),
        tusimple_fn: mean(&|s| s.tusimple.fn_),
        tusimple_birdseye_accuracy: mean(&|s| s.tusimple_birdseye.accuracy),
        tusimple_birdseye_fp: mean(&|s| s.tusimple_birdseye.fp),
        tusimple_birdseye_fn: mean(&|s| s.tusimple_birdseye.fn_),
    }
}
