//! Integration tests: `lanes perspective`.
//!
//! Udacity: on `straight_lines1.jpg` and `straight_lines2.jpg` (undistorted with
//! `calibration/udacity.yml`), the estimated quad's lines pass within 10 px of the reference
//! quad's lines at the reference's top and bottom rows (464, 682); with the written config the
//! pipeline (`lanes image`) finds both lines vertical within 1 degree (slope of the fit at the
//! middle row, which for a parabola is the slope of its chord from top to bottom) and 3.7 +/- 0.2
//! m apart.

use crate::{assert_one_line_error, data, lanes, stderr, stdout, tmp, write_pinhole_camera};
use lanes::base::config::Config;
use std::path::{Path, PathBuf};

/// Reference quad of the Udacity pipeline (tl, tr, bl, br).
const REFERENCE_SRC: [[f64; 2]; 4] = [
    [575.0, 464.0],
    [707.0, 464.0],
    [258.0, 682.0],
    [1049.0, 682.0],
];

/// The Udacity camera file committed by `lanes calibrate` (`calibration/udacity.yml`).
fn udacity_camera(_dir: &Path) -> PathBuf {
    crate::repo_root().join("calibration").join("udacity.yml")
}

/// x of the line through quad corners `a` (top) and `b` (bottom) at row `y`.
/// `lanes perspective --camera CAMERA FRAMES... ARGS... -o OUT`.
fn perspective(camera: &Path, frames: &[&Path], args: &[&str], out: &Path) -> std::process::Output {
    let mut all = vec!["perspective", "--camera", camera.to_str().unwrap()];
    all.extend(frames.iter().map(|f| f.to_str().unwrap()));
    all.extend_from_slice(args);
    all.extend(["-o", out.to_str().unwrap()]);
    lanes(&all)
}

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
    let o = perspective(&cam, &[&s1, &s2], &[], &cfg_path);
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
    // Straight-frame mode: lines fitted over nearly the whole road, 1.5 degrees at most
    // (the defaults fit the near range only, where test2's bend is nearly straight).
    let straight = ["--fit-from", "0.1", "--max-angle", "1.5"];
    let o = perspective(&cam, &[&s1, &curved], &straight, &cfg_path);
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

/// Another camera (P1, 720x576, no camera file): on a frame where the faint right line of the
/// ego lane is missed (f075), the next lane's line is 3.3x as far from the vanishing point as
/// the left line; it is refused, as is a frame whose right line is not found (f125), and the
/// quad's bottom corners stay inside the frame (the earlier quad reached x = 1022 in a 720 px
/// frame and spanned two lanes). (f100 and f125 were refused by the ratio until the yellow cue
/// left out red colours; f100 is now refused as not straight.)
#[test]
fn the_next_lanes_line_is_refused_by_the_side_ratio() {
    let Some(dir) = data("labelled/udacity_hard_ego/clip_frames") else {
        return;
    };
    let frames: Vec<PathBuf> = ["000", "075", "125", "175", "200"]
        .iter()
        .map(|n| dir.join(format!("p1_challenge_f{n}.png")))
        .collect();
    let out_dir = tmp();
    let cfg_path = out_dir.path().join("p1.toml");
    // 4.5 degrees in the nominal 1280x720 view: the 3.2 of the 720x576 view the frames were
    // first judged in, stretched by the view's aspect (1280/720 across, 720/576 along).
    let mut args: Vec<String> = vec![
        "perspective".into(),
        "--max-angle".into(),
        "4.5".into(),
        "--fit-from".into(),
        "0.1".into(),
    ];
    args.extend(frames.iter().map(|p| p.to_string_lossy().to_string()));
    args.extend(["-o".into(), cfg_path.to_string_lossy().to_string()]);
    let o = lanes(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let line = |n: &str| {
        out.lines()
            .find(|l| l.contains(n))
            .expect("a line per frame")
            .to_string()
    };
    let f075 = line("f075");
    assert!(f075.contains("as far from the vanishing point"), "{f075}");
    let f125 = line("f125");
    assert!(f125.contains("not used"), "{f125}");
    assert!(out.contains("3 of 5 frames used"), "{out}");
    let cfg = lanes::base::config::Config::load(&cfg_path).unwrap();
    let src = cfg.perspective.src;
    assert!(src[2][0] > 0.0 && src[3][0] < 720.0, "quad {src:?}");
    // The hand-checked labels of f000 put the lines 447 px apart at row 540; the quad's
    // bottom edge (row ~547) must be that wide within 20%.
    let w = src[3][0] - src[2][0];
    assert!(
        (360.0..540.0).contains(&w),
        "quad bottom width {w:.0} px: {src:?}"
    );
}

#[test]
fn no_usable_frame_is_an_error_and_writes_no_config() {
    let Some(curved) = data("udacity/test_images/test2.jpg") else {
        return;
    };
    let dir = tmp();
    let cam = udacity_camera(dir.path());
    let cfg_path = dir.path().join("lanes.toml");
    let straight = ["--fit-from", "0.1", "--max-angle", "1.5"];
    let o = perspective(&cam, &[&curved], &straight, &cfg_path);
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
        write_pinhole_camera(&cam, 640, 480, 500.0);
        let o = perspective(&cam, &[&s1], &[], &out);
        assert_one_line_error(&o, "image is 1280x720, expected 640x480");
    }
}

