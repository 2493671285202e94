//! Accuracy scoring: predicted lane lines mapped back into the original image, and scorers
//! against synthetic truth, TuSimple labels, CULane `.lines.txt` files and lane masks.
//!
//! Every scorer works on the two ego-lane lines only: the labelled lines nearest the image
//! centre on each side at the bottom of the image. Scorers are pure functions of predictions
//! and labels; running the pipeline is the caller's job (see `lanes eval`).

pub mod culane;
pub mod masks;
pub mod negatives;
pub mod run;
pub mod synthetic;
pub mod table;
pub mod tusimple;

use crate::base::camera::Camera;
use crate::lane::fit::Poly2;
use crate::lane::warp::Perspective;

/// A polyline in image pixels, ordered from the bottom of the image upwards.
pub type Polyline = Vec<(f64, f64)>;

/// A fitted line in the original (raw, distorted) image: the fit is evaluated every `step`
/// bird's-eye rows over the whole view, mapped through the inverse perspective, then through the
/// lens distortion when a camera is given.
pub fn line_in_image(
    fit: &Poly2,
    persp: &Perspective,
    camera: Option<&Camera>,
    step: f64,
) -> Polyline {
    let h = persp.height as f64;
    let w = persp.width as f64;
    let step = step.max(0.05);
    let mut out = Vec::new();
    let mut y = h - 1.0;
    loop {
        let (u, v) = persp.from_birdseye(fit.eval(y), y);
        // Far outside the frame the distortion polynomial can fold back into it: skip.
        let inside = u.is_finite()
            && v.is_finite()
            && u > -0.5 * w
            && u < 1.5 * w
            && v > -0.5 * h
            && v < 1.5 * h;
        if inside {
            out.push(match camera {
                Some(c) => c.distort_pixel(u, v),
                None => (u, v),
            });
        }
        if y <= 0.0 {
            break;
        }
        y = (y - step).max(0.0);
    }
    out
}

/// The vertical range `[top, bottom]` of the bird's-eye quad in the original image: the image
/// rows of the view's far edge (row 0) and near edge (last row) at the quad's two line columns
/// `line_x` (the destination quad's left and right x, where the lane lines are drawn), mapped as
/// [`line_in_image`] maps a line. `top` is the larger of the two far-edge rows and `bottom` the
/// smaller of the near-edge rows, clamped to the image (`0..=image_height - 1`), so both lines
/// are inside the view between them. Predicted lines span this range and no more.
pub fn visible_rows(
    persp: &Perspective,
    line_x: [f64; 2],
    camera: Option<&Camera>,
    image_height: i32,
) -> [f64; 2] {
    let row = |x: f64, y: f64| {
        let (u, v) = persp.from_birdseye(x, y);
        match camera {
            Some(c) => c.distort_pixel(u, v).1,
            None => v,
        }
    };
    let near = (persp.height as f64 - 1.0).max(0.0);
    let top = row(line_x[0], 0.0).max(row(line_x[1], 0.0)).max(0.0);
    let bottom = row(line_x[0], near)
        .min(row(line_x[1], near))
        .min(image_height as f64 - 1.0);
    [top, bottom]
}

/// x where a polyline crosses row `y` (first crossing from its start), by linear interpolation.
pub fn x_at_row(poly: &[(f64, f64)], y: f64) -> Option<f64> {
    for w in poly.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if (y0 >= y && y1 <= y) || (y0 <= y && y1 >= y) {
            if (y1 - y0).abs() < 1e-12 {
                return Some(x0);
            }
            return Some(x0 + (y - y0) / (y1 - y0) * (x1 - x0));
        }
    }
    None
}

/// Sample a polyline at the given rows: x inside `0..width`, else -2 (TuSimple convention).
pub fn sample_rows(poly: &[(f64, f64)], rows: &[f64], width: i32) -> Vec<f64> {
    rows.iter()
        .map(|&r| match x_at_row(poly, r) {
            Some(x) if x >= 0.0 && x < width as f64 => x,
            _ => -2.0,
        })
        .collect()
}

