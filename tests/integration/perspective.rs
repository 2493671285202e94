//! Integration tests: `lanes perspective`.
//!
//! Udacity: on `straight_lines1.jpg` and `straight_lines2.jpg` (undistorted with
//! `calibration/udacity.yml`), the estimated quad's lines pass within 10 px of the reference
//! quad's lines at the reference's top and bottom rows (464, 682); with the written config the
//! pipeline (`lanes image`) finds both lines vertical within 1 degree (slope of the fit at the
//! middle row, which for a parabola is the slope of its chord from top to bottom) and 3.7 +/- 0.2
//! m apart.

use crate::{assert_one_line_error, data, lanes, stderr, stdout, tmp};
use lanes::config::Config;
use std::path::{Path, PathBuf};

/// Reference quad of the Udacity pipeline (tl, tr, bl, br).
const REFERENCE_SRC: [[f64; 2]; 4] = [
    [575.0, 464.0],
    [707.0, 464.0],
    [258.0, 682.0],
    [1049.0, 682.0],
];

/// The Udacity camera file: `calibration/udacity.yml` when the repo has it, else one written
/// from the calibration's approximate values (K and the five distortion coefficients).
fn udacity_camera(dir: &Path) -> PathBuf {
    let shipped = crate::repo_root().join("calibration").join("udacity.yml");
    if shipped.exists() {
        return shipped;
    }
    let p = dir.join("udacity.yml");
    std::fs::write(
        &p,
        "%YAML:1.0\n---\nimage_width: 1280\nimage_height: 720\ncamera_matrix: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n   data: [ 1156.9, 0., 665.8, 0., 1152.3, 388.1, 0., 0., 1. ]\ndistortion_coefficients: !!opencv-matrix\n   rows: 1\n   cols: 5\n   dt: d\n   data: [ -0.2376, -0.0854, -0.00079, -0.00012, 0.1057 ]\n",
    )
    .expect("write camera");
    p
}

/// x of the line through quad corners `a` (top) and `b` (bottom) at row `y`.
fn x_at(a: [f64; 2], b: [f64; 2], y: f64) -> f64 {
    a[0] + (b[0] - a[0]) * (y - a[1]) / (b[1] - a[1])
}

