//! The text table `lanes eval` prints for a `Report`.

use crate::tools::eval::negatives::NegativesSummary;
use crate::tools::eval::run::Report;
use std::fmt::Write;
use std::path::Path;

/// One line into a `String` (writing to a `String` cannot fail).
macro_rules! outln {
    ($o:expr, $($t:tt)*) => {{
        let _ = writeln!($o, $($t)*);
    }};
}

/// A "  key    value" row.
fn row(out: &mut String, k: &str, v: String) {
    outln!(out, "  {k:<32} {v}");
}

fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{:.1}%", v * 100.0))
        .unwrap_or_else(|| "-".into())
}
fn cm(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} cm"))
        .unwrap_or_else(|| "-".into())
}

/// The report as the text table `lanes eval` prints (`frames`: also one line per frame).
pub fn table(r: &Report, frames: bool) -> String {
    let mut out = String::new();
    if let Some(s) = r.synthetic.as_ref().filter(|s| s.summary.frames > 0) {
        let m = &s.summary;
        outln!(
            out,
            "synthetic truth: {} from {}",
            plural(m.frames, "frame"),
            plural(s.files, "file")
        );
        row(
            &mut out,
            "detection rate (both lines)",
            format!(
                "{:.1}% ({}/{})",
                m.detection_rate * 100.0,
                m.detected,
                m.frames
            ),
        );
        row(
            &mut out,
            "radius error median",
            pct(m.radius_rel_error_median),
        );
        row(
            &mut out,
            "radius error p90",
            format!(
                "{} ({} curved frames)",
                pct(m.radius_rel_error_p90),
                m.curved_frames
            ),
        );
        row(
            &mut out,
            "radius error vs ideal quadratic",
            format!(
                "{} median, {} p90",
                pct(m.radius_quadratic_rel_error_median),
                pct(m.radius_quadratic_rel_error_p90)
            ),
        );
        row(
            &mut out,
            "straight reported > 2 km",
            format!("{}/{}", m.straight_over_2km, m.straight_frames),
        );
        row(
            &mut out,
            "offset error median",
            cm(m.offset_error_cm_median),
        );
        row(&mut out, "offset error p90", cm(m.offset_error_cm_p90));
        row(
            &mut out,
            "lane width error median",
            cm(m.lane_width_error_cm_median),
        );
        row(
            &mut out,
            "lane width error p90",
            cm(m.lane_width_error_cm_p90),
        );
        row(
            &mut out,
            "TuSimple accuracy, bird's-eye",
            format!(
                "{:.3} (FP {:.3}, FN {:.3})",
                m.tusimple_birdseye_accuracy, m.tusimple_birdseye_fp, m.tusimple_birdseye_fn
            ),
        );
        row(
            &mut out,
            "TuSimple accuracy, to 100 m",
            far_accuracy(m.tusimple_accuracy, m.tusimple_fp, m.tusimple_fn),
        );
        if frames {
            outln!(
                out,
                "  {:<44} {:>9} {:>9} {:>8} {:>8} {:>8} {:>6}",
                "file",
                "R true",
                "R",
                "R err",
                "off cm",
                "w cm",
                "acc"
            );
            for f in &s.frames {
                let file = Path::new(&f.file)
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default();
                let label = if s.summary.frames > s.files {
                    format!("{file}#{}", f.frame)
                } else {
                    file
                };
                let num = |v: Option<f64>, d: usize| {
                    v.map(|v| format!("{v:.d$}")).unwrap_or_else(|| "-".into())
                };
                outln!(
                    out,
                    "  {:<44} {:>9} {:>9} {:>8} {:>8} {:>8} {:>6.3}",
                    label,
                    f.radius_true_m
                        .map(|r| format!("{r:.0}"))
                        .unwrap_or_else(|| "straight".into()),
                    num(f.radius_m, 0),
                    f.radius_rel_error
                        .map(|e| format!("{:.1}%", e * 100.0))
                        .unwrap_or_else(|| f
                            .straight_ok
                            .map(|b| if b { "ok" } else { "BENT" }.to_string())
                            .unwrap_or_else(|| "-".into())),
                    num(f.offset_error_cm, 1),
                    num(f.lane_width_error_cm, 1),
                    f.tusimple_birdseye.accuracy
                );
            }
        }
    }
    if let Some(t) = r.tusimple.as_ref().filter(|t| t.summary.images > 0) {
        let s = &t.summary;
        outln!(
            out,
            "TuSimple labels: {} images (ego lines), {} skipped",
            s.images,
            s.skipped
        );
        row(&mut out, "accuracy", format!("{:.3}", s.accuracy));
        row(&mut out, "false positive rate", format!("{:.3}", s.fp));
        row(&mut out, "false negative rate", format!("{:.3}", s.fn_));
        row(
            &mut out,
            "labelled rows in the quad",
            format!(
                "{:.3} (FP {:.3}, FN {:.3}; {} images)",
                s.labelled_rows_accuracy,
                s.labelled_rows_fp,
                s.labelled_rows_fn,
                s.labelled_rows_images
            ),
        );
        outln!(
            out,
            "  {:<10} {:>6} {:>7} {:>6} {:>6} {:>9} {:>6} {:>6}",
            "subset",
            "images",
            "skipped",
            "acc",
            "FP",
            "rows acc",
            "FP",
            "FN"
        );
        for (name, s) in &t.subsets {
            outln!(
                out,
                "  {:<10} {:>6} {:>7} {:>6.3} {:>6.3} {:>9.3} {:>6.3} {:>6.3}",
                name,
                s.images,
                s.skipped,
                s.accuracy,
                s.fp,
                s.labelled_rows_accuracy,
                s.labelled_rows_fp,
                s.labelled_rows_fn
            );
        }
        if frames {
            for i in &t.per_image {
                let lr = i
                    .labelled_rows
                    .map(|b| format!("rows acc {:.3} fp {:.2} fn {:.2}", b.accuracy, b.fp, b.fn_))
                    .unwrap_or_else(|| "rows -".into());
                outln!(
                    out,
                    "  {:<60} {:<9} acc {:.3} fp {:.2} fn {:.2}  {lr}",
                    i.file,
                    i.subset,
                    i.bench.accuracy,
                    i.bench.fp,
                    i.bench.fn_
                );
            }
        }
    }
    if let Some(n) = &r.negatives {
        outln!(
            out,
            "negatives: share of images with a reported lane (either line)"
        );
        let line = |s: &NegativesSummary| {
            if s.images == 0 {
                "no image scored".to_string()
            } else {
                format!("{:.3} ({}/{})", s.share, s.reported, s.images)
            }
        };
        for s in &n.sets {
            row(&mut out, &s.dir, line(s));
        }
        if let Some(t) = n.total.as_ref().filter(|_| n.sets.len() > 1) {
            row(&mut out, "total", line(t));
        }
        if frames {
            for i in &n.per_image {
                let side = match (i.left, i.right) {
                    (true, true) => "left+right",
                    (true, false) => "left",
                    (false, true) => "right",
                    (false, false) => "none",
                };
                outln!(out, "  {:<60} {side}", i.file);
            }
        }
    }
    if let Some(c) = r.culane.as_ref().filter(|c| c.images > 0) {
        outln!(
            out,
            "CULane labels: {} images (ego lines, IoU > 0.5, 30 px lines)",
            c.images
        );
        row(
            &mut out,
            "precision",
            format!(
                "{:.3} ({} TP, {} FP)",
                c.precision, c.counts.tp, c.counts.fp
            ),
        );
        row(
            &mut out,
            "recall",
            format!("{:.3} ({} FN)", c.recall, c.counts.fn_),
        );
        row(&mut out, "F1", format!("{:.3}", c.f1));
        if frames {
            for i in &c.per_image {
                outln!(
                    out,
                    "  {:<60} TP {} FP {} FN {}",
                    i.file,
                    i.counts.tp,
                    i.counts.fp,
                    i.counts.fn_
                );
            }
        }
    }
    if let Some(m) = r.masks.as_ref().filter(|m| m.images > 0) {
        outln!(out, "lane masks: {} images", m.images);
        row(
            &mut out,
            "predicted points near a lane",
            format!(
                "{:.3} ({}/{})",
                m.pred_near_mask, m.counts.pred_near, m.counts.pred_points
            ),
        );
        row(
            &mut out,
            "ego-lane pixels near prediction",
            format!(
                "{:.3} ({}/{})",
                m.mask_near_pred, m.counts.mask_near, m.counts.mask_pixels
            ),
        );
        if frames {
            for i in &m.per_image {
                outln!(
                    out,
                    "  {:<60} {:.3} {:.3}",
                    i.file,
                    i.counts.pred_near_mask(),
                    i.counts.mask_near_pred()
                );
            }
        }
    }
    let unscored = [
        (
            "synthetic truth",
            r.synthetic.as_ref().map(|s| s.summary.frames),
        ),
        (
            "TuSimple labels",
            r.tusimple.as_ref().map(|t| t.summary.images),
        ),
        ("CULane labels", r.culane.as_ref().map(|c| c.images)),
        ("lane masks", r.masks.as_ref().map(|m| m.images)),
    ];
    for (what, _) in unscored.iter().filter(|(_, n)| *n == Some(0)) {
        // Zeros in a table would read as a result: say that nothing was scored.
        outln!(out, "{what}: nothing scored");
    }
    if !r.failed.is_empty() {
        outln!(out, "failed: {}", r.failed.len());
    }
    out
}

/// The TuSimple row over lines labelled to 100 m. The lines drawn end at the bird's-eye view's
/// far edge (30 m on the synthetic rig), so no line reaches the 0.85 of labelled points a
/// TuSimple match needs, and the official FP and FN are then 1.0 while the points that are
/// drawn lie on the lines: the row says so instead of reading as a failure.
pub fn far_accuracy(accuracy: f64, fp: f64, fn_: f64) -> String {
    if accuracy > 0.0 && fp >= 0.999 && fn_ >= 0.999 {
        format!(
            "{accuracy:.3} of the labelled points; no line matched (FP {fp:.3}, FN {fn_:.3}): \
             lines are drawn only as far as the bird's-eye view reaches, under the 0.85 of \
             points to 100 m a TuSimple match needs"
        )
    } else {
        format!("{accuracy:.3} (FP {fp:.3}, FN {fn_:.3})")
    }
}

/// "1 frame", "2 frames".
fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
