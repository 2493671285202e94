//! `lanes bench`: decode-only and decode+encode floors, the three `lanes video` modes, per-stage
//! times (median, p99) and peak memory, measured in one run on the same clip; prints ratios.

use super::common::{load_camera, load_config};
use anyhow::{Context, Result};
use clap::Args;
use lanes::tools::floors;
use lanes::video::{self, Codec, RenderMode, VideoJob, VideoSink, VideoSource};
use std::path::PathBuf;
use std::process::Command;

#[derive(Args)]
pub struct BenchArgs {
    /// Video to measure on.
    input: PathBuf,
    /// Camera file.
    #[arg(long, value_name = "FILE")]
    camera: Option<PathBuf>,
    /// Configuration TOML.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Also check that peak memory stays flat on a 10x longer input (builds it first).
    #[arg(long)]
    rss_check: bool,
    /// Repeat each timed run this many times and keep the best (less noise).
    #[arg(long, default_value_t = 2)]
    repeat: usize,
    #[command(flatten)]
    pub preset: super::preset::ConfigPresetArgs,
}

/// One `lanes video` child process: the rate its summary line reports (frames over the frame
/// loop's time), its whole run's wall time as a user meets it (start-up and any geometry
/// search included), and its peak RSS.
#[derive(Debug, Clone, Copy)]
struct Child {
    fps: f64,
    wall_s: f64,
    rss_mb: f64,
}

/// Run `lanes video` in a child process.
fn child_video(args: &[String]) -> Result<Child> {
    let exe = std::env::current_exe()?;
    let t = std::time::Instant::now();
    let out = Command::new(exe)
        .arg("video")
        .args(args)
        .env("LANES_PRINT_PEAK_RSS", "1")
        .output()?;
    let wall_s = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // The child's own error, without the peak-memory line asked of it.
        let why: Vec<&str> = err
            .lines()
            .filter(|l| !l.starts_with("peak_rss_kb:"))
            .map(|l| l.trim_start_matches("lanes: "))
            .collect();
        anyhow::bail!("lanes video {} failed: {}", args.join(" "), why.join("; "));
    }
    let fps = err
        .lines()
        .find(|l| l.starts_with("lanes video: "))
        .and_then(|l| l.split(" fps").next())
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|s| s.parse::<f64>().ok())
        .context("no fps in summary")?;
    let rss_kb = err
        .lines()
        .find_map(|l| l.strip_prefix("peak_rss_kb: "))
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    Ok(Child {
        fps,
        wall_s,
        rss_mb: rss_kb / 1024.0,
    })
}

