//! A seeded corpus of malformed inputs run through the real binary. Valid inputs (JPEG and PNG
//! stills, an MP4 clip, camera YAML, config TOML, TuSimple, CULane and synthetic truth labels,
//! chessboard photos, a straight-road frame, `lanes video` telemetry) are mutated by byte flips, truncation at many
//! offsets, header dimensions set to zero or huge, duplicated, dropped and swapped lines and
//! numbers replaced by NaN, inf or huge values, then given to the subcommands that read them.
//!
//! Every case must: finish within the timeout (else it is killed and counted as a hang), exit
//! 0, 1 or 2 (never a signal, never 101), never print "panicked", print a line starting
//! `lanes:` when it fails, and leave no partial, hidden or temporary file in its output
//! directory. Counts by subcommand and outcome are printed. Nothing generated is committed:
//! `LANES_CORPUS_SEED` picks another corpus (default 16); a failure prints the seed and case.

use super::*;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Per-case limit; a case over it is killed and reported as a hang.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Cases run at once (each is one mostly single-threaded process).
const WORKERS: usize = 3;

/// SplitMix64: small, seeded, good enough to pick offsets.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Binary mutations: flips, truncation, header dimensions.
fn mutate_binary(b: &[u8], kind: &str, i: usize, rng: &mut Rng) -> (Vec<u8>, String) {
    let mut v = b.to_vec();
    match i % 3 {
        0 => {
            let n = *rng.pick(&[1usize, 4, 16, 64, 300]);
            let skip = rng.below(v.len() / 4);
            for _ in 0..n {
                let k = skip + rng.below(v.len() - skip);
                v[k] ^= (1 + rng.below(255)) as u8;
            }
            (v, format!("{n} bytes flipped after {skip}"))
        }
        1 => {
            // Truncation at offsets spread over the whole file (and the very start).
            let at = match rng.below(4) {
                0 => rng.below(64),
                _ => rng.below(v.len()),
            };
            v.truncate(at);
            (v, format!("truncated at {at}"))
        }
        _ => {
            let dim = *rng.pick(&[0u32, 1, 0xFFFF, 16000, 0x7FFF_FFFF, 0xFFFF_FFFF]);
            let what = match kind {
                "png" if v.len() > 33 => {
                    let wh = rng.below(3);
                    if wh != 1 {
                        v[16..20].copy_from_slice(&dim.to_be_bytes());
                    }
                    if wh != 0 {
                        v[20..24].copy_from_slice(&dim.to_be_bytes());
                    }
                    let fix = rng.below(2) == 0;
                    if fix {
                        let crc = crc32fast::hash(&v[12..29]);
                        v[29..33].copy_from_slice(&crc.to_be_bytes());
                    }
                    format!("PNG IHDR size {dim} (which {wh}, CRC fixed {fix})")
                }
                "jpg" => match (find(&v, &[0xFF, 0xC0]), find(&v, &[0xFF, 0xC2])) {
                    (Some(p), _) | (None, Some(p)) if p + 9 <= v.len() => {
                        let d = (dim & 0xFFFF) as u16;
                        let off = p + 5 + 2 * rng.below(2);
                        v[off..off + 2].copy_from_slice(&d.to_be_bytes());
                        format!("JPEG SOF field at {off} set to {d}")
                    }
                    _ => "JPEG without SOF (unchanged)".into(),
                },
                _ => {
                    // MP4: the sample entry's width/height or the track header's.
                    let entry = find(&v, b"mp4v").or_else(|| find(&v, b"avc1"));
                    match (rng.below(2), entry, find(&v, b"tkhd")) {
                        (0, Some(p), _) if p + 32 <= v.len() => {
                            let d = (dim & 0xFFFF) as u16;
                            v[p + 28..p + 30].copy_from_slice(&d.to_be_bytes());
                            v[p + 30..p + 32].copy_from_slice(&d.to_be_bytes());
                            format!("MP4 sample entry size {d}")
                        }
                        (_, _, Some(p)) if p + 88 <= v.len() => {
                            v[p + 80..p + 84].copy_from_slice(&dim.to_be_bytes());
                            v[p + 84..p + 88].copy_from_slice(&dim.to_be_bytes());
                            format!("MP4 tkhd size {dim}")
                        }
                        _ => "MP4 without boxes found (unchanged)".into(),
                    }
                }
            };
            (v, what)
        }
    }
}

