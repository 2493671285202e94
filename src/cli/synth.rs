//! `lanes synth`: render synthetic road stills, a road video, or chessboard views through a known
//! camera, with the camera file, the matching `lanes` config and the ground truth beside them.

use super::ensure_out_dir;
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use lanes::camera::Camera;
use lanes::frame::BgrFrame;
use lanes::synth::rig::{QuadGeometry, Rig};
use lanes::synth::road::{curvature, CurvatureProfile, Direction, Segment, VehiclePose};
use lanes::synth::scene::{Renderer, SceneOptions};
use lanes::synth::truth::{self, FrameInfo, TruthFile};
use lanes::synth::{self as synth, chessboard, Drive, Manoeuvre, RoadSpec, Suite};
use opencv::core::{Size, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, videoio};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct SynthArgs {
    #[command(subcommand)]
    what: SynthCommand,
}

#[derive(Subcommand)]
enum SynthCommand {
    /// Road stills (one, or a standard suite) with truth JSON, camera file and config.
    Road(RoadArgs),
    /// A road video (MP4, mp4v) whose vehicle drives along the road, with per-frame truth.
    Video(VideoArgs),
    /// Chessboard calibration views through the known camera.
    Chessboards(ChessboardArgs),
    /// Images with no lane (flat grey, noise, blurred noise, a flipped road, stripes), 1280x720
    /// PNG, for `lanes eval --negatives`.
    Negatives(NegativesArgs),
}

