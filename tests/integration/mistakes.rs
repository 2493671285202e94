//! A corpus of a new user's natural mistakes, run through the real binary: outputs that are an
//! input (same path, a symlink, a hard link, a dotted path; two outputs on one file), files
//! given to the wrong option (a camera file as --config, a config as --camera, a video as a
//! still or as telemetry), a camera for another frame size, missing folders and files.
//!
//! Every case has its expected exit code and words its message must contain (the file and the
//! problem, and where there is one the fix). Every input file is checksummed before and after
//! every case: none may change. Counts are printed.

use super::*;
use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Run a command; one that is still running after `limit` is killed (a mistake must never
/// hang, e.g. start serving) and fails the case through its exit code (None).
fn run_with_timeout(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lanes");
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// FNV-1a of a file's bytes.
fn checksum(p: &Path) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in std::fs::read(p).unwrap() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Checksums of every file under `dir` (links followed once: a symlink's target is the input).
fn checksums(dir: &Path) -> BTreeMap<PathBuf, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.is_file() {
                out.insert(p.clone(), checksum(&p));
            }
        }
    }
    out
}

/// One mistake: arguments (run in the work folder), exit code, words the message must hold.
struct Case {
    what: &'static str,
    args: Vec<&'static str>,
    code: i32,
    needles: Vec<&'static str>,
}

fn case(what: &'static str, args: &str, code: i32, needles: &[&'static str]) -> Case {
    let args: Vec<&'static str> = Box::leak(args.to_string().into_boxed_str())
        .split_whitespace()
        .collect();
    Case {
        what,
        args,
        code,
        needles: needles.to_vec(),
    }
}

