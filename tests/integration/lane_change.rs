//! Lane changes on a synthetic drive (640x360, two changes, per-frame truth of the ego lane: the
//! lane the camera is in). The ego lane keeps both lines while the car straddles one of them,
//! until the line is within `confidence.crossing_line_distance_m` of the camera; the offsets
//! reported then are those of the lane the camera is in. With the crossing distance set to
//! `min_line_distance_m` (a line under the car never counts, as before 2026-12-05) fewer frames
//! have both lines, so the test can fail.

use super::*;
use serde_json::Value;

/// Share of frames with both lines; p90 of |offset error| (m) over them; the largest
/// |offset| - width / 2 (m): how far outside the lane reported the camera was.
fn scores(pairs: &[(Value, Value)]) -> (f64, f64, f64) {
    let both: Vec<&(Value, Value)> = pairs
        .iter()
        .filter(|(_, r)| r["status"] == "both")
        .collect();
    let mut err: Vec<f64> = both
        .iter()
        .map(|(t, r)| (r["offset_m"].as_f64().unwrap() - t["offset_m"].as_f64().unwrap()).abs())
        .collect();
    err.sort_by(f64::total_cmp);
    let p90 = err[(err.len() * 9) / 10];
    let outside = both
        .iter()
        .map(|(_, r)| {
            r["offset_m"].as_f64().unwrap().abs() - r["lane_width_m"].as_f64().unwrap() / 2.0
        })
        .fold(f64::MIN, f64::max);
    (both.len() as f64 / pairs.len() as f64, p90, outside)
}

#[test]
fn both_lines_through_lane_changes_on_the_lane_the_camera_is_in() {
    let d = tmp();
    let dir = d.path();
    let cam = synth_drive(
        dir,
        (640, 360, 500.0),
        &[
            "--seconds",
            "10",
            "--lane-change",
            "2.5",
            "--lane-change",
            "6.5",
            "--supersample",
            "1",
        ],
    );
    let cfg = dir.join("synthetic_drive.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(text.contains("crossing_line_distance_m = 0.15"), "{text}");
    let (both, p90, outside) = scores(&drive_records(dir, &cam, &cfg, "t"));
    // The old rule: no line nearer than 0.8 m counts.
    let old = dir.join("old.toml");
    std::fs::write(
        &old,
        text.replace(
            "crossing_line_distance_m = 0.15",
            "crossing_line_distance_m = 0.8",
        ),
    )
    .unwrap();
    let (both_old, _, _) = scores(&drive_records(dir, &cam, &old, "old"));
    eprintln!(
        "lane changes: both lines {both:.3} (0.8 m rule {both_old:.3}), offset error p90 \
         {:.1} cm, camera at most {outside:.2} m outside the lane",
        p90 * 100.0
    );
    // Measured 2026-12-07 with 0.15 m: 0.964, offset error p90 1.2 cm, the camera at least
    // 0.14 m inside the lane reported (0.952 and 0.20 m with 0.3 m).
    // Measured 2026-12-05: 0.948, 0.844 with the 0.8 m rule (0.852 before the gap over a line
    // was bridged longer); offset error p90 1.2 cm against the truth of the lane the camera is
    // in; the camera at least 0.27 m inside the lane reported.
    assert!(both >= 0.92, "both {both:.3}");
    assert!(both >= both_old + 0.05, "{both:.3} vs {both_old:.3}");
    assert!(p90 <= 0.05, "offset error p90 {p90:.3} m");
    assert!(
        outside <= 0.05,
        "camera {outside:.3} m outside the lane reported"
    );
    // The changes themselves: two, to the sides the truth says.
    let truth = synth_truth(dir);
    let o = lanes(&["events", "--json", dir.join("t.jsonl").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let found: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    let changes = |v: &[Value]| -> Vec<String> {
        v.iter()
            .filter(|e| e["kind"] == "lane_change")
            .map(|e| e["direction"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let expected = changes(truth["events"].as_array().unwrap());
    assert_eq!(expected.len(), 2, "{truth:?}");
    assert_eq!(changes(&found), expected, "{found:?}");
}
