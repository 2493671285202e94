//! Integration tests: the confidence rules on constructed evidence (`line_evidence` and
//! `assess`, the library's public API).

use lanes::base::config::{ConfidenceConfig, UnitsConfig};
use lanes::lane::confidence::{
    assess, confirm_with_expected, line_evidence, LaneStatus, Tracked, ViewGeometry,
};
use lanes::lane::fit::{LaneFit, LinePixels, Poly2, Scale};
use lanes::lane::measure;

/// The tracked lane of a test, with the prior search's default margin.
fn tracked(lane: (Poly2, Poly2)) -> Tracked {
    Tracked {
        lane,
        margin_px: 50.0,
    }
}

/// Marking pixels 6 px wide along `p` (analysed view) on every `every`-th of `rows`.
/// `confirm_with_expected` at the default confidence and units in `view()`, the shape from
/// the frame's other line.
fn confirm(
    d: &lanes::lane::confidence::Detection,
    l: &LinePixels,
    r: &LinePixels,
    expected: (Poly2, Poly2),
) -> Option<lanes::lane::confidence::Detection> {
    confirm_with_expected(
        d,
        l,
        r,
        tracked(expected),
        view(),
        &ConfidenceConfig::default(),
        &UnitsConfig::default(),
        true,
    )
}

fn pixels_along(p: &Poly2, rows: std::ops::Range<u32>, every: u32) -> LinePixels {
    let mut out = LinePixels::default();
    for y in rows.step_by(every as usize) {
        let x = p.eval(y as f64).round() as u32;
        for dx in 0..6 {
            out.xs.push(x + dx - 3);
            out.ys.push(y);
        }
    }
    out
}

#[test]
fn solid_line_scores_full_and_noise_scores_zero() {
    let p = Poly2::new(0.0, 0.0, 400.0);
    let solid = pixels_along(&p, 0..360, 1);
    let ev = line_evidence(&p, &solid, 360, 0, 12.0, 0.2);
    assert!(
        (ev.support - 1.0).abs() < 1e-9 && ev.confidence > 0.99,
        "{ev:?}"
    );
    // Pixels spread evenly over an 80 px band on every row: 25 of 161 columns near.
    let mut noise = LinePixels::default();
    for y in 0..360u32 {
        for x in (320..=480u32).step_by(1) {
            if (x * 7 + y * 13) % 5 == 0 {
                noise.xs.push(x);
                noise.ys.push(y);
            }
        }
    }
    let ev = line_evidence(&p, &noise, 360, 0, 12.0, 0.2);
    assert!(ev.concentration < 0.2 && ev.confidence == 0.0, "{ev:?}");
}

#[test]
fn dashed_line_with_a_quarter_of_the_rows_is_confident() {
    let p = Poly2::new(1e-4, -0.05, 850.0);
    let mut px = LinePixels::default();
    // Dashes of 25 rows every 100 rows, over 360 rows.
    for start in [10u32, 110, 210, 310] {
        let d = pixels_along(&p, start..start + 25, 1);
        px.xs.extend(d.xs);
        px.ys.extend(d.ys);
    }
    let ev = line_evidence(&p, &px, 360, 0, 12.0, 0.2);
    assert!(ev.support > 0.25 && ev.confidence > 0.99, "{ev:?}");
    // A single short dash spreads over a tenth of the view: too little for curvature.
    let one = pixels_along(&p, 300..336, 1);
    let ev = line_evidence(&p, &one, 360, 0, 12.0, 0.2);
    assert!(ev.confidence < 0.5, "{ev:?}");
    // A solid streak (glare) across the middle row, over 28% of the view: pixels in both
    // halves, but shorter than two dashes span.
    let streak = pixels_along(&p, 130..230, 1);
    let ev = line_evidence(&p, &streak, 360, 0, 12.0, 0.2);
    assert!(ev.near > 0.1 && ev.far > 0.1 && ev.support > 0.2, "{ev:?}");
    assert_eq!(ev.confidence, 0.0, "{ev:?}");
    // Two dashes 12 m apart (dash 3 m), in a view of 22 m: confident.
    let mut two = pixels_along(&p, 40..90, 1);
    let d2 = pixels_along(&p, 237..287, 1);
    two.xs.extend(d2.xs);
    two.ys.extend(d2.ys);
    let ev = line_evidence(&p, &two, 360, 0, 12.0, 0.2);
    assert!(ev.confidence > 0.99, "{ev:?}");
}

