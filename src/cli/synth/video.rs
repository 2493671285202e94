//! `lanes synth video`: a drive rendered to a video with per-frame truth and its events.

use super::args::*;
use crate::cli::common::ensure_out_dir;
use anyhow::{Context, Result};
use clap::Args;
use lanes::tools::synth::scene::Renderer;
use lanes::tools::synth::truth::{self, FrameInfo};
use lanes::tools::synth::{self as synth, Drive, Manoeuvre};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub(super) struct VideoArgs {
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub(super) output: PathBuf,
    /// File stem of the video, its truth (.json) and its config (.toml).
    #[arg(long, default_value = "synthetic_drive")]
    pub(super) name: String,
    /// Length, s.
    #[arg(long, default_value_t = 5.0, value_name = "S")]
    pub(super) seconds: f64,
    /// Frames per second.
    #[arg(long, default_value_t = 25.0)]
    pub(super) fps: f64,
    /// Speed, m/s.
    #[arg(long, default_value_t = 22.0, value_name = "M/S")]
    pub(super) speed: f64,
    /// Mean lateral offset, m (positive = right).
    #[arg(
        long,
        default_value_t = 0.1,
        value_name = "M",
        allow_hyphen_values = true
    )]
    pub(super) offset: f64,
    /// Amplitude of the lateral drift, m.
    #[arg(long, default_value_t = 0.35, value_name = "M")]
    pub(super) drift: f64,
    /// Period of the lateral drift, s.
    #[arg(long, default_value_t = 6.0, value_name = "S")]
    pub(super) drift_period: f64,
    /// Constant bend instead of the default road (straight, into a 500 m left bend, into a
    /// 700 m right bend).
    #[command(flatten)]
    pub(super) curve: CurveArgs,
    /// A white car starting this far ahead, 2 m/s slower than us, m (in the lane to the
    /// right, or ours with --car-in-our-lane).
    #[arg(long, value_name = "M")]
    pub(super) car: Option<f64>,
    /// The --car drives in our lane (it comes closer at 2 m/s, hiding the far end of the lane).
    #[arg(long, requires = "car")]
    pub(super) car_in_our_lane: bool,
    /// A lane change starting at this time, s (repeatable): the first goes one lane to the
    /// right, the next back to the left, and so on. Draws the right lane's edge line.
    #[arg(long, value_name = "S")]
    pub(super) lane_change: Vec<f64>,
    /// Duration of each lane change, s.
    #[arg(long, default_value_t = 3.0, value_name = "S")]
    pub(super) lane_change_duration: f64,
    /// A slow drift over a line starting at this time, s (repeatable): the offset moves by
    /// --drift-over-offset over --drift-over-ramp seconds, stays 1.5 s, and comes back; towards
    /// the right line in the first lane, the left line after a change to the right.
    #[arg(long, value_name = "S")]
    pub(super) drift_over: Vec<f64>,
    /// How far a drift over a line moves the car, m.
    #[arg(long, default_value_t = 1.3, value_name = "M")]
    pub(super) drift_over_offset: f64,
    /// Ramp time of a drift over a line, each way, s.
    #[arg(long, default_value_t = 2.5, value_name = "S")]
    pub(super) drift_over_ramp: f64,
    /// A change of the camera's pitch relative to the road, degrees (positive: further down),
    /// ramped in from --pitch-change-at over --pitch-change-ramp seconds: what a grade change
    /// or a shifted load does to the view. The quad written stays the one of the start; each
    /// frame's truth records its pitch.
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "DEG",
        allow_hyphen_values = true
    )]
    pub(super) pitch_change: f64,
    /// When the pitch change starts, s.
    #[arg(long, default_value_t = 2.0, value_name = "S")]
    pub(super) pitch_change_at: f64,
    /// How long the pitch change takes, s.
    #[arg(long, default_value_t = 1.0, value_name = "S")]
    pub(super) pitch_change_ramp: f64,
    #[command(flatten)]
    pub(super) look: LookArgs,
    #[command(flatten)]
    pub(super) rig: RigArgs,
}

/// The lane changes and drifts of `lanes synth video`'s flags, in time order.
pub(super) fn manoeuvres(a: &VideoArgs) -> Result<Vec<Manoeuvre>> {
    for (name, v, lo, hi) in [
        ("--lane-change-duration", a.lane_change_duration, 0.2, 30.0),
        ("--drift-over-offset", a.drift_over_offset, 0.0, 3.0),
        ("--drift-over-ramp", a.drift_over_ramp, 0.2, 30.0),
    ] {
        if !(v.is_finite() && (lo..=hi).contains(&v)) {
            anyhow::bail!("{name} = {v} (expected {lo}..={hi})");
        }
    }
    let mut starts: Vec<(f64, bool)> = a
        .lane_change
        .iter()
        .map(|t| (*t, true))
        .chain(a.drift_over.iter().map(|t| (*t, false)))
        .collect();
    for (t, _) in &starts {
        if !(t.is_finite() && *t >= 0.0 && *t <= a.seconds) {
            anyhow::bail!("manoeuvre start {t} s (expected 0..={} s)", a.seconds);
        }
    }
    starts.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut in_right_lane = false;
    let mut out = Vec::new();
    for (t, change) in starts {
        if change {
            out.push(Manoeuvre::LaneChange {
                start_s: t,
                duration_s: a.lane_change_duration,
                right: !in_right_lane,
            });
            in_right_lane = !in_right_lane;
        } else {
            let sign = if in_right_lane { -1.0 } else { 1.0 };
            out.push(Manoeuvre::Drift {
                start_s: t,
                ramp_s: a.drift_over_ramp,
                hold_s: 1.5,
                offset_m: sign * a.drift_over_offset,
            });
        }
    }
    Ok(out)
}

