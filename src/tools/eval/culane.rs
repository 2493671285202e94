//! CULane scoring: `.lines.txt` labels (one line per lane: `x1 y1 x2 y2 ...`) and the CULane rule:
//! each line drawn 30 px wide (scaled by `width / 1640`), a prediction is a true positive when
//! its IoU with a labelled line is over 0.5 under the best one-to-one matching. Ego lines only.

use super::{ego_pair, Polyline};
use crate::base::error::{Error, Result};
use opencv::core::{self, Mat, Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;
use std::path::Path;

/// The CULane line width at 1640 px image width.
pub const LINE_WIDTH: f64 = 30.0;
/// IoU above which a prediction matches a label.
pub const IOU_THRESH: f64 = 0.5;

/// Read a `.lines.txt` file: one lane per text line, pairs of x y.
pub fn load_lines(path: &Path) -> Result<Vec<Polyline>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let vals: std::result::Result<Vec<f64>, _> =
            line.split_whitespace().map(|t| t.parse::<f64>()).collect();
        let vals = vals.map_err(|_| Error::Io {
            path: path.to_path_buf(),
            message: format!("line {}: not numbers", i + 1),
        })?;
        if vals.is_empty() {
            continue;
        }
        if let Some(v) = vals.iter().find(|v| !v.is_finite()) {
            return Err(Error::Io {
                path: path.to_path_buf(),
                message: format!("line {}: {v} is not a finite coordinate", i + 1),
            });
        }
        if vals.len() % 2 != 0 {
            return Err(Error::Io {
                path: path.to_path_buf(),
                message: format!("line {}: odd number of values", i + 1),
            });
        }
        out.push(vals.chunks(2).map(|p| (p[0], p[1])).collect());
    }
    Ok(out)
}

/// The line width for an image `width` px wide (30 at 1640).
pub fn width_for(width: i32) -> i32 {
    ((LINE_WIDTH * width as f64 / 1640.0).round() as i32).max(1)
}

/// Rasterise a polyline `thickness` px wide into a `width` x `height` mask.
pub fn draw_line(poly: &[(f64, f64)], width: i32, height: i32, thickness: i32) -> Result<Mat> {
    let mut m = Mat::zeros(height, width, core::CV_8UC1)?.to_mat()?;
    let pts: Vector<Point> = crate::lane::render::points_from_f64(poly)
        .into_iter()
        .collect();
    if pts.len() >= 2 {
        let v: Vector<Vector<Point>> = std::iter::once(pts).collect();
        imgproc::polylines(
            &mut m,
            &v,
            false,
            Scalar::all(255.0),
            thickness,
            imgproc::LINE_8,
            0,
        )?;
    }
    Ok(m)
}

/// Intersection over union of two masks.
pub fn iou(a: &Mat, b: &Mat) -> Result<f64> {
    let mut inter = Mat::default();
    core::bitwise_and_def(a, b, &mut inter)?;
    let mut uni = Mat::default();
    core::bitwise_or_def(a, b, &mut uni)?;
    let u = core::count_non_zero(&uni)? as f64;
    Ok(if u > 0.0 {
        core::count_non_zero(&inter)? as f64 / u
    } else {
        0.0
    })
}

/// True positives, false positives and false negatives of one image.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Counts {
    pub tp: usize,
    pub fp: usize,
    #[serde(rename = "fn")]
    pub fn_: usize,
}

impl Counts {
    pub fn add(&mut self, o: Counts) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
    }
    pub fn precision(&self) -> f64 {
        let d = self.tp + self.fp;
        if d == 0 {
            0.0
        } else {
            self.tp as f64 / d as f64
        }
    }
    pub fn recall(&self) -> f64 {
        let d = self.tp + self.fn_;
        if d == 0 {
            0.0
        } else {
            self.tp as f64 / d as f64
        }
    }
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

/// Score predicted lines against labelled lines of one `width` x `height` image: IoU of every
/// pair, the one-to-one matching with the largest total IoU, matches over 0.5 are true positives.
pub fn score(pred: &[Polyline], gt: &[Polyline], width: i32, height: i32) -> Result<Counts> {
    let t = width_for(width);
    let pm: Vec<Mat> = pred
        .iter()
        .map(|p| draw_line(p, width, height, t))
        .collect::<Result<_>>()?;
    let gm: Vec<Mat> = gt
        .iter()
        .map(|g| draw_line(g, width, height, t))
        .collect::<Result<_>>()?;
    let mut m = vec![vec![0.0; gm.len()]; pm.len()];
    for (i, p) in pm.iter().enumerate() {
        for (j, g) in gm.iter().enumerate() {
            m[i][j] = iou(p, g)?;
        }
    }
    let tp = best_matching(&m);
    Ok(Counts {
        tp,
        fp: pred.len() - tp,
        fn_: gt.len() - tp,
    })
}