/// The bird's-eye view of the default config: 1280x720 nominal, analysed at half height.
fn udacity_view() -> ViewGeometry {
    ViewGeometry {
        width: 1280,
        height: 720,
        scale: Scale { x: 1.0, y: 0.5 },
        visible_from: 0,
    }
}

#[test]
fn implausible_pair_keeps_only_the_stronger_line() {
    let cfg = ConfidenceConfig::default();
    let units = UnitsConfig::default();
    let view = udacity_view();
    let l = Poly2::new(0.0, 0.0, 450.0);
    // 378 px = 3.7 m apart: a lane.
    let r = Poly2::new(0.0, 0.0, 828.0);
    let px = |p: &Poly2, every| pixels_along(&p.to_scaled(view.scale), 0..360, every);
    let fit = LaneFit {
        left: Some(l),
        right: Some(r),
        left_pixels: 0,
        right_pixels: 0,
    };
    let d = assess(&fit, &px(&l, 1), &px(&r, 4), view, &cfg, &units, None);
    assert_eq!(d.status, LaneStatus::Both);
    assert!(d.confidence > 0.99);
    // Right line converging to the left one at the top: not a lane; the left is stronger.
    let bad = Poly2::new(0.0, 0.5, 828.0 - 360.0);
    let fit = LaneFit {
        right: Some(bad),
        ..fit
    };
    let d = assess(&fit, &px(&l, 1), &px(&bad, 4), view, &cfg, &units, None);
    assert_eq!(d.status, LaneStatus::LeftOnly);
    assert!(d.right.is_none() && d.left.is_some());
    let (pl, pr) = d.lane(378.0).unwrap();
    assert_eq!((pl.c, pr.c), (450.0, 828.0));
}

/// Below a vehicle ahead the evidence is counted over the rows the road is visible on
/// (`visible_from`): a solid line there has full support and is seen in both of their halves.
#[test]
fn evidence_below_a_vehicle_ahead_is_a_share_of_the_visible_rows() {
    let p = Poly2::new(0.0, 0.0, 450.0);
    let below = pixels_along(&p, 240..360, 1);
    let whole = line_evidence(&p, &below, 360, 0, 12.0, 0.2);
    assert!((whole.support - 1.0 / 3.0).abs() < 0.01, "{whole:?}");
    assert_eq!(whole.far, 0.0);
    let seen = line_evidence(&p, &below, 360, 240, 12.0, 0.2);
    assert!(
        seen.support > 0.99 && seen.far > 0.99 && seen.near > 0.99,
        "{seen:?}"
    );
    assert!(seen.spread > 0.99 && seen.confidence > 0.99, "{seen:?}");
}

fn view() -> ViewGeometry {
    ViewGeometry {
        width: 1280,
        height: 720,
        scale: Scale { x: 1.0, y: 0.5 },
        visible_from: 0,
    }
}

/// Pixels of `p` (nominal) on the analysed rows `rows`, every `every` rows.
fn seen(p: &Poly2, rows: std::ops::Range<u32>, every: u32) -> LinePixels {
    pixels_along(&p.to_scaled(view().scale), rows, every)
}

fn both(l: Poly2, r: Poly2) -> LaneFit {
    LaneFit {
        left: Some(l),
        right: Some(r),
        left_pixels: 0,
        right_pixels: 0,
    }
}

#[test]
fn partner_of_a_confident_line_seen_only_in_the_near_half_is_kept_parallel() {
    let (cfg, units) = (ConfidenceConfig::default(), UnitsConfig::default());
    let l = Poly2::new(1e-4, -0.1, 480.0);
    let r = Poly2::new(1e-4, -0.1, 858.0);
    // The right line runs into deep shade: dashes in the near half (analysed rows
    // 180..360) only. Fitted freely its far half is a guess.
    let rpx = seen(&r, 200..360, 1);
    let wild = Poly2::new(-8e-4, 0.5, 858.0 - 0.5 * 719.0 + 8e-4 * 719.0 * 719.0);
    let d = assess(
        &both(l, wild),
        &seen(&l, 0..360, 1),
        &rpx,
        view(),
        &cfg,
        &units,
        None,
    );
    assert_eq!(d.status, LaneStatus::Both, "{d:?}");
    let got = d.right.unwrap();
    for y in [0.0, 360.0, 719.0] {
        assert!((got.eval(y) - r.eval(y)).abs() < 3.0, "row {y}: {got:?}");
    }
    // Alone, a line seen in one half only is not reported.
    let fit = LaneFit {
        left: None,
        ..both(l, r)
    };
    let d = assess(
        &fit,
        &LinePixels::default(),
        &rpx,
        view(),
        &cfg,
        &units,
        None,
    );
    assert_eq!(d.status, LaneStatus::None, "{d:?}");
}