/// The share (0..1) of the pitch change reached at time `t`: a smooth step.
fn pitch_ramp(t: f64, a: &VideoArgs) -> f64 {
    let u = ((t - a.pitch_change_at) / a.pitch_change_ramp).clamp(0.0, 1.0);
    u * u * (3.0 - 2.0 * u)
}

pub(super) fn run(a: VideoArgs) -> Result<i32> {
    let (rig, mut quad) = rig_from(&a.rig)?;
    let opts = a.look.options();
    opts.validate()?;
    quad.half_width_m = opts.lane_width_m / 2.0;
    if !(a.fps > 0.0 && a.fps <= 120.0) {
        anyhow::bail!("--fps = {} (expected 0 < fps <= 120)", a.fps);
    }
    if !(a.seconds > 0.0 && a.seconds <= 600.0) {
        anyhow::bail!("--seconds = {} (expected 0 < seconds <= 600)", a.seconds);
    }
    if !(a.speed >= 0.0 && a.speed <= 80.0) {
        anyhow::bail!("--speed = {} (expected 0..=80 m/s)", a.speed);
    }
    for (name, v, lo, hi) in [
        ("--pitch-change", a.pitch_change, -5.0, 5.0),
        ("--pitch-change-at", a.pitch_change_at, 0.0, 600.0),
        ("--pitch-change-ramp", a.pitch_change_ramp, 0.04, 60.0),
    ] {
        if !(v.is_finite() && (lo..=hi).contains(&v)) {
            anyhow::bail!("{name} = {v} (expected {lo}..={hi})");
        }
    }
    let start = 0.0;
    let profile = if a.curve.radius.is_some() {
        a.curve.profile(start)?
    } else {
        synth::default_video_profile()
    };
    let drive = Drive {
        profile: profile.clone(),
        start_s_m: start,
        speed_mps: a.speed,
        offset_mean_m: a.offset,
        drift_m: a.drift,
        drift_period_s: a.drift_period,
        car: a.car.map(|ahead| (ahead, a.speed - 2.0)),
        car_in_our_lane: a.car_in_our_lane,
        manoeuvres: manoeuvres(&a)?,
    };
    let mut opts = opts;
    if !a.lane_change.is_empty() {
        opts.edge_line = true;
    }
    super::args::check_camera_output(
        a.rig.camera.as_deref(),
        &a.output,
        Some(&format!("{}.toml", a.name)),
    )?;
    ensure_out_dir(&a.output, "-o")?;
    let (cam, cfg) = write_rig_files(
        &a.output,
        &rig,
        &quad,
        opts.lane_width_m,
        &format!("{}.toml", a.name),
    )?;
    let mut renderer = Renderer::new(&rig, a.rig.supersample)?;
    let file = format!("{}.mp4", a.name);
    let path = a.output.join(&file);
    // MPEG-4 Part 2 with OpenCV's writer's settings (`Codec::Mp4v`), as the synthetic clips
    // have always been written: the synthetic suites' numbers depend on the encoding.
    let mut writer = lanes::video::VideoSink::create(
        &path,
        a.fps,
        rig.camera.width,
        rig.camera.height,
        lanes::video::Codec::Mp4v,
    )
    .with_context(|| format!("{}: cannot open the video", path.display()))?;
    let mut tf =
        lanes::tools::synth::truth::TruthFile::header(&rig, &quad, &opts, &profile, &cam, &cfg);
    tf.video = Some(file.clone());
    tf.fps = Some(a.fps);
    let n = (a.seconds * a.fps).round() as usize;
    let t0 = Instant::now();
    for i in 0..n {
        let t = i as f64 / a.fps;
        let pose = drive.pose_in(t, opts.lane_width_m);
        let car = drive.car_at(t, opts.lane_width_m);
        let pitch = rig.pitch_deg + a.pitch_change * pitch_ramp(t, &a);
        if pitch != renderer.rig().pitch_deg {
            let mut r = rig.clone();
            r.pitch_deg = pitch;
            renderer = Renderer::new(&r, a.rig.supersample)?;
        }
        let (img, mut ft) = synth::render_frame(
            &renderer,
            &profile,
            pose,
            &opts,
            car,
            &quad,
            FrameInfo {
                frame: i,
                time_s: t,
                raw_file: &file,
                car,
            },
        )?;
        if a.pitch_change != 0.0 {
            ft.camera_pitch_deg = Some(pitch);
        }
        writer
            .write(&img)
            .with_context(|| format!("{}: cannot write frame {i}", path.display()))?;
        tf.frames.push(ft);
        if (i + 1) % 25 == 0 || i + 1 == n {
            eprintln!(
                "lanes synth video: {}/{n} frames, {:.1} s",
                i + 1,
                t0.elapsed().as_secs_f64()
            );
        }
    }
    writer
        .finish()
        .with_context(|| format!("{}: cannot finish the video", path.display()))?;
    tf.manoeuvres = drive.manoeuvres.clone();
    // Lane changes, departures and tight bends of the true geometry (none on the default road).
    tf.events = truth::true_events(
        &tf.frames,
        a.fps,
        &lanes::base::config::EventsConfig::default(),
    );
    tf.save(&a.output.join(format!("{}.json", a.name)))?;
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "lanes synth video: {} ({n} frames, {:.2} MB), truth {}.json, camera {cam}, config {cfg}",
        path.display(),
        bytes as f64 / 1e6,
        a.name
    );
    Ok(0)
}
