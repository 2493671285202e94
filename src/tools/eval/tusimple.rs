//! TuSimple scoring: labels (`raw_file`, `h_samples`, `lanes`) and the official accuracy,
//! false-positive and false-negative rates (LaneEval `bench`), here on the two ego-lane lines.
//!
//! A point is correct when `|x_pred - x_gt| < 20 px / cos(angle)` (angle of the labelled line
//! from a straight-line fit), the threshold scaled by `width / 1280`; -2 counts as an x of -100,
//! so rows where both are -2 count as correct, as in the official script. A labelled line is
//! matched when some predicted line is correct on at least 85% of the rows.
//!
//! # Labelled-rows variant ([`bench_labelled_rows`])
//!
//! Beside the official figures, the same bench counted only on the rows the pipeline can see and
//! the labeller measured:
//!
//! * a row of a labelled line counts when its x is labelled (`x >= 0`) **and** the row lies
//!   strictly inside the vertical range of the bird's-eye quad in the image (`top < y < bottom`,
//!   see [`super::visible_rows`]). Predicted lines stop at the quad's far edge and labels stop
//!   where the labeller last saw paint; rows outside either are not scored;
//! * a labelled line with no counted row is not scored at all (not in the accuracy, not a FN);
//! * a line's accuracy is the share of its counted rows where a predicted line is within the
//!   official threshold (a predicted -2 at a counted row is wrong); per labelled line the best
//!   predicted line is taken; the image's accuracy is the mean over scored lines;
//! * a scored labelled line is matched when that accuracy is at least 85%, else it is a false
//!   negative (FN rate = unmatched / scored lines);
//! * a predicted line that matches no scored labelled line is a false positive
//!   (FP rate = unmatched predicted / predicted lines, 0 with no predicted line). So a line the
//!   pipeline does not report is a FN only, a wrong line is both a FP and a FN.
//!
//! # Ego lines of a label
//!
//! A record with exactly two lanes is taken as `[left, right]` ego lines as they stand (the
//! hand-checked `udacity_hard_ego` labels); otherwise [`ego_lanes`] picks the lines nearest the
//! image centre at the bottom. Lanes without any labelled point are dropped in both cases.
//! Records with `"skip": true` are counted, not scored; other extra fields are ignored.

use super::{ego_pair, Polyline};
use crate::base::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// The labeller could not represent this frame (e.g. a hairpin): count it, do not score it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip: bool,
}

