//! Second-order polynomial `x = a*y^2 + b*y + c` and its least-squares fit (nalgebra).

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

pub use crate::base::config::Scale;

/// `x = a*y^2 + b*y + c` in bird's-eye pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "[f64; 3]", into = "[f64; 3]")]
pub struct Poly2 {
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

impl From<[f64; 3]> for Poly2 {
    fn from(v: [f64; 3]) -> Self {
        Poly2 {
            a: v[0],
            b: v[1],
            c: v[2],
        }
    }
}
impl From<Poly2> for [f64; 3] {
    fn from(p: Poly2) -> Self {
        [p.a, p.b, p.c]
    }
}

impl Poly2 {
    pub fn new(a: f64, b: f64, c: f64) -> Self {
        Self { a, b, c }
    }
    /// x at row y.
    #[inline]
    pub fn eval(&self, y: f64) -> f64 {
        (self.a * y + self.b) * y + self.c
    }
    /// Coefficients as an array.
    pub fn coeffs(&self) -> [f64; 3] {
        [self.a, self.b, self.c]
    }
    /// This curve in an image scaled by `s` (x_s = s.x * x, y_s = s.y * y).
    pub fn to_scaled(&self, s: Scale) -> Poly2 {
        Poly2::new(self.a * s.x / (s.y * s.y), self.b * s.x / s.y, self.c * s.x)
    }
    /// The inverse of `to_scaled`: a curve fitted in an image scaled by `s`, in nominal pixels.
    pub fn from_scaled(&self, s: Scale) -> Poly2 {
        Poly2::new(self.a * s.y * s.y / s.x, self.b * s.y / s.x, self.c / s.x)
    }
    /// Element-wise mean of several polynomials.
    pub fn mean(polys: &[Poly2]) -> Option<Poly2> {
        if polys.is_empty() {
            return None;
        }
        let n = polys.len() as f64;
        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
        for p in polys {
            a += p.a;
            b += p.b;
            c += p.c;
        }
        Some(Poly2::new(a / n, b / n, c / n))
    }

    /// Least-squares fit of x = f(y). Returns `None` for fewer than 3 points or a singular system
    /// (e.g. all points on fewer than 3 distinct rows).
    ///
    /// Solves the normal equations in a scaled variable t = y / s for conditioning, then maps the
    /// coefficients back to y.
    pub fn fit(xs: &[u32], ys: &[u32]) -> Option<Poly2> {
        let n = xs.len().min(ys.len());
        if n < 3 {
            return None;
        }
        let s = ys.iter().copied().max().unwrap_or(1).max(1) as f64;
        Self::fit_scaled(xs.iter().zip(ys).map(|(&x, &y)| (y as f64, x as f64)), s)
    }

    /// Least-squares fit of x = f(y) to `(y, x)` points; `None` as [`Poly2::fit`].
    pub fn fit_points(points: &[(f64, f64)]) -> Option<Poly2> {
        if points.len() < 3 {
            return None;
        }
        let s = points.iter().map(|p| p.0.abs()).fold(1.0, f64::max);
        Self::fit_scaled(points.iter().copied(), s)
    }

    /// The normal equations over `(y, x)` points in t = y / s.
    fn fit_scaled(points: impl Iterator<Item = (f64, f64)>, s: f64) -> Option<Poly2> {
        let mut m = Matrix3::<f64>::zeros();
        let mut r = Vector3::<f64>::zeros();
        let (mut s0, mut s1, mut s2, mut s3, mut s4) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let (mut r0, mut r1, mut r2) = (0.0, 0.0, 0.0);
        for (y, x) in points {
            let t = y / s;
            let t2 = t * t;
            s0 += 1.0;
            s1 += t;
            s2 += t2;
            s3 += t2 * t;
            s4 += t2 * t2;
            r0 += x;
            r1 += x * t;
            r2 += x * t2;
        }
        m[(0, 0)] = s4;
        m[(0, 1)] = s3;
        m[(0, 2)] = s2;
        m[(1, 0)] = s3;
        m[(1, 1)] = s2;
        m[(1, 2)] = s1;
        m[(2, 0)] = s2;
        m[(2, 1)] = s1;
        m[(2, 2)] = s0;
        r[0] = r2;
        r[1] = r1;
        r[2] = r0;
        let svd = m.svd(true, true);
        let max_sv = svd.singular_values.max();
        let min_sv = svd.singular_values.min();
        if max_sv.is_nan() || max_sv <= 0.0 || min_sv / max_sv < 1e-12 {
            return None;
        }
        let sol = svd.solve(&r, 1e-15).ok()?;
        let (at, bt, ct) = (sol[0], sol[1], sol[2]);
        let p = Poly2::new(at / (s * s), bt / s, ct);
        if p.a.is_finite() && p.b.is_finite() && p.c.is_finite() {
            Some(p)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_parabola_is_recovered() {
        let truth = Poly2::new(2.5e-4, -0.3, 400.0);
        let ys: Vec<u32> = (0..720).collect();
        let xs: Vec<u32> = ys
            .iter()
            .map(|&y| truth.eval(y as f64).round() as u32)
            .collect();
        let p = Poly2::fit(&xs, &ys).unwrap();
        assert!((p.a - truth.a).abs() < 1e-6, "{p:?}");
        assert!((p.c - truth.c).abs() < 0.5, "{p:?}");
    }

    #[test]
    fn scaling_round_trip_keeps_the_curve() {
        let p = Poly2::new(2e-4, -0.2, 500.0);
        let sc = Scale { x: 0.75, y: 0.5 };
        let s = p.to_scaled(sc);
        // The scaled curve passes through the scaled points.
        for y in [0.0, 300.0, 719.0] {
            assert!((s.eval(y * 0.5) - 0.75 * p.eval(y)).abs() < 1e-9);
        }
        let back = s.from_scaled(sc);
        assert!((back.a - p.a).abs() < 1e-15 && (back.c - p.c).abs() < 1e-9);
    }

    #[test]
    fn two_rows_are_not_a_fit() {
        assert!(Poly2::fit(&[1, 2, 3, 4], &[10, 10, 20, 20]).is_none());
        assert!(Poly2::fit(&[1, 2], &[1, 2]).is_none());
    }

    proptest! {
        #[test]
        fn fit_evaluate_round_trip(a in -1e-3f64..1e-3, b in -1.0f64..1.0, c in 300.0f64..900.0) {
            let truth = Poly2::new(a, b, c);
            let ys: Vec<u32> = (0..720).step_by(3).collect();
            let xs: Vec<u32> = ys.iter().map(|&y| truth.eval(y as f64).round().max(0.0) as u32).collect();
            prop_assume!(xs.iter().all(|&x| x > 0));
            let p = Poly2::fit(&xs, &ys).unwrap();
            for y in [0.0, 360.0, 719.0] {
                prop_assert!((p.eval(y) - truth.eval(y)).abs() < 1.0);
            }
        }
    }
}
