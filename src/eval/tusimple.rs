//! TuSimple scoring: labels (`raw_file`, `h_samples`, `lanes`) and the official accuracy,
//! false-positive and false-negative rates (LaneEval `bench`), here on the two ego-lane lines.
//!
//! A point is correct when `|x_pred - x_gt| < 20 px / cos(angle)` (angle of the labelled line
//! from a straight-line fit), the threshold scaled by `width / 1280`; -2 counts as an x of -100,
//! so rows where both are -2 count as correct, as in the official script. A labelled line is
//! matched when some predicted line is correct on at least 85% of the rows.

use super::{ego_pair, Polyline};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The official pixel threshold at 1280 px width.
pub const PIXEL_THRESH: f64 = 20.0;
/// The official share of correct rows for a line to count as matched.
pub const PT_THRESH: f64 = 0.85;

/// One TuSimple label record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    pub raw_file: String,
    pub h_samples: Vec<f64>,
    pub lanes: Vec<Vec<f64>>,
}

/// Read a label file: JSON lines (the TuSimple format), a JSON array, or a single object.
pub fn load_labels(path: &Path) -> Result<Vec<Label>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let bad = |m: String| Error::Io {
        path: path.to_path_buf(),
        message: m,
    };
    if let Ok(one) = serde_json::from_str::<Label>(&text) {
        return Ok(vec![one]);
    }
    if let Ok(many) = serde_json::from_str::<Vec<Label>>(&text) {
        return Ok(many);
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: Label = serde_json::from_str(line)
            .map_err(|e| bad(format!("line {}: not a TuSimple label ({e})", i + 1)))?;
        out.push(l);
    }
    if out.is_empty() {
        return Err(bad("no TuSimple labels".into()));
    }
    Ok(out)
}

/// Result of scoring one image.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bench {
    pub accuracy: f64,
    pub fp: f64,
    #[serde(rename = "fn")]
    pub fn_: f64,
}

/// Angle of a labelled line from the vertical, from a least-squares fit x = k*y + c.
fn angle(xs: &[f64], ys: &[f64]) -> f64 {
    let pts: Vec<(f64, f64)> = xs
        .iter()
        .zip(ys)
        .filter(|(x, _)| **x >= 0.0)
        .map(|(x, y)| (*x, *y))
        .collect();
    if pts.len() <= 1 {
        return 0.0;
    }
    let n = pts.len() as f64;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let syy: f64 = pts.iter().map(|p| (p.1 - my).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.1 - my) * (p.0 - mx)).sum();
    if syy <= 0.0 {
        return 0.0;
    }
    (sxy / syy).atan()
}

fn line_accuracy(pred: &[f64], gt: &[f64], thresh: f64) -> f64 {
    let f = |v: f64| if v >= 0.0 { v } else { -100.0 };
    let hits = pred
        .iter()
        .zip(gt)
        .filter(|(p, g)| (f(**p) - f(**g)).abs() < thresh)
        .count();
    hits as f64 / gt.len().max(1) as f64
}

/// The official per-image bench: `pred` and `gt` lines sampled at `h_samples` (-2 = none).
/// `pixel_thresh` is 20 at 1280 px width (use [`thresh_for_width`]).
pub fn bench(pred: &[Vec<f64>], gt: &[Vec<f64>], h_samples: &[f64], pixel_thresh: f64) -> Bench {
    let mut line_accs = Vec::new();
    let (mut fn_, mut matched) = (0.0, 0.0);
    for g in gt {
        let thresh = pixel_thresh / angle(g, h_samples).cos();
        let max_acc = pred
            .iter()
            .map(|p| line_accuracy(p, g, thresh))
            .fold(0.0, f64::max);
        if max_acc < PT_THRESH {
            fn_ += 1.0;
        } else {
            matched += 1.0;
        }
        line_accs.push(max_acc);
    }
    let fp = pred.len() as f64 - matched;
    if gt.len() > 4 && fn_ > 0.0 {
        fn_ -= 1.0;
    }
    let mut s: f64 = line_accs.iter().sum();
    if gt.len() > 4 {
        s -= line_accs.iter().copied().fold(f64::INFINITY, f64::min);
    }
    let denom = (gt.len() as f64).clamp(1.0, 4.0);
    Bench {
        accuracy: s / denom,
        fp: if pred.is_empty() {
            0.0
        } else {
            fp / pred.len() as f64
        },
        fn_: fn_ / denom,
    }
}

/// The pixel threshold for an image `width` px wide (20 at 1280).
pub fn thresh_for_width(width: i32) -> f64 {
    PIXEL_THRESH * width as f64 / 1280.0
}

