//! Integration tests: `lanes eval` on hand-made labels with known answers (perfect, shifted by
//! 25 px perpendicular to the line, a missing line) in each format, built from a synthetic still whose lines `lanes` finds
//! within a few pixels; and on the real labelled samples (numbers printed).

use crate::{assert_one_line_error, data, lanes, stderr, stdout, tmp};
use lanes::tools::synth::truth::{FrameTruth, TruthFile};
use opencv::core::{self, Mat, Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Render a clean 600 m left bend; returns (image path, truth of the frame, camera, config).
fn still(dir: &Path) -> (PathBuf, FrameTruth, PathBuf, PathBuf) {
    let o = lanes(&[
        "synth",
        "road",
        "--radius",
        "600",
        "--offset",
        "0.2",
        "--name",
        "scene",
        "-o",
        &dir.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = TruthFile::load(&dir.join("scene.json")).unwrap();
    (
        dir.join("scene.jpg"),
        t.frames[0].clone(),
        dir.join("camera.yml"),
        dir.join("lanes.toml"),
    )
}

/// The truth lines restricted to the rows inside the bird's-eye view (-2 elsewhere), moved
/// `shift` px perpendicular to the line (the horizontal move is `shift * sqrt(1 + slope^2)`
/// with the line's local slope dx/dy, so a slanted line is really `shift` px away).
fn lines_in_range(t: &FrameTruth, shift: f64) -> Vec<Vec<f64>> {
    let [top, bottom] = t.birdseye_rows;
    let rows = &t.h_samples;
    t.lanes
        .iter()
        .map(|l| {
            (0..l.len())
                .map(|i| {
                    let (x, y) = (l[i], rows[i]);
                    if x < 0.0 || y <= top || y >= bottom {
                        return -2.0;
                    }
                    let (a, b) = (i.saturating_sub(1), (i + 1).min(l.len() - 1));
                    let k = if l[a] >= 0.0 && l[b] >= 0.0 && b > a {
                        (l[b] - l[a]) / (rows[b] - rows[a])
                    } else {
                        0.0
                    };
                    x + shift * (1.0 + k * k).sqrt()
                })
                .collect()
        })
        .collect()
}

fn eval_json(args: &[&str]) -> Value {
    let mut a = vec!["eval", "--json"];
    a.extend_from_slice(args);
    let o = lanes(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn tusimple_perfect_shifted_and_missing() {
    let d = tmp();
    let (img, t, cam, cfg) = still(d.path());
    let name = img.file_name().unwrap().to_string_lossy().to_string();
    let write = |file: &str, lanes: Vec<Vec<f64>>| {
        let rec = json!({"raw_file": name, "h_samples": t.h_samples, "lanes": lanes});
        std::fs::write(d.path().join(file), format!("{rec}\n")).unwrap();
        d.path().join(file)
    };
    let perfect = write("perfect.json", lines_in_range(&t, 0.0));
    let shifted = write("shifted.json", lines_in_range(&t, 25.0));
    let missing = write("missing.json", lines_in_range(&t, 0.0)[..1].to_vec());
    let run = |p: &Path| {
        let v = eval_json(&[
            &p.to_string_lossy(),
            "--camera",
            &cam.to_string_lossy(),
            "--config",
            &cfg.to_string_lossy(),
        ]);
        let s = v["tusimple"].clone();
        eprintln!("{}: {s}", p.display());
        (f(&s["accuracy"]), f(&s["fp"]), f(&s["fn"]))
    };
    let (acc, fp, fn_) = run(&perfect);
    assert!(acc > 0.95, "perfect accuracy {acc}");
    assert_eq!((fp, fn_), (0.0, 0.0));
    let (acc, fp, fn_) = run(&shifted);
    assert_eq!((fp, fn_), (1.0, 1.0), "a 25 px shift misses both lines");
    assert!(
        acc < 0.8,
        "shifted accuracy {acc} (only rows where both are -2 count)"
    );
    let (acc, fp, fn_) = run(&missing);
    assert!(acc > 0.95, "missing-line accuracy {acc}");
    assert_eq!(
        (fp, fn_),
        (0.5, 0.0),
        "the unlabelled right line is a false positive"
    );
}

fn write_lines_txt(path: &Path, t: &FrameTruth, lanes: &[Vec<f64>]) {
    let mut text = String::new();
    for l in lanes {
        let pts: Vec<String> = l
            .iter()
            .zip(&t.h_samples)
            .filter(|(x, _)| **x >= 0.0)
            .map(|(x, y)| format!("{x} {y}"))
            .collect();
        text.push_str(&pts.join(" "));
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn culane_perfect_shifted_and_missing() {
    let d = tmp();
    let (img, t, cam, cfg) = still(d.path());
    let mut out = Vec::new();
    for (name, lanes) in [
        ("perfect", lines_in_range(&t, 0.0)),
        ("shifted", lines_in_range(&t, 25.0)),
        ("missing", lines_in_range(&t, 0.0)[..1].to_vec()),
    ] {
        let sub = d.path().join(name);
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::copy(&img, sub.join("00000.jpg")).unwrap();
        write_lines_txt(&sub.join("00000.lines.txt"), &t, &lanes);
        let v = eval_json(&[
            &sub.to_string_lossy(),
            "--camera",
            &cam.to_string_lossy(),
            "--config",
            &cfg.to_string_lossy(),
        ]);
        eprintln!("{name}: {}", v["culane"]);
        out.push(v["culane"]["counts"].clone());
    }
    assert_eq!(out[0], json!({"tp": 2, "fp": 0, "fn": 0}));
    assert_eq!(out[1], json!({"tp": 0, "fp": 2, "fn": 2}));
    assert_eq!(out[2], json!({"tp": 1, "fp": 1, "fn": 0}));
}

/// Draw polylines of the truth (x at rows) into a mask, each line with its own grey level.
fn draw_mask(t: &FrameTruth, lanes: &[Vec<f64>], levels: &[f64]) -> Mat {
    let mut m = Mat::zeros(720, 1280, core::CV_8UC1)
        .unwrap()
        .to_mat()
        .unwrap();
    for (l, level) in lanes.iter().zip(levels) {
        let pts: Vector<Point> = l
            .iter()
            .zip(&t.h_samples)
            .filter(|(x, _)| **x >= 0.0)
            .map(|(x, y)| Point::new(x.round() as i32, *y as i32))
            .collect();
        let v: Vector<Vector<Point>> = std::iter::once(pts).collect();
        imgproc::polylines(
            &mut m,
            &v,
            false,
            Scalar::all(*level),
            5,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
    }
    m
}

#[test]
fn masks_perfect_shifted_and_missing() {
    let d = tmp();
    let (img, t, cam, cfg) = still(d.path());
    let raw = lanes::base::still::read_bgr(&img).unwrap().mat;
    let mut results = Vec::new();
    for (name, shift, n) in [
        ("perfect", 0.0, 2),
        ("shifted", 25.0, 2),
        ("missing", 0.0, 1),
    ] {
        let root = d.path().join(name);
        for sub in ["image", "gt_binary_image", "gt_instance_image"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        lanes::base::frame::write_mat(&raw, &root.join("image/0000.png")).unwrap();
        // The label covers both lines; the prediction is what `lanes` finds. For "shifted" the
        // label is moved 25 px; for "missing" only the left line is labelled.
        let lanes = lines_in_range(&t, shift)[..n].to_vec();
        lanes::base::frame::write_mat(
            &draw_mask(&t, &lanes, &[255.0, 255.0]),
            &root.join("gt_binary_image/0000.png"),
        )
        .unwrap();
        lanes::base::frame::write_mat(
            &draw_mask(&t, &lanes, &[20.0, 70.0]),
            &root.join("gt_instance_image/0000.png"),
        )
        .unwrap();
        let v = eval_json(&[
            &root.to_string_lossy(),
            "--camera",
            &cam.to_string_lossy(),
            "--config",
            &cfg.to_string_lossy(),
        ]);
        eprintln!("{name}: {}", v["masks"]);
        results.push((
            f(&v["masks"]["pred_near_mask"]),
            f(&v["masks"]["mask_near_pred"]),
        ));
    }
    let (p, r) = results[0];
    assert!(p > 0.9 && r > 0.98, "perfect {p} {r}");
    let (p, r) = results[1];
    assert!(p < 0.15 && r < 0.05, "shifted {p} {r}");
    let (p, r) = results[2];
    assert!((0.4..0.6).contains(&p) && r > 0.98, "missing {p} {r}");
}

#[test]
fn synthetic_truth_table_is_printed() {
    let d = tmp();
    still(d.path());
    let o = lanes(&["eval", &d.path().join("scene.json").to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    eprintln!("{s}");
    assert!(s.contains("synthetic truth: 1 frame from 1 file"), "{s}");
    assert!(
        s.contains("detection rate (both lines)") && s.contains("100.0% (1/1)"),
        "{s}"
    );
}

/// Issue 24: `make demo` printed "TuSimple accuracy, to 100 m 0.765 (FP 1.000, FN 1.000)",
/// which read as broken. The number is right (the drawn lines end where the bird's-eye view
/// does, so no line reaches the 0.85 of points to 100 m a TuSimple match needs); the row says so.
#[test]
fn tusimple_to_100_m_row_says_why_no_line_matches() {
    let o = lanes(&["eval", "test_videos/synthetic_drive.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    let row = s
        .lines()
        .find(|l| l.contains("TuSimple accuracy, to 100 m"))
        .unwrap_or_else(|| panic!("{s}"));
    let acc: f64 = row
        .split_whitespace()
        .nth(5)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{row}"));
    assert!((0.7..0.85).contains(&acc), "{row}");
    assert!(
        row.contains("of the labelled points; no line matched (FP 1.000, FN 1.000)")
            && row.contains("as far as the bird's-eye view reaches"),
        "{row}"
    );
    // Over the rows the view covers, the lines match.
    assert!(s.contains("TuSimple accuracy, bird's-eye    0.99"), "{s}");
}

/// The real labelled sets of other cameras, as a user scores them: `lanes perspective` with its
/// default options writes a config from the set's own frames, and `lanes eval` scores the set
/// with it. Floors a line or two under what this build gives (CULane 30 TP, 1 FP, 26 FN over
/// both sequences: precision 0.968, recall 0.536, with one vote per view of a stopped car in
/// the quad and the road below a vehicle ahead searched; the lanenet TuSimple masks 0.958 of
/// the predicted points near a lane, 0.741 of the ego-lane pixels near a prediction). Issue
/// 22's CULane recall target (0.70) is not met: in most of these frames a car close ahead
/// hides the lines, which CULane labels through the car (docs/perspective.md).
#[test]
fn real_labelled_sets_are_scored_with_the_geometry_perspective_finds_in_them() {
    let s = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let d = tmp();
    let culane = ["06030819_0755.MP4", "06030822_0756.MP4"];
    let Some(root) = data("labelled/culane_sample/driver_161_90frame") else {
        return;
    };
    let (mut tp, mut fp, mut fneg) = (0.0, 0.0, 0.0);
    for seq in culane {
        let dir = root.join(seq);
        let cfg = d.path().join(format!("{seq}.toml"));
        let o = lanes(&["perspective", &s(&dir), "-o", &s(&cfg)]);
        assert_eq!(o.status.code(), Some(0), "{seq}: {}", stderr(&o));
        let said = format!("{}{}", stdout(&o), stderr(&o));
        let used = said
            .split(" of 15 frames used")
            .next()
            .and_then(|t| t.rsplit('(').next())
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or(0);
        assert!(used >= 8, "{seq}: {used} of 15 frames used\n{said}");
        let v = eval_json(&[&s(&dir), "--config", &s(&cfg)]);
        let c = &v["culane"]["counts"];
        eprintln!("CULane {seq}: {used} frames used, {c}");
        (tp, fp, fneg) = (tp + f(&c["tp"]), fp + f(&c["fp"]), fneg + f(&c["fn"]));
    }
    let (precision, recall) = (tp / (tp + fp), tp / (tp + fneg));
    eprintln!("CULane, both sequences: precision {precision:.3}, recall {recall:.3}");
    assert!(tp + fneg >= 50.0, "{} labelled ego lines", tp + fneg);
    assert!(precision >= 0.90, "precision {precision:.3}");
    assert!(recall >= 0.50, "recall {recall:.3}");

    let Some(t) = data("labelled/lanenet_tusimple_example/training_data_example") else {
        return;
    };
    let cfg = d.path().join("tusimple.toml");
    let o = lanes(&["perspective", &s(&t.join("image")), "-o", &s(&cfg)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = eval_json(&[&s(&t), "--config", &s(&cfg)]);
    let m = &v["masks"];
    eprintln!(
        "lanenet TuSimple masks with their own geometry: {}",
        m["counts"]
    );
    assert_eq!(m["images"], 6);
    let (near, covered) = (f(&m["pred_near_mask"]), f(&m["mask_near_pred"]));
    assert!(near >= 0.90, "predicted points near a lane {near:.3}");
    assert!(
        covered >= 0.65,
        "ego-lane pixels near a prediction {covered:.3}"
    );
}

#[test]
fn eval_errors_are_one_line() {
    let d = tmp();
    assert_one_line_error(
        &lanes(&["eval", "no/such/truth.json"]),
        "no/such/truth.json",
    );
    let junk = d.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    assert_one_line_error(
        &lanes(&["eval", &junk.to_string_lossy()]),
        "neither synthetic truth nor TuSimple labels",
    );
    let txt = d.path().join("notes.txt");
    std::fs::write(&txt, "x").unwrap();
    assert_one_line_error(
        &lanes(&["eval", &txt.to_string_lossy()]),
        "not a truth file",
    );
    // A truth file whose image is missing is reported, counted, and exits 2.
    still(d.path());
    std::fs::remove_file(d.path().join("scene.jpg")).unwrap();
    assert_one_line_error(
        &lanes(&["eval", &d.path().join("scene.json").to_string_lossy()]),
        "scene.jpg",
    );
    // Nothing scored: no table of zeros that reads as a result; an empty negatives folder is
    // said to be empty.
    let labels = d.path().join("label.json");
    std::fs::write(
        &labels,
        r#"{"lanes": [[-2, 100, 200]], "h_samples": [240, 250, 260], "raw_file": "gone/20.jpg"}"#,
    )
    .unwrap();
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = lanes(&[
        "eval",
        &labels.to_string_lossy(),
        "--negatives",
        &empty.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(out.contains("TuSimple labels: nothing scored"), "{out}");
    assert!(out.contains("no image scored"), "{out}");
    assert!(!out.contains("0.000"), "{out}");
    assert!(
        stderr(&o).contains("gone/20.jpg: file not found"),
        "{}",
        stderr(&o)
    );
}

/// The hand-checked ego-lane labels: (subset, skipped) of each record, counted from the file.
fn hard_ego_records(p: &Path) -> Vec<(&'static str, bool)> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let raw = v["raw_file"].as_str().unwrap();
            let skip = v["skip"].as_bool().unwrap_or(false);
            (lanes::tools::eval::tusimple::subset(raw), skip)
        })
        .collect()
}

#[test]
fn hard_ego_labels_resolve_and_are_counted_per_subset() {
    let Some(p) = data("labelled/udacity_hard_ego/labels.json") else {
        return;
    };
    let recs = hard_ego_records(&p);
    let count = |s: &str, skip: bool| recs.iter().filter(|r| r.0 == s && r.1 == skip).count();
    // What the label file holds (README: 14 challenge, 13 harder of which 1 skipped, 22 project).
    assert_eq!(
        (
            count("challenge", false),
            count("harder", false),
            count("harder", true),
            count("project", false)
        ),
        (14, 12, 1, 22)
    );
    let v = eval_json(&[&p.to_string_lossy(), "--camera", "calibration/udacity.yml"]);
    let t = &v["tusimple"];
    eprintln!("udacity_hard_ego subsets: {}", t["subsets"]);
    assert_eq!(v["failed"], json!([]), "every raw_file is found");
    assert_eq!(t["images"], json!(recs.iter().filter(|r| !r.1).count()));
    assert_eq!(t["skipped"], json!(1));
    for s in ["challenge", "harder", "project"] {
        let sub = &t["subsets"][s];
        assert_eq!(sub["images"], json!(count(s, false)), "{s}");
        assert_eq!(sub["skipped"], json!(count(s, true)), "{s}");
        for k in [
            "accuracy",
            "fp",
            "fn",
            "labelled_rows_accuracy",
            "labelled_rows_fp",
        ] {
            assert!((0.0..=1.0).contains(&f(&sub[k])), "{s} {k}: {sub}");
        }
    }
    // The per-image listing names each scored image's subset.
    let per = t["per_image"].as_array().unwrap();
    assert_eq!(per.len(), recs.iter().filter(|r| !r.1).count());
    assert!(per.iter().all(|i| i["subset"].is_string()));
    // The table shows the subsets; --frames adds one line per image.
    let o = lanes(&[
        "eval",
        &p.to_string_lossy(),
        "--camera",
        "calibration/udacity.yml",
        "--frames",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("labelled rows in the quad"), "{s}");
    for name in ["challenge", "harder", "project"] {
        assert!(s.lines().any(|l| l.trim_start().starts_with(name)), "{s}");
    }
    assert!(s.contains("hardchalprojvid_00.png"), "{s}");
}

#[test]
fn raw_file_root_flag_overrides_the_search() {
    let Some(p) = data("labelled/udacity_hard_ego/labels.json") else {
        return;
    };
    // A wrong root: every image is reported missing, counted, and the run exits 2.
    let d = tmp();
    let o = lanes(&[
        "eval",
        &p.to_string_lossy(),
        "--camera",
        "calibration/udacity.yml",
        "--root",
        &d.path().to_string_lossy(),
    ]);
    assert_one_line_error(&o, "not found");
    let root = crate::data_root().unwrap();
    let v = eval_json(&[
        &p.to_string_lossy(),
        "--camera",
        "calibration/udacity.yml",
        "--root",
        &root.to_string_lossy(),
    ]);
    assert_eq!(v["failed"], json!([]));
}

#[test]
fn negatives_share_matches_the_per_image_listing() {
    let d = tmp();
    let o = lanes(&["synth", "negatives", "-o", &d.path().to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let n = std::fs::read_dir(d.path()).unwrap().count();
    assert!(n >= 6, "{n} generated negatives");
    let v = eval_json(&["--negatives", &d.path().to_string_lossy()]);
    let neg = &v["negatives"];
    eprintln!("generated negatives: {}", neg["total"]);
    let per = neg["per_image"].as_array().unwrap();
    assert_eq!(per.len(), n);
    let reported = per
        .iter()
        .filter(|i| i["left"] == json!(true) || i["right"] == json!(true))
        .count();
    let total = &neg["total"];
    assert_eq!(total["images"], json!(n));
    assert_eq!(total["reported"], json!(reported));
    let share = f(&total["share"]);
    assert!((0.0..=1.0).contains(&share));
    assert!((share - reported as f64 / n as f64).abs() < 1e-12);
    // The table prints the same share.
    let o = lanes(&[
        "eval",
        "--negatives",
        &d.path().to_string_lossy(),
        "--frames",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains(&format!("{share:.3} ({reported}/{n})")), "{s}");
    let listed = s
        .lines()
        .filter(|l| l.contains(".png") && !l.trim_end().ends_with("none"))
        .count();
    assert_eq!(listed, reported, "{s}");
    // A missing negatives directory is a one-line error.
    assert_one_line_error(
        &lanes(&["eval", "--negatives", "no/such/dir"]),
        "no/such/dir",
    );
}

/// Issue "lanes you can trust": no lane on pictures without a road (the two chessboard sets
/// without a camera file, so all 33 sizes load, and the generated flat, noise, stripes and
/// flipped-road images), where the reference preset reports one on most of them.
#[test]
fn robust_default_reports_no_lane_on_negatives() {
    let (Some(udacity), Some(opencv)) =
        (data("udacity/camera_cal"), data("calibration/opencv_left"))
    else {
        return;
    };
    let d = tmp();
    let o = lanes(&["synth", "negatives", "-o", &d.path().to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dirs = [
        udacity.to_string_lossy().to_string(),
        opencv.to_string_lossy().to_string(),
        d.path().to_string_lossy().to_string(),
    ];
    let mut args = Vec::new();
    for dir in &dirs {
        args.extend(["--negatives", dir.as_str()]);
    }
    let v = eval_json(&args);
    let total = &v["negatives"]["total"];
    eprintln!("negatives, robust default: {total}");
    assert!(f(&total["images"]) >= 39.0, "{total}");
    assert_eq!(total["reported"], json!(0), "{}", v["negatives"]);
    let mut reference = vec!["--preset", "reference"];
    reference.extend(args.iter().copied());
    let r = eval_json(&reference);
    eprintln!("negatives, reference preset: {}", r["negatives"]["total"]);
    assert!(f(&r["negatives"]["total"]["share"]) > 0.5);
}

/// The Udacity board photos with their own camera file: the two 1281x721 photos among the
/// 1280x720 are used as `lanes calibrate` uses them (top-left kept, within 2 px), by `lanes eval
/// --negatives` (all 20 scored, none with a lane; they failed before) and by `lanes image`
/// (with a note).
#[test]
fn stills_a_pixel_off_the_camera_s_size_are_used_as_calibrate_uses_them() {
    let Some(boards) = data("udacity/camera_cal") else {
        return;
    };
    let cam = crate::repo_root().join("calibration/udacity.yml");
    let o = lanes(&[
        "eval",
        "--negatives",
        &boards.to_string_lossy(),
        "--camera",
        &cam.to_string_lossy(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let total = &v["negatives"]["sets"][0];
    assert_eq!(
        (total["images"].as_u64(), total["reported"].as_u64()),
        (Some(20), Some(0)),
        "{v}"
    );
    let d = tmp();
    let o = lanes(&[
        "image",
        "--camera",
        &cam.to_string_lossy(),
        &boards.join("calibration7.jpg").to_string_lossy(),
        "-o",
        &d.path().to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("image is 1281x721, analysed as 1280x720"),
        "{}",
        stderr(&o)
    );
    assert!(d.path().join("calibration7_overlay.jpg").exists());
}

/// Issue "lanes you can trust": the hand-checked ego labels, per subset, on the labelled rows
/// inside the quad. Measured at this commit: challenge 0.943 (FP 0.036), harder 0.808 (FP
/// 0.042), project/test 0.977 (FP 0.000); the reference preset: 0.645 (0.036), 0.616 (0.542),
/// 1.000 (0.000). The bounds are the issue's targets (one frame more lost on a subset fails).
#[test]
fn robust_default_on_the_hard_ego_labels_per_subset() {
    let Some(p) = data("labelled/udacity_hard_ego/labels.json") else {
        return;
    };
    let v = eval_json(&[&p.to_string_lossy(), "--camera", "calibration/udacity.yml"]);
    let subs = &v["tusimple"]["subsets"];
    eprintln!("udacity_hard_ego, robust default: {subs}");
    let acc = |s: &str| f(&subs[s]["labelled_rows_accuracy"]);
    let fp = |s: &str| f(&subs[s]["labelled_rows_fp"]);
    assert!(
        acc("challenge") >= 0.90 && fp("challenge") <= 0.05,
        "{subs}"
    );
    assert!(acc("project") >= 0.95 && fp("project") <= 0.05, "{subs}");
    assert!(acc("harder") >= 0.75 && fp("harder") <= 0.10, "{subs}");
}

/// Another camera through `lanes perspective`: the P1 challenge frames (720x576) with
/// `config/p1.toml`. Measured: labelled-rows accuracy 0.744, FP 0.000 (the earlier config,
/// whose quad spanned two lanes, gave 0.050).
#[test]
fn robust_default_on_the_p1_camera_with_its_perspective_config() {
    let Some(p) = data("labelled/udacity_hard_ego/labels_p1_challenge.json") else {
        return;
    };
    let v = eval_json(&[&p.to_string_lossy(), "--config", "config/p1.toml"]);
    let s = &v["tusimple"]["subsets"]["p1"];
    eprintln!("p1 labels, robust default: {s}");
    assert!(f(&s["labelled_rows_accuracy"]) >= 0.65, "{s}");
    assert!(f(&s["labelled_rows_fp"]) <= 0.10, "{s}");
}

/// Labelled stills of other cameras scored with no config: each set's stills get the road
/// geometry found in them, as `lanes image` gives them (`geometry::stills`), and the scores are
/// those of a geometry made for the camera. Before, the built-in Udacity geometry was used:
/// the TuSimple mask set 0.000 / 0.000 (nothing predicted), the P1 labels 0.300 (FP 0.100),
/// CULane precision 0.548 (17 TP, 14 FP). Measured 2026-12-05: 0.963 / 0.750, 1.000 (FP 0.000),
/// CULane 0.839 (26 TP, 5 FP), recall 0.464.
#[test]
fn labelled_stills_of_other_cameras_are_scored_with_the_geometry_found_in_them() {
    let (Some(masks), Some(p1), Some(culane)) = (
        data("labelled/lanenet_tusimple_example/training_data_example"),
        data("labelled/udacity_hard_ego/labels_p1_challenge.json"),
        data("labelled/culane_sample/driver_161_90frame"),
    ) else {
        return;
    };
    let run = |p: &Path| {
        let o = lanes(&["eval", &p.to_string_lossy(), "--json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        (v, stderr(&o))
    };
    let (v, err) = run(&masks);
    assert!(
        err.contains(
            "6 stills of 1280x720: another camera than the built-in geometry's: geometry found in"
        ),
        "{err}"
    );
    let m = &v["masks"];
    eprintln!("TuSimple masks, no config: {m}");
    assert!(f(&m["pred_near_mask"]) >= 0.90, "{m}");
    assert!(f(&m["mask_near_pred"]) >= 0.70, "{m}");
    let (v, err) = run(&p1);
    assert!(
        err.contains("10 stills of 720x576: geometry found in"),
        "{err}"
    );
    let s = &v["tusimple"]["subsets"]["p1"];
    eprintln!("P1 labels, no config: {s}");
    assert!(f(&s["labelled_rows_accuracy"]) >= 0.95, "{s}");
    assert!(f(&s["labelled_rows_fp"]) <= 0.05, "{s}");
    // Each CULane sequence (a folder) is one camera: its own search.
    let (v, err) = run(&culane);
    assert_eq!(
        err.matches("15 stills of 1640x590: geometry found in")
            .count(),
        2,
        "{err}"
    );
    let c = &v["culane"];
    eprintln!("CULane, no config: {c}");
    assert!(f(&c["precision"]) >= 0.75, "{c}");
    assert!(f(&c["recall"]) >= 0.40, "{c}");
}
