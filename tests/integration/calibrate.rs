//! Integration tests: `lanes calibrate` and `lanes undistort` on real sets (Udacity, OpenCV's
//! own), on rendered views of a known camera, and on bad input.

use super::*;
use lanes::base::camera::Camera;
use lanes::tools::synth::chessboard::{self, ChessboardView};
use serde_json::Value;

/// Udacity reference (OpenCV's sector-based detector, 18 boards): fx 1160.1, fy 1155.6.
const UDACITY_FX: f64 = 1160.1;
const UDACITY_FY: f64 = 1155.6;

/// Run `lanes calibrate ... --json` and parse its one JSON object.
fn calibrate_json(args: &[&str]) -> (Output, Value) {
    let mut all = vec!["calibrate"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = lanes(&all);
    assert!(o.status.success(), "lanes calibrate failed: {}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        out.trim().lines().count(),
        1,
        "one JSON line on stdout: {out}"
    );
    let v: Value = serde_json::from_str(out.trim()).expect("JSON summary");
    (o, v)
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// OpenCV's sample set: Debian's opencv-doc (left01..left14, no left10), else the shared copy.
fn opencv_left_images() -> Option<Vec<String>> {
    let deb = Path::new("/usr/share/doc/opencv-doc/examples/data");
    let pick = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                        n.len() == 10 && n.starts_with("left") && n.ends_with(".jpg")
                    })
                    .map(|p| p.display().to_string())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let v = pick(deb);
    if v.len() >= 12 {
        return Some(v);
    }
    data("calibration/opencv_left").map(|d| pick(&d))
}

/// Write rendered views as PNG files into `dir`; returns the views.
fn write_views(dir: &Path, camera: &Camera, n: usize, seed: u64) -> Vec<ChessboardView> {
    let views = chessboard::render_views(camera, (9, 6), 1.0, n, seed).expect("render");
    for (i, v) in views.iter().enumerate() {
        v.frame
            .write(&dir.join(format!("view{i:02}.png")))
            .expect("write view");
    }
    views
}

#[test]
fn udacity_set_uses_all_20_boards_and_matches_reference_focal_length() {
    let Some(dir) = data("udacity/camera_cal") else {
        return;
    };
    let t = tmp();
    let cam = t.path().join("udacity.yml");
    let corners = t.path().join("corners");
    let (o, v) = calibrate_json(&[
        dir.to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        cam.to_str().unwrap(),
        "--corners-dir",
        corners.to_str().unwrap(),
    ]);
    let k = &v["camera_matrix"];
    let (fx, fy) = (k[0][0].as_f64().unwrap(), k[1][1].as_f64().unwrap());
    eprintln!(
        "udacity: used {} of {}, sub-grids {}, RMS {:.3} px, fx {fx:.1} fy {fy:.1} cx {:.1} cy {:.1}, {:.2} s",
        v["used"],
        v["inputs"],
        v["sub_grids"],
        f(&v, "avg_reprojection_error"),
        k[0][2].as_f64().unwrap(),
        k[1][2].as_f64().unwrap(),
        f(&v, "seconds")
    );
    assert_eq!(v["inputs"], 20);
    assert_eq!(v["used"], 20, "every board used: {}", stderr(&o));
    assert!(
        v["sub_grids"].as_u64().unwrap() >= 2,
        "calibration1 and calibration5 show part of the board"
    );
    assert!(
        (fx / UDACITY_FX - 1.0).abs() < 0.015,
        "fx {fx} vs {UDACITY_FX}"
    );
    assert!(
        (fy / UDACITY_FY - 1.0).abs() < 0.015,
        "fy {fy} vs {UDACITY_FY}"
    );
    assert!(f(&v, "avg_reprojection_error") < 1.0);
    // The two 1281x721 images are used and named as off-size.
    let off: Vec<&str> = v["off_size"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.as_str())
        .collect();
    assert_eq!(off, vec!["calibration7.jpg", "calibration15.jpg"]);
    // The camera file reads back with OpenCV's FileStorage and agrees with the JSON.
    let (c, info) = Camera::load_with_info(&cam).unwrap();
    assert_eq!((c.width, c.height), (1280, 720));
    assert!((c.fx() - fx).abs() < 1e-6);
    assert_eq!(info.images.len(), 20);
    assert!(
        info.images.iter().all(|n| !n.contains('/')),
        "plain file names: {:?}",
        info.images
    );
    assert_eq!(info.per_view_reprojection_errors.len(), 20);
    assert_eq!((info.board_width, info.board_height), (9, 6));
    // Corner pictures.
    assert_eq!(std::fs::read_dir(&corners).unwrap().count(), 20);
    assert!(corners.join("calibration1_corners.jpg").exists());
}

