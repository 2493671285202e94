//! Lane-pixel search and polynomial fit: sliding windows from a histogram, or a band around
//! the previous fit; then a second-order polynomial `x = a*y^2 + b*y + c` per line.

mod pixels;
pub mod prior_search;
pub mod sliding_window;

pub use crate::base::poly::{Poly2, Scale};
pub use pixels::{LinePixels, SearchMode, SearchResult, Window};
pub use prior_search::{prior_search, prior_search_bands};
pub use sliding_window::{guided_search, sliding_window_search};

use crate::base::config::SearchConfig;

/// The fitted lines of one frame (either may be missing).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LaneFit {
    pub left: Option<Poly2>,
    pub right: Option<Poly2>,
    pub left_pixels: usize,
    pub right_pixels: usize,
}

/// Least squares that drops outliers: fit, keep the pixels within `max(floor_px, 2.5 sigma)`
/// of the curve (sigma from the median absolute residual, so the outliers do not inflate it),
/// refit; three rounds. Pixels of a crack, a car or a second marking inside the search window
/// pull a plain fit towards them; here they are dropped once the line's own pixels dominate.
pub fn robust_fit(p: &LinePixels, floor_px: f64, min_rows: usize) -> Option<Poly2> {
    trimmed(p, floor_px, min_rows, |q| Poly2::fit(&q.xs, &q.ys))
}

/// `robust_fit` with the curvature `a` given (only heading and position fitted): a sparse
/// line (a few dashes) is fitted as a parallel of its well-seen partner, whose curvature the
/// lane shares.
pub fn robust_fit_with_curvature(
    p: &LinePixels,
    a: f64,
    floor_px: f64,
    min_rows: usize,
) -> Option<Poly2> {
    trimmed(p, floor_px, min_rows, |q| {
        // Least squares of x - a y^2 = b y + c.
        let n = q.len() as f64;
        if q.len() < 2 {
            return None;
        }
        let (mut sy, mut syy, mut sr, mut syr) = (0.0, 0.0, 0.0, 0.0);
        for (x, y) in q.xs.iter().zip(&q.ys) {
            let (y, r) = (*y as f64, *x as f64 - a * (*y as f64).powi(2));
            sy += y;
            syy += y * y;
            sr += r;
            syr += y * r;
        }
        let det = n * syy - sy * sy;
        if det.abs() < 1e-9 {
            return None;
        }
        let b = (n * syr - sy * sr) / det;
        let c = (sr - b * sy) / n;
        (b.is_finite() && c.is_finite()).then(|| Poly2::new(a, b, c))
    })
}

/// `robust_fit` with the curvature `a` and heading `b` given (only the position fitted): a
/// line with a single dash in view, fitted as the shifted copy of its well-seen partner, whose
/// shape the lane shares; one dash anywhere fixes the shift.
pub fn robust_fit_with_shape(
    p: &LinePixels,
    (a, b): (f64, f64),
    floor_px: f64,
    min_rows: usize,
) -> Option<Poly2> {
    trimmed(p, floor_px, min_rows, |q| {
        if q.is_empty() {
            return None;
        }
        let sum: f64 =
            q.xs.iter()
                .zip(&q.ys)
                .map(|(x, y)| *x as f64 - a * (*y as f64).powi(2) - b * *y as f64)
                .sum();
        let c = sum / q.len() as f64;
        c.is_finite().then(|| Poly2::new(a, b, c))
    })
}

/// Iteratively trimmed fit: `fit` on all pixels, then on those within `max(floor_px,
/// 2.5 sigma)` of the curve (sigma from the median absolute residual), three rounds.
fn trimmed(
    p: &LinePixels,
    floor_px: f64,
    min_rows: usize,
    fit_fn: impl Fn(&LinePixels) -> Option<Poly2>,
) -> Option<Poly2> {
    let mut fit = fit_fn(p)?;
    let mut keep = LinePixels::default();
    let mut res: Vec<f64> = Vec::with_capacity(p.len());
    for _ in 0..3 {
        res.clear();
        res.extend(
            p.xs.iter()
                .zip(&p.ys)
                .map(|(x, y)| (*x as f64 - fit.eval(*y as f64)).abs()),
        );
        let mut sorted = res.clone();
        let mid = sorted.len() / 2;
        let (_, med, _) = sorted.select_nth_unstable_by(mid, |a, b| a.total_cmp(b));
        let limit = floor_px.max(2.5 * 1.4826 * *med);
        keep.xs.clear();
        keep.ys.clear();
        for ((x, y), r) in p.xs.iter().zip(&p.ys).zip(&res) {
            if *r <= limit {
                keep.xs.push(*x);
                keep.ys.push(*y);
            }
        }
        if keep.len() == p.len() {
            break;
        }
        if keep.distinct_rows() < min_rows {
            return None;
        }
        fit = fit_fn(&keep)?;
    }
    Some(fit)
}

