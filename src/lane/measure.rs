//! Measurements in metres: curvature radius of each line, lane width and vehicle offset.

use crate::base::config::UnitsConfig;
use crate::lane::fit::Poly2;
use serde::Serialize;

/// Radii are capped here (a straight road has an infinite radius), metres.
pub const RADIUS_CAP_M: f64 = 1.0e6;

/// Measurements of one lane at the bottom row of the bird's-eye view.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LaneMeasure {
    pub left_radius_m: f64,
    pub right_radius_m: f64,
    /// Mean of both radii.
    pub radius_m: f64,
    /// Positive when the vehicle (image centre) is right of the lane centre.
    pub offset_m: f64,
    pub lane_width_m: f64,
}

/// The fit scaled to metres: `a_m = a*xm/ym^2`, `b_m = b*xm/ym`, `c_m = c*xm`.
pub fn poly_in_metres(fit: &Poly2, units: &UnitsConfig) -> Poly2 {
    let (xm, ym) = (units.xm_per_px, units.ym_per_px);
    Poly2::new(fit.a * xm / (ym * ym), fit.b * xm / ym, fit.c * xm)
}

/// Closed-form radius of curvature `(1 + (2 a y + b)^2)^1.5 / |2a|` at row `y_px`, in metres.
pub fn radius_m(fit: &Poly2, y_px: f64, units: &UnitsConfig) -> f64 {
    let m = poly_in_metres(fit, units);
    let y = y_px * units.ym_per_px;
    let d1 = 2.0 * m.a * y + m.b;
    let d2 = 2.0 * m.a;
    if d2.abs() < 1e-15 {
        return RADIUS_CAP_M;
    }
    ((1.0 + d1 * d1).powf(1.5) / d2.abs()).min(RADIUS_CAP_M)
}

/// Measure a lane at the bottom row (`height - 1`) of a bird's-eye view `width` px wide.
pub fn measure(
    left: &Poly2,
    right: &Poly2,
    width: i32,
    height: i32,
    units: &UnitsConfig,
) -> LaneMeasure {
    let y = (height - 1) as f64;
    let lr = radius_m(left, y, units);
    let rr = radius_m(right, y, units);
    let lx = left.eval(y);
    let rx = right.eval(y);
    let centre = (lx + rx) / 2.0;
    LaneMeasure {
        left_radius_m: lr,
        right_radius_m: rr,
        radius_m: (lr + rr) / 2.0,
        offset_m: (width as f64 / 2.0 - centre) * units.xm_per_px,
        lane_width_m: (rx - lx) * units.xm_per_px,
    }
}

/// Signed curvature (1/m, positive when x grows faster with y) of `fit` at row `y_px`.
pub fn curvature_per_m(fit: &Poly2, y_px: f64, units: &UnitsConfig) -> f64 {
    let m = poly_in_metres(fit, units);
    let y = y_px * units.ym_per_px;
    let d1 = 2.0 * m.a * y + m.b;
    2.0 * m.a / (1.0 + d1 * d1).powf(1.5)
}

/// `measure`, with the lane's radius from the two lines' curvatures weighted by `weights`
/// (inverse variances of their curvature terms): a line seen as a few dashes tells little of
/// the curvature that a solid line next to it shows well.
pub fn measure_weighted(
    left: &Poly2,
    right: &Poly2,
    width: i32,
    height: i32,
    units: &UnitsConfig,
    weights: (f64, f64),
) -> LaneMeasure {
    let mut m = measure(left, right, width, height, units);
    let (wl, wr) = weights;
    if wl.is_finite() && wr.is_finite() && wl > 0.0 && wr > 0.0 {
        let y = (height - 1) as f64;
        let k = (wl * curvature_per_m(left, y, units) + wr * curvature_per_m(right, y, units))
            / (wl + wr);
        m.radius_m = if k.abs() > 1.0 / RADIUS_CAP_M {
            1.0 / k.abs()
        } else {
            RADIUS_CAP_M
        };
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Radius from finite differences of the curve sampled in metres.
    fn finite_difference_radius(fit: &Poly2, y_px: f64, units: &UnitsConfig) -> f64 {
        let h = 0.5; // px
        let x = |y: f64| fit.eval(y) * units.xm_per_px;
        let dy = h * units.ym_per_px;
        let d1 = (x(y_px + h) - x(y_px - h)) / (2.0 * dy);
        let d2 = (x(y_px + h) - 2.0 * x(y_px) + x(y_px - h)) / (dy * dy);
        (1.0 + d1 * d1).powf(1.5) / d2.abs()
    }

    proptest! {
        #[test]
        fn closed_form_radius_matches_finite_differences(a in 1e-5f64..2e-3, sign in prop::bool::ANY, b in -0.5f64..0.5) {
            let a = if sign { a } else { -a };
            let fit = Poly2::new(a, b, 400.0);
            let u = UnitsConfig::default();
            let r = radius_m(&fit, 719.0, &u);
            let fd = finite_difference_radius(&fit, 719.0, &u);
            prop_assert!((r - fd).abs() / fd < 1e-3, "closed {r} fd {fd}");
        }
    }

    #[test]
    fn weighted_radius_follows_the_better_line() {
        let u = UnitsConfig::default();
        let good = Poly2::new(1e-4, -0.1, 450.0);
        let noisy = Poly2::new(3e-4, -0.3, 830.0);
        let r_good = radius_m(&good, 719.0, &u);
        let m = measure_weighted(&good, &noisy, 1280, 720, &u, (1e6, 1.0));
        assert!(
            (m.radius_m - r_good).abs() / r_good < 1e-3,
            "{} vs {r_good}",
            m.radius_m
        );
        // Equal weights: the mean curvature, between the two radii.
        let m = measure_weighted(&good, &noisy, 1280, 720, &u, (1.0, 1.0));
        let r_noisy = radius_m(&noisy, 719.0, &u);
        assert!(m.radius_m < r_good && m.radius_m > r_noisy);
    }

    #[test]
    fn offset_sign_convention() {
        let u = UnitsConfig::default();
        // Lane centred at x = 600 in a 1280-wide view: the camera (x = 640) is right of centre.
        let m = measure(
            &Poly2::new(0.0, 0.0, 411.0),
            &Poly2::new(0.0, 0.0, 789.0),
            1280,
            720,
            &u,
        );
        assert!((m.offset_m - 40.0 * u.xm_per_px).abs() < 1e-9);
        assert!((m.lane_width_m - 3.7).abs() < 1e-9);
        assert_eq!(m.radius_m, RADIUS_CAP_M);
    }
}