/// The two ego-lane lines of a label (in left, right order; a side without a line is left out).
pub fn ego_lanes(label: &Label, width: i32, height: i32) -> Vec<Vec<f64>> {
    let polys: Vec<Polyline> = label
        .lanes
        .iter()
        .map(|l| {
            l.iter()
                .zip(&label.h_samples)
                .filter(|(x, _)| **x >= 0.0)
                .map(|(x, y)| (*x, *y))
                .collect()
        })
        .collect();
    let (l, r) = ego_pair(&polys, width as f64 / 2.0, (height - 1) as f64);
    [l, r]
        .into_iter()
        .flatten()
        .map(|i| label.lanes[i].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<f64> {
        (0..56).map(|i| 160.0 + 10.0 * i as f64).collect()
    }

    /// A straight line visible from row 300 down; -2 above.
    /// The lines moved `dx` px to the right (missing points stay missing).
    fn shifted(lines: &[Vec<f64>], dx: f64) -> Vec<Vec<f64>> {
        lines
            .iter()
            .map(|l| {
                l.iter()
                    .map(|x| if *x >= 0.0 { x + dx } else { *x })
                    .collect()
            })
            .collect()
    }

    fn gt_line(x_bottom: f64, slope: f64) -> Vec<f64> {
        rows()
            .iter()
            .map(|&y| {
                if y < 300.0 {
                    -2.0
                } else {
                    x_bottom + slope * (y - 710.0)
                }
            })
            .collect()
    }

    #[test]
    fn perfect_prediction_scores_one() {
        let gt = vec![gt_line(300.0, 0.6), gt_line(1000.0, -0.6)];
        let b = bench(&gt, &gt, &rows(), 20.0);
        assert_eq!(
            b,
            Bench {
                accuracy: 1.0,
                fp: 0.0,
                fn_: 0.0
            }
        );
    }

    #[test]
    fn shift_of_25_px_fails_every_visible_point() {
        let gt = vec![gt_line(300.0, 0.0), gt_line(1000.0, 0.0)];
        let pred: Vec<Vec<f64>> = shifted(&gt, 25.0);
        let b = bench(&pred, &gt, &rows(), 20.0);
        // 14 of 56 rows are above 300 and -2 in both: they count as correct (official rule).
        assert!((b.accuracy - 14.0 / 56.0).abs() < 1e-12, "{b:?}");
        assert_eq!(b.fp, 1.0);
        assert_eq!(b.fn_, 1.0);
        // A shift of 15 px is within the threshold.
        let pred15: Vec<Vec<f64>> = shifted(&gt, 15.0);
        assert_eq!(bench(&pred15, &gt, &rows(), 20.0).accuracy, 1.0);
    }

    #[test]
    fn slanted_lines_get_a_wider_threshold() {
        // slope 1 -> 45 degrees -> threshold 20 / cos 45 = 28.3 px: a 25 px shift passes.
        let gt = vec![gt_line(300.0, 1.0)];
        let pred: Vec<Vec<f64>> = shifted(&gt, 25.0);
        assert_eq!(bench(&pred, &gt, &rows(), 20.0).accuracy, 1.0);
    }

    #[test]
    fn missing_line_is_a_false_negative() {
        let gt = vec![gt_line(300.0, 0.6), gt_line(1000.0, -0.6)];
        let b = bench(&gt[..1], &gt, &rows(), 20.0);
        assert_eq!(b.fp, 0.0);
        assert_eq!(b.fn_, 0.5);
        // The missing line scores only the 14 rows where it and the other line are both -2.
        assert!(
            (b.accuracy - (1.0 + 14.0 / 56.0) / 2.0).abs() < 1e-12,
            "{b:?}"
        );
        // An extra predicted line with no label is a false positive.
        let b2 = bench(&gt, &gt[..1], &rows(), 20.0);
        assert_eq!(b2.fp, 0.5);
        assert_eq!(b2.fn_, 0.0);
    }

    #[test]
    fn labels_parse_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.json");
        std::fs::write(&p, "{\"raw_file\":\"a.jpg\",\"h_samples\":[700,710],\"lanes\":[[1,2],[-2,5]]}\n{\"raw_file\":\"b.jpg\",\"h_samples\":[700],\"lanes\":[]}\n").unwrap();
        let l = load_labels(&p).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].lanes[1], vec![-2.0, 5.0]);
    }

    #[test]
    fn ego_lanes_are_the_two_nearest_the_centre() {
        let label = Label {
            raw_file: "x".into(),
            h_samples: rows(),
            lanes: vec![
                gt_line(-100.0, 1.5),
                gt_line(350.0, 0.6),
                gt_line(950.0, -0.6),
                gt_line(1500.0, -1.5),
            ],
        };
        let e = ego_lanes(&label, 1280, 720);
        assert_eq!(e, vec![label.lanes[1].clone(), label.lanes[2].clone()]);
    }
}
