//! `lanes events` and `lanes report` on a rendered synthetic drive with a drift over the right
//! line and a lane change to the right (truth from `lanes synth video`), bad telemetry, a batch
//! folder, and the report in headless Chromium.
//!
//! Tolerance: every true event is found with the same kind and side, its start within 0.2 s
//! (and a departure's end too), and no other event is found.

use crate::tune::browser::{browser, Driver};
use crate::{assert_one_line_error, bgr_frames, lanes, stderr, stdout, synth_truth, tmp};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A 640x360 version of the synthetic camera (fast to render).
const CAMERA_640: &str = "%YAML:1.0\n---\nimage_width: 640\nimage_height: 360\ncamera_matrix: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n   data: [ 500., 0., 320.75, 0., 500., 179.25, 0., 0., 1. ]\ndistortion_coefficients: !!opencv-matrix\n   rows: 5\n   cols: 1\n   dt: d\n   data: [ -0.25, 0.07, 0.0004, -0.0003, 0. ]\n";

fn ok(o: &std::process::Output) {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The drive, rendered once per test run: 10 s at 25 fps, a drift over the right line from
/// 0.5 s, a lane change to the right from 6.5 s; analysed with `lanes video --telemetry
/// --events --report`. Returns the folder.
fn drive() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tmp().keep();
        let cam = d.join("cam640.yml");
        std::fs::write(&cam, CAMERA_640).unwrap();
        ok(&lanes(&[
            "synth",
            "video",
            "-o",
            s(&d),
            "--camera",
            s(&cam),
            "--seconds",
            "10",
            "--drift",
            "0",
            "--offset",
            "0",
            "--drift-over",
            "0.5",
            "--lane-change",
            "6.5",
            "--supersample",
            "1",
        ]));
        ok(&telemetry_of_drive(
            &d,
            &d.join("t.jsonl"),
            &[
                "--events",
                s(&d.join("video_events.json")),
                "--report",
                s(&d.join("video_report.html")),
            ],
        ));
        d
    })
}

/// `lanes video` on the synthetic drive in `d` with its camera and config, `--no-render`,
/// telemetry into `telemetry` and `extra` arguments.
fn telemetry_of_drive(d: &Path, telemetry: &Path, extra: &[&str]) -> std::process::Output {
    let (cam, cfg, clip) = (
        d.join("camera.yml"),
        d.join("synthetic_drive.toml"),
        d.join("synthetic_drive.mp4"),
    );
    let mut args = vec!["video", "--camera", s(&cam), "--config", s(&cfg), s(&clip)];
    args.extend(["--no-render", "--telemetry", s(telemetry)]);
    args.extend_from_slice(extra);
    lanes(&args)
}

fn truth_events(d: &Path) -> Vec<Value> {
    synth_truth(d)["events"].as_array().unwrap().clone()
}

/// Equal JSON, numbers within 1e-9 (a number read back from JSON Lines may differ in the
/// last bit).
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() <= 1e-9
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| close(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}

fn side(e: &Value) -> &str {
    e.get("side")
        .or_else(|| e.get("direction"))
        .and_then(|v| v.as_str())
        .unwrap_or("")
}