#[test]
fn a_pair_seen_only_in_the_near_half_is_a_lane_and_may_bend_tighter() {
    let (cfg, units) = (ConfidenceConfig::default(), UnitsConfig::default());
    // A 20 m bend (tighter than `min_radius_m`): x = a y^2 with a = xm/ym^2 / (2 R) in
    // nominal px, centred on the bottom row; seen in the near half, the far half foliage.
    let a = units.ym_per_px.powi(2) / units.xm_per_px / (2.0 * 20.0);
    let at_bottom = |c: f64| Poly2::new(a, -2.0 * a * 719.0, c + a * 719.0 * 719.0);
    let (l, r) = (at_bottom(450.0), at_bottom(828.0));
    assert!(measure::radius_m(&l, 719.0, &units) < cfg.min_radius_m);
    let d = assess(
        &both(l, r),
        &seen(&l, 180..360, 1),
        &seen(&r, 180..360, 2),
        view(),
        &cfg,
        &units,
        None,
    );
    assert_eq!(d.status, LaneStatus::Both, "{d:?}");
    let (gl, gr) = (d.left.unwrap(), d.right.unwrap());
    for y in [360.0, 540.0, 719.0] {
        assert!((gl.eval(y) - l.eval(y)).abs() < 3.0, "left row {y}: {gl:?}");
        assert!(
            (gr.eval(y) - r.eval(y)).abs() < 3.0,
            "right row {y}: {gr:?}"
        );
    }
    // Not two lines a lane apart: 1.5 m.
    let near = at_bottom(450.0 + 153.0);
    let d = assess(
        &both(l, near),
        &seen(&l, 180..360, 1),
        &seen(&near, 180..360, 2),
        view(),
        &cfg,
        &units,
        None,
    );
    assert_eq!(d.status, LaneStatus::None, "{d:?}");
}

#[test]
fn a_single_far_dash_beside_a_solid_line_is_its_shifted_copy() {
    // The Autobahn's case: a solid right line over the whole view and, on the left, one 6 m
    // dash in the far half (a 12 m gap covers the near half). Its own free fit is wrong (one
    // short dash), its parallel needs the near half; as the solid line's shifted copy one dash
    // fixes its position.
    let (cfg, units) = (ConfidenceConfig::default(), UnitsConfig::default());
    let view = udacity_view();
    let s = view.scale;
    // A gentle bend, the lines 378 px (3.7 m) apart; the dash's pixels off by a pixel of noise.
    let right = Poly2::new(4e-5, -0.03, 828.0);
    let left_true = Poly2::new(4e-5, -0.03, 450.0);
    let mut left_px = pixels_along(&left_true.to_scaled(s), 30..110, 1);
    for (i, x) in left_px.xs.iter_mut().enumerate() {
        *x = (*x as i64 + (i as i64 % 3) - 1) as u32;
    }
    let right_px = pixels_along(&right.to_scaled(s), 0..360, 1);
    // What a free quadratic on the dash says: a steep, wrong line.
    let wrong = Poly2::new(-3e-4, 0.2, 380.0);
    let fit = LaneFit {
        left: Some(wrong),
        right: Some(right),
        left_pixels: left_px.len(),
        right_pixels: right_px.len(),
    };
    let d = assess(&fit, &left_px, &right_px, view, &cfg, &units, None);
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
    let d = assess(
        &lone,
        &left_px,
        &LinePixels::default(),
        view,
        &cfg,
        &units,
        None,
    );
    assert_eq!(d.status, LaneStatus::None, "{d:?}");
}