/// Where a label's `raw_file` is: under `root` when given; otherwise against the label file's
/// directory and then each of its ancestors, the first that exists (so a label file deep inside
/// a data folder can name files relative to the folder's root). When none exists, the path
/// beside the label file (for the error message).
pub fn resolve_raw_file(label_path: &Path, raw_file: &str, root: Option<&Path>) -> PathBuf {
    if let Some(r) = root {
        return r.join(raw_file);
    }
    let dir = label_path.parent().unwrap_or(Path::new(""));
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    abs.ancestors()
        .map(|d| d.join(raw_file))
        .find(|p| p.is_file())
        .unwrap_or_else(|| dir.join(raw_file))
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

/// The labelled-rows bench (see the module docs): only rows where the labelled x is >= 0 and
/// `rows[0] < y < rows[1]` (the bird's-eye quad's vertical range in the image) count. `None` when
/// no labelled line has a counted row.
pub fn bench_labelled_rows(
    pred: &[Vec<f64>],
    gt: &[Vec<f64>],
    h_samples: &[f64],
    pixel_thresh: f64,
    rows: [f64; 2],
) -> Option<Bench> {
    let [top, bottom] = rows;
    let mut line_accs = Vec::new();
    let mut matched = 0usize;
    for g in gt {
        let counted: Vec<usize> = (0..g.len().min(h_samples.len()))
            .filter(|&i| g[i] >= 0.0 && h_samples[i] > top && h_samples[i] < bottom)
            .collect();
        if counted.is_empty() {
            continue;
        }
        let thresh = pixel_thresh / angle(g, h_samples).cos();
        let acc = |p: &Vec<f64>| {
            let hits = counted
                .iter()
                .filter(|&&i| {
                    p.get(i)
                        .is_some_and(|&x| x >= 0.0 && (x - g[i]).abs() < thresh)
                })
                .count();
            hits as f64 / counted.len() as f64
        };
        let best = pred.iter().map(acc).fold(0.0, f64::max);
        if best >= PT_THRESH {
            matched += 1;
        }
        line_accs.push(best);
    }
    if line_accs.is_empty() {
        return None;
    }
    let n = line_accs.len() as f64;
    let fp = pred.len().saturating_sub(matched) as f64;
    Some(Bench {
        accuracy: line_accs.iter().sum::<f64>() / n,
        fp: if pred.is_empty() {
            0.0
        } else {
            fp / pred.len() as f64
        },
        fn_: (line_accs.len() - matched) as f64 / n,
    })
}

/// The ego lines of a label to score (see the module docs): a two-lane record as it stands
/// (`[left, right]`), otherwise [`ego_lanes`]; lanes without a labelled point are dropped.
pub fn scored_lanes(label: &Label, width: i32, height: i32) -> Vec<Vec<f64>> {
    let lanes = if label.lanes.len() == 2 {
        label.lanes.clone()
    } else {
        ego_lanes(label, width, height)
    };
    lanes
        .into_iter()
        .filter(|l| l.iter().any(|x| *x >= 0.0))
        .collect()
}

/// The subset of a labelled frame, from its file name: `challenge` (`chalvid_*`, `challenge*`),
/// `harder` (`hardchalprojvid_*`, `hard_challenge*`), `p1` (`p1_challenge*`), else `project`.
pub fn subset(raw_file: &str) -> &'static str {
    let name = Path::new(raw_file)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if name.starts_with("chalvid_") || name.starts_with("challenge") {
        "challenge"
    } else if name.starts_with("hardchalprojvid_") || name.starts_with("hard_challenge") {
        "harder"
    } else if name.starts_with("p1_challenge") {
        "p1"
    } else {
        "project"
    }
}

/// The score of one labelled image.
#[derive(Debug, Clone, Serialize)]
pub struct ImageScore {
    pub file: String,
    pub subset: &'static str,
    /// The official bench.
    #[serde(flatten)]
    pub bench: Bench,
    /// The labelled-rows bench; `None` when no labelled row is inside the visible range.
    pub labelled_rows: Option<Bench>,
    pub labelled_lines: usize,
    pub predicted_lines: usize,
}

/// Means over a set of images.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Scored images.
    pub images: usize,
    /// Records with `"skip": true`.
    pub skipped: usize,
    /// Official accuracy, FP and FN rates (means over images).
    pub accuracy: f64,
    pub fp: f64,
    #[serde(rename = "fn")]
    pub fn_: f64,
    /// Images with at least one counted labelled row.
    pub labelled_rows_images: usize,
    /// Labelled-rows accuracy, FP and FN rates (means over `labelled_rows_images`).
    pub labelled_rows_accuracy: f64,
    pub labelled_rows_fp: f64,
    pub labelled_rows_fn: f64,
}

/// Mean of `f` over `items` (0 when empty).
fn mean<T>(items: &[T], f: impl Fn(&T) -> f64) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    items.iter().map(f).sum::<f64>() / items.len() as f64
}

/// Summarise images (and a count of skipped records).
pub fn summarize(images: &[&ImageScore], skipped: usize) -> Summary {
    let lr: Vec<Bench> = images.iter().filter_map(|i| i.labelled_rows).collect();
    Summary {
        images: images.len(),
        skipped,
        accuracy: mean(images, |i| i.bench.accuracy),
        fp: mean(images, |i| i.bench.fp),
        fn_: mean(images, |i| i.bench.fn_),
        labelled_rows_images: lr.len(),
        labelled_rows_accuracy: mean(&lr, |b| b.accuracy),
        labelled_rows_fp: mean(&lr, |b| b.fp),
        labelled_rows_fn: mean(&lr, |b| b.fn_),
    }
}