/// Forward ground distance of undistorted image row `y` for a camera `height_m` above a flat
/// road, pitched down `pitch_deg`, with focal length `fy` and principal row `cy` (no yaw, no roll).
pub fn ground_distance(y: f64, fy: f64, cy: f64, height_m: f64, pitch_deg: f64) -> f64 {
    let (s, c) = pitch_deg.to_radians().sin_cos();
    let v = (y - cy) / fy;
    height_m * (c - s * v) / (c * v + s)
}

/// Synthetic roads (`lanes synth road`) for several camera heights and pitches:
/// - on the straight scene, with the truth quad's rows (`--bottom`, `--depth` from the truth
///   config), the estimated quad matches the truth quad within 1 px and both metres-per-pixel
///   values are within 5% of the truth config's;
/// - with the default rows, `ym_per_px` is within 5% of the exact value for the rows chosen
///   (from the rig's height, pitch and K);
/// - `lanes eval` with the estimated config on the curved `clean` suite from the same camera
///   stays within the synthetic bounds: radius error median < 5%, offset error median < 5 cm,
///   radius error p90 < 10% or, where the exact config itself misses that, within 3 points of it.
#[test]
fn synthetic_cameras_give_metres_per_pixel_within_5_percent_and_eval_within_bounds() {
    for (height, pitch) in [(1.2, 1.0), (1.45, 2.0), (1.8, 4.0)] {
        let dir = tmp();
        let d = dir.path();
        let (hs, ps) = (format!("{height}"), format!("{pitch}"));
        let straight = d.join("straight");
        let o = lanes(&[
            "synth",
            "road",
            "-o",
            straight.to_str().unwrap(),
            "--name",
            "straight",
            "--camera-height",
            &hs,
            "--pitch",
            &ps,
        ]);
        assert_eq!(o.status.code(), Some(0), "synth: {}", stderr(&o));
        let truth = Config::load(&straight.join("lanes.toml")).unwrap();
        let cam = straight.join("camera.yml");
        let camera = lanes::base::camera::Camera::load(&cam).unwrap();
        let frame = straight.join("straight.jpg");

        // The truth quad's rows as --bottom / --depth.
        let t = truth.perspective.src;
        let vp_y = {
            let ml = (t[2][0] - t[0][0]) / (t[2][1] - t[0][1]);
            let mr = (t[3][0] - t[1][0]) / (t[3][1] - t[1][1]);
            // x_l(y) = x_r(y)
            t[0][1] + (t[1][0] - t[0][0]) / (ml - mr)
        };
        let bottom = t[2][1] / camera.height as f64;
        let depth = (t[2][1] - t[0][1]) / (t[2][1] - vp_y);
        let est_path = d.join("est.toml");
        let o = perspective(
            &cam,
            &[&frame],
            &[
                "--bottom",
                &format!("{bottom}"),
                "--depth",
                &format!("{depth}"),
                "--fit-from",
                "0.1",
            ],
            &est_path,
        );
        assert_eq!(o.status.code(), Some(0), "perspective: {}", stderr(&o));
        let est = Config::load(&est_path).unwrap();
        for (i, (ours, exact)) in est.perspective.src.iter().zip(t.iter()).enumerate() {
            for (e, r) in ours.iter().zip(exact.iter()) {
                assert!(
                    (e - r).abs() < 1.0,
                    "height {height} pitch {pitch}: src[{i}] {ours:?} vs truth {exact:?}"
                );
            }
        }
        let xm_err = est.units.xm_per_px / truth.units.xm_per_px - 1.0;
        let ym_err = est.units.ym_per_px / truth.units.ym_per_px - 1.0;
        println!(
            "height {height} m, pitch {pitch} deg: xm_per_px {:.6} (truth {:.6}, {:+.2}%), ym_per_px {:.6} (truth {:.6}, {:+.2}%)",
            est.units.xm_per_px,
            truth.units.xm_per_px,
            100.0 * xm_err,
            est.units.ym_per_px,
            truth.units.ym_per_px,
            100.0 * ym_err
        );
        assert!(xm_err.abs() < 0.05 && ym_err.abs() < 0.05);

        // Default rows: ym_per_px against the exact value for the rows the estimate chose.
        let def_path = d.join("default_rows.toml");
        let o = perspective(&cam, &[&frame], &["--fit-from", "0.1"], &def_path);
        assert_eq!(o.status.code(), Some(0), "perspective: {}", stderr(&o));
        let def = Config::load(&def_path).unwrap();
        let (yt, yb) = (def.perspective.src[0][1], def.perspective.src[2][1]);
        let exact = (ground_distance(yt, camera.fy(), camera.cy(), height, pitch)
            - ground_distance(yb, camera.fy(), camera.cy(), height, pitch))
            / (def.perspective.dst[2][1] - def.perspective.dst[0][1]);
        let err = def.units.ym_per_px / exact - 1.0;
        println!(
            "  default rows {yt:.1}..{yb:.1}: ym_per_px {:.6} (exact {exact:.6}, {:+.2}%)",
            def.units.ym_per_px,
            100.0 * err
        );
        assert!(
            err.abs() < 0.05,
            "default rows: ym_per_px {} vs {exact}",
            def.units.ym_per_px
        );

        // Curved scenes from the same camera, scored with the estimated config.
        let curves = d.join("curves");
        let o = lanes(&[
            "synth",
            "road",
            "-o",
            curves.to_str().unwrap(),
            "--suite",
            "clean",
            "--camera-height",
            &hs,
            "--pitch",
            &ps,
        ]);
        assert_eq!(o.status.code(), Some(0), "synth: {}", stderr(&o));
        let score = |config: &Path| -> (f64, f64, f64, String) {
            let o = lanes(&[
                "eval",
                curves.to_str().unwrap(),
                "--config",
                config.to_str().unwrap(),
                "--json",
            ]);
            assert_eq!(o.status.code(), Some(0), "eval: {}", stderr(&o));
            let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("eval JSON");
            let s = &v["synthetic"]["summary"];
            (
                s["radius_rel_error_median"].as_f64().unwrap(),
                s["radius_rel_error_p90"].as_f64().unwrap(),
                s["offset_error_cm_median"].as_f64().unwrap(),
                s.to_string(),
            )
        };
        // Score at the exact config's bird's-eye resolution, so that only the estimated quad and
        // scale differ.
        let mut scored = est.clone();
        scored.perspective.birdseye_scale_x = truth.perspective.birdseye_scale_x;
        scored.perspective.birdseye_scale_y = truth.perspective.birdseye_scale_y;
        let scored_path = d.join("est_scored.toml");
        std::fs::write(&scored_path, scored.to_toml()).unwrap();
        let (med, p90, off, summary) = score(&scored_path);
        let (t_med, t_p90, t_off, _) = score(&straight.join("lanes.toml"));
        println!(
            "  eval, 14 curved frames: radius error median {:.1}%, p90 {:.1}%, offset error median {off:.2} cm (exact config: {:.1}%, {:.1}%, {t_off:.2} cm)",
            100.0 * med,
            100.0 * p90,
            100.0 * t_med,
            100.0 * t_p90
        );
        assert!(
            med < 0.05 && off < 5.0,
            "height {height} pitch {pitch}: {summary}"
        );
        // The p90 bound (10%) is not met by the pipeline even with the exact config on the lowest,
        // flattest rig (1.2 m, 1 degree: p90 11.9%, two bends of 800 m and 2 km fitted 12-17% off);
        // there the estimated config must be no worse than the exact one by more than 3 points.
        assert!(
            p90 < 0.10f64.max(t_p90 + 0.03),
            "height {height} pitch {pitch}: p90 {p90} (exact config {t_p90})"
        );
    }
}