/// Two dashed lines whose gaps cover the near half together: one dash of each in the far half.
/// Alone the frame reports no lane (nothing gives a shape); with the lane the tracker holds
/// (slightly off: 8 px to the left, a little curvature), each dash fixes its line's position
/// and the frame reports both lines where the dashes are; a line the frame reports lends its
/// shape to its partner's dash instead. A short blob, a dash off by a lane,
/// or a pair too narrow is not confirmed.
#[test]
fn a_tracked_lane_confirms_lines_seen_as_one_far_dash_each() {
    let cfg = ConfidenceConfig::default();
    let units = UnitsConfig::default();
    // Slightly bending lines, 378 px (3.7 m) apart.
    let l = Poly2::new(2e-5, -0.02, 455.0);
    let r = Poly2::new(2e-5, -0.02, 833.0);
    // One dash of each, 70 analysed rows (about 4.3 m at 0.0305 m/px x 2) in the far half.
    let (lpx, rpx) = (seen(&l, 40..110, 1), seen(&r, 40..110, 1));
    let d = assess(&both(l, r), &lpx, &rpx, view(), &cfg, &units, None);
    assert_eq!(d.status, LaneStatus::None, "{d:?}");
    let expected = (
        Poly2::new(1.5e-5, -0.015, 447.0),
        Poly2::new(1.5e-5, -0.015, 825.0),
    );
    let c = confirm(&d, &lpx, &rpx, expected).expect("both lines confirmed");
    assert_eq!(c.status, LaneStatus::Both);
    let (cl, cr) = (c.left.unwrap(), c.right.unwrap());
    // At the dashes' middle row (nominal 150), the confirmed lines pass through the dashes.
    for (got, truth) in [(cl, l), (cr, r)] {
        let e = (got.eval(150.0) - truth.eval(150.0)).abs();
        assert!(
            e < 2.0,
            "line off by {e:.2} px at the dash: {got:?} vs {truth:?}"
        );
        // The shape is the expected one.
        assert!((got.a - 1.5e-5).abs() < 1e-12 && (got.b + 0.015).abs() < 1e-9);
    }
    assert!(c.left_confidence >= cfg.min_single && c.right_confidence >= cfg.min_single);
    // A frame that already reports both lines is left as it is.
    let full = assess(
        &both(l, r),
        &seen(&l, 0..360, 1),
        &seen(&r, 0..360, 1),
        view(),
        &cfg,
        &units,
        None,
    );
    assert_eq!(full.status, LaneStatus::Both);
    assert!(confirm(&full, &lpx, &rpx, expected).is_none());
    // A short blob (20 rows, 1.2 m) on the right: too little to stand for a line.
    let blob = seen(&r, 60..80, 1);
    assert!(confirm(&d, &lpx, &blob, expected).is_none());
    // The right dash one lane further right: the pair is not a lane (7.4 m wide).
    let far_right = seen(&Poly2::new(2e-5, -0.02, 1211.0), 40..110, 1);
    assert!(confirm(&d, &lpx, &far_right, expected).is_none());
    // A frame reporting its left line (solid, its own shape) lends that shape to the right
    // dash rather than the tracked one: the tracked heading lags while the car moves sideways.
    let lone = assess(
        &both(l, r),
        &seen(&l, 0..360, 1),
        &LinePixels::default(),
        view(),
        &cfg,
        &units,
        None,
    );
    assert_eq!(lone.status, LaneStatus::LeftOnly);
    let own = lone.left.unwrap();
    let c = confirm(&lone, &lpx, &rpx, expected).expect("right line confirmed");
    let cr = c.right.unwrap();
    assert_eq!((c.left, cr.a, cr.b), (Some(own), own.a, own.b));
    assert!((cr.eval(150.0) - r.eval(150.0)).abs() < 2.0, "{cr:?}");
    // Tracked lines that are not parallel in this fixed view (the online pitch differs from the
    // calibration's: here the lane widens by 0.03 px a row, 22 px down the view) lend the
    // reported line's shape with their own difference added: the placed right line heads
    // 0.03 px a row further right than the left one, and still passes through its dash.
    let widening = (
        expected.0,
        Poly2::new(expected.1.a, expected.1.b + 0.03, expected.1.c),
    );
    let c = confirm(&lone, &lpx, &rpx, widening).expect("right line confirmed");
    let cr = c.right.unwrap();
    assert!(
        (cr.a - own.a).abs() < 1e-12 && (cr.b - (own.b + 0.03)).abs() < 1e-9,
        "{cr:?}"
    );
    assert!((cr.eval(150.0) - r.eval(150.0)).abs() < 2.0, "{cr:?}");
    // Scattered texture in the right band: not concentrated on a line.
    let mut texture = LinePixels::default();
    for y in 0..360u32 {
        for x in (780..=880u32).step_by(1) {
            if (x * 7 + y * 13) % 5 == 0 {
                texture.xs.push(x);
                texture.ys.push(y);
            }
        }
    }
    assert!(confirm(&d, &lpx, &texture, expected).is_none());
}