#[derive(Args)]
struct NegativesArgs {
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum Dir {
    Left,
    Right,
}

impl From<Dir> for Direction {
    fn from(d: Dir) -> Self {
        match d {
            Dir::Left => Direction::Left,
            Dir::Right => Direction::Right,
        }
    }
}

/// The camera rig and the perspective quad.
#[derive(Args, Clone)]
struct RigArgs {
    /// Camera file whose intrinsics and distortion to use (default: the built-in synthetic camera,
    /// 1280x720, fx = fy = 1000, k1 = -0.25).
    #[arg(long, value_name = "FILE")]
    camera: Option<PathBuf>,
    /// Height of the camera above the road, m.
    #[arg(long, default_value_t = 1.45, value_name = "M")]
    camera_height: f64,
    /// Downward pitch of the camera, degrees.
    #[arg(long, default_value_t = 2.0, value_name = "DEG")]
    pitch: f64,
    /// Forward distance of the perspective quad's bottom edge (where `lanes` measures), m.
    #[arg(long, default_value_t = 4.5, value_name = "M")]
    near: f64,
    /// Forward distance of the perspective quad's top edge, m.
    #[arg(long, default_value_t = 30.0, value_name = "M")]
    far: f64,
    /// Supersampling per axis (1..=4).
    #[arg(long, default_value_t = 2, value_name = "N")]
    supersample: u32,
}

/// The look of the road.
#[derive(Args, Clone)]
struct LookArgs {
    /// Lane width, m.
    #[arg(long, default_value_t = 3.7, value_name = "M")]
    lane_width: f64,
    /// Tree shadows across the lane.
    #[arg(long)]
    shadows: bool,
    /// Lighter concrete sections.
    #[arg(long)]
    concrete: bool,
    /// Dark tar seams.
    #[arg(long)]
    seams: bool,
    /// Exposure ramp across the image.
    #[arg(long)]
    ramp: bool,
    /// Asphalt texture amplitude, grey levels.
    #[arg(long, default_value_t = 10.0, value_name = "LEVELS")]
    texture: f64,
    /// Sensor noise standard deviation, grey levels.
    #[arg(long, default_value_t = 2.0, value_name = "LEVELS")]
    noise: f64,
    /// Seed of textures, hazards and noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl LookArgs {
    fn options(&self) -> SceneOptions {
        SceneOptions {
            lane_width_m: self.lane_width,
            shadows: self.shadows,
            concrete: self.concrete,
            seams: self.seams,
            ramp: self.ramp,
            texture: self.texture,
            noise: self.noise,
            seed: self.seed,
            ..SceneOptions::default()
        }
    }
}

/// The road's curvature.
#[derive(Args, Clone)]
struct CurveArgs {
    /// Radius of the bend at the vehicle, m (omit for a straight road).
    #[arg(long, value_name = "M")]
    radius: Option<f64>,
    /// Which way the bend turns.
    #[arg(long, value_enum, default_value = "left")]
    direction: Dir,
    /// Radius the road changes to (linearly in curvature) over `--transition` metres, m.
    #[arg(long, value_name = "M")]
    radius_end: Option<f64>,
    /// Direction of the bend at the end of the transition (default: same as --direction).
    #[arg(long, value_enum)]
    direction_end: Option<Dir>,
    /// Length of the transition starting at the vehicle, m.
    #[arg(long, default_value_t = 60.0, value_name = "M")]
    transition: f64,
}

impl CurveArgs {
    /// The profile, with the vehicle at arc length `s_v`.
    fn profile(&self, s_v: f64) -> Result<CurvatureProfile> {
        for (name, r) in [("--radius", self.radius), ("--radius-end", self.radius_end)] {
            if let Some(r) = r {
                if !(r.is_finite() && r >= 20.0) {
                    anyhow::bail!("{name} = {r} (expected a radius of at least 20 m)");
                }
            }
        }
        let k0 = curvature(self.radius, self.direction.into());
        Ok(match self.radius_end {
            None => CurvatureProfile::constant(k0),
            Some(r1) => {
                if !(self.transition.is_finite() && self.transition > 0.0) {
                    anyhow::bail!("--transition = {} (expected > 0)", self.transition);
                }
                let k1 = curvature(
                    Some(r1),
                    self.direction_end.unwrap_or(self.direction).into(),
                );
                CurvatureProfile {
                    segments: vec![
                        Segment {
                            length_m: s_v,
                            k_start: k0,
                            k_end: k0,
                        },
                        Segment {
                            length_m: self.transition,
                            k_start: k0,
                            k_end: k1,
                        },
                        Segment {
                            length_m: 1.0,
                            k_start: k1,
                            k_end: k1,
                        },
                    ],
                }
            }
        })
    }
}

#[derive(Args)]
struct RoadArgs {
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    /// A standard set of stills instead of one: clean (bends 200 m..3 km both ways, straight),
    /// hard (shadows and concrete), demo (the committed test_images).
    #[arg(long, value_name = "NAME")]
    suite: Option<String>,
    /// File stem of the still (default from the radius and direction).
    #[arg(long)]
    name: Option<String>,
    #[command(flatten)]
    curve: CurveArgs,
    /// Lateral offset of the vehicle from the lane centre, m (positive = right).
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "M",
        allow_hyphen_values = true
    )]
    offset: f64,
    /// Heading of the vehicle relative to the road, degrees (positive = left).
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "DEG",
        allow_hyphen_values = true
    )]
    yaw: f64,
    /// Position of the vehicle along the road, m (moves dashes, shadows and patches).
    #[arg(long, default_value_t = 100.0, value_name = "M")]
    along: f64,
    /// A white car this far ahead in the lane to the right, m.
    #[arg(long, value_name = "M")]
    car: Option<f64>,
    #[command(flatten)]
    look: LookArgs,
    #[command(flatten)]
    rig: RigArgs,
    /// JPEG quality (0..=100).
    #[arg(long, default_value_t = 90)]
    quality: i32,
    /// Write PNG instead of JPEG.
    #[arg(long)]
    png: bool,
}

#[derive(Args)]
struct VideoArgs {
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    /// File stem of the video, its truth (.json) and its config (.toml).
    #[arg(long, default_value = "synthetic_drive")]
    name: String,
    /// Length, s.
    #[arg(long, default_value_t = 5.0, value_name = "S")]
    seconds: f64,
    /// Frames per second.
    #[arg(long, default_value_t = 25.0)]
    fps: f64,
    /// Speed, m/s.
    #[arg(long, default_value_t = 22.0, value_name = "M/S")]
    speed: f64,
    /// Mean lateral offset, m (positive = right).
    #[arg(
        long,
        default_value_t = 0.1,
        value_name = "M",
        allow_hyphen_values = true
    )]
    offset: f64,
    /// Amplitude of the lateral drift, m.
    #[arg(long, default_value_t = 0.35, value_name = "M")]
    drift: f64,
    /// Period of the lateral drift, s.
    #[arg(long, default_value_t = 6.0, value_name = "S")]
    drift_period: f64,
    /// Constant bend instead of the default road (straight, into a 500 m left bend, into a
    /// 700 m right bend).
    #[command(flatten)]
    curve: CurveArgs,
    /// A white car in the lane to the right, starting this far ahead, 2 m/s slower than us, m.
    #[arg(long, value_name = "M")]
    car: Option<f64>,
    /// A lane change starting at this time, s (repeatable): the first goes one lane to the
    /// right, the next back to the left, and so on. Draws the right lane's edge line.
    #[arg(long, value_name = "S")]
    lane_change: Vec<f64>,
    /// Duration of each lane change, s.
    #[arg(long, default_value_t = 3.0, value_name = "S")]
    lane_change_duration: f64,
    /// A slow drift over a line starting at this time, s (repeatable): the offset moves by
    /// --drift-over-offset over --drift-over-ramp seconds, stays 1.5 s, and comes back; towards
    /// the right line in the first lane, the left line after a change to the right.
    #[arg(long, value_name = "S")]
    drift_over: Vec<f64>,
    /// How far a drift over a line moves the car, m.
    #[arg(long, default_value_t = 1.3, value_name = "M")]
    drift_over_offset: f64,
    /// Ramp time of a drift over a line, each way, s.
    #[arg(long, default_value_t = 2.5, value_name = "S")]
    drift_over_ramp: f64,
    #[command(flatten)]
    look: LookArgs,
    #[command(flatten)]
    rig: RigArgs,
}