/// Fit both lines of a search result; a line with fewer than `min_rows` distinct rows is not found.
/// With `cfg.robust`, outlier pixels are dropped (`robust_fit`, residual floor `floor_px`, in
/// the analysed view's pixels).
pub fn fit_lines(search: &SearchResult, cfg: &SearchConfig) -> LaneFit {
    fit_lines_with(search, cfg, 6.0)
}

/// `fit_lines` with the robust fit's residual floor given (analysed-view pixels).
pub fn fit_lines_with(search: &SearchResult, cfg: &SearchConfig, floor_px: f64) -> LaneFit {
    let fit_one = |p: &LinePixels| {
        if p.distinct_rows() < cfg.min_rows as usize {
            None
        } else if cfg.robust {
            robust_fit(p, floor_px, cfg.min_rows as usize)
        } else {
            Poly2::fit(&p.xs, &p.ys)
        }
    };
    LaneFit {
        left: fit_one(&search.left),
        right: fit_one(&search.right),
        left_pixels: search.left.len(),
        right_pixels: search.right.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::{SearchConfig, UnitsConfig};
    use crate::base::frame::BinaryMask;
    use crate::lane::measure;
    use opencv::core::{self, Mat};
    use opencv::prelude::*;

    /// A 1280x720 bird's-eye mask with two parabolas drawn 12 px wide.
    fn two_parabolas(l: &Poly2, r: &Poly2) -> BinaryMask {
        let mut m = Mat::zeros(720, 1280, core::CV_8UC1)
            .unwrap()
            .to_mat()
            .unwrap();
        {
            let d = m.data_bytes_mut().unwrap();
            for y in 0..720usize {
                for p in [l, r] {
                    let xc = p.eval(y as f64);
                    for x in (xc - 6.0).ceil() as i64..=(xc + 6.0).floor() as i64 {
                        if (0..1280).contains(&x) {
                            d[y * 1280 + x as usize] = 255;
                        }
                    }
                }
            }
        }
        BinaryMask::new(m).unwrap()
    }

    #[test]
    fn sliding_windows_and_fit_recover_drawn_parabolas() {
        let lt = Poly2::new(2.0e-4, -0.25, 480.0);
        let rt = Poly2::new(2.0e-4, -0.25, 860.0);
        let mask = two_parabolas(&lt, &rt);
        let cfg = SearchConfig::default();
        let s = sliding_window_search(&mask, &cfg).unwrap();
        assert_eq!(s.left_windows.len(), 10);
        let f = fit_lines(&s, &cfg);
        let (l, r) = (f.left.unwrap(), f.right.unwrap());
        for (got, truth) in [(l, lt), (r, rt)] {
            assert!((got.a - truth.a).abs() < 1e-5, "a {} vs {}", got.a, truth.a);
            assert!((got.c - truth.c).abs() < 1.0, "c {} vs {}", got.c, truth.c);
        }
        // Radius of the drawn curve, analytically, vs the fitted one.
        let u = UnitsConfig::default();
        let analytic = measure::radius_m(&lt, 719.0, &u);
        let fitted = measure::radius_m(&l, 719.0, &u);
        assert!(
            (fitted - analytic).abs() / analytic < 0.01,
            "{fitted} vs {analytic}"
        );
    }

    #[test]
    fn prior_search_keeps_only_the_band_around_the_previous_fit() {
        let lt = Poly2::new(1.0e-4, -0.1, 450.0);
        let rt = Poly2::new(1.0e-4, -0.1, 830.0);
        let mask = two_parabolas(&lt, &rt);
        // A previous fit 30 px off still catches the line (margin 80); pixels are all within 80 px.
        let prev_l = Poly2::new(lt.a, lt.b, lt.c + 30.0);
        let s = prior_search(&mask, &prev_l, &rt, 80).unwrap();
        assert!(s
            .left
            .xs
            .iter()
            .zip(&s.left.ys)
            .all(|(x, y)| (*x as f64 - prev_l.eval(*y as f64)).abs() < 80.0));
        assert!(
            s.left.len() >= 720 * 12,
            "every row of the line is caught: {}",
            s.left.len()
        );
        let f = fit_lines(&s, &SearchConfig::default());
        assert!((f.left.unwrap().c - lt.c).abs() < 1.0);
        // A previous fit far away finds nothing: the line is "not found".
        let far = Poly2::new(0.0, 0.0, 100.0);
        let s2 = prior_search(&mask, &far, &rt, 80).unwrap();
        assert!(s2.left.is_empty());
        assert!(fit_lines(&s2, &SearchConfig::default()).left.is_none());
    }

    #[test]
    fn empty_mask_finds_no_lines() {
        let m = BinaryMask::zeros(1280, 720).unwrap();
        let s = sliding_window_search(&m, &SearchConfig::default()).unwrap();
        let f = fit_lines(&s, &SearchConfig::default());
        assert!(f.left.is_none() && f.right.is_none());
        assert_eq!(f.left_pixels, 0);
    }
}
