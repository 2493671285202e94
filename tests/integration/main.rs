//! Integration tests: run the real `lanes` binary on real and synthetic inputs.
//!
//! Real data is found through `LANES_DATA` or `../shared/data` beside the repo root. When it is
//! missing a test prints why and returns, except under `CI=true`, where it fails.

use opencv::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod batch;
mod calibrate;
mod confidence;
mod config;
mod corpus;
mod cuts;
mod eval;
mod image;
mod interrupt;
mod lane_change;
mod layers;
mod mistakes;
mod noise;
mod perspective;
mod pitch;
mod planes;
mod queue;
mod report;
mod selfcal;
mod stills;
mod synth;
mod tune;
mod tune_load;
mod vehicle_ahead;
mod video;
mod video_io;
mod wide_lens;

/// Path to the built `lanes` binary.
pub fn lanes_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lanes"))
}

/// Run `lanes` with arguments; returns the output (never panics on a non-zero exit).
pub fn lanes(args: &[&str]) -> Output {
    Command::new(lanes_bin())
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("run lanes")
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared data directory, if present.
pub fn data_root() -> Option<PathBuf> {
    let p = match std::env::var_os("LANES_DATA") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join("..").join("shared").join("data"),
    };
    p.is_dir().then_some(p)
}

/// A file or directory under the shared data; `None` (with a printed reason) when missing.
/// Under `CI=true` a missing data file fails the test.
pub fn data(rel: &str) -> Option<PathBuf> {
    let found = data_root().map(|r| r.join(rel)).filter(|p| p.exists());
    if found.is_none() {
        let msg =
            format!("data file {rel} not found (set LANES_DATA or put the data in ../shared/data)");
        if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
            panic!("{msg}");
        }
        eprintln!("SKIP: {msg}");
    }
    found
}

/// A fresh temporary directory.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// stdout as a string.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// stderr as a string.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Write an OpenCV camera file: `w` x `h`, focal length `f` px, principal point at the
/// centre, distortion coefficients `dist` (k1, k2, p1, p2, k3).
pub fn write_camera(path: &Path, w: i32, h: i32, f: f64, dist: [f64; 5]) {
    let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
    let [k1, k2, p1, p2, k3] = dist;
    std::fs::write(
        path,
        format!("%YAML:1.0\n---\nimage_width: {w}\nimage_height: {h}\ncamera_matrix: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n   data: [ {f}, 0., {cx}, 0., {f}, {cy}, 0., 0., 1. ]\ndistortion_coefficients: !!opencv-matrix\n   rows: 1\n   cols: 5\n   dt: d\n   data: [ {k1}, {k2}, {p1}, {p2}, {k3} ]\n"),
    )
    .unwrap();
}

/// Write a distortion-free OpenCV camera file (`write_camera` without distortion).
pub fn write_pinhole_camera(path: &Path, w: i32, h: i32, f: f64) {
    write_camera(path, w, h, f, [0.0; 5]);
}

/// `lanes synth video -o dir --camera camera` with `args`; asserts it succeeded.
pub fn synth_through(dir: &Path, camera: &Path, args: &[&str]) {
    let mut all = vec![
        "synth",
        "video",
        "-o",
        dir.to_str().unwrap(),
        "--camera",
        camera.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = lanes(&all);
    assert_eq!(o.status.code(), Some(0), "synth: {}", stderr(&o));
}

/// `lanes synth video -o dir` through a distortion-free camera (`w` x `h`, focal length `f`,
/// written to `dir/pin.yml`) with `args`; asserts it succeeded. Returns the camera file.
pub fn synth_drive(dir: &Path, (w, h, f): (i32, i32, f64), args: &[&str]) -> PathBuf {
    let cam = dir.join("pin.yml");
    write_pinhole_camera(&cam, w, h, f);
    synth_through(dir, &cam, args);
    cam
}

/// The records of a JSON-lines file (telemetry), as JSON values.
pub fn read_jsonl(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The truth `lanes synth video` wrote in `dir` (`synthetic_drive.json`).
pub fn synth_truth(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("synthetic_drive.json")).unwrap())
        .unwrap()
}