/// The lane changes and drifts of `lanes synth video`'s flags, in time order.
fn manoeuvres(a: &VideoArgs) -> Result<Vec<Manoeuvre>> {
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

#[derive(Args)]
struct ChessboardArgs {
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    /// Number of views.
    #[arg(long, default_value_t = 20)]
    views: usize,
    /// Inner corners per row x per column.
    #[arg(long, default_value = "9x6", value_name = "COLSxROWS")]
    board: String,
    /// Side of one square (the unit of the poses in the truth; intrinsics do not depend on it).
    #[arg(long, default_value_t = 1.0)]
    square: f64,
    /// Seed of the board poses and the noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Camera to render through (default: the synthetic road camera of `lanes synth road`).
    #[arg(long, value_name = "FILE")]
    camera: Option<PathBuf>,
}

/// Truth of a chessboard set: the camera and each view's pose and corner positions.
#[derive(Serialize)]
struct ChessboardTruth {
    kind: &'static str,
    camera: String,
    board: [i32; 2],
    square: f64,
    views: Vec<ChessboardViewTruth>,
}

#[derive(Serialize)]
struct ChessboardViewTruth {
    image: String,
    rvec: [f64; 3],
    tvec: [f64; 3],
    /// Distorted image positions of the inner corners, row-major.
    corners: Vec<[f64; 2]>,
}

pub fn run(a: SynthArgs) -> Result<i32> {
    match a.what {
        SynthCommand::Road(r) => run_road(r),
        SynthCommand::Video(v) => run_video(v),
        SynthCommand::Chessboards(c) => run_chessboards(c),
        SynthCommand::Negatives(n) => run_negatives(n),
    }
}

fn run_negatives(a: NegativesArgs) -> Result<i32> {
    ensure_out_dir(&a.output)?;
    let set = synth::negatives::negatives()?;
    for n in &set {
        let p = a.output.join(format!("{}.png", n.name));
        n.image.write(&p)?;
        eprintln!("{}", p.display());
    }
    eprintln!(
        "lanes synth negatives: {} images ({}x{}) in {}",
        set.len(),
        synth::negatives::WIDTH,
        synth::negatives::HEIGHT,
        a.output.display()
    );
    Ok(0)
}

/// Build the rig from the flags.
fn rig_from(a: &RigArgs) -> Result<(Rig, QuadGeometry)> {
    let mut rig = Rig {
        height_m: a.camera_height,
        pitch_deg: a.pitch,
        ..Rig::default()
    };
    if let Some(p) = &a.camera {
        rig.camera = Camera::load(p).with_context(|| "loading camera".to_string())?;
    }
    rig.validate()?;
    if !(a.near > 0.5 && a.far > a.near + 1.0 && a.far < 200.0) {
        anyhow::bail!(
            "--near {} / --far {} m (expected 0.5 < near < far - 1 < 199)",
            a.near,
            a.far
        );
    }
    Ok((
        rig,
        QuadGeometry {
            near_m: a.near,
            far_m: a.far,
            half_width_m: 0.0,
        },
    ))
}

/// Write the camera file (`camera.yml`) and the config (`cfg`) beside the outputs; returns
/// their file names.
fn write_rig_files(
    dir: &Path,
    rig: &Rig,
    quad: &QuadGeometry,
    lane_width: f64,
    cfg: &str,
) -> Result<(String, String)> {
    let cam = "camera.yml";
    rig.camera.save(&dir.join(cam), None)?;
    let config = rig.lanes_config(quad, lane_width)?;
    let text = format!(
        "# lanes config for the synthetic camera (height {} m, pitch {} deg): the quad is the image of\n\
         # the ground rectangle +-{} m wide, {}..{} m ahead, so units are exact.\n{}",
        rig.height_m,
        rig.pitch_deg,
        quad.half_width_m,
        quad.near_m,
        quad.far_m,
        config.to_toml()
    );
    std::fs::write(dir.join(cfg), text)
        .with_context(|| format!("{}: cannot write", dir.join(cfg).display()))?;
    Ok((cam.into(), cfg.to_string()))
}

fn truth_header(
    rig: &Rig,
    quad: &QuadGeometry,
    opts: &SceneOptions,
    profile: &CurvatureProfile,
    cam: &str,
    cfg: &str,
) -> TruthFile {
    TruthFile {
        kind: truth::KIND.into(),
        version: 1,
        image: None,
        video: None,
        fps: None,
        camera: cam.into(),
        config: cfg.into(),
        width: rig.camera.width,
        height: rig.camera.height,
        camera_height_m: rig.height_m,
        camera_pitch_deg: rig.pitch_deg,
        quad: *quad,
        measure_distance_m: truth::measure_distance(quad, rig.camera.height),
        truth_max_distance_m: truth::TRUTH_MAX_DISTANCE_M,
        scene: *opts,
        profile: profile.clone(),
        frames: Vec::new(),
        manoeuvres: Vec::new(),
        events: Vec::new(),
    }
}

fn write_image(img: &BgrFrame, path: &Path, quality: i32) -> Result<()> {
    let params: Vector<i32> = if path.extension().map(|e| e == "jpg").unwrap_or(false) {
        Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, quality.clamp(0, 100)])
    } else {
        Vector::new()
    };
    let ok = imgcodecs::imwrite(path, img.mat(), &params).unwrap_or(false);
    if !ok {
        anyhow::bail!("{}: cannot write image", path.display());
    }
    Ok(())
}