#[test]
fn udacity_straight_frames_give_the_reference_quad_and_a_metric_birdseye_view() {
    let (Some(s1), Some(s2)) = (
        data("udacity/test_images/straight_lines1.jpg"),
        data("udacity/test_images/straight_lines2.jpg"),
    ) else {
        return;
    };
    let dir = tmp();
    let cam = udacity_camera(dir.path());
    let cfg_path = dir.path().join("udacity.toml");
    let o = lanes(&[
        "perspective",
        "--camera",
        cam.to_str().unwrap(),
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
        "-o",
        cfg_path.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    println!("{out}");
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(out.contains("2 of 2 frames used"), "{out}");
    let cfg = Config::load(&cfg_path).expect("config loads and validates");

    // Quad lines against the reference's at its top and bottom rows.
    let (s, r) = (cfg.perspective.src, REFERENCE_SRC);
    for y in [464.0, 682.0] {
        let (ours_l, ref_l) = (x_at(s[0], s[2], y), x_at(r[0], r[2], y));
        let (ours_r, ref_r) = (x_at(s[1], s[3], y), x_at(r[1], r[3], y));
        println!("row {y}: left {ours_l:.1} (reference {ref_l:.1}), right {ours_r:.1} (reference {ref_r:.1})");
        assert!(
            (ours_l - ref_l).abs() <= 10.0,
            "left line at row {y}: {ours_l:.1} vs {ref_l:.1}"
        );
        assert!(
            (ours_r - ref_r).abs() <= 10.0,
            "right line at row {y}: {ours_r:.1} vs {ref_r:.1}"
        );
    }
    assert_eq!(cfg.perspective.dst, Config::default().perspective.dst);
    assert!((cfg.units.xm_per_px - 3.7 / 380.0).abs() < 1e-12);
    // Along the road: the camera geometry; the reference pipelines use 30/720 = 0.042 and 3.048/100.
    assert!(
        cfg.units.ym_per_px > 0.025 && cfg.units.ym_per_px < 0.045,
        "ym_per_px {}",
        cfg.units.ym_per_px
    );

    // Pictures for the user.
    for stem in ["straight_lines1", "straight_lines2"] {
        assert!(dir.path().join(format!("udacity_{stem}_quad.jpg")).exists());
        assert!(dir
            .path()
            .join(format!("udacity_{stem}_birdseye.jpg"))
            .exists());
    }

    // The pipeline with this config: both lines vertical within 1 degree, 3.7 +/- 0.2 m apart.
    let img_dir = dir.path().join("img");
    let o = lanes(&[
        "image",
        "--camera",
        cam.to_str().unwrap(),
        "--config",
        cfg_path.to_str().unwrap(),
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
        "-o",
        img_dir.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let records: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    let mid = 360.0;
    for rec in &records {
        let width = rec["lane_width_m"].as_f64().expect("both lines found");
        for side in ["left_fit", "right_fit"] {
            let f: Vec<f64> = rec[side]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let angle = (2.0 * f[0] * mid + f[1]).atan().to_degrees();
            let bottom = (2.0 * f[0] * 719.0 + f[1]).atan().to_degrees();
            println!("{}: {side} angle at the middle row {angle:+.2} deg (bottom row {bottom:+.2}), lane width {width:.3} m", rec["file"]);
            assert!(
                angle.abs() < 1.0,
                "{}: {side} runs {angle:.2} deg from vertical",
                rec["file"]
            );
        }
        assert!(
            (width - 3.7).abs() <= 0.2,
            "{}: lane width {width:.3} m",
            rec["file"]
        );
    }
}

#[test]
fn a_curved_frame_is_reported_and_left_out() {
    let (Some(s1), Some(curved)) = (
        data("udacity/test_images/straight_lines1.jpg"),
        data("udacity/test_images/test2.jpg"),
    ) else {
        return;
    };
    let dir = tmp();
    let cam = udacity_camera(dir.path());
    let cfg_path = dir.path().join("lanes.toml");
    let o = lanes(&[
        "perspective",
        "--camera",
        cam.to_str().unwrap(),
        s1.to_str().unwrap(),
        curved.to_str().unwrap(),
        "-o",
        cfg_path.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let line = out
        .lines()
        .find(|l| l.contains("test2.jpg"))
        .expect("a line about test2");
    assert!(line.contains("not used: not straight"), "{line}");
    assert!(out.contains("1 of 2 frames used"), "{out}");
    // The unusable frame still gets its picture (what was found), but no bird's-eye view.
    assert!(dir.path().join("lanes_test2_quad.jpg").exists());
    assert!(!dir.path().join("lanes_test2_birdseye.jpg").exists());
}

#[test]
fn no_usable_frame_is_an_error_and_writes_no_config() {
    let Some(curved) = data("udacity/test_images/test2.jpg") else {
        return;
    };
    let dir = tmp();
    let cam = udacity_camera(dir.path());
    let cfg_path = dir.path().join("lanes.toml");
    let o = lanes(&[
        "perspective",
        "--camera",
        cam.to_str().unwrap(),
        curved.to_str().unwrap(),
        "-o",
        cfg_path.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "no usable straight-road frame among 1");
    assert!(!cfg_path.exists());
}

#[test]
fn a_frame_without_lane_lines_is_reported() {
    // A chessboard: no converging lane lines.
    let Some(board) = data("udacity/camera_cal/calibration2.jpg") else {
        return;
    };
    let dir = tmp();
    let cfg_path = dir.path().join("lanes.toml");
    let o = lanes(&[
        "perspective",
        board.to_str().unwrap(),
        "-o",
        cfg_path.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "calibration2");
    assert!(!cfg_path.exists());
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let dir = tmp();
    let out = dir.path().join("x.toml");
    let o = lanes(&[
        "perspective",
        "/no/such/frame.jpg",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "/no/such/frame.jpg: file not found");
    let o = lanes(&[
        "perspective",
        "/no/such/frame.jpg",
        "--lane-width=-1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "--lane-width = -1");
    let o = lanes(&[
        "perspective",
        "/no/such/frame.jpg",
        "-o",
        "/no/such/dir/x.toml",
    ]);
    assert_one_line_error(&o, "/no/such/dir: output directory does not exist");
    if let Some(s1) = data("udacity/test_images/straight_lines1.jpg") {
        let cam = dir.path().join("small.yml");
        std::fs::write(
            &cam,
            "%YAML:1.0\n---\nimage_width: 640\nimage_height: 480\ncamera_matrix: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n   data: [ 500., 0., 320., 0., 500., 240., 0., 0., 1. ]\ndistortion_coefficients: !!opencv-matrix\n   rows: 1\n   cols: 5\n   dt: d\n   data: [ 0., 0., 0., 0., 0. ]\n",
        )
        .unwrap();
        let o = lanes(&[
            "perspective",
            "--camera",
            cam.to_str().unwrap(),
            s1.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_one_line_error(&o, "image is 1280x720, expected 640x480");
    }
}