/// Resample a polyline to points about `spacing` px apart along its length.
pub fn resample(poly: &[(f64, f64)], spacing: f64) -> Polyline {
    let mut out = Vec::new();
    let Some(&first) = poly.first() else {
        return out;
    };
    out.push(first);
    let mut carry = 0.0;
    for w in poly.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let len = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
        let mut t = spacing - carry;
        while t <= len {
            let f = t / len;
            out.push((x0 + f * (x1 - x0), y0 + f * (y1 - y0)));
            t += spacing;
        }
        carry = len - (t - spacing);
    }
    out
}

/// Which labelled lines are the ego-lane lines: the nearest to `centre_x` on the left and on the
/// right at row `bottom_y`, each line's x there extrapolated linearly from its lowest points.
/// `lines` hold points in any order; lines with fewer than 2 points are ignored.
pub fn ego_pair(
    lines: &[Polyline],
    centre_x: f64,
    bottom_y: f64,
) -> (Option<usize>, Option<usize>) {
    let mut best_l: Option<(usize, f64)> = None;
    let mut best_r: Option<(usize, f64)> = None;
    for (i, l) in lines.iter().enumerate() {
        let Some(x) = x_at_bottom(l, bottom_y) else {
            continue;
        };
        if x < centre_x {
            if best_l.map(|(_, bx)| x > bx).unwrap_or(true) {
                best_l = Some((i, x));
            }
        } else if best_r.map(|(_, bx)| x < bx).unwrap_or(true) {
            best_r = Some((i, x));
        }
    }
    (best_l.map(|b| b.0), best_r.map(|b| b.0))
}

/// A line's x at row `y`, extrapolated by a least-squares straight line through its lowest
/// (largest y) points (up to 10).
pub fn x_at_bottom(line: &[(f64, f64)], y: f64) -> Option<f64> {
    if line.len() < 2 {
        return None;
    }
    let mut pts: Vec<(f64, f64)> = line.to_vec();
    pts.sort_by(|a, b| b.1.total_cmp(&a.1));
    pts.truncate(10);
    let n = pts.len() as f64;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let syy: f64 = pts.iter().map(|p| (p.1 - my).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.1 - my) * (p.0 - mx)).sum();
    if syy < 1e-9 {
        return Some(mx);
    }
    Some(mx + sxy / syy * (y - my))
}

/// Median and 90th percentile (linear interpolation between order statistics, as numpy).
pub fn median_p90(values: &[f64]) -> Option<(f64, f64)> {
    Some((percentile(values, 50.0)?, percentile(values, 90.0)?))
}

pub use crate::base::stats::percentile;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_match_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(percentile(&v, 50.0), Some(3.0));
        assert!((percentile(&v, 90.0).unwrap() - 7.6).abs() < 1e-12);
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn row_sampling_interpolates_and_marks_outside() {
        let poly = vec![(100.0, 700.0), (200.0, 600.0), (1300.0, 500.0)];
        let s = sample_rows(&poly, &[650.0, 600.0, 510.0, 400.0], 1280);
        assert_eq!(s[0], 150.0);
        assert_eq!(s[1], 200.0);
        assert_eq!(s[2], 1190.0);
        assert_eq!(s[3], -2.0);
    }

    #[test]
    fn ego_pair_picks_nearest_lines_each_side() {
        let line = |x: f64| vec![(x, 700.0), (x + 50.0, 500.0)];
        let lines = vec![line(100.0), line(500.0), line(800.0), line(1100.0)];
        assert_eq!(ego_pair(&lines, 640.0, 719.0), (Some(1), Some(2)));
    }

    #[test]
    fn resample_spacing() {
        let r = resample(&[(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)], 2.0);
        assert_eq!(r.len(), 11);
        assert!(
            (r[6].0 - 10.0).abs() < 1e-9 && (r[6].1 - 2.0).abs() < 1e-9,
            "{:?}",
            r[6]
        );
    }
}