fn run_road(a: RoadArgs) -> Result<i32> {
    let (rig, mut quad) = rig_from(&a.rig)?;
    let base = a.look.options();
    base.validate()?;
    quad.half_width_m = base.lane_width_m / 2.0;
    let specs: Vec<RoadSpec> = match &a.suite {
        Some(s) => synth::suite(s.parse::<Suite>()?, &base),
        None => {
            let name = a.name.clone().unwrap_or_else(|| match a.curve.radius {
                Some(r) => format!(
                    "road_r{}_{}",
                    r.round() as i64,
                    Direction::from(a.curve.direction).as_str()
                ),
                None => "road_straight".into(),
            });
            vec![RoadSpec {
                name,
                profile: a.curve.profile(a.along)?,
                pose: VehiclePose {
                    s_m: a.along,
                    offset_m: a.offset,
                    yaw_rad: a.yaw.to_radians(),
                },
                options: base,
                car_ahead_m: a.car,
            }]
        }
    };
    ensure_out_dir(&a.output)?;
    let (cam, cfg) = write_rig_files(&a.output, &rig, &quad, base.lane_width_m, "lanes.toml")?;
    let t0 = Instant::now();
    let renderer = Renderer::new(&rig, a.rig.supersample)?;
    eprintln!(
        "lanes synth: rays for {}x{} at {}x{} supersampling in {:.2} s",
        rig.camera.width,
        rig.camera.height,
        a.rig.supersample,
        a.rig.supersample,
        t0.elapsed().as_secs_f64()
    );
    let ext = if a.png { "png" } else { "jpg" };
    for spec in &specs {
        let t = Instant::now();
        let file = format!("{}.{ext}", spec.name);
        let (img, ft) = synth::render_road(&renderer, spec, &quad, &file)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        write_image(&img, &a.output.join(&file), a.quality)?;
        let mut tf = truth_header(&rig, &quad, &spec.options, &spec.profile, &cam, &cfg);
        tf.image = Some(file.clone());
        let r = ft
            .radius_m
            .map(|r| format!("{r:.0} m {}", ft.direction.as_str()))
            .unwrap_or_else(|| "straight".into());
        eprintln!(
            "{}: radius {r}, offset {:.3} m, rendered in {ms:.0} ms",
            a.output.join(&file).display(),
            ft.offset_m
        );
        tf.frames.push(ft);
        tf.save(&a.output.join(format!("{}.json", spec.name)))?;
    }
    eprintln!(
        "lanes synth road: {} images, camera {cam}, config {cfg} in {}",
        specs.len(),
        a.output.display()
    );
    Ok(0)
}