/// The whole set and each subset ([`subset`]); `skipped` holds the subsets of skipped records.
pub fn summarize_subsets(
    images: &[ImageScore],
    skipped: &[&'static str],
) -> (Summary, BTreeMap<&'static str, Summary>) {
    let all: Vec<&ImageScore> = images.iter().collect();
    let total = summarize(&all, skipped.len());
    let mut names: Vec<&'static str> = images.iter().map(|i| i.subset).collect();
    names.extend_from_slice(skipped);
    names.sort_unstable();
    names.dedup();
    let per = names
        .into_iter()
        .map(|n| {
            let imgs: Vec<&ImageScore> = images.iter().filter(|i| i.subset == n).collect();
            let sk = skipped.iter().filter(|s| **s == n).count();
            (n, summarize(&imgs, sk))
        })
        .collect();
    (total, per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_in_a_label_file_is_an_error_naming_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("label.json");
        let good = r#"{"raw_file": "a.jpg", "h_samples": [240, 250], "lanes": [[100, 110]]}"#;
        for bad in ["NaN", "nan", "Infinity", "1e999"] {
            let line = good.replace("110", bad);
            std::fs::write(&p, format!("{good}\n{line}\n")).unwrap();
            let err = load_labels(&p).unwrap_err().to_string();
            assert!(
                err.contains("label.json: line 2: not a TuSimple label"),
                "{bad}: {err}"
            );
        }
    }

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
    fn labelled_rows_perfect_is_one() {
        let gt = vec![gt_line(300.0, 0.6), gt_line(1000.0, -0.6)];
        let b = bench_labelled_rows(&gt, &gt, &rows(), 20.0, [0.0, 720.0]).unwrap();
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
    fn labelled_rows_shift_of_25_px_is_zero() {
        let gt = vec![gt_line(300.0, 0.0), gt_line(1000.0, 0.0)];
        let pred = shifted(&gt, 25.0);
        // Unlike the official bench, rows where both are -2 do not count.
        let b = bench_labelled_rows(&pred, &gt, &rows(), 20.0, [0.0, 720.0]).unwrap();
        assert_eq!(
            b,
            Bench {
                accuracy: 0.0,
                fp: 1.0,
                fn_: 1.0
            }
        );
    }

    #[test]
    fn labelled_rows_outside_the_visible_range_are_not_counted() {
        let gt = vec![gt_line(300.0, 0.0)];
        // Wrong (40 px off) on rows 600 and below, right above; predicted -2 above row 400.
        let pred = vec![gt[0]
            .iter()
            .zip(rows())
            .map(|(x, y)| {
                if y < 400.0 {
                    -2.0
                } else if y >= 600.0 {
                    x + 40.0
                } else {
                    *x
                }
            })
            .collect::<Vec<f64>>()];
        // Visible 400 < y < 600: rows 410..590, all right.
        let b = bench_labelled_rows(&pred, &gt, &rows(), 20.0, [400.0, 600.0]).unwrap();
        assert_eq!(b.accuracy, 1.0);
        assert_eq!((b.fp, b.fn_), (0.0, 0.0));
        // Over the whole image: labelled rows 300..710 (42), right only on 400..590 (20).
        let all = bench_labelled_rows(&pred, &gt, &rows(), 20.0, [0.0, 720.0]).unwrap();
        assert!((all.accuracy - 20.0 / 42.0).abs() < 1e-12, "{all:?}");
        assert_eq!((all.fp, all.fn_), (1.0, 1.0));
        // A label entirely outside the range is not scored.
        assert_eq!(
            bench_labelled_rows(&pred, &gt, &rows(), 20.0, [100.0, 290.0]),
            None
        );
    }

    #[test]
    fn labelled_rows_missing_line_is_a_false_negative_only() {
        let gt = vec![gt_line(300.0, 0.6), gt_line(1000.0, -0.6)];
        let b = bench_labelled_rows(&gt[..1], &gt, &rows(), 20.0, [0.0, 720.0]).unwrap();
        assert_eq!(
            b,
            Bench {
                accuracy: 0.5,
                fp: 0.0,
                fn_: 0.5
            }
        );
        // No prediction at all: accuracy 0, no FP.
        let none = bench_labelled_rows(&[], &gt, &rows(), 20.0, [0.0, 720.0]).unwrap();
        assert_eq!((none.accuracy, none.fp, none.fn_), (0.0, 0.0, 1.0));
    }

    #[test]
    fn two_lane_records_are_scored_as_they_stand() {
        // Both lines left of the centre: `ego_lanes` would drop one, a two-lane record keeps both;
        // an all -2 lane is dropped.
        let l = Label {
            raw_file: "x".into(),
            h_samples: rows(),
            lanes: vec![gt_line(100.0, 0.6), gt_line(500.0, 0.0)],
            skip: false,
        };
        assert_eq!(scored_lanes(&l, 1280, 720), l.lanes);
        let one = Label {
            lanes: vec![gt_line(100.0, 0.6), vec![-2.0; 56]],
            ..l.clone()
        };
        assert_eq!(scored_lanes(&one, 1280, 720), vec![one.lanes[0].clone()]);
    }

    #[test]
    fn subsets_by_frame_name() {
        assert_eq!(subset("frames/ysono/x/chalvid_04.png"), "challenge");
        assert_eq!(subset("frames/jeremy-shannon/challenge01.jpg"), "challenge");
        assert_eq!(subset("a/hardchalprojvid_20.png"), "harder");
        assert_eq!(subset("a/hard_challenge01.jpg"), "harder");
        assert_eq!(subset("clip_frames/p1_challenge_f000.png"), "p1");
        assert_eq!(subset("udacity/test_images/test1.jpg"), "project");
        assert_eq!(
            subset("clip_frames/project_video_shadow_f016.png"),
            "project"
        );
    }

    #[test]
    fn raw_files_resolve_up_the_ancestors() {
        let d = tempfile::tempdir().unwrap();
        let labels = d.path().join("labelled/set/labels.json");
        std::fs::create_dir_all(labels.parent().unwrap()).unwrap();
        std::fs::create_dir_all(d.path().join("frames")).unwrap();
        std::fs::write(d.path().join("frames/a.png"), b"").unwrap();
        let found = resolve_raw_file(&labels, "frames/a.png", None);
        assert_eq!(
            found.canonicalize().unwrap(),
            d.path().join("frames/a.png").canonicalize().unwrap()
        );
        // With --root the path is taken as given; a missing file resolves beside the labels.
        assert_eq!(
            resolve_raw_file(&labels, "frames/a.png", Some(Path::new("/r"))),
            Path::new("/r/frames/a.png")
        );
        assert_eq!(
            resolve_raw_file(&labels, "nope.png", None),
            d.path().join("labelled/set/nope.png")
        );
    }

    #[test]
    fn skip_and_extra_fields_are_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.json");
        std::fs::write(&p, "{\"raw_file\":\"a.jpg\",\"h_samples\":[700],\"lanes\":[[1],[2]],\"skip\":true,\"note\":\"hairpin\",\"control_points\":{\"left\":[[1,2]]}}\n{\"raw_file\":\"b.jpg\",\"h_samples\":[700],\"lanes\":[]}\n").unwrap();
        let l = load_labels(&p).unwrap();
        assert!(l[0].skip && !l[1].skip);
    }

    #[test]
    fn subset_summaries_count_skipped_records() {
        let img = |subset, acc| ImageScore {
            file: "f".into(),
            subset,
            bench: Bench {
                accuracy: acc,
                fp: 0.0,
                fn_: 0.0,
            },
            labelled_rows: Some(Bench {
                accuracy: acc,
                fp: 0.5,
                fn_: 0.0,
            }),
            labelled_lines: 2,
            predicted_lines: 2,
        };
        let imgs = vec![img("project", 1.0), img("harder", 0.5), img("harder", 0.0)];
        let (all, per) = summarize_subsets(&imgs, &["harder"]);
        assert_eq!((all.images, all.skipped), (3, 1));
        assert_eq!((per["harder"].images, per["harder"].skipped), (2, 1));
        assert_eq!(per["harder"].labelled_rows_accuracy, 0.25);
        assert_eq!(per["project"].accuracy, 1.0);
        assert_eq!(per["project"].labelled_rows_fp, 0.5);
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
            skip: false,
        };
        let e = ego_lanes(&label, 1280, 720);
        assert_eq!(e, vec![label.lanes[1].clone(), label.lanes[2].clone()]);
    }
}
