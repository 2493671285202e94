//! `Config::validate`: every value against its allowed range, the message naming the key and
//! the value.

use super::Config;
use crate::base::error::{Error, Result};

fn bad(key: &str, value: impl std::fmt::Display, expected: &str) -> Error {
    Error::ConfigValue {
        key: key.to_string(),
        value: value.to_string(),
        expected: format!("expected {expected}"),
    }
}

/// A float key that must be finite and within `lo..=hi`.
fn float_in(key: &str, v: f64, lo: f64, hi: f64) -> Result<()> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(bad(key, v, &format!("{lo}..={hi}")))
    }
}

/// An optional `[width, height]` key whose sides must both lie in `range` pixels.
fn size_in(key: &str, v: Option<[i32; 2]>, range: std::ops::RangeInclusive<i32>) -> Result<()> {
    match v {
        Some([w, h]) if !(range.contains(&w) && range.contains(&h)) => Err(bad(
            key,
            format!("[{w}, {h}]"),
            &format!(
                "[width, height], each {}..={} pixels",
                range.start(),
                range.end()
            ),
        )),
        _ => Ok(()),
    }
}

impl Config {
    /// Check every value against its allowed range; the message names the key and the value.
    pub fn validate(&self) -> Result<()> {
        let t = &self.threshold;
        if !(1..=200).contains(&t.marking_width_px) {
            return Err(bad(
                "threshold.marking_width_px",
                t.marking_width_px,
                "1..=200",
            ));
        }
        if !(1..=200).contains(&t.side_px) {
            return Err(bad("threshold.side_px", t.side_px, "1..=200"));
        }
        float_in("threshold.l_contrast_ratio", t.l_contrast_ratio, 0.0, 10.0)?;
        if t.min_run_px > 200 {
            return Err(bad("threshold.min_run_px", t.min_run_px, "0..=200"));
        }
        let c = &self.confidence;
        for (key, v, lo, hi) in [
            ("confidence.min_line", c.min_line, 0.0, 1.0),
            (
                "confidence.row_tolerance_px",
                c.row_tolerance_px,
                1.0,
                200.0,
            ),
            ("confidence.full_support", c.full_support, 0.01, 1.0),
            (
                "confidence.max_width_change_m",
                c.max_width_change_m,
                0.0,
                100.0,
            ),
            ("confidence.min_radius_m", c.min_radius_m, 0.0, 100_000.0),
            ("confidence.min_single", c.min_single, 0.0, 1.0),
            (
                "confidence.min_line_distance_m",
                c.min_line_distance_m,
                0.0,
                10.0,
            ),
            (
                "confidence.crossing_line_distance_m",
                c.crossing_line_distance_m,
                0.0,
                10.0,
            ),
            (
                "confidence.default_lane_width_m",
                c.default_lane_width_m,
                0.5,
                20.0,
            ),
        ] {
            float_in(key, v, lo, hi)?;
        }
        let [wlo, whi] = c.lane_width_m;
        if !(wlo.is_finite() && whi.is_finite() && 0.0 < wlo && wlo < whi && whi <= 20.0) {
            return Err(bad(
                "confidence.lane_width_m",
                format!("[{wlo}, {whi}]"),
                "0 < min < max <= 20",
            ));
        }
        if t.l_min >= t.l_max {
            return Err(bad(
                "threshold.l_min",
                t.l_min,
                &format!("less than threshold.l_max = {}", t.l_max),
            ));
        }
        if t.b_min >= t.b_max {
            return Err(bad(
                "threshold.b_min",
                t.b_min,
                &format!("less than threshold.b_max = {}", t.b_max),
            ));
        }
        if t.sobel_min >= t.sobel_max {
            return Err(bad(
                "threshold.sobel_min",
                t.sobel_min,
                "less than threshold.sobel_max",
            ));
        }
        if t.s_min >= t.s_max {
            return Err(bad("threshold.s_min", t.s_min, "less than threshold.s_max"));
        }
        let s = &self.search;
        if !(1..=50).contains(&s.windows) {
            return Err(bad("search.windows", s.windows, "1..=50"));
        }
        if !(1..=1000).contains(&s.margin) {
            return Err(bad("search.margin", s.margin, "1..=1000"));
        }
        if s.min_pixels > 100_000 {
            return Err(bad("search.min_pixels", s.min_pixels, "0..=100000"));
        }
        if !(1..=1000).contains(&s.prior_margin) {
            return Err(bad("search.prior_margin", s.prior_margin, "1..=1000"));
        }
        if !(1..=8).contains(&s.band_row_step) {
            return Err(bad("search.band_row_step", s.band_row_step, "1..=8"));
        }
        float_in(
            "search.band_min_source_rows",
            s.band_min_source_rows,
            0.0,
            4.0,
        )?;
        float_in("search.occluder_share", s.occluder_share, 0.0, 1.0)?;
        if !(3..=10_000).contains(&s.min_rows) {
            return Err(bad("search.min_rows", s.min_rows, "3..=10000"));
        }
        let k = &self.tracking;
        if !(1..=100).contains(&k.keep) {
            return Err(bad("tracking.keep", k.keep, "1..=100"));
        }
        if !(k.lane_width_px.is_finite() && k.lane_width_px > 0.0) {
            return Err(bad("tracking.lane_width_px", k.lane_width_px, "> 0"));
        }
        if !(k.lane_width_tolerance_px.is_finite() && k.lane_width_tolerance_px >= 0.0) {
            return Err(bad(
                "tracking.lane_width_tolerance_px",
                k.lane_width_tolerance_px,
                ">= 0",
            ));
        }
        for (i, d) in k.max_coeff_diff.iter().enumerate() {
            if !(d.is_finite() && *d > 0.0) {
                return Err(bad(&format!("tracking.max_coeff_diff[{i}]"), d, "> 0"));
            }
        }
        float_in("tracking.max_gap_s", k.max_gap_s, 0.0, 60.0)?;
        if !(k.gate_px.is_finite() && k.gate_px > 0.0) {
            return Err(bad("tracking.gate_px", k.gate_px, "> 0"));
        }
        float_in(
            "tracking.curvature_floor_per_km",
            k.curvature_floor_per_km,
            0.0,
            100.0,
        )?;
        float_in(
            "tracking.curvature_noise_per_km_s",
            k.curvature_noise_per_km_s,
            0.0,
            100.0,
        )?;
        float_in(
            "tracking.pitch_max_change_deg",
            k.pitch_max_change_deg,
            0.0,
            15.0,
        )?;
        float_in("tracking.pitch_noise_deg_s", k.pitch_noise_deg_s, 0.0, 10.0)?;
        if !(k.pitch_observation_deg.is_finite()
            && k.pitch_observation_deg > 0.0
            && k.pitch_observation_deg <= 10.0)
        {
            return Err(bad(
                "tracking.pitch_observation_deg",
                k.pitch_observation_deg,
                "0 < value <= 10",
            ));
        }
        if !(k.cut_ratio.is_finite() && k.cut_ratio > 1.0 && k.cut_ratio <= 100.0) {
            return Err(bad("tracking.cut_ratio", k.cut_ratio, "1 < value <= 100"));
        }
        for (i, d) in k.process_noise.iter().enumerate() {
            if !(d.is_finite() && *d > 0.0) {
                return Err(bad(&format!("tracking.process_noise[{i}]"), d, "> 0"));
            }
        }
        let r = &self.render;
        if !(0.0..=1.0).contains(&r.alpha) {
            return Err(bad("render.alpha", r.alpha, "0..=1"));
        }
        if !(r.straight_above_m.is_finite() && r.straight_above_m > 0.0) {
            return Err(bad("render.straight_above_m", r.straight_above_m, "> 0"));
        }
        if !(2..=1000).contains(&r.polygon_points) {
            return Err(bad("render.polygon_points", r.polygon_points, "2..=1000"));
        }
        let e = &self.events;
        for (key, v, lo, hi) in [
            ("events.lost_min_s", e.lost_min_s, 0.0, 3600.0),
            (
                "events.lane_change_min_jump",
                e.lane_change_min_jump,
                0.1,
                2.0,
            ),
            (
                "events.lane_change_max_jump",
                e.lane_change_max_jump,
                0.1,
                3.0,
            ),
            (
                "events.lane_change_max_gap_s",
                e.lane_change_max_gap_s,
                0.0,
                60.0,
            ),
            ("events.car_width_m", e.car_width_m, 0.5, 5.0),
            ("events.departure_margin_m", e.departure_margin_m, -2.0, 2.0),
            ("events.departure_min_s", e.departure_min_s, 0.0, 60.0),
            (
                "events.lane_change_grace_s",
                e.lane_change_grace_s,
                0.0,
                60.0,
            ),
            (
                "events.lateral_speed_window_s",
                e.lateral_speed_window_s,
                0.04,
                10.0,
            ),
            ("events.tight_radius_m", e.tight_radius_m, 1.0, 100_000.0),
            ("events.tight_min_s", e.tight_min_s, 0.0, 3600.0),
            ("events.tight_merge_gap_s", e.tight_merge_gap_s, 0.0, 60.0),
        ] {
            float_in(key, v, lo, hi)?;
        }
        if e.lane_change_min_jump >= e.lane_change_max_jump {
            return Err(bad(
                "events.lane_change_min_jump",
                e.lane_change_min_jump,
                &format!(
                    "less than events.lane_change_max_jump = {}",
                    e.lane_change_max_jump
                ),
            ));
        }
        let u = &self.units;
        if !(u.xm_per_px.is_finite() && u.xm_per_px > 0.0 && u.xm_per_px < 10.0) {
            return Err(bad("units.xm_per_px", u.xm_per_px, "0 < value < 10"));
        }
        if !(u.ym_per_px.is_finite() && u.ym_per_px > 0.0 && u.ym_per_px < 10.0) {
            return Err(bad("units.ym_per_px", u.ym_per_px, "0 < value < 10"));
        }
        for (name, quad) in [
            ("perspective.src", &self.perspective.src),
            ("perspective.dst", &self.perspective.dst),
        ] {
            for (i, p) in quad.iter().enumerate() {
                if !(p[0].is_finite()
                    && p[1].is_finite()
                    && p[0] >= -100_000.0
                    && p[0] <= 100_000.0
                    && p[1] >= -100_000.0
                    && p[1] <= 100_000.0)
                {
                    return Err(bad(
                        &format!("{name}[{i}]"),
                        format!("[{}, {}]", p[0], p[1]),
                        "finite pixel coordinates",
                    ));
                }
            }
        }
        for (key, bs) in [
            (
                "perspective.birdseye_scale_x",
                self.perspective.birdseye_scale_x,
            ),
            (
                "perspective.birdseye_scale_y",
                self.perspective.birdseye_scale_y,
            ),
        ] {
            float_in(key, bs, 0.25, 1.0)?;
        }
        // The frames the quad was found on, and the nominal bird's-eye view.
        size_in("perspective.frame", self.perspective.frame, 16..=16384)?;
        size_in("perspective.view", self.perspective.view, 64..=4096)?;
        for (name, quad) in [
            ("perspective.src", &self.perspective.src),
            ("perspective.dst", &self.perspective.dst),
        ] {
            if !quad_is_convex(quad) {
                return Err(bad(
                    name,
                    format!("{quad:?}"),
                    "a convex quad with an area, corners in the order top-left, top-right, bottom-left, bottom-right; not a line or a bow-tie",
                ));
            }
        }
        let d = &self.perspective.dst;
        if d[1][0] <= d[0][0] || d[3][0] <= d[2][0] {
            return Err(bad(
                "perspective.dst",
                format!("{d:?}"),
                "right points right of left points",
            ));
        }
        if d[2][1] <= d[0][1] {
            return Err(bad(
                "perspective.dst",
                format!("{d:?}"),
                "bottom points below top points",
            ));
        }
        if let Some(f) = self.camera.hfov_deg {
            let (lo, hi) = crate::base::camera::HFOV_RANGE_DEG;
            float_in("camera.hfov_deg", f, lo, hi)?;
        }
        Ok(())
    }
}

/// Whether a quad given as [top-left, top-right, bottom-left, bottom-right] is convex, turns
/// one way all round (not a bow-tie) and has an area of at least one square pixel.
fn quad_is_convex(q: &[[f64; 2]; 4]) -> bool {
    let poly = [q[0], q[1], q[3], q[2]];
    let mut signs = [0i8; 4];
    let mut area2 = 0.0;
    for i in 0..4 {
        let (a, b, c) = (poly[i], poly[(i + 1) % 4], poly[(i + 2) % 4]);
        let cross = (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]);
        signs[i] = if cross > 0.0 {
            1
        } else if cross < 0.0 {
            -1
        } else {
            0
        };
        area2 += a[0] * b[1] - b[0] * a[1];
    }
    area2.abs() >= 2.0 && (signs.iter().all(|&s| s == 1) || signs.iter().all(|&s| s == -1))
}