/// Number of pairs over the IoU threshold in the one-to-one assignment maximising the number of
/// such pairs, then their total IoU (exhaustive: a handful of lines per image).
fn best_matching(m: &[Vec<f64>]) -> usize {
    fn rec(m: &[Vec<f64>], i: usize, used: &mut Vec<bool>) -> (usize, f64) {
        if i == m.len() {
            return (0, 0.0);
        }
        let mut best = rec(m, i + 1, used);
        for j in 0..used.len() {
            if !used[j] && m[i][j] > IOU_THRESH {
                used[j] = true;
                let (c, s) = rec(m, i + 1, used);
                used[j] = false;
                let cand = (c + 1, s + m[i][j]);
                if cand.0 > best.0 || (cand.0 == best.0 && cand.1 > best.1) {
                    best = cand;
                }
            }
        }
        best
    }
    let cols = m.first().map(|r| r.len()).unwrap_or(0);
    rec(m, 0, &mut vec![false; cols]).0
}

/// The ego-lane lines of a CULane label (left, right; a side without one is left out).
pub fn ego_lines(lines: &[Polyline], width: i32, height: i32) -> Vec<Polyline> {
    let (l, r) = ego_pair(lines, width as f64 / 2.0, (height - 1) as f64);
    [l, r]
        .into_iter()
        .flatten()
        .map(|i| lines[i].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(x0: f64) -> Polyline {
        (0..30)
            .map(|i| (x0 + 2.0 * i as f64, 590.0 - 10.0 * i as f64))
            .collect()
    }

    #[test]
    fn nan_or_inf_in_a_lines_file_is_an_error_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.lines.txt");
        for bad in ["nan", "inf", "-inf", "NaN"] {
            std::fs::write(&p, format!("1 590 2 580\n3 590 {bad} 580\n")).unwrap();
            let err = load_lines(&p).unwrap_err().to_string();
            assert!(err.contains("a.lines.txt: line 2: "), "{err}");
            assert!(err.contains("is not a finite coordinate"), "{err}");
        }
    }

    #[test]
    fn perfect_shifted_and_missing() {
        let gt = vec![line(500.0), line(1100.0)];
        let perfect = score(&gt, &gt, 1640, 590).unwrap();
        assert_eq!(
            perfect,
            Counts {
                tp: 2,
                fp: 0,
                fn_: 0
            }
        );
        // Shifted 25 px sideways: the 30 px bands overlap by 5 px -> IoU about 5/55, no match.
        let shifted: Vec<Polyline> = gt
            .iter()
            .map(|l| l.iter().map(|(x, y)| (x + 25.0, *y)).collect())
            .collect();
        let s = score(&shifted, &gt, 1640, 590).unwrap();
        assert_eq!(
            s,
            Counts {
                tp: 0,
                fp: 2,
                fn_: 2
            }
        );
        // Shifted 10 px: overlap 20 of 40 px -> IoU 0.5 borderline; 5 px: IoU 25/35 = 0.71, match.
        let near: Vec<Polyline> = gt
            .iter()
            .map(|l| l.iter().map(|(x, y)| (x + 5.0, *y)).collect())
            .collect();
        assert_eq!(score(&near, &gt, 1640, 590).unwrap().tp, 2);
        let missing = score(&gt[..1], &gt, 1640, 590).unwrap();
        assert_eq!(
            missing,
            Counts {
                tp: 1,
                fp: 0,
                fn_: 1
            }
        );
        let mut c = Counts::default();
        c.add(missing);
        assert!((c.precision() - 1.0).abs() < 1e-12 && (c.recall() - 0.5).abs() < 1e-12);
        assert!((c.f1() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn lines_file_parses() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.lines.txt");
        std::fs::write(&p, "526.5 590 537.0 580 \n1184.7 590 1165.7 580\n").unwrap();
        let l = load_lines(&p).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1][1], (1165.7, 580.0));
    }
}
