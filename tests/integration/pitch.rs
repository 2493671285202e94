//! The online pitch (`tracking.online_pitch`): a synthetic drive on a 600 m bend whose camera
//! pitches 1.5 degrees further down over 2 s (what a grade change or a shifted load does), run
//! with the geometry of the start. The pitch in the telemetry follows the truth, and the lane's width and
//! curvature stay right; with the online pitch off they do not (so the test can fail).

use super::*;
use serde_json::Value;

/// Median |width error| (m) and |curvature error| (1/km; against the curvature of exact
/// quadratics through the true lines, what `lanes` reports for perfect pixels) over the
/// frames from `from_s`.
fn errors(pairs: &[(Value, Value)], from_s: f64) -> (f64, f64) {
    let late: Vec<&(Value, Value)> = pairs
        .iter()
        .filter(|(t, r)| t["time_s"].as_f64().unwrap() >= from_s && r["radius_m"].is_number())
        .collect();
    let width = late
        .iter()
        .map(|(t, r)| {
            (r["lane_width_m"].as_f64().unwrap() - t["lane_width_lateral_m"].as_f64().unwrap())
                .abs()
        })
        .collect();
    let curv = late
        .iter()
        .map(|(t, r)| {
            (1000.0 / r["radius_m"].as_f64().unwrap()
                - 1000.0 / t["radius_quadratic_m"].as_f64().unwrap())
            .abs()
        })
        .collect();
    (median(width), median(curv))
}

#[test]
fn the_online_pitch_follows_a_pitch_change_and_keeps_the_lane_right() {
    let d = tmp();
    let dir = d.path();
    let (w, h, f) = (640, 360, 500.0);
    let cam = synth_drive(
        dir,
        (w, h, f),
        &[
            "--seconds",
            "7",
            "--radius",
            "600",
            "--pitch",
            "2",
            "--pitch-change",
            "1.5",
            "--pitch-change-at",
            "1.5",
            "--pitch-change-ramp",
            "2",
        ],
    );
    let cfg = dir.join("synthetic_drive.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(text.contains("online_pitch = true"), "{text}");
    let off = dir.join("off.toml");
    std::fs::write(
        &off,
        text.replace("online_pitch = true", "online_pitch = false"),
    )
    .unwrap();
    let on = drive_records(dir, &cam, &cfg, "on");
    let fixed = drive_records(dir, &cam, &off, "off");
    // The pitch in the telemetry: the truth's within 0.15 degrees before the change (after the
    // filter's first half second) and from a second after its end; the horizon row is the one
    // of that pitch.
    let mut worst: f64 = 0.0;
    for (t, r) in &on {
        let time = t["time_s"].as_f64().unwrap();
        let p = r["pitch_deg"].as_f64().expect("pitch_deg");
        let hy = r["horizon_y"].as_f64().expect("horizon_y");
        assert!((hy - (h as f64 / 2.0 - f * p.to_radians().tan())).abs() < 0.1);
        if (0.5..1.5).contains(&time) || time >= 4.5 {
            worst = worst.max((p - t["camera_pitch_deg"].as_f64().unwrap()).abs());
        }
    }
    assert!(fixed.iter().all(|(_, r)| r["pitch_deg"].is_null()));
    let (w_on, k_on) = errors(&on, 4.5);
    let (w_off, k_off) = errors(&fixed, 4.5);
    eprintln!(
        "pitch change 1.5 deg: pitch error max {worst:.3} deg; from 4.5 s, median |width error| \
         {w_on:.3} m (online pitch off: {w_off:.3}), median |curvature error| {k_on:.3} /km \
         (off: {k_off:.3})"
    );
    assert!(worst <= 0.15, "pitch error {worst}");
    assert!(w_on <= 0.05 && w_off >= 0.2, "width {w_on} vs {w_off}");
    // Measured 0.186 vs 0.405; the margin allows for a synthetic video encoded on another CPU.
    assert!(
        k_on <= 0.3 && k_off >= 1.5 * k_on,
        "curvature {k_on} vs {k_off}"
    );
}
