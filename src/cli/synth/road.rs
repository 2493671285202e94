//! `lanes synth road`: stills with ground truth.

use super::args::*;
use crate::cli::common::ensure_out_dir;
use anyhow::Result;
use clap::Args;
use lanes::tools::synth::road::{Direction, VehiclePose};
use lanes::tools::synth::scene::Renderer;
use lanes::tools::synth::{self as synth, RoadSpec, Suite};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub(super) struct RoadArgs {
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub(super) output: PathBuf,
    /// A standard set of stills instead of one: clean (bends 200 m..3 km both ways, straight),
    /// hard (shadows and concrete), demo (the committed test_images).
    #[arg(long, value_name = "NAME")]
    pub(super) suite: Option<String>,
    /// File stem of the still (default from the radius and direction).
    #[arg(long)]
    pub(super) name: Option<String>,
    #[command(flatten)]
    pub(super) curve: CurveArgs,
    /// Lateral offset of the vehicle from the lane centre, m (positive = right).
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "M",
        allow_hyphen_values = true
    )]
    pub(super) offset: f64,
    /// Heading of the vehicle relative to the road, degrees (positive = left).
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "DEG",
        allow_hyphen_values = true
    )]
    pub(super) yaw: f64,
    /// Position of the vehicle along the road, m (moves dashes, shadows and patches).
    #[arg(long, default_value_t = 100.0, value_name = "M")]
    pub(super) along: f64,
    /// A white car this far ahead in the lane to the right, m.
    #[arg(long, value_name = "M")]
    pub(super) car: Option<f64>,
    #[command(flatten)]
    pub(super) look: LookArgs,
    #[command(flatten)]
    pub(super) rig: RigArgs,
    /// JPEG quality (0..=100).
    #[arg(long, default_value_t = 90)]
    pub(super) quality: i32,
    /// Write PNG instead of JPEG.
    #[arg(long)]
    pub(super) png: bool,
}

pub(super) fn run(a: RoadArgs) -> Result<i32> {
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
    super::args::check_camera_output(a.rig.camera.as_deref(), &a.output, Some("lanes.toml"))?;
    ensure_out_dir(&a.output, "-o")?;
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
        let mut tf = lanes::tools::synth::truth::TruthFile::header(
            &rig,
            &quad,
            &spec.options,
            &spec.profile,
            &cam,
            &cfg,
        );
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