/// The work folder: two clips, a clip of another size, hard and symbolic links to a clip, the
/// Udacity camera file, the default config, stills, board photos, a telemetry file.
fn work_folder(w: &Path) -> Option<()> {
    let clip = data("videos/maesla/project_video_shortest.mp4")?;
    let test1 = data("udacity/test_images/test1.jpg")?;
    let test2 = data("udacity/test_images/test2.jpg")?;
    let boards = data("udacity/camera_cal")?;
    std::fs::copy(&clip, w.join("in.mp4")).unwrap();
    std::fs::copy(&clip, w.join("in2.mp4")).unwrap();
    std::fs::create_dir(w.join("videos")).unwrap();
    std::fs::copy(&clip, w.join("videos/a.mp4")).unwrap();
    std::os::unix::fs::symlink(w.join("in.mp4"), w.join("link.mp4")).unwrap();
    std::fs::hard_link(w.join("in.mp4"), w.join("hard.mp4")).unwrap();
    std::fs::copy(
        repo_root().join("calibration/udacity.yml"),
        w.join("cam.yml"),
    )
    .unwrap();
    std::fs::copy(repo_root().join("config/default.toml"), w.join("cfg.toml")).unwrap();
    std::fs::write(w.join("bad.toml"), "[search\nwindows = 9\n").unwrap();
    std::fs::create_dir(w.join("stills")).unwrap();
    std::fs::copy(&test1, w.join("stills/test1.jpg")).unwrap();
    std::fs::copy(&test2, w.join("stills/test2.jpg")).unwrap();
    std::fs::create_dir(w.join("boards")).unwrap();
    for n in ["calibration2.jpg", "calibration3.jpg"] {
        std::fs::copy(boards.join(n), w.join("boards").join(n)).unwrap();
    }
    std::fs::create_dir(w.join("synth")).unwrap();
    std::fs::copy(
        repo_root().join("calibration/udacity.yml"),
        w.join("synth/camera.yml"),
    )
    .unwrap();
    std::fs::create_dir(w.join("proj")).unwrap();
    std::fs::copy(
        repo_root().join("config/default.toml"),
        w.join("proj/lanes.toml"),
    )
    .unwrap();
    std::fs::write(
        w.join("m_cam.csv"),
        "input,camera,config\nin.mp4,,\nin2.mp4,nope.yml,\n",
    )
    .unwrap();
    std::fs::write(w.join("m_cols.csv"), "video,camera\nin.mp4,\n").unwrap();
    std::fs::write(
        w.join("m_swap.jsonl"),
        "{\"input\": \"in.mp4\", \"camera\": \"cfg.toml\"}\n",
    )
    .unwrap();
    std::fs::copy(&test1, w.join("photo.mp4")).unwrap();
    std::fs::write(w.join("empty.mp4"), b"").unwrap();
    std::fs::create_dir(w.join("sub")).unwrap();
    std::fs::create_dir(w.join("taken.mp4")).unwrap();
    // `ffmpeg -i INPUT OPTIONS... OUTPUT`, both in the work folder.
    let convert = |input: &str, options: &[&str], output: &str| {
        let (i, o) = (w.join(input), w.join(output));
        let mut args: Vec<&std::ffi::OsStr> = vec!["-i".as_ref(), i.as_os_str()];
        args.extend(options.iter().map(std::ffi::OsStr::new));
        args.push(o.as_os_str());
        ffmpeg(&args);
    };
    convert(
        "in.mp4",
        &["-vf", "scale=848:480", "-frames:v", "10"],
        "small.mp4",
    );
    convert("small.mp4", &["-frames:v", "1"], "small.jpg");
    // Matroska keeps no frame count: the end is found by reading.
    convert("in.mp4", &["-c", "copy"], "in.mkv");
    // ffmpeg's TIFF of a JPEG is YCbCr (PackBits): a valid file the reader does not support.
    convert("small.jpg", &[], "ycbcr.tif");
    let o = Command::new(lanes_bin())
        .current_dir(w)
        .args(["video", "in.mp4", "--no-render", "--frames", "10"])
        .args(["--telemetry", "tel.jsonl"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    Some(())
}

fn corpus() -> Vec<Case> {
    const SAME: &str = "is the same file as the";
    const DESTROY: &str = "writing it would destroy the input";
    vec![
        // Outputs that are inputs.
        case(
            "-o is the input video",
            "video --camera cam.yml in.mp4 -o in.mp4 --frames 5",
            2,
            &["in.mp4: -o path", SAME, "input video in.mp4", DESTROY],
        ),
        case(
            "a video piped to standard input",
            "video - --no-render",
            2,
            &["-: a video on standard input is not read", "ffmpeg -i - -c copy drive.mkv"],
        ),
        case(
            "a camera's stream address",
            "video rtsp://192.168.1.10:554/live --no-render",
            2,
            &[
                "rtsp://192.168.1.10:554/live: a stream address (rtsp://) is not opened",
                "ffmpeg -i rtsp://192.168.1.10:554/live -c copy drive.mkv",
            ],
        ),
        case(
            "-o beside --no-render (nothing is written to it)",
            "video --camera cam.yml in.mp4 --no-render -o out.mp4 --frames 3",
            0,
            &["out.mp4: not written: --no-render analyses only"],
        ),
        case(
            "--telemetry is the input video",
            "video in2.mp4 --no-render --telemetry in2.mp4",
            2,
            &["--telemetry path", SAME, "input video in2.mp4"],
        ),
        case(
            "-o is the camera file",
            "video --camera cam.yml in.mp4 -o cam.yml --frames 3",
            2,
            &["cam.yml: -o path", SAME, "camera file (--camera) cam.yml"],
        ),
        case(
            "-o is the config file",
            "video --config cfg.toml in.mp4 -o cfg.toml --frames 3",
            2,
            &["cfg.toml: -o path", SAME, "config file (--config) cfg.toml"],
        ),
        // `lanes perspective` writes a config: never over its input video or stills (it used
        // to turn the video into 2 KB of TOML), never into a folder after all the work.
        case(
            "perspective -o is the input video",
            "perspective in.mp4 -o in.mp4",
            2,
            &["in.mp4: -o path", SAME, "input video in.mp4", DESTROY],
        ),
        case(
            "perspective -o is one of a folder's stills",
            "perspective stills -o stills/test2.jpg",
            2,
            &["-o path", SAME, "input image stills/test2.jpg", DESTROY],
        ),
        case(
            "perspective -o is a folder",
            "perspective stills -o sub",
            2,
            &["sub: -o names a folder, not a file"],
        ),
        case(
            "perspective -o is named like a still",
            "perspective stills -o cam.jpg",
            2,
            &["cam.jpg: -o names a still", "TOML config", "-o cam.toml"],
        ),
        case(
            "input through a symlink",
            "video link.mp4 -o in.mp4 --frames 3",
            2,
            &["in.mp4: -o path", SAME, "input video link.mp4"],
        ),
        case(
            "output is a hard link of the input",
            "video in.mp4 -o hard.mp4 --frames 3",
            2,
            &["hard.mp4: -o path", SAME, "input video in.mp4"],
        ),
        case(
            "a dotted path to the input",
            "video in.mp4 -o ./sub/../in.mp4 --frames 3",
            2,
            &["./sub/../in.mp4: -o path", SAME],
        ),
        case(
            "absolute path of the input",
            "video in.mp4 -o @W/in.mp4 --frames 3",
            2,
            &["-o path", SAME, "input video in.mp4"],
        ),
        case(
            "--events is the input video",
            "video in.mp4 -o o.mp4 --events in.mp4 --frames 3",
            2,
            &["--events path", SAME],
        ),
        case(
            "--report is the camera file",
            "video --camera cam.yml in.mp4 -o o.mp4 --report cam.yml --frames 3",
            2,
            &["--report path", SAME, "camera file"],
        ),
        case(
            "-o and --telemetry on one file",
            "video in.mp4 -o o.mp4 --telemetry o.mp4 --frames 3",
            2,
            &[
                "o.mp4: -o path and --telemetry path are the same file",
                "give each output its own path",
            ],
        ),
        case(
            "report over its telemetry",
            "report tel.jsonl -o tel.jsonl",
            2,
            &["tel.jsonl: -o path", SAME, "telemetry tel.jsonl"],
        ),
        case(
            "report over the video",
            "report tel.jsonl --video in.mp4 -o in.mp4",
            2,
            &["in.mp4: -o path", SAME, "video (--video)"],
        ),
        case(
            "undistort into the input folder",
            "undistort --camera cam.yml stills -o stills",
            2,
            &["-o directory", SAME, "input image stills/test1.jpg"],
        ),
        case(
            "calibrate over a board photo",
            "calibrate boards --board 9x6 -o boards/calibration2.jpg",
            2,
            &["-o path", SAME, "board image boards/calibration2.jpg"],
        ),
        case(
            "sweep sheet over a still",
            "tune stills --sweep threshold.l_min=160..200:40 -o stills/test1.jpg",
            2,
            &["stills/test1.jpg: -o path", SAME, "input image"],
        ),
        case(
            "sweep sheet over the config",
            "tune stills --config cfg.toml --sweep threshold.l_min=160..200:40 -o cfg.toml",
            2,
            &["cfg.toml: -o path", SAME, "config file"],
        ),
        case(
            "tuner saves over the camera file",
            "tune --camera cam.yml stills --save-to cam.yml --port 0",
            2,
            &["cam.yml: --save-to path", SAME, "camera file"],
        ),
        case(
            "batch folder named after the input",
            "batch in.mp4 -o .",
            2,
            &["output folder in -o", SAME, "input video in.mp4"],
        ),
        case(
            "batch output inside the input folder",
            "batch videos -o videos/out",
            2,
            &[
                "videos/out: -o directory is inside the input directory videos",
                "outside it",
            ],
        ),
        case(
            "synth camera over --camera",
            "synth chessboards --camera synth/camera.yml -o synth",
            2,
            &[
                "synth/camera.yml: -o directory",
                SAME,
                "camera file (--camera) synth/camera.yml",
            ],
        ),
        case(
            "synth road into a folder with the user's own config",
            "synth road -o proj",
            2,
            &[
                "proj/lanes.toml: a lanes config that lanes synth did not write",
                "new or empty folder",
            ],
        ),
        case(
            "synth chessboards over a calibrated camera",
            "synth chessboards -o synth --views 2",
            2,
            &[
                "synth/camera.yml: a camera calibrated by lanes calibrate",
                "new or empty folder",
            ],
        ),
        // Files given to the wrong option.
        case(
            "camera file as --config",
            "video --config cam.yml in.mp4 -o o.mp4 --frames 3",
            2,
            &[
                "cam.yml: an OpenCV camera file, not a lanes config",
                "pass it with --camera",
            ],
        ),
        case(
            "config file as --camera",
            "video --camera cfg.toml in.mp4 -o o.mp4 --frames 3",
            2,
            &[
                "cfg.toml: a TOML file",
                "not an OpenCV camera file",
                "--config",
            ],
        ),
        case(
            "config as --camera for undistort",
            "undistort --camera cfg.toml stills -o und",
            2,
            &["cfg.toml: a TOML file", "--config"],
        ),
        case(
            "config with a syntax error",
            "video --config bad.toml in.mp4 -o o.mp4 --frames 3",
            2,
            &["bad.toml: line 1", "invalid table header"],
        ),
        case(
            "a JPEG saved with a video's name",
            "video photo.mp4 -o out.mp4",
            2,
            &["photo.mp4: a still image (jpeg), not a video, whatever its name", "lanes image"],
        ),
        case(
            "an empty file given as a video",
            "video empty.mp4 -o out.mp4",
            2,
            &["empty.mp4: cannot open as a video (an empty file, 0 bytes)"],
        ),
        case(
            "an empty file given as a still",
            "image empty.mp4 -o out_img",
            1,
            &["empty.mp4: cannot read as an image (an empty file, 0 bytes)"],
        ),
        case(
            "a folder given as the camera file",
            "video in.mp4 --no-render --camera stills",
            2,
            &["stills: a folder, not an OpenCV camera file", "lanes calibrate"],
        ),
        case(
            "a still given as the camera file",
            "video in.mp4 --no-render --camera stills/test1.jpg",
            2,
            &["test1.jpg: a still image, not an OpenCV camera file"],
        ),
        case(
            "a sweep's contact sheet named .gif",
            "tune stills --sweep threshold.l_contrast_min=10,20 -o s.gif",
            2,
            &["s.gif: -o names no picture format", "-o s.png"],
        ),
        case(
            "one video given twice to lanes batch",
            "batch in.mp4 in.mp4 -o bout",
            2,
            &["in.mp4: listed twice among the inputs", "give each video once"],
        ),
        case(
            "video given to lanes image",
            "image in.mp4 -o out_img",
            1,
            &[
                "in.mp4: cannot read as an image",
                "named like a video",
                "lanes video",
            ],
        ),
        case(
            "still given to lanes video",
            "video stills/test1.jpg -o o.mp4",
            2,
            &[
                "stills/test1.jpg: a still image",
                "`lanes image` processes stills",
            ],
        ),
        case(
            "video given as telemetry",
            "events in.mp4",
            2,
            &["in.mp4: not a telemetry file", "lanes video --telemetry"],
        ),
        case(
            "video given to lanes report",
            "report in.mp4 -o r.html",
            2,
            &["in.mp4: not a telemetry file"],
        ),
        case(
            "camera file given as the video",
            "video cam.yml -o o.mp4",
            2,
            &["cam.yml: cannot open as a video"],
        ),
        // A camera for another frame size.
        case(
            "camera for 1280x720 on an 848x480 clip",
            "video --camera cam.yml small.mp4 -o o.mp4",
            2,
            &[
                "small.mp4: frames are 848x480 but the camera file cam.yml is for 1280x720",
                "calibrate this camera at 848x480",
                "leave out --camera",
            ],
        ),
        case(
            "camera for 1280x720 on an 848x480 still",
            "image --camera cam.yml small.jpg -o out_img",
            1,
            &["small.jpg: frames are 848x480 but the camera file cam.yml is for 1280x720"],
        ),
        case(
            "undistort a still of another size",
            "undistort --camera cam.yml small.jpg -o und",
            2,
            &["small.jpg: frames are 848x480 but the camera file cam.yml"],
        ),
        // Missing folders and files.
        case(
            "telemetry into a missing folder",
            "video in.mp4 --no-render --telemetry nodir/t.jsonl",
            2,
            &["nodir/t.jsonl: output directory nodir does not exist"],
        ),
        case(
            "video into a missing folder",
            "video in.mp4 -o nodir/o.mp4",
            2,
            &["nodir/o.mp4: output directory nodir does not exist"],
        ),
        case(
            "report into a missing folder",
            "report tel.jsonl -o nodir/r.html",
            2,
            &["nodir/r.html: output directory nodir does not exist"],
        ),
        case(
            "events into a missing folder",
            "video in.mp4 --no-render --telemetry t.jsonl --events nodir/e.json --frames 3",
            2,
            &["nodir/e.json: output directory nodir does not exist"],
        ),
        case(
            "several videos given to lanes video",
            "video in.mp4 in2.mp4 -o o.mp4",
            2,
            &[
                "`lanes video` takes one video and 2 were given (in.mp4, in2.mp4)",
                "`lanes batch VIDEO... -o DIR`",
            ],
        ),
        case(
            "a folder of videos given to lanes video",
            "video videos -o o.mp4",
            2,
            &["videos: a folder, not a video: `lanes batch videos -o DIR` processes the videos in it (1 here"],
        ),
        case(
            "a folder of stills given to lanes video",
            "video stills -o o.mp4",
            2,
            &[
                "stills: a folder, not a video: `lanes image stills -o DIR` processes the stills in it (2 here)",
                "make them a video first: ffmpeg -framerate 25 -pattern_type glob -i 'stills/*.",
            ],
        ),
        case(
            "lanes video with no output",
            "video in.mp4",
            2,
            &["in.mp4: no output named: give -o OUT.mp4", "--no-render"],
        ),
        case(
            "a TIFF of a kind the reader does not support",
            "image ycbcr.tif -o out_img",
            1,
            &["ycbcr.tif: an image of a kind not supported", "save it as PNG or JPEG"],
        ),
        case(
            "no frames asked for",
            "video in.mp4 -o o.mp4 --frames 0",
            2,
            &["--frames <N>", "0 frames is nothing to process"],
        ),
        case(
            "missing input video",
            "video missing.mp4 -o o.mp4",
            2,
            &["missing.mp4: file not found"],
        ),
        case(
            "missing camera file",
            "video --camera missing.yml in.mp4 -o o.mp4",
            2,
            &["missing.yml: file not found"],
        ),
        case(
            "missing config file",
            "video --config missing.toml in.mp4 -o o.mp4",
            2,
            &["missing.toml: cannot read config"],
        ),
        case(
            "missing batch list",
            "batch @missing.txt -o outb",
            2,
            &["missing.txt: cannot read input list"],
        ),
        case(
            "a file name given as lanes image's output folder",
            "image stills -o overlay.jpg",
            2,
            &["overlay.jpg: -o names a file, but this command writes a folder of outputs: give a folder, e.g. -o overlay"],
        ),
        case(
            "a video name given as lanes batch's output folder",
            "batch in.mp4 -o result.mp4",
            2,
            &["result.mp4: -o names a file, but this command writes a folder of outputs: give a folder, e.g. -o result"],
        ),
        case(
            "telemetry named as the overlay video",
            "video in.mp4 --no-render --telemetry out.mp4",
            2,
            &["out.mp4: --telemetry names a video, but it writes telemetry as JSON Lines or CSV: give e.g. --telemetry out.jsonl; the overlay video is -o"],
        ),
        case(
            "saved geometry named as a still",
            "video in.mp4 --no-render --save-geometry cam.png",
            2,
            &["cam.png: --save-geometry names a still", "--save-geometry cam.toml"],
        ),
        case(
            "output that is a folder",
            "video in.mp4 -o taken.mp4 --frames 3",
            2,
            &["taken.mp4: -o names a folder, not a file"],
        ),
        case(
            "board size without an x",
            "calibrate boards --board 9 -o c.yml",
            2,
            &["--board", "expected COLSxROWS inner corners, e.g. 9x6"],
        ),
        // Manifests (`lanes batch --manifest`): checked before any work.
        case(
            "manifest row with a missing camera",
            "batch --manifest m_cam.csv -o outm",
            2,
            &["m_cam.csv: line 3: camera \"nope.yml\": no such file"],
        ),
        case(
            "manifest without an input column",
            "batch --manifest m_cols.csv -o outm",
            2,
            &[
                "m_cols.csv: line 1: unknown column \"video\"",
                "input,camera,config",
            ],
        ),
        case(
            "manifest row with a config as its camera",
            "batch --manifest m_swap.jsonl -o outm",
            2,
            &["m_swap.jsonl: line 1:", "cfg.toml: a TOML file", "--config"],
        ),
        // Frames are counted from 0: a 65-frame clip's last is --start 64. Refused from the
        // MP4's index before the geometry search; found at the end of a Matroska file (which
        // counts no frames) after it. Before: "no frames could be decoded".
        case(
            "--start at the frame count",
            "video in.mp4 --no-render --start 65",
            2,
            &["in.mp4: --start 65 is past the end (65 frames: the last is --start 64"],
        ),
        case(
            "--start at the frame count of a Matroska file",
            "video in.mkv --no-render --start 65",
            2,
            &["in.mkv: --start 65 is past the end (65 frames: the last is --start 64"],
        ),
        // `--preset` where it does nothing.
        case(
            "--preset on calibrate",
            "calibrate boards --board 9x6 -o c.yml --preset reference",
            2,
            &["unexpected argument '--preset'"],
        ),
        case(
            "libx264 preset on lanes image",
            "image stills -o out_img --preset slow",
            2,
            &["\"slow\" is libx264's speed preset", "robust or reference"],
        ),
    ]
}

#[test]
fn natural_mistakes_are_named_and_never_modify_an_input() {
    let dir = tmp();
    let w = dir.path();
    if work_folder(w).is_none() {
        return;
    }
    let before = checksums(w);
    let cases = corpus();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let args: Vec<String> = c
            .args
            .iter()
            .map(|a| a.replace("@W", &w.display().to_string()))
            .collect();
        let o = run_with_timeout(
            Command::new(lanes_bin()).current_dir(w).args(&args),
            Duration::from_secs(60),
        );
        let err = stderr(&o);
        let mut wrong = Vec::new();
        if o.status.code() != Some(c.code) {
            wrong.push(format!("exit {:?}, expected {}", o.status.code(), c.code));
        }
        for n in &c.needles {
            if !err.contains(n) {
                wrong.push(format!("no {n:?}"));
            }
        }
        if err.contains("panicked") {
            wrong.push("panic".into());
        }
        let changed: Vec<String> = checksums(w)
            .iter()
            .filter(|(p, sum)| before.get(*p).is_some_and(|b| b != *sum))
            .map(|(p, _)| p.display().to_string())
            .collect();
        if !changed.is_empty() {
            wrong.push(format!("inputs modified: {changed:?}"));
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{} (lanes {}): {}\n  stderr: {}",
                c.what,
                c.args.join(" "),
                wrong.join("; "),
                err.trim()
            ));
        }
    }
    let after = checksums(w);
    let modified = before
        .iter()
        .filter(|(p, s)| after.get(*p) != Some(s))
        .count();
    eprintln!(
        "natural mistakes: {} cases, {} as expected, {} input files checksummed, {modified} modified",
        cases.len(),
        cases.len() - failures.len(),
        before.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(modified, 0);
}