/// The status `assess` gives straight solid lines at `left_m` and `right_m` from the camera
/// (metres, at the default units, in the Udacity view), with the tracker holding lines at
/// `tracked_m` (left, right) or no track.
fn status_at(left_m: f64, right_m: f64, tracked_m: Option<(f64, f64)>) -> LaneStatus {
    let (cfg, units) = (ConfidenceConfig::default(), UnitsConfig::default());
    let view = udacity_view();
    let line_at = |m: f64| Poly2::new(0.0, 0.0, 640.0 + m / units.xm_per_px);
    let px = |p: &Poly2| pixels_along(&p.to_scaled(view.scale), 0..360, 1);
    let (l, r) = (line_at(left_m), line_at(right_m));
    let fit = LaneFit {
        left: Some(l),
        right: Some(r),
        left_pixels: 0,
        right_pixels: 0,
    };
    let t = tracked_m.map(|(tl, tr)| tracked((line_at(tl), line_at(tr))));
    assess(&fit, &px(&l), &px(&r), view, &cfg, &units, t).status
}

/// A lane change: the car 1.35 m left of its lane's centre in a 3.7 m lane puts the left line
/// 0.5 m from the camera. Without a tracked lane (a still, a fresh search) a line that near
/// runs under the car and is not the ego lane's (`min_line_distance_m`, 0.8 m); found where
/// the tracker holds it, it is (`crossing_line_distance_m`, 0.15 m), down to 0.15 m and only
/// within the prior search's margin of the tracked line.
#[test]
fn a_line_under_the_car_counts_only_where_the_tracked_line_is() {
    let judge = |left_m: f64, tracked_left_m: Option<f64>| {
        status_at(
            left_m,
            left_m + 3.7,
            tracked_left_m.map(|m| (m, left_m + 3.7)),
        )
    };
    // Well to the side: both lines, tracked or not.
    assert_eq!(judge(-1.85, None), LaneStatus::Both);
    // 0.5 m from the camera: only where the tracked left line is (within 50 px, 0.49 m).
    assert_eq!(judge(-0.5, None), LaneStatus::RightOnly);
    assert_eq!(judge(-0.5, Some(-0.5)), LaneStatus::Both);
    assert_eq!(judge(-0.5, Some(-0.7)), LaneStatus::Both);
    assert_eq!(judge(-0.5, Some(-1.2)), LaneStatus::RightOnly);
    // 0.2 m, tracked: the side is known (the fit's error at the car is about 0.1 m).
    assert_eq!(judge(-0.2, Some(-0.2)), LaneStatus::Both);
    assert_eq!(judge(-0.2, None), LaneStatus::RightOnly);
    // 0.1 m: which side it is on is not known, tracked or not.
    assert_eq!(judge(-0.1, Some(-0.1)), LaneStatus::RightOnly);
}

/// The line a lane change crosses: the track, a prediction that lags the car, still holds it as
/// the old lane's right line, just right of the camera (+0.05 m, the old lane's left line 3.7 m
/// further left), while the frame, the camera now over it, finds it 0.4 m to the left as the new
/// lane's left line, its partner 3.7 m to the right. Where a tracked line is, the line is that
/// line whichever side of the camera it is found on: the crossing distance (0.15 m) applies, and
/// the new lane stands. Without a tracked line there (the track well inside its lane, or none)
/// the 0.8 m rule keeps only the far line.
#[test]
fn the_line_a_lane_change_crosses_is_the_new_lane_s_other_line() {
    let judge =
        |tracked_right_m: Option<f64>| status_at(-0.4, 3.3, tracked_right_m.map(|m| (m - 3.7, m)));
    assert_eq!(judge(Some(0.05)), LaneStatus::Both);
    assert_eq!(judge(Some(-0.3)), LaneStatus::Both);
    // The track well inside its lane: nothing holds a line near the camera.
    assert_eq!(judge(Some(1.85)), LaneStatus::RightOnly);
    assert_eq!(judge(None), LaneStatus::RightOnly);
}
