//! Synthetic scenes with known ground truth: chessboard views and road scenes through a known camera.
//!
//! A road scene is a [`RoadSpec`] (curvature profile, vehicle pose, look, optional car) seen by
//! a [`rig::Rig`]; [`render_road`] returns the frame and its [`truth::FrameTruth`]. A video is a
//! [`Drive`] along a profile. [`suite`] lists the standard still sets (`clean`, `hard`, `demo`).

pub mod chessboard;
pub mod negatives;
pub mod noise;
pub mod rig;
pub mod road;
pub mod scene;
pub mod truth;

use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use rig::QuadGeometry;
pub use road::Manoeuvre;
use road::{curvature, CurvatureProfile, Direction, RoadFrame, Segment, VehiclePose};
use scene::{Car, Renderer, SceneOptions};
use serde::{Deserialize, Serialize};
use truth::{FrameInfo, FrameTruth};

/// One still road scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoadSpec {
    /// File stem of the still.
    pub name: String,
    pub profile: CurvatureProfile,
    pub pose: VehiclePose,
    pub options: SceneOptions,
    /// A white car this far ahead in the lane to the right, m.
    pub car_ahead_m: Option<f64>,
}

/// How far ahead the road table reaches: far enough for the horizon on gentle roads, but never
/// past about 100 degrees of heading change (a tight bend must not loop back into view).
fn ahead_m(profile: &CurvatureProfile, s_from: f64) -> f64 {
    let mut kmax: f64 = 0.0;
    let mut s = s_from;
    while s < s_from + 2000.0 {
        kmax = kmax.max(profile.curvature_at(s).abs());
        s += 5.0;
    }
    if kmax > 0.0 {
        (1.75 / kmax).clamp(150.0, 2000.0)
    } else {
        2000.0
    }
}

/// The centre-line table around a pose.
pub fn road_frame(profile: &CurvatureProfile, pose: VehiclePose) -> RoadFrame {
    RoadFrame::new(profile, pose, 30.0, ahead_m(profile, pose.s_m))
}

/// Render one frame and compute its truth.
pub fn render_frame(
    renderer: &Renderer,
    profile: &CurvatureProfile,
    pose: VehiclePose,
    options: &SceneOptions,
    car: Option<Car>,
    quad: &QuadGeometry,
    info: FrameInfo,
) -> Result<(BgrFrame, FrameTruth)> {
    let road = road_frame(profile, pose);
    let img = renderer.render(&road, options, car, info.frame as u32)?;
    let t = truth::frame_truth(
        renderer.rig(),
        &road,
        options,
        quad,
        FrameInfo { car, ..info },
    )?;
    Ok((img, t))
}

/// Render a still and compute its truth; `raw_file` is the image name recorded in the truth.
pub fn render_road(
    renderer: &Renderer,
    spec: &RoadSpec,
    quad: &QuadGeometry,
    raw_file: &str,
) -> Result<(BgrFrame, FrameTruth)> {
    let car = spec.car_ahead_m.map(|a| Car {
        s_m: spec.pose.s_m + a,
        d_m: spec.options.lane_width_m,
    });
    render_frame(
        renderer,
        &spec.profile,
        spec.pose,
        &spec.options,
        car,
        quad,
        FrameInfo {
            frame: 0,
            time_s: 0.0,
            raw_file,
            car,
        },
    )
}

/// A drive for a video: constant speed along a profile, lateral offset drifting as a sine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drive {
    pub profile: CurvatureProfile,
    /// Arc length at t = 0, m.
    pub start_s_m: f64,
    /// Speed, m/s.
    pub speed_mps: f64,
    /// Mean lateral offset, m (positive right).
    pub offset_mean_m: f64,
    /// Amplitude and period of the offset drift, m and s.
    pub drift_m: f64,
    pub drift_period_s: f64,
    /// A car in the lane to the right: distance ahead at t = 0 and its speed, m and m/s.
    pub car: Option<(f64, f64)>,
    /// The car drives in the first lane (ours at the start) instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub car_in_our_lane: bool,
    /// Lane changes and drifts over a line, added to the offset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manoeuvres: Vec<Manoeuvre>,
}

impl Drive {
    /// Lateral offset from the first lane's centre at time `t`, m.
    pub fn offset_at(&self, t: f64, lane_width_m: f64) -> f64 {
        let w = std::f64::consts::TAU / self.drift_period_s.max(1e-3);
        self.offset_mean_m
            + self.drift_m * (w * t).sin()
            + self
                .manoeuvres
                .iter()
                .map(|m| m.offset_at(t, lane_width_m))
                .sum::<f64>()
    }

    /// The vehicle pose at time `t` (heading follows the lateral motion: yaw = -atan(d offset /
    /// ds)).
    pub fn pose(&self, t: f64) -> VehiclePose {
        self.pose_in(t, 3.7)
    }

    /// `pose` on a road whose lanes are `lane_width_m` wide (lane changes move by one width).
    pub fn pose_in(&self, t: f64, lane_width_m: f64) -> VehiclePose {
        let h = 1e-3;
        let w = std::f64::consts::TAU / self.drift_period_s.max(1e-3);
        let d_dt = self.drift_m * w * (w * t).cos()
            + self
                .manoeuvres
                .iter()
                .map(|m| {
                    (m.offset_at(t + h, lane_width_m) - m.offset_at(t - h, lane_width_m))
                        / (2.0 * h)
                })
                .sum::<f64>();
        let d_ds = d_dt / self.speed_mps.max(1e-3);
        VehiclePose {
            s_m: self.start_s_m + self.speed_mps * t,
            offset_m: self.offset_at(t, lane_width_m),
            yaw_rad: -d_ds.atan(),
        }
    }

