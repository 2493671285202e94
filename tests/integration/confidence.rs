//! Integration tests: the confidence rules on constructed evidence (the library's `assess`).

use lanes::base::config::{ConfidenceConfig, UnitsConfig};
use lanes::lane::confidence::{assess, LaneStatus, ViewGeometry};
use lanes::lane::fit::{LaneFit, LinePixels, Poly2, Scale};

/// Marking pixels 6 px wide along `p` (analysed view) on `rows`.
fn pixels_along(p: &Poly2, rows: std::ops::Range<u32>) -> LinePixels {
    let mut out = LinePixels::default();
    for y in rows {
        let x = p.eval(y as f64).round() as u32;
        for dx in 0..6 {
            out.xs.push(x + dx - 3);
            out.ys.push(y);
        }
    }
    out
}

#[test]
fn a_single_far_dash_beside_a_solid_line_is_its_shifted_copy() {
    // The Autobahn's case: a solid right line over the whole view and, on the left, one 6 m
    // dash in the far half (a 12 m gap covers the near half). Its own free fit is wrong (one
    // short dash), its parallel needs the near half; as the solid line's shifted copy one dash
    // fixes its position.
    let (cfg, units) = (ConfidenceConfig::default(), UnitsConfig::default());
    let view = ViewGeometry {
        width: 1280,
        height: 720,
        scale: Scale { x: 1.0, y: 0.5 },
    };
    let s = view.scale;
    // A gentle bend, the lines 378 px (3.7 m) apart; the dash's pixels off by a pixel of noise.
    let right = Poly2::new(4e-5, -0.03, 828.0);
    let left_true = Poly2::new(4e-5, -0.03, 450.0);
    let mut left_px = pixels_along(&left_true.to_scaled(s), 30..110);
    for (i, x) in left_px.xs.iter_mut().enumerate() {
        *x = (*x as i64 + (i as i64 % 3) - 1) as u32;
    }
    let right_px = pixels_along(&right.to_scaled(s), 0..360);
    // What a free quadratic on the dash says: a steep, wrong line.
    let wrong = Poly2::new(-3e-4, 0.2, 380.0);
    let fit = LaneFit {
        left: Some(wrong),
        right: Some(right),
        left_pixels: left_px.len(),
        right_pixels: right_px.len(),
    };
    let d = assess(&fit, &left_px, &right_px, view, &cfg, &units);
    assert_eq!(d.status, LaneStatus::Both, "{d:?}");
    let l = d.left.unwrap();
    for y in [0.0, 360.0, 719.0] {
        let err = (l.eval(y) - left_true.eval(y)).abs();
        assert!(err < 2.0, "left line {err:.2} px off at row {y}: {l:?}");
    }
    // Without the solid line nothing anchors the dash: no lane.
    let lone = LaneFit {
        left: Some(wrong),
        right: None,
        left_pixels: left_px.len(),
        right_pixels: 0,
    };
    let d = assess(&lone, &left_px, &LinePixels::default(), view, &cfg, &units);
    assert_eq!(d.status, LaneStatus::None, "{d:?}");
}