#[test]
fn synthetic_drive_events_match_the_truth_within_a_fifth_of_a_second() {
    let d = drive();
    let truth = truth_events(d);
    let kinds: Vec<&str> = truth.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["lane_departure", "lane_change"], "{truth:#?}");
    let o = lanes(&[
        "events",
        "--json",
        "--config",
        s(&d.join("synthetic_drive.toml")),
        s(&d.join("t.jsonl")),
    ]);
    ok(&o);
    let found: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    println!("truth: {truth:#?}\nfound: {found:#?}");
    assert_eq!(found.len(), truth.len(), "no extra or missing events");
    for (t, f) in truth.iter().zip(&found) {
        assert_eq!(t["kind"], f["kind"]);
        assert_eq!(side(t), side(f));
        let dt = |k: &str| (t[k].as_f64().unwrap() - f[k].as_f64().unwrap()).abs();
        assert!(dt("start_s") <= 0.2, "start: {t} vs {f}");
        if t["kind"] == "lane_departure" {
            assert!(dt("end_s") <= 0.2, "end: {t} vs {f}");
            let v = f["lateral_speed_mps"].as_f64().unwrap();
            assert!((0.3..1.5).contains(&v), "lateral speed {v}");
        }
    }
    // `lanes video --events` wrote the same events.
    let from_video: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(d.join("video_events.json")).unwrap())
            .unwrap();
    assert!(
        close(
            &Value::from(from_video.clone()),
            &Value::from(found.clone())
        ),
        "{from_video:?}"
    );
    // The text form lists them with counts.
    let o = lanes(&["events", s(&d.join("t.jsonl"))]);
    ok(&o);
    let text = stdout(&o);
    assert!(
        text.contains("2 events: 0 lane_lost, 1 lane_change, 1 lane_departure, 0 tight_bend"),
        "{text}"
    );
    // The CSV telemetry `lanes video` writes gives the same events (it was refused: "no
    // telemetry record (251 lines did not parse as `lanes video` JSON Lines)").
    let csv = d.join("t_events.csv");
    ok(&telemetry_of_drive(d, &csv, &[]));
    let o = lanes(&[
        "events",
        "--json",
        "--config",
        s(&d.join("synthetic_drive.toml")),
        s(&csv),
    ]);
    ok(&o);
    // The same within a last digit: serde_json's float parsing, unlike Rust's, may round the
    // JSON Lines' numbers one unit off.
    let from_csv: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        close(&Value::from(from_csv.clone()), &Value::from(found.clone())),
        "{from_csv:?}"
    );
}