/// Text mutations: lines duplicated, dropped, swapped; numbers replaced; garbage; cuts; flips.
fn mutate_text(t: &str, rng: &mut Rng) -> (Vec<u8>, String) {
    let mut lines: Vec<String> = t.lines().map(|s| s.to_string()).collect();
    let n = lines.len().max(1);
    match rng.below(7) {
        0 => {
            let i = rng.below(n);
            let l = lines.get(i).cloned().unwrap_or_default();
            lines.insert(i, l);
            (join(&lines), format!("line {} duplicated", i + 1))
        }
        1 => {
            let i = rng.below(n);
            if i < lines.len() {
                lines.remove(i);
            }
            (join(&lines), format!("line {} dropped", i + 1))
        }
        2 => {
            let (i, j) = (rng.below(n), rng.below(n));
            if i < lines.len() && j < lines.len() {
                lines.swap(i, j);
            }
            (
                join(&lines),
                format!("lines {} and {} swapped", i + 1, j + 1),
            )
        }
        3 | 4 => {
            // Replace one number (anywhere) with a hostile one.
            let spans = number_spans(t);
            if spans.is_empty() {
                return (t.as_bytes().to_vec(), "no number (unchanged)".into());
            }
            let (a, b) = *rng.pick(&spans);
            let with = *rng.pick(&[
                "nan",
                ".nan",
                "NaN",
                "inf",
                "-inf",
                ".inf",
                "1e308",
                "-1e308",
                "1e999",
                "0",
                "-1",
                "99999999999",
                "0.0",
                "-0",
                "1e-320",
                "\"x\"",
            ]);
            let s = format!("{}{}{}", &t[..a], with, &t[b..]);
            (s.into_bytes(), format!("number {:?} -> {with}", &t[a..b]))
        }
        5 => {
            let at = rng.below(t.len());
            let at = (0..=at).rev().find(|i| t.is_char_boundary(*i)).unwrap_or(0);
            (t.as_bytes()[..at].to_vec(), format!("truncated at {at}"))
        }
        _ => {
            let mut v = t.as_bytes().to_vec();
            let k = 1 + rng.below(8);
            for _ in 0..k {
                let i = rng.below(v.len());
                v[i] ^= (1 + rng.below(255)) as u8;
            }
            (v, format!("{k} bytes flipped"))
        }
    }
}

