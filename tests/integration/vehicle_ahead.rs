//! A vehicle ahead in our lane: a synthetic drive (640x360) where a white car with red tail
//! lights comes closer from 24 m at 2 m/s. Its lights, smeared up the bird's-eye view, have a
//! high LAB B: read as yellow they pulled both lines onto the car (both lines on 56 of the 63
//! frames with the car 11-16 m ahead, width error median 0.28 m, offset 0.10 m). The yellow
//! cue sets red colours neutral (`threshold::Cue::Yellow`).

use super::*;
use serde_json::Value;

#[test]
fn red_tail_lights_ahead_are_not_yellow_lines() {
    let d = tmp();
    let dir = d.path();
    synth_drive(
        dir,
        (640, 360, 420.0),
        &[
            "--seconds",
            "9",
            "--car",
            "24",
            "--car-in-our-lane",
            "--drift",
            "0.2",
        ],
    );
    let pairs = drive_records(
        dir,
        &dir.join("camera.yml"),
        &dir.join("synthetic_drive.toml"),
        "t",
    );
    let f = |v: &Value, k: &str| v[k].as_f64();
    // Frames with the car 11-16 m ahead (the quad reaches 30 m: the car hides its far half).
    let sel: Vec<(&Value, &Value)> = pairs
        .iter()
        .map(|(tr, r)| (tr, r))
        .filter(|(tr, _)| {
            let ahead = tr["car"]["s_m"].as_f64().unwrap() - f(tr, "s_m").unwrap();
            (11.0..=16.0).contains(&ahead)
        })
        .collect();
    assert!(sel.len() >= 60, "{} frames", sel.len());
    let both = sel.iter().filter(|(_, r)| r["status"] == "both").count();
    let err = |k: &str, tk: &str| {
        median(
            sel.iter()
                .filter_map(|(tr, r)| Some((f(r, k)? - f(tr, tk)?).abs()))
                .collect(),
        )
    };
    let width = err("lane_width_m", "lane_width_lateral_m");
    let offset = err("offset_m", "offset_m");
    let curvature = median(
        sel.iter()
            .filter_map(|(tr, r)| {
                let k = 1.0 / f(r, "radius_m")?;
                Some((k - f(tr, "curvature_per_m")?.abs()).abs() * 1000.0)
            })
            .collect(),
    );
    eprintln!(
        "car 11-16 m ahead: both lines on {both} of {} frames; median |error|: width {width:.3} m, offset {offset:.3} m, curvature {curvature:.3} /km",
        sel.len()
    );
    assert!(both as f64 >= 0.97 * sel.len() as f64, "both lines");
    assert!(width <= 0.15, "width error {width:.3} m");
    assert!(offset <= 0.05, "offset error {offset:.3} m");
    assert!(curvature <= 1.0, "curvature error {curvature:.3} /km");
}