/// `lanes video` on the drive `synth_drive` wrote in `dir` (`--no-render`, telemetry to
/// `dir/{name}.jsonl`) with `camera` and `config`: each frame's (truth, telemetry record).
pub fn drive_records(
    dir: &Path,
    camera: &Path,
    config: &Path,
    name: &str,
) -> Vec<(serde_json::Value, serde_json::Value)> {
    use serde_json::Value;
    let t = dir.join(format!("{name}.jsonl"));
    let clip = dir.join("synthetic_drive.mp4");
    let o = lanes(&[
        "video",
        clip.to_str().unwrap(),
        "--camera",
        camera.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--no-render",
        "--telemetry",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "video: {}", stderr(&o));
    let frames = synth_truth(dir)["frames"].as_array().unwrap().clone();
    let pairs: Vec<(Value, Value)> = read_jsonl(&t)
        .into_iter()
        .map(|r| (frames[r["frame"].as_u64().unwrap() as usize].clone(), r))
        .collect();
    assert_eq!(pairs.len(), frames.len(), "a telemetry record per frame");
    pairs
}

/// The median (upper middle) of `v`.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The frame count in `lanes video`'s summary line ("... N frames read, ...").
pub fn frames_read(err: &str) -> usize {
    err.split(" frames read")
        .next()
        .and_then(|t| t.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no frame count: {err}"))
}

/// Run `ffmpeg -v error -y` with `args`; asserts it succeeded.
pub fn ffmpeg(args: &[&std::ffi::OsStr]) {
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-y"])
        .args(args)
        .status()
        .expect("ffmpeg is installed (README set-up installs it)");
    assert!(st.success(), "ffmpeg {args:?}");
}

/// `ffprobe` of one stream kind (`v:0`, `a:0`): the requested entries as key=value pairs; the
/// stream is decoded to count its frames only when `nb_read_frames` is asked for. FFmpeg's own
/// tools check what `lanes` writes, independently of the library's reader.
pub fn probe(p: &Path, stream: &str, entries: &str) -> std::collections::HashMap<String, String> {
    let count: &[&str] = if entries.contains("nb_read_frames") {
        &["-count_frames"]
    } else {
        &[]
    };
    let o = Command::new("ffprobe")
        .args(["-v", "error"])
        .args(count)
        .args(["-select_streams", stream])
        .args(["-show_entries", &format!("stream={entries}")])
        .args(["-of", "default=noprint_wrappers=1"])
        .arg(p)
        .output()
        .expect("ffprobe is installed (README set-up installs it)");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Frames `ffprobe` decodes from a video, its frame rate, width and height.
pub fn count_frames(p: &Path) -> (usize, f64, i32, i32) {
    let v = probe(p, "v:0", "nb_read_frames,r_frame_rate,width,height");
    let get = |k: &str| {
        v.get(k)
            .unwrap_or_else(|| panic!("{}: no {k} in {v:?}", p.display()))
    };
    let fps = get("r_frame_rate")
        .split_once('/')
        .map(|(a, b)| a.parse::<f64>().unwrap() / b.parse::<f64>().unwrap())
        .unwrap();
    (
        get("nb_read_frames").parse().unwrap(),
        fps,
        get("width").parse().unwrap(),
        get("height").parse().unwrap(),
    )
}

/// Every frame of a video as 8-bit BGR, decoded by the `ffmpeg` tool.
pub fn bgr_frames(p: &Path) -> Vec<opencv::core::Mat> {
    use opencv::prelude::*;
    let v = probe(p, "v:0", "width,height");
    let (w, h): (i32, i32) = (v["width"].parse().unwrap(), v["height"].parse().unwrap());
    let o = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(p)
        .args(["-f", "rawvideo", "-pix_fmt", "bgr24", "-"])
        .output()
        .expect("ffmpeg is installed (README set-up installs it)");
    assert!(o.status.success(), "ffmpeg decodes {}", p.display());
    o.stdout
        .chunks_exact((w * h * 3) as usize)
        .map(|px| {
            let mut m = opencv::core::Mat::new_rows_cols_with_default(
                h,
                w,
                opencv::core::CV_8UC3,
                opencv::core::Scalar::all(0.0),
            )
            .unwrap();
            m.data_bytes_mut().unwrap().copy_from_slice(px);
            m
        })
        .collect()
}

/// Assert a command failed with exit code 2 and a one-line `lanes: ` error containing `needle`.
pub fn assert_one_line_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {err}");
    let last = err.lines().last().unwrap_or("");
    assert!(last.starts_with("lanes: "), "error line: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
}

/// `.ci/run` runs the README's test command (`make test`) with `CI=true`, which turns every
/// "data or tool missing" skip into a failure. Run it with a `make` that reports what it got.
#[test]
fn ci_runner_sets_ci_true_and_calls_make_test() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp();
    let make = dir.path().join("make");
    std::fs::write(&make, "#!/bin/sh\necho \"CI=$CI args=$*\"\n").unwrap();
    std::fs::set_permissions(&make, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new(repo_root().join(".ci/run"))
        .env("PATH", path)
        .env_remove("CI")
        .output()
        .expect("run .ci/run");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "CI=true args=test");
}