/// Start-up as a user meets it: `still_args` (a `lanes image` run on one still) against
/// `lanes --version`, `rounds` interleaved runs of each; their medians, seconds.
fn startup(still_args: &[String], rounds: usize) -> Result<(f64, f64)> {
    let exe = std::env::current_exe()?;
    let time = |args: &[String]| -> Result<f64> {
        let t = std::time::Instant::now();
        let out = Command::new(&exe).args(args).output()?;
        let s = t.elapsed().as_secs_f64();
        if !out.status.success() {
            anyhow::bail!(
                "lanes {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(s)
    };
    let (mut version, mut image) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        version.push(time(&["--version".to_string()])?);
        image.push(time(still_args)?);
    }
    let median = |v: &[f64]| lanes::base::stats::median(v).unwrap_or(f64::NAN);
    Ok((median(&version), median(&image)))
}

fn pct(v: &[f64], p: f64) -> f64 {
    lanes::base::stats::percentile(v, p * 100.0).unwrap_or(f64::NAN)
}

pub fn run(a: BenchArgs) -> Result<i32> {
    let cfg = load_config(a.config.as_deref())?;
    let camera = load_camera(a.camera.as_deref())?;
    let tmp = std::env::temp_dir().join(format!("lanes-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    // Removed on every way out (an error, a closed output pipe), not only at the end.
    let _cleanup = RemoveOnDrop(tmp.clone());
    let input = a.input.to_string_lossy().to_string();
    // Without a config that names [perspective], `lanes video` finds the geometry in the
    // video: a first run finds and saves it (its whole-process time against the same run
    // given the saved geometry is the search's cost), and the timed runs take it as given, so
    // that their frame loops decode every frame (after a search the loop reads the frames the
    // search decoded again, which would flatter its rate).
    let finds = match &a.config {
        Some(p) => !lanes::base::config::Config::file_names_section(p, "perspective")?,
        None => true,
    };
    let saved = tmp.join("geometry.toml");
    let mut cam: Vec<String> = Vec::new();
    if let Some(c) = &a.camera {
        cam.extend(["--camera".into(), c.to_string_lossy().to_string()]);
    }
    let mut base = cam.clone();
    let given = if finds {
        Some(&saved)
    } else {
        a.config.as_ref()
    };
    if let Some(c) = given {
        base.extend(["--config".into(), c.to_string_lossy().to_string()]);
    }
    base.push(input.clone());
    let repeat = a.repeat.max(1);

    // Rounds interleave the runs, so that a slow moment of the machine does not fall on one
    // run only; each run's best round is reported.
    let tel = tmp.join("t.jsonl").to_string_lossy().to_string();
    let out = tmp.join("o.mp4").to_string_lossy().to_string();
    let video = |extra: &[&str]| -> Result<Child> {
        let mut args = base.clone();
        args.extend(extra.iter().map(|s| s.to_string()));
        child_video(&args)
    };
    let finding = |extra: &[&str]| -> Result<Child> {
        let mut args = cam.clone();
        if let Some(c) = &a.config {
            args.extend(["--config".into(), c.to_string_lossy().to_string()]);
        }
        args.extend(["--no-render".into(), input.clone()]);
        args.extend(extra.iter().map(|s| s.to_string()));
        child_video(&args)
    };
    if finds {
        // Finds and saves the geometry the timed runs are given.
        finding(&["--save-geometry", &saved.to_string_lossy()])?;
    }
    let better = |best: &mut Option<Child>, run: Child| {
        if best.is_none_or(|b| run.wall_s < b.wall_s) {
            *best = Some(run);
        }
    };
    let (mut dec, mut enc) = (f64::MAX, f64::MAX);
    let mut frames = 0;
    let mut codec = Codec::default();
    let (mut ana, mut ovl, mut dia, mut search) = (None, None, None, None);
    for _ in 0..repeat {
        let (n, s) = floors::decode_only(&a.input)?;
        frames = n;
        dec = dec.min(s);
        let (_, s, c) = floors::decode_encode(&a.input, &tmp.join("copy.mp4"))?;
        codec = c;
        enc = enc.min(s);
        better(&mut ana, video(&["--no-render", "--telemetry", &tel])?);
        if finds {
            better(&mut search, finding(&["--telemetry", &tel])?);
        }
        better(&mut ovl, video(&["-o", &out, "--telemetry", &tel])?);
        better(&mut dia, video(&["-o", &out, "--diagnostic"])?);
    }
    let (Some(ana), Some(ovl), Some(dia)) = (ana, ovl, dia) else {
        anyhow::bail!("no timed run");
    };
    let dec_fps = frames as f64 / dec;
    let enc_fps = frames as f64 / enc;

    outln!(
        "lanes bench: {} ({frames} frames), {} cores, codec {}",
        a.input.display(),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        codec.name()
    );
    outln!(
        "{:<34} {:>8} {:>10} {:>8}  peak RSS",
        "run",
        "fps",
        "ratio",
        "target"
    );
    outln!(
        "{:<34} {:>8.1} {:>10} {:>8}",
        "1 decode only",
        dec_fps,
        "1.00",
        ""
    );
    outln!(
        "{:<34} {:>8.1} {:>10} {:>8}",
        "2 decode + encode",
        enc_fps,
        "1.00",
        ""
    );
    let row = |name: &str, fps: f64, floor: f64, floor_name: &str, target: f64, rss: f64| {
        let ratio = fps / floor;
        let mark = if ratio >= target { "ok" } else { "BELOW" };
        super::out::write_line(format_args!(
            "{:<34} {:>8.1} {:>6.2}x({}) {:>5.2}x {mark}  {:.0} MB",
            name, fps, ratio, floor_name, target, rss
        ))
    };
    row(
        "3 lanes video --no-render",
        ana.fps,
        dec_fps,
        "1",
        1.0,
        ana.rss_mb,
    )?;
    row(
        "4 lanes video (overlay)",
        ovl.fps,
        enc_fps,
        "2",
        0.8,
        ovl.rss_mb,
    )?;
    row(
        "5 lanes video --diagnostic",
        dia.fps,
        enc_fps,
        "2",
        0.5,
        dia.rss_mb,
    )?;

    if let Some(f) = search {
        // The geometry search's cost: the whole run that finds it against the one given it.
        let extra = f.wall_s - ana.wall_s;
        let share = extra / ana.wall_s;
        outln!(
            "{:<34} {:>7.2}s {:>9.0}% {:>6}% {}  (--no-render, whole process: {:.2} s finding the geometry, {:.2} s given it)",
            "6 geometry search",
            extra,
            100.0 * share,
            10,
            if share <= 0.10 { "ok" } else { "ABOVE" },
            f.wall_s,
            ana.wall_s
        );
    }
    // Start-up: `lanes image` on one still (the input's first frame, as JPEG) with the runs'
    // camera and geometry, against the process that only prints its version.
    let still = tmp.join("first_frame.jpg");
    VideoSource::open(&a.input)?
        .read()?
        .context("the input has no frame")?
        .write(&still)?;
    let mut still_args: Vec<String> = vec!["image".into()];
    still_args.extend(base[..base.len() - 1].iter().cloned());
    still_args.extend([
        still.to_string_lossy().to_string(),
        "-o".into(),
        tmp.join("still_out").to_string_lossy().to_string(),
    ]);
    let rounds = 5 * repeat;
    let (version_s, image_s) = startup(&still_args, rounds)?;
    let ratio = image_s / version_s;
    outln!(
        "{:<34} {:>6.0}ms {:>9.2}x {:>5.2}x {}  (lanes image on the input's first frame against lanes --version {:.0} ms; medians of {rounds})",
        "7 lanes image start-up",
        image_s * 1e3,
        ratio,
        1.5,
        if ratio <= 1.5 { "ok" } else { "ABOVE" },
        version_s * 1e3,
    );
    outln!(
        "(3-5: the frame loop's rate from the run's summary{}; best of {repeat} interleaved rounds)",
        if finds {
            ", with the geometry found in the video given"
        } else {
            ""
        }
    );

    // Per-stage times: one single-threaded run per render mode, so stages do not overlap, with
    // OpenCV's own worker threads off, so that each time is the work of one core.
    // With the geometry the runs above found (the config's otherwise).
    let stage_cfg = if finds {
        load_config(Some(&saved))?
    } else {
        cfg
    };
    let cv_threads = opencv::core::get_num_threads()?;
    opencv::core::set_num_threads(1)?;
    let mut series = Vec::new();
    for mode in [RenderMode::Overlay, RenderMode::Diagnostic] {
        let job = VideoJob {
            input: a.input.clone(),
            output: Some(tmp.join("stage.mp4")),
            render: mode,
            telemetry: None,
            start: 0,
            max_frames: None,
            codec: video::preferred_codec(),
            threaded: false,
            cancel: Default::default(),
            shot_search: None,
            opening_cut: None,
        };
        series.push(
            video::run(
                &job,
                &stage_cfg,
                camera.as_ref(),
                None,
                &mut |_| {},
                &|_| {},
            )?
            .stages,
        );
    }
    opencv::core::set_num_threads(cv_threads)?;
    outln!();
    outln!("per-stage ms per frame (one core, single-threaded run)   median      p99");
    for (name, v) in floors::stage_rows(&series[0]) {
        let v = if name == "composite" {
            &series[1].composite
        } else {
            v
        };
        outln!("  {:<42} {:>8.2} {:>8.2}", name, pct(v, 0.5), pct(v, 0.99));
    }
    let s = &series[0];
    let analysis: Vec<f64> = (0..s.warp.len())
        .map(|i| s.warp[i] + s.threshold[i] + s.search_fit[i] + s.track[i])
        .collect();
    let render: Vec<f64> = (0..s.overlay.len())
        .map(|i| s.undistort[i] + s.overlay[i])
        .collect();
    outln!(
        "  {:<42} {:>8.2} {:>8.2}   (target < 4 ms median)",
        "analysis total (remap..tracking)",
        pct(&analysis, 0.5),
        pct(&analysis, 0.99)
    );
    outln!(
        "  {:<42} {:>8.2} {:>8.2}   (target < 4 ms median)",
        "overlay render total (undistort+overlay)",
        pct(&render, 0.5),
        pct(&render, 0.99)
    );

    if a.rss_check {
        let long = tmp.join("long10x.mp4");
        let mut src = VideoSource::open(&a.input)?;
        let mut sink = VideoSink::create(&long, src.fps, src.width, src.height, Codec::default())?;
        let mut frames_vec = Vec::new();
        while let Some(f) = src.read()? {
            frames_vec.push(f);
        }
        for _ in 0..10 {
            for f in &frames_vec {
                sink.write(f)?;
            }
        }
        drop(frames_vec);
        sink.finish()?;
        let mut long_args = base.clone();
        long_args.pop();
        long_args.push(long.to_string_lossy().to_string());
        let run_long = |extra: &[&str]| -> Result<f64> {
            let mut args = long_args.clone();
            args.extend(extra.iter().map(|s| s.to_string()));
            Ok(child_video(&args)?.rss_mb)
        };
        let long_ana = run_long(&["--no-render", "--telemetry", &tel])?;
        let long_ovl = run_long(&["-o", &out])?;
        outln!();
        let (ana_rss, ovl_rss) = (ana.rss_mb, ovl.rss_mb);
        outln!("peak RSS, 1x vs 10x input: --no-render {ana_rss:.0} -> {long_ana:.0} MB ({:+.1}%), overlay {ovl_rss:.0} -> {long_ovl:.0} MB ({:+.1}%)   (target < 250 MB, < +10%)",
            100.0 * (long_ana / ana_rss - 1.0), 100.0 * (long_ovl / ovl_rss - 1.0));
    }
    Ok(0)
}

/// A folder removed when dropped.
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