fn join(lines: &[String]) -> Vec<u8> {
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// Byte ranges of decimal numbers in a text.
fn number_spans(t: &str) -> Vec<(usize, usize)> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b"+-.eE".contains(&b[j])) {
                j += 1;
            }
            out.push((start, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// One run of the binary on one mutated input.
struct Case {
    /// The subcommand (the row of the outcome table).
    cmd: &'static str,
    /// What was mutated and how (for failure messages).
    what: String,
    args: Vec<OsString>,
    /// Output directory: must hold no partial/temporary file afterwards.
    out: PathBuf,
}

#[derive(Default)]
struct Tally {
    /// (subcommand, outcome) -> count
    counts: std::collections::BTreeMap<(String, String), usize>,
    failures: Vec<String>,
    slowest: f64,
}

fn leftovers(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        if n.starts_with('.') || n.contains("partial") || n.ends_with(".tmp") {
            out.push(n);
        } else if e.path().is_dir() {
            out.extend(leftovers(&e.path()));
        }
    }
    out
}

fn run_case(c: &Case, tally: &Mutex<Tally>) {
    let err_path = c.out.join("stderr.txt");
    let err_file = std::fs::File::create(&err_path).unwrap();
    let t = Instant::now();
    let mut child = Command::new(lanes_bin())
        .args(&c.args)
        .current_dir(repo_root())
        .env("RAYON_NUM_THREADS", "1")
        .env("OPENCV_FOR_THREADS_NUM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err_file)
        .spawn()
        .expect("start lanes");
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let secs = t.elapsed().as_secs_f64();
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&err_path);
    let mut problems = Vec::new();
    let outcome = match status {
        None => {
            problems.push(format!("hang: killed after {} s", TIMEOUT.as_secs()));
            "hang".to_string()
        }
        Some(s) => match s.code() {
            Some(code) => {
                if !(0..=2).contains(&code) {
                    problems.push(format!("exit code {code}"));
                }
                if code != 0 && !err.lines().any(|l| l.starts_with("lanes:")) {
                    problems.push("no `lanes:` line on stderr".into());
                }
                format!("exit {code}")
            }
            None => {
                problems.push(format!("killed by signal {:?}", s.signal()));
                "signal".to_string()
            }
        },
    };
    if err.contains("panicked") {
        problems.push("panicked".into());
    }
    let left = leftovers(&c.out);
    if !left.is_empty() {
        problems.push(format!("left behind: {left:?}"));
    }
    let mut t = tally.lock().unwrap();
    t.slowest = t.slowest.max(secs);
    *t.counts.entry((c.cmd.to_string(), outcome)).or_default() += 1;
    if !problems.is_empty() {
        let tail: String = err.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        t.failures.push(format!(
            "{} [{}]: {} (args {:?}; stderr: {tail})",
            c.cmd,
            c.what,
            problems.join(", "),
            c.args
        ));
    }
}

/// Build the valid inputs once: small stills, a camera for them, a short clip, labels.
struct Inputs {
    jpg: Vec<u8>,
    jpg_full: Vec<u8>,
    png: Vec<u8>,
    camera_small: String,
    camera_full: String,
    config: String,
    clip: Vec<u8>,
    tusimple: String,
    culane: String,
    truth: String,
    boards: Vec<PathBuf>,
}

fn inputs(dir: &Path) -> Inputs {
    let root = repo_root();
    let jpg_full = std::fs::read(root.join("test_images/straight.jpg")).unwrap();
    let img = ::image::load_from_memory(&jpg_full).unwrap();
    let small = img.resize_exact(320, 180, ::image::imageops::FilterType::Triangle);
    let mut jpg = Vec::new();
    small
        .write_to(
            &mut std::io::Cursor::new(&mut jpg),
            ::image::ImageFormat::Jpeg,
        )
        .unwrap();
    let mut png = Vec::new();
    small
        .write_to(
            &mut std::io::Cursor::new(&mut png),
            ::image::ImageFormat::Png,
        )
        .unwrap();
    let camera_full = std::fs::read_to_string(root.join("test_images/camera.yml")).unwrap();
    let camera_small = camera_full
        .replace("image_width: 1280", "image_width: 320")
        .replace("image_height: 720", "image_height: 180")
        .replace(
            "[ 1000., 0., 6.4150000000000000e+02, 0., 1000.,",
            "[ 250., 0., 160.4, 0., 250.,",
        )
        .replace("3.5850000000000000e+02, 0., 0., 1. ]", "89.6, 0., 0., 1. ]");
    assert!(camera_small.contains("250."), "camera text as expected");
    let config = std::fs::read_to_string(root.join("config/default.toml")).unwrap();
    // Eight frames of the synthetic drive at 320x180 (MPEG-4 Part 2, as `lanes video` writes).
    let clip_path = dir.join("clip.mp4");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(root.join("test_videos/synthetic_drive.mp4"))
        .args([
            "-frames:v",
            "8",
            "-vf",
            "scale=320:180",
            "-c:v",
            "mpeg4",
            "-q:v",
            "5",
        ])
        .arg(&clip_path)
        .status()
        .expect("ffmpeg is installed (README set-up installs it)");
    assert!(st.success());
    let clip = std::fs::read(&clip_path).unwrap();
    let tusimple = r#"{"raw_file": "road.jpg", "h_samples": [100, 120, 140, 160, 179], "lanes": [[100, 95, 90, 85, 80], [220, 225, 230, 235, 240], [-2, -2, -2, -2, -2]]}
{"raw_file": "road.jpg", "h_samples": [100, 120, 140, 160, 179], "lanes": [[101, 96, 91, 86, 81], [221, 226, 231, 236, 241]]}
"#
    .to_string();
    let culane =
        "100.5 179 95.2 160 90 140 85 120\n220 179 225 160 230.5 140 235 120\n".to_string();
    let truth = std::fs::read_to_string(root.join("test_images/straight.json")).unwrap();
    let boards: Vec<PathBuf> = data("calibration/opencv_left")
        .map(|d| {
            ["left01.jpg", "left02.jpg", "left03.jpg", "left04.jpg"]
                .iter()
                .map(|n| d.join(n))
                .collect()
        })
        .unwrap_or_default();
    Inputs {
        jpg,
        jpg_full,
        png,
        camera_small,
        camera_full,
        config,
        clip,
        tusimple,
        culane,
        truth,
        boards,
    }
}

fn os(v: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    v.iter().map(|s| s.as_ref().to_os_string()).collect()
}

#[test]
fn corpus_of_malformed_inputs_never_panics_hangs_or_leaves_partial_files() {
    let seed: u64 = std::env::var("LANES_CORPUS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let tmp = tmp();
    let base = tmp.path();
    let inp = inputs(base);
    let mut rng = Rng(seed);
    let mut cases: Vec<Case> = Vec::new();
    let root = repo_root();
    // Shared valid files the mutated ones are run with.
    let good = base.join("good");
    std::fs::create_dir(&good).unwrap();
    std::fs::write(good.join("road.jpg"), &inp.jpg).unwrap();
    std::fs::write(good.join("camera_small.yml"), &inp.camera_small).unwrap();
    let good_jpg = good.join("road.jpg");
    let good_cam = good.join("camera_small.yml");

    let new_case = |cmd: &'static str, what: String, file: &str, bytes: &[u8]| {
        let n = cases_len();
        let dir = base.join(format!("c{n:04}"));
        std::fs::create_dir_all(dir.join("out")).unwrap();
        let p = dir.join(file);
        std::fs::write(&p, bytes).unwrap();
        (cmd, what, p, dir.join("out"))
    };
    // (A counter shared by the closure above and the pushes below.)
    static N: AtomicUsize = AtomicUsize::new(0);
    fn cases_len() -> usize {
        N.fetch_add(1, Ordering::SeqCst)
    }

    // Stills: JPEG (small and full size) and PNG, through `image` and `undistort`.
    for i in 0..255 {
        let (kind, bytes, name) = match i % 5 {
            0 | 1 => ("jpg", &inp.jpg, "s.jpg"),
            2 => ("jpg", &inp.jpg_full, "s.jpg"),
            _ => ("png", &inp.png, "s.png"),
        };
        let (b, what) = mutate_binary(bytes, kind, i / 5, &mut rng);
        let full = bytes.len() == inp.jpg_full.len();
        if i % 4 == 0 {
            let (cmd, what, p, out) = new_case("image", format!("{kind}: {what}"), name, &b);
            cases.push(Case {
                cmd,
                what,
                args: os(&[&"image", &p, &"-o", &out, &"--json"]),
                out,
            });
        } else {
            let cam = if full {
                root.join("test_images/camera.yml")
            } else {
                good_cam.clone()
            };
            let (cmd, what, p, out) = new_case("undistort", format!("{kind}: {what}"), name, &b);
            cases.push(Case {
                cmd,
                what,
                args: os(&[&"undistort", &"--camera", &cam, &p, &"-o", &out]),
                out,
            });
        }
    }
    // Camera files, through `undistort` (and every fourth through `image`).
    for i in 0..70 {
        let (b, what) = mutate_text(&inp.camera_small, &mut rng);
        let cmd = if i % 4 == 0 {
            "image --camera"
        } else {
            "undistort"
        };
        let (cmd, what, p, out) = new_case(cmd, format!("camera: {what}"), "cam.yml", &b);
        let args = if i % 4 == 0 {
            os(&[&"image", &"--camera", &p, &good_jpg, &"-o", &out])
        } else {
            os(&[&"undistort", &"--camera", &p, &good_jpg, &"-o", &out])
        };
        cases.push(Case {
            cmd,
            what,
            args,
            out,
        });
    }
    // Config files, through `config --check` (and every fourth through `image`).
    for i in 0..70 {
        let (b, what) = mutate_text(&inp.config, &mut rng);
        let cmd = if i % 4 == 0 {
            "image --config"
        } else {
            "config --check"
        };
        let (cmd, what, p, out) = new_case(cmd, format!("config: {what}"), "c.toml", &b);
        let args = if i % 4 == 0 {
            os(&[&"image", &"--config", &p, &good_jpg, &"-o", &out])
        } else {
            os(&[&"config", &"--check", &p])
        };
        cases.push(Case {
            cmd,
            what,
            args,
            out,
        });
    }
    // Labels: TuSimple JSON lines, CULane lines, synthetic truth; through `eval`.
    for _ in 0..35 {
        let (b, what) = mutate_text(&inp.tusimple, &mut rng);
        let (cmd, what, p, out) =
            new_case("eval tusimple", format!("labels: {what}"), "label.json", &b);
        cases.push(Case {
            cmd,
            what,
            args: os(&[&"eval", &p, &"--root", &good, &"--json"]),
            out,
        });
    }
    for _ in 0..25 {
        let (b, what) = mutate_text(&inp.culane, &mut rng);
        let (cmd, what, p, out) =
            new_case("eval culane", format!("lines: {what}"), "f.lines.txt", &b);
        std::fs::write(p.with_file_name("f.jpg"), &inp.jpg).unwrap();
        cases.push(Case {
            cmd,
            what,
            args: os(&[&"eval", &p]),
            out,
        });
    }
    for _ in 0..15 {
        let (b, what) = mutate_text(&inp.truth, &mut rng);
        let (cmd, what, p, out) = new_case(
            "eval synthetic",
            format!("truth: {what}"),
            "straight.json",
            &b,
        );
        let d = p.parent().unwrap();
        std::fs::copy(
            root.join("test_images/straight.jpg"),
            d.join("straight.jpg"),
        )
        .unwrap();
        std::fs::write(d.join("camera.yml"), &inp.camera_full).unwrap();
        std::fs::copy(root.join("test_images/lanes.toml"), d.join("lanes.toml")).unwrap();
        cases.push(Case {
            cmd,
            what,
            args: os(&[&"eval", &p]),
            out,
        });
    }
    // The MP4 clip, through `video` (a few frames, overlay and telemetry into `out`).
    for i in 0..25 {
        let (b, what) = mutate_binary(&inp.clip, "mp4", i, &mut rng);
        let (cmd, what, p, out) = new_case("video", format!("mp4: {what}"), "v.mp4", &b);
        cases.push(Case {
            cmd,
            what,
            args: os(&[
                &"video",
                &p,
                &"-o",
                &out.join("o.mp4"),
                &"--telemetry",
                &out.join("t.jsonl"),
                &"--frames",
                &"5",
            ]),
            out,
        });
    }
    // A straight-road frame, through `perspective`.
    for i in 0..12 {
        let (b, what) = mutate_binary(&inp.jpg_full, "jpg", i, &mut rng);
        let (cmd, what, p, out) =
            new_case("perspective", format!("jpg: {what}"), "straight.jpg", &b);
        cases.push(Case {
            cmd,
            what,
            args: os(&[&"perspective", &p, &"-o", &out.join("lanes.toml")]),
            out,
        });
    }
    // Chessboards: three good photos and one mutated, through `calibrate`.
    if inp.boards.is_empty() {
        eprintln!("SKIP: calibrate cases (no chessboard photos in the data)");
    }
    for i in 0..if inp.boards.is_empty() { 0 } else { 12 } {
        let bytes = std::fs::read(&inp.boards[3]).unwrap();
        let (b, what) = mutate_binary(&bytes, "jpg", i, &mut rng);
        let (cmd, what, p, out) =
            new_case("calibrate", format!("board jpg: {what}"), "left04.jpg", &b);
        let d = p.parent().unwrap().to_path_buf();
        for src in &inp.boards[..3] {
            std::fs::copy(src, d.join(src.file_name().unwrap())).unwrap();
        }
        cases.push(Case {
            cmd,
            what,
            args: os(&[
                &"calibrate",
                &d,
                &"--board",
                &"9x6",
                &"-o",
                &out.join("cam.yml"),
            ]),
            out,
        });
    }
    // Telemetry JSON Lines (from `lanes video` on the clip), through `events` and `report`.
    let telemetry_path = base.join("t.jsonl");
    // The Udacity quad scaled to the 320x180 clip (its eight frames are too few to find one).
    let quarter = base.join("quarter.toml");
    std::fs::write(
        &quarter,
        "[perspective]\nsrc = [[143.75, 116.0], [176.75, 116.0], [64.5, 170.5], [262.25, 170.5]]\ndst = [[112.5, 0.0], [207.5, 0.0], [112.5, 180.0], [207.5, 180.0]]\n",
    )
    .unwrap();
    let o = lanes(&[
        "video",
        &base.join("clip.mp4").to_string_lossy(),
        "--config",
        &quarter.to_string_lossy(),
        "--no-render",
        "--telemetry",
        &telemetry_path.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let telemetry = std::fs::read_to_string(&telemetry_path).unwrap();
    for i in 0..40 {
        let (b, what) = mutate_text(&telemetry, &mut rng);
        let (cmd, what, p, out) = if i % 2 == 0 {
            new_case("events", format!("telemetry: {what}"), "t.jsonl", &b)
        } else {
            new_case("report", format!("telemetry: {what}"), "t.jsonl", &b)
        };
        let args = if cmd == "events" {
            os(&[&"events", &p, &"--json"])
        } else {
            os(&[&"report", &p, &"-o", &out.join("r.html")])
        };
        cases.push(Case {
            cmd,
            what,
            args,
            out,
        });
    }
    // The MP4 clip among good ones, through `batch` (its outputs and temp names go to `out`).
    for i in 0..10 {
        let (b, what) = mutate_binary(&inp.clip, "mp4", i + 25, &mut rng);
        let (cmd, what, p, out) = new_case("batch", format!("mp4: {what}"), "v.mp4", &b);
        std::fs::write(p.with_file_name("good.mp4"), &inp.clip).unwrap();
        cases.push(Case {
            cmd,
            what,
            args: os(&[
                &"batch",
                &p,
                &p.with_file_name("good.mp4"),
                &"-o",
                &out,
                &"--frames",
                &"5",
            ]),
            out,
        });
    }
    eprintln!("corpus: seed {seed}, {} cases", cases.len());

    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(c) = cases.get(i) else { break };
                run_case(c, &tally);
            });
        }
    });
    let t = tally.into_inner().unwrap();
    let mut table = String::new();
    let mut cmds: Vec<&String> = t.counts.keys().map(|k| &k.0).collect();
    cmds.dedup();
    for cmd in cmds {
        let row: Vec<String> = t
            .counts
            .iter()
            .filter(|(k, _)| &k.0 == cmd)
            .map(|(k, n)| format!("{}: {n}", k.1))
            .collect();
        table += &format!("  {cmd:<16} {}\n", row.join(", "));
    }
    let total: usize = t.counts.values().sum();
    eprintln!(
        "corpus: {total} cases in {:.1} s (slowest {:.1} s), {} failed checks\n{table}",
        t0.elapsed().as_secs_f64(),
        t.slowest,
        t.failures.len()
    );
    assert!(total >= 500, "{total} cases");
    assert!(
        t.failures.is_empty(),
        "seed {seed}: {} cases failed:\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
}
