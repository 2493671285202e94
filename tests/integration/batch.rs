//! `lanes batch`: per-clip telemetry equals `lanes video`'s (any `--jobs`), resume after SIGKILL,
//! a corrupt video fails alone, shards partition the inputs.

use super::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// The 8 real clips: `videos/` and `lanelines_p1/test_videos/` of the shared data and the
/// committed synthetic drive. `None` (skip) when the shared data is missing.
pub fn clip_inputs() -> Option<Vec<PathBuf>> {
    let v = data("videos")?;
    let p1 = data("lanelines_p1/test_videos")?;
    Some(vec![v, p1, repo_root().join("test_videos")])
}

/// How many videos `clip_inputs` holds (the shared data grows: 8 clips, 11 with `anycam/`).
pub fn clip_count() -> usize {
    clip_inputs()
        .map(|dirs| {
            dirs.iter()
                .flat_map(|d| files_under(d))
                .filter(|f| f.to_ascii_lowercase().ends_with(".mp4"))
                .count()
        })
        .unwrap_or(0)
}

fn batch(args: &[&str]) -> Output {
    let mut a = vec!["batch"];
    a.extend_from_slice(args);
    lanes(&a)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file under `dir`, relative, `/`-separated.
pub fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(
                    p.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// Temporary files (`.NAME.partial...`) left anywhere under `dir`.
pub fn partials_under(dir: &Path) -> Vec<String> {
    files_under(dir)
        .into_iter()
        .filter(|f| {
            let name = f.rsplit('/').next().unwrap_or("");
            name.starts_with('.') && name.contains(".partial")
        })
        .collect()
}

/// rel -> telemetry bytes of every video folder under `out` (every video, byte for byte: the
/// frames self-calibration judges are the same whatever the thread count or the CPU).
fn telemetry_by_video(out: &Path) -> BTreeMap<String, Vec<u8>> {
    files_under(out)
        .into_iter()
        .filter_map(|f| f.strip_suffix("/telemetry.jsonl").map(|r| r.to_string()))
        .map(|rel| {
            let bytes = std::fs::read(out.join(&rel).join("telemetry.jsonl")).unwrap();
            (rel, bytes)
        })
        .collect()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn batch_telemetry_equals_lanes_video_per_clip_with_jobs_1_and_2() {
    let Some(inputs) = clip_inputs() else { return };
    let dir = tmp();
    let mut outs = Vec::new();
    for jobs in ["1", "2"] {
        let out = dir.path().join(format!("out{jobs}"));
        let mut args: Vec<&str> = inputs.iter().map(|p| s(p)).collect();
        args.extend(["-o", s(&out), "--frames", "8", "--jobs", jobs]);
        let o = batch(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        outs.push(out);
    }
    let t1 = telemetry_by_video(&outs[0]);
    let t2 = telemetry_by_video(&outs[1]);
    assert_eq!(t1.len(), clip_count(), "{:?}", t1.keys());
    assert_eq!(t1, t2, "--jobs 1 and --jobs 2 give the same telemetry");
    // Each clip against `lanes video` on the same file.
    let report = read_json(&outs[0].join("batch.json"));
    let videos = report["videos"].as_array().unwrap();
    assert_eq!(videos.len(), clip_count());
    for v in videos {
        let rel = v["path"].as_str().unwrap();
        assert_eq!(v["status"], "done", "{rel}");
        let summary = read_json(&outs[0].join(rel).join("summary.json"));
        let input = PathBuf::from(summary["input"]["path"].as_str().unwrap());
        let t = dir.path().join("video.jsonl");
        let o = lanes(&[
            "video",
            s(&input),
            "--no-render",
            "--frames",
            "8",
            "--telemetry",
            s(&t),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(&t).unwrap(),
            t1[rel],
            "{rel}: batch telemetry differs from lanes video"
        );
        // The row's numbers are DriveStats of that telemetry.
        let (records, _) = lanes::base::telemetry::read_jsonl(&t).unwrap();
        let stats = lanes::base::summary::DriveStats::of(&records);
        assert_eq!(v["frames"].as_u64().unwrap() as usize, stats.frames);
        assert!((v["lane_share"].as_f64().unwrap() - stats.lane_share()).abs() < 1e-12);
        assert!(
            (v["search_failed_share"].as_f64().unwrap() - stats.search_failed_share()).abs()
                < 1e-12
        );
    }
    assert_eq!(
        report["totals"]["frames"].as_u64(),
        Some(8 * clip_count() as u64)
    );
    let csv = std::fs::read_to_string(outs[0].join("batch.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        clip_count() + 2,
        "header + a line per video + TOTAL:\n{csv}"
    );
    assert!(csv.lines().last().unwrap().starts_with("TOTAL,"));
    assert!(partials_under(dir.path()).is_empty());
}

#[test]
fn batch_killed_mid_run_then_rerun_finishes_only_what_is_missing() {
    let Some(inputs) = clip_inputs() else { return };
    let dir = tmp();
    let out = dir.path().join("out");
    let reference = dir.path().join("ref");
    let mut args: Vec<String> = vec!["batch".into()];
    args.extend(inputs.iter().map(|p| s(p).to_string()));
    args.extend(["--frames".into(), "40".into()]);
    // An uninterrupted run for reference.
    let mut a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    a.extend(["-o", s(&reference)]);
    let o = lanes(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The same batch, SIGKILLed once two videos are done.
    let mut child = Command::new(lanes_bin())
        .args(&args)
        .args(["-o", s(&out)])
        .current_dir(repo_root())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let done_now = || {
        files_under(&out)
            .into_iter()
            .filter(|f| f.ends_with("/summary.json"))
            .collect::<Vec<_>>()
    };
    while done_now().len() < 2 && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let finished = done_now();
    assert!(
        (2..clip_count()).contains(&finished.len()),
        "killed mid-batch: {finished:?}"
    );
    let mtimes: Vec<_> = finished
        .iter()
        .map(|f| std::fs::metadata(out.join(f)).unwrap().modified().unwrap())
        .collect();
    let mut a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    a.extend(["-o", s(&out)]);
    let o = lanes(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    for (f, m) in finished.iter().zip(&mtimes) {
        let rel = f.trim_end_matches("/summary.json");
        assert!(
            err.contains(&format!("skipped {rel}")),
            "{rel} redone:\n{err}"
        );
        let now = std::fs::metadata(out.join(f)).unwrap().modified().unwrap();
        assert_eq!(&now, m, "{f} was rewritten");
    }
    assert_eq!(telemetry_by_video(&out), telemetry_by_video(&reference));
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
    let report = read_json(&out.join("batch.json"));
    assert_eq!(report["done"], clip_count());
    assert_eq!(report["skipped"].as_u64().unwrap() as usize, finished.len());
}

/// A folder with two good copies of the synthetic clip, random bytes named `.mp4` and a
/// truncated copy.
pub fn corrupt_set(dir: &Path) -> PathBuf {
    let set = dir.join("set");
    std::fs::create_dir_all(set.join("sub")).unwrap();
    let clip = repo_root().join("test_videos/synthetic_drive.mp4");
    std::fs::copy(&clip, set.join("good.mp4")).unwrap();
    std::fs::copy(&clip, set.join("sub/good.mp4")).unwrap();
    let bytes = std::fs::read(&clip).unwrap();
    std::fs::write(set.join("truncated.mp4"), &bytes[..bytes.len() / 4]).unwrap();
    let mut state = 7u32;
    let noise: Vec<u8> = (0..100_000)
        .map(|_| {
            state = state.wrapping_mul(1664525).wrapping_add(1013904223);
            (state >> 24) as u8
        })
        .collect();
    std::fs::write(set.join("noise.mp4"), noise).unwrap();
    set
}

#[test]
fn batch_corrupt_videos_fail_alone_with_exit_1() {
    let dir = tmp();
    let set = corrupt_set(dir.path());
    let out = dir.path().join("out");
    let o = batch(&[s(&set), "-o", s(&out), "--frames", "5"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
    let report = read_json(&out.join("batch.json"));
    let status: BTreeMap<String, String> = report["videos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["path"].as_str().unwrap().to_string(),
                v["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(status["good.mp4"], "done");
    assert_eq!(status["sub/good.mp4"], "done");
    assert_eq!(status["noise.mp4"], "failed");
    assert_eq!(status["truncated.mp4"], "failed");
    let noise = read_json(&out.join("noise.mp4/summary.json"));
    let err = noise["error"].as_str().unwrap();
    assert!(err.contains("noise.mp4") && !err.contains('\n'), "{err}");
    assert!(!out.join("noise.mp4/telemetry.jsonl").exists());
    assert_eq!(report["totals"]["frames"], 10);
    assert!(partials_under(&out).is_empty());
    // A rerun redoes the failed ones only.
    let o = batch(&[s(&set), "-o", s(&out), "--frames", "5"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("skipped good.mp4") && err.contains("failed  noise.mp4"),
        "{err}"
    );
    // OUTDIR that cannot be created: one-line error, exit 2.
    let file = dir.path().join("a_file");
    std::fs::write(&file, b"x").unwrap();
    let o = batch(&[s(&set), "-o", s(&file.join("out"))]);
    assert_one_line_error(&o, "cannot create output directory");
}

#[test]
fn batch_shards_cover_every_input_exactly_once() {
    let Some(inputs) = clip_inputs() else { return };
    let dir = tmp();
    let out = dir.path().join("out");
    let mut seen: Vec<String> = Vec::new();
    for i in 1..=3 {
        let shard = format!("{i}/3");
        let mut args: Vec<&str> = inputs.iter().map(|p| s(p)).collect();
        args.extend(["-o", s(&out), "--frames", "2", "--shard", &shard]);
        let o = batch(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let r = read_json(&out.join(format!("batch-shard-{i}-of-3.json")));
        seen.extend(
            r["videos"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["path"].as_str().unwrap().to_string()),
        );
    }
    seen.sort();
    let mut all: Vec<String> = files_under(&out)
        .into_iter()
        .filter_map(|f| f.strip_suffix("/summary.json").map(|r| r.to_string()))
        .collect();
    all.sort();
    assert_eq!(all.len(), clip_count());
    assert_eq!(seen, all, "each input in exactly one shard");
    let o = batch(&[s(&inputs[2]), "-o", s(&out), "--shard", "4/3"]);
    assert_one_line_error(&o, "--shard 4/3");
}

#[test]
fn batch_sigterm_stops_taking_videos_and_leaves_no_temp_files() {
    let Some(inputs) = clip_inputs() else { return };
    let dir = tmp();
    let out = dir.path().join("out");
    let child = Command::new(lanes_bin())
        .arg("batch")
        .args(&inputs)
        .args(["-o", s(&out), "--frames", "60"])
        .current_dir(repo_root())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !files_under(&out)
        .iter()
        .any(|f| f.ends_with("/summary.json"))
    {
        assert!(start.elapsed().as_secs() < 60, "no video finished");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
    let report = read_json(&out.join("batch.json"));
    let done = report["done"].as_u64().unwrap();
    assert!((1..clip_count() as u64).contains(&done), "{report}");
    for v in report["videos"].as_array().unwrap() {
        let rel = v["path"].as_str().unwrap();
        match v["status"].as_str().unwrap() {
            "done" => assert!(out.join(rel).join("telemetry.jsonl").is_file()),
            "interrupted" => assert!(!out.join(rel).join("telemetry.jsonl").exists()),
            other => panic!("{rel}: {other}"),
        }
    }
    // The next run finishes the rest.
    let mut args: Vec<&str> = vec!["batch"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["-o", s(&out), "--frames", "60"]);
    let o = lanes(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_json(&out.join("batch.json"))["done"], clip_count());
}

/// Camera and config of the committed synthetic clip, as batch flags.
fn synthetic_setup() -> [String; 4] {
    [
        "--camera".into(),
        s(&repo_root().join("calibration/synthetic.yml")).into(),
        "--config".into(),
        s(&repo_root().join("test_videos/synthetic_drive.toml")).into(),
    ]
}

/// A folder `set/` with copies of the synthetic clip named `names`.
fn synthetic_set(dir: &Path, names: &[&str]) -> PathBuf {
    let set = dir.join("set");
    std::fs::create_dir_all(&set).unwrap();
    for n in names {
        std::fs::copy(
            repo_root().join("test_videos/synthetic_drive.mp4"),
            set.join(n),
        )
        .unwrap();
    }
    set
}

fn batch_with(setup: &[String], args: &[&str]) -> Output {
    let mut a: Vec<&str> = setup.iter().map(String::as_str).collect();
    a.extend_from_slice(args);
    batch(&a)
}

/// path -> row of `batch.json`.
fn rows(out: &Path) -> BTreeMap<String, Value> {
    read_json(&out.join("batch.json"))["videos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["path"].as_str().unwrap().to_string(), v.clone()))
        .collect()
}

fn bytes_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    files_under(dir)
        .into_iter()
        .map(|f| {
            let b = std::fs::read(dir.join(&f)).unwrap();
            (f, b)
        })
        .collect()
}

/// Issue 24: a rerun with fewer inputs rewrote the index with only them, and a rerun with
/// another --render left the old overlay.mp4 and report.html beside the new telemetry.
#[test]
fn batch_rerun_with_fewer_inputs_merges_the_index_and_removes_outputs_of_another_render() {
    let dir = tmp();
    let set = synthetic_set(dir.path(), &["a.mp4", "b.mp4", "c.mp4"]);
    let inputs = bytes_of(&set);
    let out = dir.path().join("out");
    let setup = synthetic_setup();
    let common = ["-o", s(&out), "--frames", "10"];
    let (a, c) = (set.join("a.mp4"), set.join("c.mp4"));
    let mut args = vec![s(&set), "--render", "overlay"];
    args.extend(common);
    let o = batch_with(&setup, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("kept from earlier runs"),
        "{}",
        stderr(&o)
    );
    let o = lanes(&["report", s(&out), "-o", s(&out.join("index.html"))]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for v in ["a.mp4", "b.mp4", "c.mp4"] {
        for f in ["overlay.mp4", "report.html", "telemetry.jsonl"] {
            assert!(out.join(v).join(f).is_file(), "{v}/{f}");
        }
    }
    // Fewer inputs, another --render: a.mp4 alone is redone without a video.
    let mut args = vec![s(&a)];
    args.extend(common);
    let o = batch_with(&setup, &args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "lanes batch: index {}: 1 video from this run, 2 kept from earlier runs",
            out.join("batch.json").display()
        )),
        "{err}"
    );
    assert!(
        err.contains("removed overlay.mp4, report.html of an earlier run with another --render")
            && err.contains("removed 2 outputs of earlier runs with another --render"),
        "{err}"
    );
    assert!(!out.join("a.mp4/overlay.mp4").exists());
    assert!(!out.join("a.mp4/report.html").exists());
    assert!(out.join("a.mp4/telemetry.jsonl").is_file());
    for v in ["b.mp4", "c.mp4"] {
        assert!(out.join(v).join("overlay.mp4").is_file(), "{v}");
        assert!(out.join(v).join("report.html").is_file(), "{v}");
    }
    assert!(out.join("index.html").is_file(), "not a video's output");
    assert_eq!(bytes_of(&set), inputs, "inputs untouched");
    let r = rows(&out);
    assert_eq!(r.keys().collect::<Vec<_>>(), ["a.mp4", "b.mp4", "c.mp4"]);
    assert_eq!(r["a.mp4"]["earlier_run"], false);
    assert_eq!(r["b.mp4"]["earlier_run"], true);
    assert_eq!(r["c.mp4"]["earlier_run"], true);
    let index = read_json(&out.join("batch.json"));
    assert_eq!(index["totals"]["frames"], 30);
    assert_eq!(
        (index["done"].clone(), index["earlier_runs"].clone()),
        (3.into(), 2.into())
    );
    // Each row's medians are those of the video's telemetry; its camera and config are named.
    for (rel, row) in &r {
        let (records, _) =
            lanes::base::telemetry::read_jsonl(&out.join(rel).join("telemetry.jsonl")).unwrap();
        let mut m = lanes::base::summary::MeasureSeries::default();
        records.iter().for_each(|rec| m.add(rec));
        let m = m.medians();
        for (key, want) in [
            ("radius_median_m", m.radius_median_m),
            ("lane_width_median_m", m.lane_width_median_m),
            ("offset_median_m", m.offset_median_m),
        ] {
            let got = row[key].as_f64().unwrap();
            assert!((got - want.unwrap()).abs() < 1e-9, "{rel} {key}: {got}");
        }
        assert!(row["config"]
            .as_str()
            .unwrap()
            .ends_with("synthetic_drive.toml"));
    }
    let w = r["a.mp4"]["lane_width_median_m"].as_f64().unwrap();
    assert!((3.5..3.9).contains(&w), "synthetic lane 3.7 m: {w}");
    let csv = std::fs::read_to_string(out.join("batch.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(lines[0].contains(
        ",offset_abs_max_m,radius_median_m,lane_width_median_m,offset_median_m,earlier_run,camera,config,note,error"
    ));
    assert!(
        lines[2].starts_with("b.mp4,done,") && lines[2].contains(",true,"),
        "{csv}"
    );
    // A video whose folder is gone leaves the index (said so); an unreadable index is rebuilt
    // from the folders' summary.json files.
    std::fs::remove_dir_all(out.join("c.mp4")).unwrap();
    let mut args = vec![s(&a)];
    args.extend(common);
    let o = batch_with(&setup, &args);
    let err = stderr(&o);
    assert!(err.contains("skipped a.mp4"), "{err}");
    assert!(
        err.contains("1 video from this run, 1 kept from earlier runs, 1 of the old index dropped (no readable summary.json in its folder: c.mp4)"),
        "{err}"
    );
    assert_eq!(rows(&out).keys().collect::<Vec<_>>(), ["a.mp4", "b.mp4"]);
    std::fs::write(out.join("batch.json"), "{\"videos\": [").unwrap();
    let mut args = vec![s(&c)];
    args.extend(common);
    let o = batch_with(&setup, &args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("1 video from this run, 2 kept from earlier runs; rebuilt from the folders' summary.json files")
            && err.contains("batch.json unreadable"),
        "{err}"
    );
    let order: Vec<String> = read_json(&out.join("batch.json"))["videos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        order,
        ["c.mp4", "a.mp4", "b.mp4"],
        "this run's rows, then the kept ones"
    );
    let r = rows(&out);
    assert_eq!(r["c.mp4"]["earlier_run"], false);
    assert_eq!(r["a.mp4"]["earlier_run"], true);
    assert!(partials_under(&out).is_empty());
}

/// Issue 24: one --camera/--config for a whole batch; a manifest gives each video its own.
#[test]
fn batch_manifest_gives_each_video_its_camera_and_config() {
    let dir = tmp();
    let root = dir.path();
    let set = synthetic_set(root, &["a.mp4", "b.mp4", "c.mp4"]);
    let inputs = bytes_of(&set);
    // b's config: the synthetic one with 10% wider pixels (units.xm_per_px).
    let text =
        std::fs::read_to_string(repo_root().join("test_videos/synthetic_drive.toml")).unwrap();
    let mut cfg: toml::Table = toml::from_str(&text).unwrap();
    let units = cfg["units"].as_table_mut().unwrap();
    let xm = units["xm_per_px"].as_float().unwrap();
    units.insert("xm_per_px".into(), toml::Value::Float(xm * 1.1));
    std::fs::write(root.join("wide.toml"), toml::to_string(&cfg).unwrap()).unwrap();
    std::fs::copy(
        repo_root().join("calibration/udacity.yml"),
        root.join("udacity.yml"),
    )
    .unwrap();
    let manifest = root.join("fleet.csv");
    std::fs::write(
        &manifest,
        "input,camera,config\n# a: the batch's camera and config\nset/a.mp4,,\nset/b.mp4,,wide.toml\n\"set/c.mp4\",udacity.yml,\n",
    )
    .unwrap();
    let out = root.join("out");
    let setup = synthetic_setup();
    let o = batch_with(
        &setup,
        &["--manifest", s(&manifest), "-o", s(&out), "--frames", "10"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = rows(&out);
    assert_eq!(
        r.keys().collect::<Vec<_>>(),
        ["set/a.mp4", "set/b.mp4", "set/c.mp4"]
    );
    assert!(r["set/b.mp4"]["config"]
        .as_str()
        .unwrap()
        .ends_with("wide.toml"));
    assert!(r["set/c.mp4"]["camera"]
        .as_str()
        .unwrap()
        .ends_with("udacity.yml"));
    assert!(r["set/c.mp4"]["config"]
        .as_str()
        .unwrap()
        .ends_with("synthetic_drive.toml"));
    // Each video's telemetry is that of `lanes video` with its own camera and config.
    let synth_cam = repo_root().join("calibration/synthetic.yml");
    let synth_cfg = repo_root().join("test_videos/synthetic_drive.toml");
    let mut tel = BTreeMap::new();
    for (v, cam, cfg) in [
        ("a.mp4", &synth_cam, &synth_cfg),
        ("b.mp4", &synth_cam, &root.join("wide.toml")),
        ("c.mp4", &root.join("udacity.yml"), &synth_cfg),
    ] {
        let t = root.join(format!("{v}.jsonl"));
        let o = lanes(&[
            "video",
            "--camera",
            s(cam),
            "--config",
            s(cfg),
            s(&set.join(v)),
            "--no-render",
            "--frames",
            "10",
            "--telemetry",
            s(&t),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let batch_tel = std::fs::read(out.join("set").join(v).join("telemetry.jsonl")).unwrap();
        assert_eq!(
            std::fs::read(&t).unwrap(),
            batch_tel,
            "{v}: not lanes video's telemetry"
        );
        tel.insert(v, batch_tel);
    }
    assert_ne!(tel["a.mp4"], tel["b.mp4"]);
    assert_ne!(tel["a.mp4"], tel["c.mp4"]);
    let width = |v: &str| r[v]["lane_width_median_m"].as_f64().unwrap();
    let ratio = width("set/b.mp4") / width("set/a.mp4");
    assert!(
        (ratio - 1.1).abs() < 0.02,
        "xm_per_px x1.1 -> lane width x{ratio}"
    );
    // The same as JSON lines into another folder: the same telemetry.
    let jl = root.join("fleet.jsonl");
    std::fs::write(
        &jl,
        "{\"input\": \"set/b.mp4\", \"config\": \"wide.toml\"}\n{\"input\": \"set/c.mp4\", \"camera\": \"udacity.yml\", \"config\": null}\n",
    )
    .unwrap();
    let out2 = root.join("out2");
    let o = batch_with(
        &setup,
        &["--manifest", s(&jl), "-o", s(&out2), "--frames", "10"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for v in ["b.mp4", "c.mp4"] {
        assert_eq!(
            std::fs::read(out2.join("set").join(v).join("telemetry.jsonl")).unwrap(),
            tel[v]
        );
    }
    // A bad row: one line naming the manifest, the line and the value, before any work.
    std::fs::write(
        &manifest,
        "input,camera,config\nset/a.mp4,,\nset/b.mp4,,missing.toml\n",
    )
    .unwrap();
    let out3 = root.join("out3");
    let o = batch_with(&setup, &["--manifest", s(&manifest), "-o", s(&out3)]);
    assert_one_line_error(
        &o,
        &format!(
            "{}: line 3: config \"missing.toml\": no such file",
            manifest.display()
        ),
    );
    assert!(
        !out3.exists(),
        "nothing written before the manifest is checked"
    );
    std::fs::write(&manifest, "input,camera,config\nset/a.mp4,wide.toml,\n").unwrap();
    let o = batch_with(&setup, &["--manifest", s(&manifest), "-o", s(&out3)]);
    assert_one_line_error(&o, "fleet.csv: line 2: ");
    assert!(stderr(&o).contains("wide.toml"), "{}", stderr(&o));
    assert!(!out3.exists());
    assert_eq!(bytes_of(&set), inputs, "inputs untouched");
}

/// Issue 24: the report index's notes column stayed empty where summary.json had a note. The
/// geometry found in the video (no --config) is the note of batch.csv, batch.json and the
/// index page's row.
#[test]
fn batch_notes_reach_the_csv_and_the_report_index() {
    let dir = tmp();
    let set = synthetic_set(dir.path(), &["a.mp4"]);
    let out = dir.path().join("out");
    let cam = repo_root().join("calibration/synthetic.yml");
    let o = batch(&[
        s(&set),
        "--camera",
        s(&cam),
        "-o",
        s(&out),
        "--frames",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = read_json(&out.join("a.mp4/summary.json"));
    let note = summary["note"].as_str().unwrap().to_string();
    assert!(note.starts_with("geometry found in "), "{note}");
    assert_eq!(rows(&out)["a.mp4"]["note"].as_str(), Some(note.as_str()));
    let csv = std::fs::read_to_string(out.join("batch.csv")).unwrap();
    assert!(
        csv.lines().nth(1).unwrap().contains(&format!("\"{note}\"")),
        "{csv}"
    );
    let index = out.join("index.html");
    let o = lanes(&["report", s(&out), "-o", s(&index)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(
        html.contains(
            "<th>radius median (m)</th><th>lane width median (m)</th><th>offset median (m)</th>"
        ),
        "{html}"
    );
    let row = html
        .lines()
        .find(|l| l.contains("a.mp4/report.html"))
        .unwrap_or_else(|| panic!("{html}"));
    assert!(
        row.contains(&format!("<td data-v=\"1\">{note}</td></tr>")),
        "{row}"
    );
    // The medians columns (from the telemetry; JSON parsing may move the last bit); the
    // first cell, the name, is not a number.
    let cells: Vec<f64> = row
        .split("<td data-v=\"")
        .skip(1)
        .filter_map(|c| c.split('"').next()?.parse().ok())
        .collect();
    let r = &rows(&out)["a.mp4"];
    for (k, i) in [
        ("radius_median_m", 6),
        ("lane_width_median_m", 7),
        ("offset_median_m", 8),
    ] {
        let want = r[k].as_f64().unwrap();
        assert!(
            (cells[i] - want).abs() < 1e-9,
            "{k}: {} vs {want}: {row}",
            cells[i]
        );
    }
}

#[test]
fn batch_says_which_videos_had_no_lane_once_at_the_end() {
    // Two flat grey videos under a fixed config (no lane can be found on them) and one
    // synthetic drive with its own camera (lanes on every frame).
    let dir = tmp();
    let set = synthetic_set(dir.path(), &["drive.mp4"]);
    for name in ["grey1.mp4", "grey2.mp4"] {
        let st = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg("color=c=gray:s=1280x720:d=1:r=25")
            .args(["-c:v", "libx264", "-pix_fmt", "yuv420p"])
            .arg(set.join(name))
            .status()
            .expect("ffmpeg is installed (README set-up installs it)");
        assert!(st.success());
    }
    let out = dir.path().join("out");
    let manifest = dir.path().join("m.csv");
    let cfg = repo_root().join("calibration/udacity.toml");
    let cam = repo_root().join("calibration/synthetic.yml");
    std::fs::write(
        &manifest,
        format!(
            "input,camera,config\n{},{},\n{},,{}\n{},,{}\n",
            s(&set.join("drive.mp4")),
            s(&cam),
            s(&set.join("grey1.mp4")),
            s(&cfg),
            s(&set.join("grey2.mp4")),
            s(&cfg)
        ),
    )
    .unwrap();
    let o = batch(&["--manifest", s(&manifest), "-o", s(&out), "--frames", "10"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    for name in ["grey1.mp4", "grey2.mp4"] {
        let line = err
            .lines()
            .find(|l| l.starts_with("done") && l.contains(name))
            .unwrap_or_else(|| panic!("{err}"));
        assert!(
            line.contains("lane in 0.0% of frames (no lane found)"),
            "{line}"
        );
    }
    let drive = err
        .lines()
        .find(|l| l.starts_with("done") && l.contains("drive.mp4"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(!drive.contains("no lane found"), "{drive}");
    let hints: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("lanes: warning:"))
        .collect();
    assert_eq!(hints.len(), 1, "{err}");
    assert!(
        hints[0].starts_with("lanes: warning: no lane found in 2 videos: ")
            && hints[0].contains("grey1.mp4, ")
            && hints[0].contains("grey2.mp4: the perspective (or camera) most likely does not fit")
            && hints[0].contains("lanes perspective")
            && hints[0].contains("docs/any-camera.md"),
        "{}",
        hints[0]
    );
}