#[test]
fn udacity_table_names_detector_grid_and_error_per_image() {
    let Some(dir) = data("udacity/camera_cal") else {
        return;
    };
    let t = tmp();
    let cam = t.path().join("c.yml");
    let o = lanes(&[
        "calibrate",
        dir.to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        cam.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    eprintln!("{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("calibration1.jpg"))
        .expect("row for calibration1");
    assert!(row.contains("9x5 (part)"), "{row}");
    assert!(out.contains("boards: 20 of 20 images used"));
    assert!(out.contains("RMS "));
    assert!(out.lines().any(|l| l.starts_with("time: ")));
}

#[test]
fn committed_udacity_camera_has_opencv_sample_fields() {
    let p = repo_root().join("calibration/udacity.yml");
    let text = std::fs::read_to_string(&p).expect("calibration/udacity.yml is committed");
    for field in [
        "image_width",
        "image_height",
        "board_width",
        "board_height",
        "square_size",
        "camera_matrix",
        "distortion_coefficients",
        "avg_reprojection_error",
        "per_view_reprojection_errors",
        "images",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{field}:"))),
            "field {field} in {}",
            p.display()
        );
    }
    let (c, info) = Camera::load_with_info(&p).unwrap();
    assert_eq!((c.width, c.height), (1280, 720));
    assert!((c.fx() / UDACITY_FX - 1.0).abs() < 0.015);
    assert!((c.fy() / UDACITY_FY - 1.0).abs() < 0.015);
    assert_eq!(info.images.len(), 20);
    assert_eq!(info.images[0], "calibration1.jpg");
}

#[test]
fn opencv_sample_set_rms_is_under_0_45_px() {
    let Some(files) = opencv_left_images() else {
        return;
    };
    let t = tmp();
    let cam = t.path().join("left.yml");
    let mut args: Vec<&str> = files.iter().map(|s| s.as_str()).collect();
    args.extend_from_slice(&["--board", "9x6", "-o", cam.to_str().unwrap()]);
    let (_, v) = calibrate_json(&args);
    let rms = f(&v, "avg_reprojection_error");
    let k = &v["camera_matrix"];
    eprintln!(
        "opencv set: {} of {} used, RMS {rms:.3} px, fx {:.1} fy {:.1} cx {:.1} cy {:.1}, dist {:?}",
        v["used"],
        v["inputs"],
        k[0][0].as_f64().unwrap(),
        k[1][1].as_f64().unwrap(),
        k[0][2].as_f64().unwrap(),
        k[1][2].as_f64().unwrap(),
        v["distortion_coefficients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| format!("{:.5}", d.as_f64().unwrap()))
            .collect::<Vec<_>>()
    );
    assert_eq!(v["used"], v["inputs"]);
    assert_eq!(
        (v["image_width"].as_i64(), v["image_height"].as_i64()),
        (Some(640), Some(480))
    );
    assert!(rms < 0.45, "RMS {rms}");
}

#[test]
fn synthetic_camera_is_recovered() {
    let truth = chessboard::reference_camera();
    let t = tmp();
    let views = write_views(t.path(), &truth, 20, 2024);
    assert_eq!(views.len(), 20);
    let cam = t.path().join("cam.yml");
    let (_, v) = calibrate_json(&[
        t.path().to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        cam.to_str().unwrap(),
    ]);
    assert_eq!(v["used"], 20);
    let c = Camera::load(&cam).unwrap();
    let efx = c.fx() / truth.fx() - 1.0;
    let efy = c.fy() / truth.fy() - 1.0;
    let (ecx, ecy) = (c.cx() - truth.cx(), c.cy() - truth.cy());
    let ek1 = c.dist[0] - truth.dist[0];
    eprintln!(
        "synthetic: RMS {:.3} px; fx {:+.3}% fy {:+.3}% cx {ecx:+.2} px cy {ecy:+.2} px k1 {ek1:+.4}",
        f(&v, "avg_reprojection_error"),
        100.0 * efx,
        100.0 * efy
    );
    assert!(efx.abs() < 0.005, "fx {} vs {}", c.fx(), truth.fx());
    assert!(efy.abs() < 0.005, "fy {} vs {}", c.fy(), truth.fy());
    assert!(ecx.abs() < 2.0, "cx {} vs {}", c.cx(), truth.cx());
    assert!(ecy.abs() < 2.0, "cy {} vs {}", c.cy(), truth.cy());
    assert!(ek1.abs() < 0.02, "k1 {} vs {}", c.dist[0], truth.dist[0]);
}

#[test]
fn undistort_straightens_synthetic_views() {
    use lanes::base::frame::BgrFrame;
    use lanes::geometry::calibrate::detect_grid;
    use lanes::tools::synth::chessboard::{inner_corners, project};
    let truth = chessboard::reference_camera();
    let t = tmp();
    let views = write_views(t.path(), &truth, 3, 5);
    let cam = t.path().join("truth.yml");
    truth.save(&cam, None).unwrap();
    let out = t.path().join("out");
    let o = lanes(&[
        "undistort",
        "--camera",
        cam.to_str().unwrap(),
        t.path().join("view00.png").to_str().unwrap(),
        t.path().join("view01.png").to_str().unwrap(),
        t.path().join("view02.png").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Undistorted corners must sit where a distortion-free camera would put them.
    let pinhole = Camera {
        dist: vec![0.0; 5],
        ..truth.clone()
    };
    for (i, v) in views.iter().enumerate() {
        let und = BgrFrame::read(&out.join(format!("view{i:02}.png"))).unwrap();
        assert_eq!((und.width(), und.height()), (1280, 720));
        let d = detect_grid(&und.to_gray().unwrap(), 9, 6)
            .unwrap()
            .expect("board in undistorted view");
        let ideal = project(&pinhole, &v.pose, &inner_corners((9, 6), 1.0)).unwrap();
        let n = ideal.len();
        let err = |rev: bool| {
            (0..n)
                .map(|j| {
                    let p = d.corners.get(if rev { n - 1 - j } else { j }).unwrap();
                    ((p.x as f64 - ideal[j][0]).powi(2) + (p.y as f64 - ideal[j][1]).powi(2)).sqrt()
                })
                .sum::<f64>()
                / n as f64
        };
        let e = err(false).min(err(true));
        eprintln!("undistorted view {i}: mean corner error {e:.3} px");
        assert!(e < 0.3, "view {i}: mean corner error {e:.3} px");
    }
}

#[test]
fn undistort_rejects_an_image_of_another_size() {
    let t = tmp();
    let cam = t.path().join("c.yml");
    chessboard::reference_camera().save(&cam, None).unwrap();
    let small = lanes::base::frame::BgrFrame::zeros(640, 480).unwrap();
    let img = t.path().join("small.png");
    small.write(&img).unwrap();
    let o = lanes(&[
        "undistort",
        "--camera",
        cam.to_str().unwrap(),
        img.to_str().unwrap(),
        "-o",
        t.path().join("o").to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "small.png: frames are 640x480 but the camera file");
    assert!(stderr(&o).contains("c.yml is for 1280x720: calibrate this camera at 640x480"));
}

#[test]
fn camera_file_with_missing_or_malformed_field_is_named() {
    let t = tmp();
    let img = t.path().join("a.png");
    lanes::base::frame::BgrFrame::zeros(64, 48)
        .unwrap()
        .write(&img)
        .unwrap();
    // `lanes undistort --camera CAMERA img -o out`.
    let undistort_with = |camera: &std::path::Path| {
        let out = t.path().join("o");
        lanes(&[
            "undistort",
            "--camera",
            camera.to_str().unwrap(),
            img.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let missing = t.path().join("missing.yml");
    std::fs::write(&missing, "%YAML:1.0\n---\nimage_width: 64\nimage_height: 48\ndistortion_coefficients: !!opencv-matrix\n   rows: 5\n   cols: 1\n   dt: d\n   data: [ 0., 0., 0., 0., 0. ]\n").unwrap();
    let o = undistort_with(&missing);
    assert_one_line_error(&o, "`camera_matrix` is missing");
    let bad = t.path().join("bad.yml");
    std::fs::write(&bad, "%YAML:1.0\n---\nimage_width: 64\nimage_height: 48\ncamera_matrix: !!opencv-matrix\n   rows: 2\n   cols: 2\n   dt: d\n   data: [ 1., 0., 0., 1. ]\ndistortion_coefficients: !!opencv-matrix\n   rows: 5\n   cols: 1\n   dt: d\n   data: [ 0., 0., 0., 0., 0. ]\n").unwrap();
    let o = undistort_with(&bad);
    assert_one_line_error(&o, "`camera_matrix` is 2x2, expected 3x3");
    let no_width = t.path().join("nowidth.yml");
    std::fs::write(&no_width, "%YAML:1.0\n---\nimage_height: 48\n").unwrap();
    let o = undistort_with(&no_width);
    assert_one_line_error(&o, "`image_width` is missing");
}

/// A dashcam records video, not photos: `lanes calibrate` samples frames from a video of the
/// board. The Udacity set's 20 photos, each scaled to 1280x720 (two are 1281x721), calibrate
/// as stills; made into a 2 fps H.264 video (crf 18), every one of its 20 frames is sampled,
/// every board is found, and the camera is within 0.5% (focal lengths), 3 px (principal point)
/// and 0.01 (k1) of the stills' calibration. Measured: fx 1161.7 against 1161.6, k1 -0.2727
/// against -0.2710.
#[test]
fn a_video_of_the_board_calibrates_as_its_photos_do() {
    let Some(dir) = data("udacity/camera_cal") else {
        return;
    };
    let t = tmp();
    let frames = t.path().join("frames");
    std::fs::create_dir(&frames).unwrap();
    let mut photos: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jpg"))
        .collect();
    photos.sort();
    assert_eq!(photos.len(), 20);
    for (i, p) in photos.iter().enumerate() {
        let png = frames.join(format!("{i:02}.png"));
        ffmpeg(&[
            "-i".as_ref(),
            p.as_os_str(),
            "-vf".as_ref(),
            "scale=1280:720".as_ref(),
            png.as_os_str(),
        ]);
    }
    let video = t.path().join("board.mp4");
    let pattern = frames.join("%02d.png");
    ffmpeg(&[
        "-framerate".as_ref(),
        "2".as_ref(),
        "-i".as_ref(),
        pattern.as_os_str(),
        "-c:v".as_ref(),
        "libx264".as_ref(),
        "-crf".as_ref(),
        "18".as_ref(),
        "-pix_fmt".as_ref(),
        "yuv420p".as_ref(),
        video.as_os_str(),
    ]);
    let run = |input: &Path, out: &str| {
        calibrate_json(&[
            input.to_str().unwrap(),
            "--board",
            "9x6",
            "-o",
            t.path().join(out).to_str().unwrap(),
        ])
    };
    let (_, stills) = run(&frames, "stills.yml");
    let (o, from_video) = run(&video, "video.yml");
    assert!(
        stderr(&o).contains("board.mp4: 20 frames sampled"),
        "{}",
        stderr(&o)
    );
    assert_eq!(from_video["used"], 20, "{from_video}");
    let (a, b) = (&stills["camera_matrix"], &from_video["camera_matrix"]);
    let at = |m: &Value, r: usize, c: usize| m[r][c].as_f64().unwrap();
    for (r, c) in [(0, 0), (1, 1)] {
        let (x, y) = (at(a, r, c), at(b, r, c));
        assert!(
            (y / x - 1.0).abs() < 0.005,
            "focal {y} from the video, {x} from stills"
        );
    }
    for (r, c) in [(0, 2), (1, 2)] {
        let (x, y) = (at(a, r, c), at(b, r, c));
        assert!(
            (y - x).abs() < 3.0,
            "principal point {y} from the video, {x} from stills"
        );
    }
    let k1 = |v: &Value| v["distortion_coefficients"][0].as_f64().unwrap();
    assert!(
        (k1(&stills) - k1(&from_video)).abs() < 0.01,
        "k1 {} from the video, {} from stills",
        k1(&from_video),
        k1(&stills)
    );
}

#[test]
fn empty_missing_and_non_image_inputs_are_one_line_errors() {
    let t = tmp();
    let out = t.path().join("c.yml");
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = lanes(&[
        "calibrate",
        empty.to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "no images");
    let o = lanes(&[
        "calibrate",
        t.path().join("nope").to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "nope: file not found");
    let txt = t.path().join("notes.txt");
    std::fs::write(&txt, "not an image").unwrap();
    let o = lanes(&[
        "calibrate",
        txt.to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "notes.txt: not an image file");
    // A file named .jpg that is not one, alone: nothing readable.
    let fake = t.path().join("fake.jpg");
    std::fs::write(&fake, "not a jpeg").unwrap();
    let o = lanes(&[
        "calibrate",
        fake.to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "fake.jpg");
    assert!(!out.exists());
}

#[test]
fn no_board_in_any_image_lists_files_and_grids_tried() {
    let t = tmp();
    for name in ["gray.png", "white.png"] {
        let mut m = lanes::base::frame::BgrFrame::zeros(320, 240).unwrap();
        let v = if name == "gray.png" { 128.0 } else { 255.0 };
        m.mat_mut()
            .set_to_def(&opencv::core::Scalar::all(v))
            .unwrap();
        m.write(&t.path().join(name)).unwrap();
    }
    let o = lanes(&[
        "calibrate",
        t.path().to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        t.path().join("c.yml").to_str().unwrap(),
    ]);
    assert_one_line_error(
        &o,
        "no chessboard found in any of 2 images: gray.png, white.png",
    );
    assert!(stderr(&o).contains("9x6, 8x6, 9x5"), "{}", stderr(&o));
}

#[test]
fn image_of_another_size_is_named() {
    let truth = chessboard::reference_camera();
    let t = tmp();
    write_views(t.path(), &truth, 3, 9);
    lanes::base::frame::BgrFrame::zeros(640, 480)
        .unwrap()
        .write(&t.path().join("odd.png"))
        .unwrap();
    let calibrate = || {
        lanes(&[
            "calibrate",
            t.path().to_str().unwrap(),
            "--board",
            "9x6",
            "-o",
            t.path().join("c.yml").to_str().unwrap(),
        ])
    };
    assert_one_line_error(
        &calibrate(),
        "odd.png: image is 640x480, the other images are 1280x720",
    );
    // Photos of the same camera turned upright (a phone held in portrait) are named together,
    // with what to do, before any other size.
    for n in ["up1.png", "up2.png"] {
        lanes::base::frame::BgrFrame::zeros(720, 1280)
            .unwrap()
            .write(&t.path().join(n))
            .unwrap();
    }
    let o = calibrate();
    assert_one_line_error(
        &o,
        "2 of 6 readable images are 720x1280, the others 1280x720: the same camera turned",
    );
    assert!(
        stderr(&o).contains("turn them all one way: up1.png, up2.png"),
        "{}",
        stderr(&o)
    );
    assert!(!t.path().join("c.yml").exists());
}

#[test]
fn unreadable_image_among_good_ones_is_skipped_and_counted() {
    let truth = chessboard::reference_camera();
    let t = tmp();
    write_views(t.path(), &truth, 8, 77);
    std::fs::write(t.path().join("broken.png"), b"\x89PNG but not really").unwrap();
    let cam = t.path().join("c.yml");
    let (o, v) = calibrate_json(&[
        t.path().to_str().unwrap(),
        "--board",
        "9x6",
        "-o",
        cam.to_str().unwrap(),
    ]);
    assert_eq!(v["unreadable"], 1);
    assert_eq!(v["used"], 8);
    assert_eq!(v["inputs"], 9);
    assert!(
        stderr(&o).contains("warning: ") && stderr(&o).contains("broken.png"),
        "{}",
        stderr(&o)
    );
    let (_, info) = Camera::load_with_info(&cam).unwrap();
    assert!(!info.images.iter().any(|n| n == "broken.png"));
}

/// The usual --board mistakes on the Udacity boards (9x6 inner corners): 10x7 counts the
/// squares, 7x5 fits inside the board at several places, 12x8 is larger than the board in every
/// photo, 19x16 so large that no sub-grid of it could be used (that one searched sub-grids for
/// minutes). All are caught by the board probe, named in a warning that gives 9x6, and
/// calibrated as 9x6 (the reference focal length). `--board-as-given` keeps the size given.
#[test]
fn wrong_board_size_on_udacity_set_is_named_and_9x6_is_used() {
    let Some(dir) = data("udacity/camera_cal") else {
        return;
    };
    let t = tmp();
    for (given, why) in [
        ("10x7", "counts its squares"),
        ("7x5", "several places"),
        ("12x8", "not a whole 12x8"),
        ("19x16", "304 inner corners"),
    ] {
        let cam = t.path().join(format!("{given}.yml"));
        let (o, v) = calibrate_json(&[
            dir.to_str().unwrap(),
            "--board",
            given,
            "-o",
            cam.to_str().unwrap(),
        ]);
        let err = stderr(&o);
        assert!(
            err.contains(&format!("--board {given} does not fit"))
                && err.contains("show a 9x6 board")
                && err.contains("calibrating with --board 9x6")
                && err.contains(why),
            "{err}"
        );
        let k = &v["camera_matrix"];
        let (fx, fy) = (k[0][0].as_f64().unwrap(), k[1][1].as_f64().unwrap());
        eprintln!(
            "--board {given}: fx {fx:.1} fy {fy:.1}, {:.2} s",
            f(&v, "seconds")
        );
        assert!((fx / UDACITY_FX - 1.0).abs() < 0.01, "fx {fx}");
        assert!((fy / UDACITY_FY - 1.0).abs() < 0.01, "fy {fy}");
        assert!(!err.contains("RMS reprojection error"), "{err}");
    }
    // --board-as-given skips the probe: 10x7 full boards only, on two photos, none found.
    let o = lanes(&[
        "calibrate",
        dir.join("calibration2.jpg").to_str().unwrap(),
        dir.join("calibration3.jpg").to_str().unwrap(),
        "--board",
        "10x7",
        "--board-as-given",
        "--no-sub-grids",
        "-o",
        t.path().join("as_given.yml").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(
        !o.status.success() && !err.contains("does not fit"),
        "{err}"
    );
    assert!(
        err.contains("no chessboard found in any of 2 images") && err.contains("grids 10x7"),
        "{err}"
    );
}

/// A board photo a pixel larger than the others (1281x721 among 1280x720) is used by
/// `lanes calibrate` within --size-tolerance; `lanes undistort` with the camera file applies the
/// same rule (undistorted as 1280x720, with a note) instead of refusing it.
#[test]
fn undistort_uses_a_near_size_photo_as_calibrate_does() {
    let t = tmp();
    let cam = t.path().join("c.yml");
    chessboard::reference_camera().save(&cam, None).unwrap();
    let img = t.path().join("big.png");
    lanes::base::frame::BgrFrame::zeros(1281, 721)
        .unwrap()
        .write(&img)
        .unwrap();
    let out = t.path().join("o");
    let args = |tol: &str| {
        lanes(&[
            "undistort",
            "--camera",
            cam.to_str().unwrap(),
            img.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--size-tolerance",
            tol,
        ])
    };
    let o = args("2");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("big.png: image is 1281x721, undistorted as 1280x720"),
        "{err}"
    );
    let m = lanes::base::frame::BgrFrame::read(&out.join("big.png")).unwrap();
    assert_eq!((m.width(), m.height()), (1280, 720));
    let o = args("0");
    assert_one_line_error(&o, "big.png: frames are 1281x721 but the camera file");
}