#[test]
fn report_opens_in_chromium_with_plots_thumbnails_and_no_console_errors() {
    let d = drive();
    let out = d.join("report.html");
    let o = lanes(&[
        "report",
        s(&d.join("t.jsonl")),
        "-o",
        s(&out),
        "--video",
        s(&d.join("synthetic_drive.mp4")),
    ]);
    ok(&o);
    assert!(
        stderr(&o).contains("2 events, 2 thumbnails"),
        "{}",
        stderr(&o)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    for needle in ["<script src", "<link ", "@import", "url(http"] {
        assert!(!html.contains(needle), "external resource {needle}");
    }
    assert_eq!(html.matches("data:image/jpeg;base64,").count(), 2);
    // `lanes video --report` wrote a report with the same events, and where its geometry
    // came from (the config's); a report from telemetry alone cannot know.
    let from_video = std::fs::read_to_string(d.join("video_report.html")).unwrap();
    assert_eq!(from_video.matches("data:image/jpeg;base64,").count(), 2);
    assert!(from_video.contains("<td>road geometry</td><td>fixed, from the [perspective] of "));
    assert!(from_video.contains("synthetic_drive.toml</td>"));
    assert!(html.contains("<td>road geometry</td><td>not recorded</td>"));
    let (driver, chrome) = match browser() {
        Ok(p) => p,
        Err(why) => {
            if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
                panic!("browser test cannot run under CI: {why}");
            }
            eprintln!("SKIP report browser test: {why}");
            return;
        }
    };
    let t = tmp();
    let drv = Driver::start(&driver, &chrome, &t.path().join("profile"));
    drv.goto(&format!("file://{}", out.display()));
    drv.wait_for("document.readyState === 'complete'", "the page");
    // Seven plots (the pitch's too: the telemetry has it), each with data lines of many points.
    let svgs = drv.js("return document.querySelectorAll('div.plot svg').length;");
    assert_eq!(svgs, 7);
    let points = drv.js(
        "return [...document.querySelectorAll('div.plot svg')].map(s => Math.max(0, ...[...s.querySelectorAll('polyline')].map(p => p.points.numberOfItems)));",
    );
    let points: Vec<i64> = points
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    println!("largest polyline per plot: {points:?}");
    // The offset, curvature, lane width, pitch and confidence plots have a point per frame.
    for p in &points[1..6] {
        assert!(*p >= 100, "{points:?}");
    }
    // The thumbnails decode.
    let imgs = drv.wait_for(
        "[...document.images].every(i => i.complete) && [...document.images].map(i => [i.naturalWidth, i.naturalHeight])",
        "the thumbnails",
    );
    assert_eq!(imgs, serde_json::json!([[320, 180], [320, 180]]));
    let rows = drv.js("return document.querySelectorAll('table.events tr').length;");
    assert_eq!(rows, 3);
    let log = drv.console_log();
    let bad: Vec<&Value> = log
        .iter()
        .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
        .collect();
    assert!(bad.is_empty(), "console: {bad:?}");
    if let Ok(path) = std::env::var("LANES_REPORT_SCREENSHOT") {
        drv.js("window.scrollTo(0, 0);");
        drv.screenshot(Path::new(&path));
        eprintln!("screenshot written to {path}");
    }
    // A batch folder: two drives and a broken one; the index sorts by a column on a click.
    let b = t.path().join("batch");
    let text = std::fs::read_to_string(d.join("t.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (rel, body) in [
        ("a/x.mp4", lines.join("\n")),
        ("b/deeper/y.mp4", lines[..120].join("\n")),
        ("c/broken.mp4", String::new()),
    ] {
        let dir = b.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("telemetry.jsonl"), body).unwrap();
    }
    // `lanes batch`'s summary.json names the input video: that drive's report has thumbnails.
    let summary = serde_json::json!({
        "rel": "a/x.mp4",
        "input": { "path": s(&d.join("synthetic_drive.mp4")) },
        "note": "geometry found in 9 of 16 sampled frames (a test note)"
    });
    std::fs::write(b.join("a/x.mp4/summary.json"), summary.to_string()).unwrap();
    let index = t.path().join("index.html");
    let o = lanes(&["report", s(&b), "-o", s(&index)]);
    assert_eq!(o.status.code(), Some(1), "one drive failed: {}", stderr(&o));
    assert!(stderr(&o).contains("3 drives (1 failed)"), "{}", stderr(&o));
    assert!(b.join("a/x.mp4/report.html").is_file());
    assert!(b.join("b/deeper/y.mp4/report.html").is_file());
    assert!(!b.join("c/broken.mp4/report.html").exists());
    let with_video = std::fs::read_to_string(b.join("a/x.mp4/report.html")).unwrap();
    assert_eq!(with_video.matches("data:image/jpeg;base64,").count(), 2);
    // The drive's summary note (the geometry `lanes batch` found) is in its report, and
    // `lanes report` on that drive's telemetry alone finds it too.
    let note =
        "<td>road geometry</td><td>geometry found in 9 of 16 sampled frames (a test note)</td>";
    assert!(with_video.contains(note), "{with_video}");
    let single = t.path().join("single.html");
    ok(&lanes(&[
        "report",
        s(&b.join("a/x.mp4/telemetry.jsonl")),
        "-o",
        s(&single),
    ]));
    assert!(std::fs::read_to_string(&single).unwrap().contains(note));
    let without = std::fs::read_to_string(b.join("b/deeper/y.mp4/report.html")).unwrap();
    assert!(!without.contains("data:image/jpeg"));
    drv.goto(&format!("file://{}", index.display()));
    drv.wait_for("document.readyState === 'complete'", "the index");
    let frames_col = "return [...document.querySelectorAll('table.index tbody tr')].map(r => r.cells[1].textContent);";
    assert_eq!(drv.js(frames_col), serde_json::json!(["250", "120", "-"]));
    let th = drv.find("table.index th:nth-child(2)");
    drv.click(&th);
    assert_eq!(drv.js(frames_col), serde_json::json!(["-", "120", "250"]));
    drv.click(&th);
    assert_eq!(drv.js(frames_col), serde_json::json!(["250", "120", "-"]));
    // The links lead to the drive reports.
    let href = drv.js("return document.querySelector('table.index a').href;");
    assert!(
        href.as_str()
            .unwrap()
            .ends_with("/batch/a/x.mp4/report.html"),
        "{href}"
    );
    let log = drv.console_log();
    assert!(
        !log.iter().any(|e| e["level"] == "SEVERE"),
        "console: {log:?}"
    );
}