    /// Where the car is at time `t`.
    pub fn car_at(&self, t: f64, lane_width_m: f64) -> Option<Car> {
        self.car.map(|(ahead, v)| Car {
            s_m: self.start_s_m + ahead + v * t,
            d_m: if self.car_in_our_lane {
                0.0
            } else {
                lane_width_m
            },
        })
    }
}

/// The default video road: 25 m straight, a 50 m transition into a 500 m left bend, the bend,
/// then a transition into a 700 m right bend.
pub fn default_video_profile() -> CurvatureProfile {
    let k1 = curvature(Some(500.0), Direction::Left);
    let k2 = curvature(Some(700.0), Direction::Right);
    CurvatureProfile {
        segments: vec![
            Segment {
                length_m: 25.0,
                k_start: 0.0,
                k_end: 0.0,
            },
            Segment {
                length_m: 50.0,
                k_start: 0.0,
                k_end: k1,
            },
            Segment {
                length_m: 40.0,
                k_start: k1,
                k_end: k1,
            },
            Segment {
                length_m: 60.0,
                k_start: k1,
                k_end: k2,
            },
            Segment {
                length_m: 400.0,
                k_start: k2,
                k_end: k2,
            },
        ],
    }
}

/// Which standard set of stills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// Constant bends of 200 m to 3 km both ways and two straight roads; nothing hard.
    Clean,
    /// Shadows and concrete sections on bends of 250 m to 2.5 km both ways and straight roads (20).
    Hard,
    /// A handful for the committed demo: straight, gentle and tight bends both ways, shadows, a car.
    Demo,
}

impl std::str::FromStr for Suite {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "clean" => Ok(Suite::Clean),
            "hard" => Ok(Suite::Hard),
            "demo" => Ok(Suite::Demo),
            _ => Err(Error::Invalid(format!(
                "suite {s:?} (expected clean, hard or demo)"
            ))),
        }
    }
}

fn spec(
    name: String,
    radius: Option<f64>,
    dir: Direction,
    s_m: f64,
    offset_m: f64,
    options: SceneOptions,
) -> RoadSpec {
    RoadSpec {
        name,
        profile: CurvatureProfile::constant(curvature(radius, dir)),
        pose: VehiclePose {
            s_m,
            offset_m,
            yaw_rad: 0.0,
        },
        options,
        car_ahead_m: None,
    }
}

fn radius_name(r: Option<f64>, dir: Direction) -> String {
    match r {
        Some(r) => format!("r{:04}_{}", r.round() as i64, dir.as_str()),
        None => "straight".to_string(),
    }
}

/// The scenes of a suite; `base` provides the look (lane width, texture, noise) and seed.
pub fn suite(which: Suite, base: &SceneOptions) -> Vec<RoadSpec> {
    let mut out = Vec::new();
    let seed0 = base.seed;
    match which {
        Suite::Clean | Suite::Hard => {
            let (radii, hard): (&[f64], bool) = match which {
                Suite::Clean => (&[200.0, 300.0, 500.0, 800.0, 1200.0, 2000.0, 3000.0], false),
                _ => (
                    &[250.0, 350.0, 500.0, 700.0, 900.0, 1200.0, 1600.0, 2500.0],
                    true,
                ),
            };
            let prefix = if hard { "hard" } else { "clean" };
            let mut i = 0u64;
            let mut add = |r: Option<f64>, dir: Direction, out: &mut Vec<RoadSpec>| {
                let offset = 0.45 * ((i as f64) * 1.7 + 0.3).sin();
                let options = SceneOptions {
                    seed: seed0 + i,
                    shadows: hard,
                    concrete: hard,
                    ..*base
                };
                let s_m = 200.0 + 37.0 * i as f64;
                out.push(spec(
                    format!("{prefix}_{:02}_{}", i, radius_name(r, dir)),
                    r,
                    dir,
                    s_m,
                    offset,
                    options,
                ));
                i += 1;
            };
            for &r in radii {
                add(Some(r), Direction::Left, &mut out);
                add(Some(r), Direction::Right, &mut out);
            }
            let straights = if hard { 4 } else { 2 };
            for _ in 0..straights {
                add(None, Direction::Straight, &mut out);
            }
        }
        Suite::Demo => {
            let o = |seed: u64| SceneOptions {
                seed: seed0 + seed,
                ..*base
            };
            out.push(spec(
                "straight".into(),
                None,
                Direction::Straight,
                120.0,
                0.15,
                o(0),
            ));
            out.push(spec(
                "gentle_left".into(),
                Some(1000.0),
                Direction::Left,
                160.0,
                -0.2,
                o(1),
            ));
            out.push(spec(
                "gentle_right".into(),
                Some(900.0),
                Direction::Right,
                200.0,
                0.3,
                o(2),
            ));
            out.push(spec(
                "tight_left".into(),
                Some(250.0),
                Direction::Left,
                240.0,
                0.1,
                o(3),
            ));
            out.push(spec(
                "tight_right".into(),
                Some(300.0),
                Direction::Right,
                280.0,
                -0.25,
                o(4),
            ));
            let shadow = SceneOptions {
                shadows: true,
                concrete: true,
                ..o(5)
            };
            out.push(spec(
                "shadows_left".into(),
                Some(600.0),
                Direction::Left,
                322.0,
                0.2,
                shadow,
            ));
            let mut car = spec(
                "car_seams_right".into(),
                Some(1500.0),
                Direction::Right,
                360.0,
                -0.1,
                SceneOptions {
                    seams: true,
                    ..o(6)
                },
            );
            car.car_ahead_m = Some(16.0);
            out.push(car);
        }
    }
    out
}
