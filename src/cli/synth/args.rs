//! Flags shared by `lanes synth road` and `lanes synth video`: the rig, the look, the curve.

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use lanes::base::camera::Camera;
use lanes::base::frame::BgrFrame;
use lanes::tools::synth::rig::{QuadGeometry, Rig};
use lanes::tools::synth::road::{curvature, CurvatureProfile, Direction, Segment};
use lanes::tools::synth::scene::SceneOptions;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum Dir {
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
pub(super) struct RigArgs {
    /// Camera file whose intrinsics and distortion to use (default: the built-in synthetic camera,
    /// 1280x720, fx = fy = 1000, k1 = -0.25).
    #[arg(long, value_name = "FILE")]
    pub(super) camera: Option<PathBuf>,
    /// Height of the camera above the road, m.
    #[arg(long, default_value_t = 1.45, value_name = "M")]
    pub(super) camera_height: f64,
    /// Downward pitch of the camera, degrees.
    #[arg(long, default_value_t = 2.0, value_name = "DEG")]
    pub(super) pitch: f64,
    /// Forward distance of the perspective quad's bottom edge (where `lanes` measures), m.
    #[arg(long, default_value_t = 4.5, value_name = "M")]
    pub(super) near: f64,
    /// Forward distance of the perspective quad's top edge, m.
    #[arg(long, default_value_t = 30.0, value_name = "M")]
    pub(super) far: f64,
    /// Supersampling per axis (1..=4).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub(super) supersample: u32,
}

/// The look of the road.
#[derive(Args, Clone)]
pub(super) struct LookArgs {
    /// Lane width, m.
    #[arg(long, default_value_t = 3.7, value_name = "M")]
    pub(super) lane_width: f64,
    /// Tree shadows across the lane.
    #[arg(long)]
    pub(super) shadows: bool,
    /// Lighter concrete sections.
    #[arg(long)]
    pub(super) concrete: bool,
    /// Dark tar seams.
    #[arg(long)]
    pub(super) seams: bool,
    /// Exposure ramp across the image.
    #[arg(long)]
    pub(super) ramp: bool,
    /// Asphalt texture amplitude, grey levels.
    #[arg(long, default_value_t = 10.0, value_name = "LEVELS")]
    pub(super) texture: f64,
    /// Sensor noise standard deviation, grey levels.
    #[arg(long, default_value_t = 2.0, value_name = "LEVELS")]
    pub(super) noise: f64,
    /// Seed of textures, hazards and noise.
    #[arg(long, default_value_t = 1)]
    pub(super) seed: u64,
}

impl LookArgs {
    pub(super) fn options(&self) -> SceneOptions {
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
pub(super) struct CurveArgs {
    /// Radius of the bend at the vehicle, m (omit for a straight road).
    #[arg(long, value_name = "M")]
    pub(super) radius: Option<f64>,
    /// Which way the bend turns.
    #[arg(long, value_enum, default_value = "left")]
    pub(super) direction: Dir,
    /// Radius the road changes to (linearly in curvature) over `--transition` metres, m.
    #[arg(long, value_name = "M")]
    pub(super) radius_end: Option<f64>,
    /// Direction of the bend at the end of the transition (default: same as --direction).
    #[arg(long, value_enum)]
    pub(super) direction_end: Option<Dir>,
    /// Length of the transition starting at the vehicle, m.
    #[arg(long, default_value_t = 60.0, value_name = "M")]
    pub(super) transition: f64,
}

impl CurveArgs {
    /// The profile, with the vehicle at arc length `s_v`.
    pub(super) fn profile(&self, s_v: f64) -> Result<CurvatureProfile> {
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

/// Build the rig from the flags.
pub(super) fn rig_from(a: &RigArgs) -> Result<(Rig, QuadGeometry)> {
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

/// Refuse an output directory whose `camera.yml` (written by every synth command) is the
/// `--camera` file given, or where a synth command would replace a user's own files: a
/// `camera.yml` from `lanes calibrate` (it records the board, which synth's never does) or a
/// config `cfg` that synth did not write (`-o .` in a project folder), before anything is
/// written. Synth's own files from an earlier run are replaced, as `make assets` does.
pub(super) fn check_camera_output(
    camera: Option<&Path>,
    dir: &Path,
    cfg: Option<&str>,
) -> Result<()> {
    let cam_out = dir.join("camera.yml");
    crate::cli::common::check_outputs(
        &[("camera file (--camera)", camera)],
        &[("-o directory", Some(cam_out.as_path()))],
    )?;
    let fix = "lanes synth would replace it: give -o a new or empty folder";
    if let Ok(text) = std::fs::read_to_string(&cam_out) {
        if text.contains("board_width") {
            anyhow::bail!(
                "{}: a camera calibrated by lanes calibrate; {fix}",
                cam_out.display()
            );
        }
    }
    if let Some(cfg) = cfg {
        let path = dir.join(cfg);
        if let Ok(text) = std::fs::read_to_string(&path) {
            if !text.starts_with(SYNTH_CONFIG_HEADER) {
                anyhow::bail!(
                    "{}: a lanes config that lanes synth did not write; {fix}",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

/// The first words of every config `lanes synth` writes.
const SYNTH_CONFIG_HEADER: &str = "# lanes config for the synthetic camera";

/// Write the camera file (`camera.yml`) and the config (`cfg`) beside the outputs; returns
/// their file names.
pub(super) fn write_rig_files(
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
        "{SYNTH_CONFIG_HEADER} (height {} m, pitch {} deg): the quad is the image of\n\
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

pub(super) fn write_image(img: &BgrFrame, path: &Path, quality: i32) -> Result<()> {
    Ok(lanes::base::frame::write_mat_at(
        img.mat(),
        path,
        quality.clamp(0, 100),
    )?)
}