#[test]
fn bad_telemetry_is_a_one_line_error_or_a_counted_warning() {
    let d = drive();
    let t = tmp();
    let out = t.path().join("r.html");
    // Missing and empty telemetry: errors naming the file; no report left behind.
    assert_one_line_error(
        &lanes(&["report", "no/such.jsonl", "-o", s(&out)]),
        "no/such.jsonl: file not found",
    );
    let empty = t.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    assert_one_line_error(
        &lanes(&["report", s(&empty), "-o", s(&out)]),
        "empty.jsonl: no telemetry record",
    );
    assert_one_line_error(
        &lanes(&["events", s(&empty)]),
        "empty.jsonl: no telemetry record",
    );
    assert!(!out.exists());
    // A truncated last line and a record out of order: counted, the rest is used.
    let text = std::fs::read_to_string(d.join("t.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().take(100).map(String::from).collect();
    lines.insert(50, lines[10].clone());
    let last = text.lines().nth(100).unwrap();
    lines.push(last[..last.len() / 2].to_string());
    let bad = t.path().join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let o = lanes(&["report", s(&bad), "-o", s(&out)]);
    ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("bad.jsonl: warning: 1 lines did not parse (line 102), 1 records out of frame order dropped; 100 records used"),
        "{err}"
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("1 records out of frame order dropped"));
    assert!(html.contains("100 frames"));
    let o = lanes(&["events", s(&bad)]);
    ok(&o);
    assert!(
        stderr(&o).contains("1 lines did not parse"),
        "{}",
        stderr(&o)
    );
    // A video that does not match the telemetry: a counted warning, the report is written.
    let o = lanes(&[
        "report",
        s(&bad),
        "-o",
        s(&out),
        "--video",
        s(&d.join("synthetic_drive.mp4")),
    ]);
    ok(&o);
    assert!(
        stderr(&o).contains("the video has 250 frames, the telemetry 100"),
        "{}",
        stderr(&o)
    );
    // Not a video: an error, and the previous report stays as it was.
    let before = std::fs::read(&out).unwrap();
    assert_one_line_error(
        &lanes(&["report", s(&bad), "-o", s(&out), "--video", s(&bad)]),
        "bad.jsonl: cannot open as a video",
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // An output folder that does not exist.
    assert_one_line_error(
        &lanes(&["report", s(&bad), "-o", "/no/such/dir/r.html"]),
        "output directory /no/such/dir does not exist",
    );
    let leftovers: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty());
    // An events threshold out of range names the key.
    let cfg = t.path().join("c.toml");
    std::fs::write(&cfg, "[events]\ncar_width_m = 9\n").unwrap();
    assert_one_line_error(
        &lanes(&["events", s(&bad), "--config", s(&cfg)]),
        "config events.car_width_m = 9 (expected 0.5..=5)",
    );
}

/// Mean absolute difference of two same-size BGR images, grey levels.
fn mean_abs_diff(a: &opencv::core::Mat, b: &opencv::core::Mat) -> f64 {
    let mut d = opencv::core::Mat::default();
    opencv::core::absdiff(a, b, &mut d).unwrap();
    let m = opencv::core::mean(&d, &opencv::core::no_array()).unwrap();
    (m[0] + m[1] + m[2]) / 3.0
}

/// Thumbnails far into the video are reached by seeking: each must show its event's frame
/// (closer to that frame read in order than to its neighbours).
#[test]
fn thumbnails_show_the_event_frame() {
    use base64::Engine;
    let d = drive();
    let t = tmp();
    let out = t.path().join("r.html");
    let video = d.join("synthetic_drive.mp4");
    ok(&lanes(&[
        "report",
        s(&d.join("t.jsonl")),
        "-o",
        s(&out),
        "--video",
        s(&video),
    ]));
    let html = std::fs::read_to_string(&out).unwrap();
    let mut thumbs = Vec::new();
    for part in html.split("<img class=\"thumb\" alt=\"frame ").skip(1) {
        let (n, rest) = part.split_once('"').unwrap();
        let b64 = rest
            .split_once("data:image/jpeg;base64,")
            .unwrap()
            .1
            .split_once('"')
            .unwrap()
            .0;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let img = lanes::base::imageio::decode(&bytes, false).unwrap();
        thumbs.push((n.parse::<usize>().unwrap(), img));
    }
    assert_eq!(thumbs.len(), 2);
    assert!(
        thumbs.iter().all(|(n, _)| *n > 50),
        "both are reached by seeking"
    );
    // Every frame in order, scaled like a thumbnail.
    let mut frames = Vec::new();
    for m in bgr_frames(&video) {
        let mut small = opencv::core::Mat::default();
        opencv::imgproc::resize(
            &m,
            &mut small,
            opencv::core::Size::new(320, 180),
            0.0,
            0.0,
            opencv::imgproc::INTER_AREA,
        )
        .unwrap();
        frames.push(small);
    }
    assert_eq!(frames.len(), 250);
    for (n, img) in &thumbs {
        let own = mean_abs_diff(img, &frames[*n]);
        let prev = mean_abs_diff(img, &frames[n - 1]);
        let next = mean_abs_diff(img, &frames[n + 1]);
        println!("thumbnail of frame {n}: {own:.2} grey levels from it, {prev:.2} / {next:.2} from its neighbours");
        assert!(own < 3.0 && own < prev && own < next, "frame {n}");
    }
}

/// Issue 24: back-to-back tight-bend events (9.77-11.93 s and 12.00-13.00 s) of one curve
/// were reported twice. Runs less than `events.tight_merge_gap_s` (0.5 s) apart are one bend.
#[test]
fn back_to_back_tight_bends_are_one_event() {
    let dir = tmp();
    let rec = |frame: usize, radius: f64| {
        serde_json::json!({
            "frame": frame, "time_s": frame as f64 / 25.0, "search": "prior", "detected": true,
            "status": "both", "left_confidence": 0.9, "right_confidence": 0.9, "confidence": 0.9,
            "left_fit": [3e-4, 0.0, 450.0], "right_fit": [3e-4, 0.0, 830.0],
            "radius_m": radius, "offset_m": 0.0, "lane_width_m": 3.6,
            "left_pixels": 100, "right_pixels": 100
        })
        .to_string()
    };
    // Tight (200 m) on frames 244-298 and 300-324, 273 m on frame 299 between them.
    let lines: Vec<String> = (0..400)
        .map(|f| match f {
            244..=298 | 300..=324 => rec(f, 200.0),
            299 => rec(f, 273.0),
            _ => rec(f, 1000.0),
        })
        .collect();
    let t = dir.path().join("t.jsonl");
    std::fs::write(&t, lines.join("\n") + "\n").unwrap();
    let o = lanes(&["events", s(&t), "--json"]);
    ok(&o);
    let ev: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["kind"], "tight_bend");
    assert_eq!(
        (ev[0]["start_frame"].clone(), ev[0]["end_frame"].clone()),
        (244.into(), 324.into())
    );
    assert!((ev[0]["start_s"].as_f64().unwrap() - 9.76).abs() < 1e-9);
    assert!((ev[0]["end_s"].as_f64().unwrap() - 13.0).abs() < 1e-9);
    assert_eq!(ev[0]["min_radius_m"], 200.0);
    // With the merge turned off the two runs come back.
    let cfg = dir.path().join("apart.toml");
    std::fs::write(&cfg, "[events]\ntight_merge_gap_s = 0.0\n").unwrap();
    let o = lanes(&["events", s(&t), "--json", "--config", s(&cfg)]);
    ok(&o);
    let ev: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    let spans: Vec<(u64, u64)> = ev
        .iter()
        .map(|e| {
            (
                e["start_frame"].as_u64().unwrap(),
                e["end_frame"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(spans, [(244, 298), (300, 324)]);
    // The drive report counts one bend.
    let html = dir.path().join("r.html");
    let o = lanes(&["report", s(&t), "-o", s(&html)]);
    ok(&o);
    assert!(
        stderr(&o).contains("lanes report: 400 frames, 1 event, 0 thumbnails,"),
        "{}",
        stderr(&o)
    );
}

/// A batch folder's index lists the videos `lanes batch` could not process (no telemetry: an
/// empty file, no moov box), from its `batch.json`, as failed drives with their errors.
/// Before, the index said "1 drives (0 failed)" beside a batch.json with a failure.
#[test]
fn the_batch_index_lists_the_videos_the_batch_could_not_process() {
    let Some(clip) = crate::data("videos/udacity_vehicle_detection/test_video.mp4") else {
        return;
    };
    let t = tmp();
    let b = t.path().join("out");
    std::fs::create_dir_all(b.join("x.mp4")).unwrap();
    let tel = b.join("x.mp4/telemetry.jsonl");
    ok(&lanes(&[
        "video",
        s(&clip),
        "--no-render",
        "--telemetry",
        s(&tel),
    ]));
    let batch = serde_json::json!({
        "videos": [
            {"path": "x.mp4", "status": "done", "error": null},
            {"path": "empty.mp4", "status": "failed",
             "error": "in/empty.mp4: cannot open as a video (an empty file, 0 bytes)"}
        ]
    });
    std::fs::write(b.join("batch.json"), batch.to_string()).unwrap();
    let index = t.path().join("index.html");
    let o = lanes(&["report", s(&b), "-o", s(&index)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("2 drives (1 failed)"), "{err}");
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.contains("2 drives (1 failed)"), "{html}");
    assert!(
        html.contains("in/empty.mp4: cannot open as a video (an empty file, 0 bytes)"),
        "{html}"
    );
}