fn run_video(a: VideoArgs) -> Result<i32> {
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
        manoeuvres: manoeuvres(&a)?,
    };
    let mut opts = opts;
    if !a.lane_change.is_empty() {
        opts.edge_line = true;
    }
    ensure_out_dir(&a.output)?;
    let (cam, cfg) = write_rig_files(
        &a.output,
        &rig,
        &quad,
        opts.lane_width_m,
        &format!("{}.toml", a.name),
    )?;
    let renderer = Renderer::new(&rig, a.rig.supersample)?;
    let file = format!("{}.mp4", a.name);
    let path = a.output.join(&file);
    let fourcc = videoio::VideoWriter::fourcc('m', 'p', '4', 'v')?;
    let size = Size::new(rig.camera.width, rig.camera.height);
    let mut writer = videoio::VideoWriter::new(&path, fourcc, a.fps, size, true)
        .with_context(|| format!("{}: cannot open video writer", path.display()))?;
    if !writer.is_opened()? {
        anyhow::bail!("{}: cannot open video writer (mp4v)", path.display());
    }
    let mut tf = truth_header(&rig, &quad, &opts, &profile, &cam, &cfg);
    tf.video = Some(file.clone());
    tf.fps = Some(a.fps);
    let n = (a.seconds * a.fps).round() as usize;
    let t0 = Instant::now();
    for i in 0..n {
        let t = i as f64 / a.fps;
        let pose = drive.pose_in(t, opts.lane_width_m);
        let car = drive.car_at(t, opts.lane_width_m);
        let (img, ft) = synth::render_frame(
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
        writer
            .write(img.mat())
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
    writer.release()?;
    tf.manoeuvres = drive.manoeuvres.clone();
    // Lane changes, departures and tight bends of the true geometry (none on the default road).
    tf.events = truth::true_events(&tf.frames, a.fps, &lanes::config::EventsConfig::default());
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

fn parse_board(s: &str) -> Result<(i32, i32)> {
    let bad = || anyhow::anyhow!("--board {s:?} (expected COLSxROWS, e.g. 9x6, each 2..=50)");
    let (c, r) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (c, r): (i32, i32) = (
        c.trim().parse().map_err(|_| bad())?,
        r.trim().parse().map_err(|_| bad())?,
    );
    if !(2..=50).contains(&c) || !(2..=50).contains(&r) {
        return Err(bad());
    }
    Ok((c, r))
}

fn run_chessboards(a: ChessboardArgs) -> Result<i32> {
    let board = parse_board(&a.board)?;
    if !(1..=200).contains(&a.views) {
        anyhow::bail!("--views = {} (expected 1..=200)", a.views);
    }
    if !(a.square.is_finite() && a.square > 0.0) {
        anyhow::bail!("--square = {} (expected > 0)", a.square);
    }
    let camera = match &a.camera {
        Some(p) => Camera::load(p).with_context(|| "loading camera".to_string())?,
        None => Rig::default().camera,
    };
    ensure_out_dir(&a.output)?;
    let t0 = Instant::now();
    let views = chessboard::render_views(&camera, board, a.square, a.views, a.seed)?;
    let cam = "camera.yml";
    camera.save(&a.output.join(cam), None)?;
    let mut truth = ChessboardTruth {
        kind: "lanes-synth-chessboards",
        camera: cam.into(),
        board: [board.0, board.1],
        square: a.square,
        views: Vec::new(),
    };
    for (i, v) in views.iter().enumerate() {
        let name = format!("view{i:02}.png");
        v.frame.write(&a.output.join(&name))?;
        truth.views.push(ChessboardViewTruth {
            image: name,
            rvec: v.pose.rvec,
            tvec: v.pose.tvec,
            corners: v.corners.clone(),
        });
    }
    let tpath = a.output.join("chessboards.json");
    std::fs::write(&tpath, serde_json::to_string_pretty(&truth)? + "\n")
        .with_context(|| format!("{}: cannot write", tpath.display()))?;
    eprintln!(
        "lanes synth chessboards: {} views of a {}x{} board in {:.1} s, camera {cam}, truth chessboards.json in {}",
        views.len(),
        board.0,
        board.1,
        t0.elapsed().as_secs_f64(),
        a.output.display()
    );
    Ok(0)
}