/// Output piped to a reader that stops early (`lanes image DIR --json | head -1`): the command
/// stops quietly with status 141, a shell's status for a tool that SIGPIPE stopped, as Unix
/// tools do, and leaves no partial file. Before, `lanes image` and `lanes perspective` panicked
/// with a backtrace (exit 101) and `lanes video --telemetry -` printed an error (exit 2).
#[test]
fn a_closed_output_pipe_stops_quietly() {
    let Some(stills) = data("udacity/test_images") else {
        return;
    };
    let Some(clip) = data("videos/udacity_vehicle_detection/test_video.mp4") else {
        return;
    };
    let dir = tmp();
    let w = dir.path();
    let s = |p: &Path| p.display().to_string();
    let cases: Vec<Vec<String>> = vec![
        vec![
            "image".into(),
            s(&stills),
            "--json".into(),
            "-o".into(),
            s(&w.join("img")),
        ],
        vec![
            "perspective".into(),
            s(&clip),
            "-o".into(),
            s(&w.join("p.toml")),
        ],
        vec![
            "video".into(),
            s(&clip),
            "-o".into(),
            s(&w.join("o.mp4")),
            "--telemetry".into(),
            "-".into(),
        ],
    ];
    std::fs::create_dir(w.join("img")).unwrap();
    for args in cases {
        let mut child = Command::new(lanes_bin())
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the first line: the first write finds the pipe closed.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(141), "lanes {args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{err}"
        );
        let partial: Vec<_> = walk(w)
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        assert!(
            partial.is_empty(),
            "lanes {args:?}: partial files {partial:?}"
        );
        assert!(!w.join("p.toml").exists() && !w.join("o.mp4").exists());
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
