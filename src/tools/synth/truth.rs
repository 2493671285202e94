//! Ground truth of synthetic scenes: the JSON written beside every still or video (radius,
//! offset and lane width where `lanes` measures them, and the lane lines' image positions in
//! TuSimple layout), and its computation from the known geometry.
//!
//! # Where the truth is measured
//! `lanes` measures at the bottom row of the bird's-eye view, which for a synthetic config is
//! the ground line `measure_distance_m` ahead of the camera (the quad's near edge plus one
//! bird's-eye row). `radius_m`, `offset_m` and `lane_width_lateral_m` are the truth there:
//! - `radius_m`: radius of the centre line where it crosses that distance (`None` = straight);
//!   the mean of both lines' radii equals it exactly on a constant bend.
//! - `offset_m`: minus the lateral position (vehicle frame) of the midpoint between the two
//!   lines where they cross that distance: positive when the vehicle is right of centre.
//! - `lane_width_lateral_m`: the lateral distance between the lines at that distance (the lane
//!   width divided by the cosine of the road's heading there).
//!
//! The lane is the ego lane as `lanes` reports it: the lane the camera's column is in at that
//! distance (after a lane change, the lane one width over, with its radius and lines).
//!
//! `radius_at_vehicle_m` and `offset_at_vehicle_m` give the same at the vehicle itself; on a
//! bend of radius R the two offsets differ by about `distance^2 / (2 R)` (5 cm at R = 200 m).

use super::rig::{QuadGeometry, Rig};
use super::road::{CurvatureProfile, Direction, RoadFrame};
use super::scene::{Car, SceneOptions};
use crate::base::error::{Error, Result};
use crate::lane::fit::Poly2;
use crate::lane::measure;
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The value of `kind` that marks a synthetic truth file.
pub const KIND: &str = "lanes-synth-truth";

/// Lane lines are reported in the truth up to this far ahead, m.
pub const TRUTH_MAX_DISTANCE_M: f64 = 100.0;

/// One synthetic truth file: a still (one frame) or a video (one record per frame).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthFile {
    /// Always [`KIND`].
    pub kind: String,
    pub version: u32,
    /// The still image, relative to this file (stills).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The video, relative to this file (videos).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// The true camera (OpenCV YAML), relative to this file.
    pub camera: String,
    /// The matching `lanes` config (TOML), relative to this file.
    pub config: String,
    pub width: i32,
    pub height: i32,
    pub camera_height_m: f64,
    pub camera_pitch_deg: f64,
    pub quad: QuadGeometry,
    /// Forward distance of the bird's-eye bottom row, where `lanes` measures, m.
    pub measure_distance_m: f64,
    /// Lane lines in `lanes` are reported up to this distance, m.
    pub truth_max_distance_m: f64,
    pub scene: SceneOptions,
    pub profile: CurvatureProfile,
    pub frames: Vec<FrameTruth>,
    /// Lane changes and drifts of a video drive (`lanes synth video --lane-change/--drift-over`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manoeuvres: Vec<super::road::Manoeuvre>,
    /// The drive's lane events from its true geometry (`true_events`, default thresholds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::drive::events::Event>,
}

/// The lane events of a drive from its truth: each frame's true offset is taken in the lane
/// the vehicle is in (the offset from the first lane's centre minus whole lane widths), with
/// the true lateral lane width and radius, and `events::detect` applies the definitions of
/// `cfg` to these exact numbers.
pub fn true_events(
    frames: &[FrameTruth],
    fps: f64,
    cfg: &crate::base::config::EventsConfig,
) -> Vec<crate::drive::events::Event> {
    let records: Vec<crate::base::telemetry::FrameRecord> = frames
        .iter()
        .map(|f| {
            let w = f.lane_width_lateral_m;
            let ego = f.offset_m - w * (f.offset_m / w).round();
            let a = -f.curvature_per_m;
            crate::base::telemetry::FrameRecord {
                frame: f.frame,
                time_s: f.time_s,
                search: "truth".into(),
                detected: true,
                status: "both".into(),
                left_confidence: 1.0,
                right_confidence: 1.0,
                confidence: 1.0,
                left_fit: Some(Poly2::new(a, 0.0, 0.0)),
                right_fit: Some(Poly2::new(a, 0.0, 0.0)),
                radius_m: Some(f.radius_m.unwrap_or(measure::RADIUS_CAP_M)),
                offset_m: Some(ego),
                lane_width_m: Some(w),
                left_pixels: 0,
                right_pixels: 0,
                pitch_deg: None,
                horizon_y: None,
                cut: false,
            }
        })
        .collect();
    crate::drive::events::detect(&records, fps, cfg)
}

/// The truth of one frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameTruth {
    pub frame: usize,
    pub time_s: f64,
    /// Image (or video) file, as in TuSimple labels.
    pub raw_file: String,
    /// Arc length of the vehicle along the road, m.
    pub s_m: f64,
    /// Radius of the centre line at the measure distance, m; `None` on a straight road.
    pub radius_m: Option<f64>,
    /// Signed curvature there, 1/m, positive = bends left.
    pub curvature_per_m: f64,
    pub direction: Direction,
    pub radius_at_vehicle_m: Option<f64>,
    /// The radius `lanes` reports for perfect line pixels: the mean of both lines' radii at the
    /// bottom row from exact least-squares quadratics fitted to the true lines over the
    /// bird's-eye view. Equals `radius_m` within 1.2% on constant bends (at 200 m; a circle is not a
    /// quadratic), less on gentler ones; on a changing bend it
    /// shows the model error of a quadratic (it sees the curvature further ahead).
    pub radius_quadratic_m: f64,
    /// Camera's offset from the lane centre at the measure distance (positive = right), m.
    pub offset_m: f64,
    /// Camera's offset from the lane centre at the vehicle, m.
    pub offset_at_vehicle_m: f64,
    /// Vehicle heading relative to the road, radians, positive = turned left.
    pub yaw_rad: f64,
    /// True lane width (line centre to line centre), m.
    pub lane_width_m: f64,
    /// Lateral distance between the lines at the measure distance, m.
    pub lane_width_lateral_m: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub car: Option<Car>,
    /// Image rows between which both lane lines are inside the bird's-eye view that `lanes`
    /// fits (between the quad's far and near distances): `[top, bottom]`.
    pub birdseye_rows: [f64; 2],
    /// The camera's downward pitch on this frame, degrees, when it differs over the video
    /// (`lanes synth video --pitch-change`); else the header's `camera_pitch_deg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera_pitch_deg: Option<f64>,
    /// Image rows of the TuSimple layout.
    pub h_samples: Vec<f64>,
    /// `[left, right]` lane-line x in the rendered (distorted) image at each row; -2 = not visible.
    pub lanes: Vec<Vec<f64>>,
}

/// TuSimple rows for an image of height `h`: 160, 170, ..., 710 at 720, scaled otherwise.
pub fn h_samples(h: i32) -> Vec<f64> {
    let s = h as f64 / 720.0;
    (0..56)
        .map(|i| ((160.0 + 10.0 * i as f64) * s).round())
        .collect()
}

/// Image x of the lane line at lateral offset `d` at each row of `rows` (-2 where not visible).
pub fn line_positions(
    rig: &Rig,
    road: &RoadFrame,
    d: f64,
    rows: &[f64],
    max_dist: f64,
) -> Vec<f64> {
    let (w, h) = (rig.camera.width as f64, rig.camera.height as f64);
    let mut pts: Vec<(f64, f64)> = Vec::new();
    let step = 0.05;
    let mut s = road.pose.s_m - 3.0;
    let (_, hi) = road.s_range();
    while s <= hi {
        let (x, z) = road.point(s, d);
        if z > max_dist {
            break;
        }
        if z > 0.3 {
            if let Some(p) = rig.ground_to_image(x, z) {
                pts.push(p);
            }
        }
        s += step;
    }
    rows.iter()
        .map(|&r| {
            for win in pts.windows(2) {
                let ((u0, v0), (u1, v1)) = (win[0], win[1]);
                if (v0 >= r && v1 < r) || (v0 <= r && v1 > r) {
                    let f = (r - v0) / (v1 - v0);
                    let u = u0 + f * (u1 - u0);
                    if u >= 0.0 && u <= w - 1.0 && r >= 0.0 && r <= h - 1.0 {
                        return (u * 100.0).round() / 100.0;
                    }
                    return -2.0;
                }
            }
            -2.0
        })
        .collect()
}

fn radius(k: f64) -> Option<f64> {
    (k.abs() > 1e-9).then(|| 1.0 / k.abs())
}

/// Inputs of [`frame_truth`] besides the geometry.
pub struct FrameInfo<'a> {
    pub frame: usize,
    pub time_s: f64,
    pub raw_file: &'a str,
    pub car: Option<Car>,
}

/// Compute the truth of one frame.
pub fn frame_truth(
    rig: &Rig,
    road: &RoadFrame,
    opts: &SceneOptions,
    q: &QuadGeometry,
    info: FrameInfo,
) -> Result<FrameTruth> {
    let half = opts.lane_width_m / 2.0;
    let zm = measure_distance(q, rig.camera.height);
    let crossing = |d: f64| {
        road.lateral_at_forward_distance(d, zm)
            .ok_or_else(|| Error::Invalid(format!("lane lines do not cross {zm:.2} m ahead")))
    };
    // The ego lane is the lane the camera's column is in where `lanes` measures (after a lane
    // change the tracker moves to it): the lane `centre` over from the road's centre line
    // (right positive), its lines at `centre -/+ half`.
    let (xl0, xr0) = (crossing(-half)?, crossing(half)?);
    let centre = opts.lane_width_m * (-(xl0 + xr0) / 2.0 / (xr0 - xl0)).round();
    let (xl, xr) = if centre == 0.0 {
        (xl0, xr0)
    } else {
        (crossing(centre - half)?, crossing(centre + half)?)
    };
    let sc = road
        .s_at_forward_distance(centre, zm)
        .ok_or_else(|| Error::Invalid(format!("centre line does not cross {zm:.2} m ahead")))?;
    // A curve `centre` to the right of one of curvature k curves by k / (1 + k centre).
    let offset_curvature = |k: f64| k / (1.0 + k * centre);
    let k = offset_curvature(road.curvature(sc));
    let kv = offset_curvature(road.curvature(road.pose.s_m));
    let rows = h_samples(rig.camera.height);
    // Rows of the lines at the quad's far and near distances.
    let row_at = |d: f64, z: f64| -> Result<f64> {
        let x = road
            .lateral_at_forward_distance(d, z)
            .ok_or_else(|| Error::Invalid(format!("lane line does not reach {z} m ahead")))?;
        rig.ground_to_image(x, z)
            .map(|p| p.1)
            .ok_or_else(|| Error::Invalid(format!("lane line {z} m ahead is behind the camera")))
    };
    let (dl, dr) = (centre - half, centre + half);
    let top_row = row_at(dl, q.far_m)?.max(row_at(dr, q.far_m)?);
    let bottom_row = row_at(dl, q.near_m)?.min(row_at(dr, q.near_m)?);
    let radius_quadratic_m = quadratic_radius(rig, road, q, (dl, dr))?;
    let lanes = vec![
        line_positions(rig, road, dl, &rows, TRUTH_MAX_DISTANCE_M),
        line_positions(rig, road, dr, &rows, TRUTH_MAX_DISTANCE_M),
    ];
    Ok(FrameTruth {
        frame: info.frame,
        time_s: info.time_s,
        raw_file: info.raw_file.to_string(),
        s_m: road.pose.s_m,
        radius_m: radius(k),
        curvature_per_m: k,
        direction: Direction::of_curvature(k),
        radius_at_vehicle_m: radius(kv),
        radius_quadratic_m,
        offset_m: -(xl + xr) / 2.0,
        offset_at_vehicle_m: road.pose.offset_m - centre,
        yaw_rad: road.pose.yaw_rad,
        lane_width_m: opts.lane_width_m,
        lane_width_lateral_m: xr - xl,
        car: info.car,
        birdseye_rows: [
            (top_row * 100.0).round() / 100.0,
            (bottom_row * 100.0).round() / 100.0,
        ],
        camera_pitch_deg: None,
        h_samples: rows,
        lanes,
    })
}

/// Mean radius of both lines (at `dl`, `dr` from the road's centre line) from exact quadratics
/// fitted in bird's-eye pixels (as `lanes` fits them) to the true lines, measured at the bottom
/// row as `lanes` measures.
fn quadratic_radius(
    rig: &Rig,
    road: &RoadFrame,
    q: &QuadGeometry,
    (dl, dr): (f64, f64),
) -> Result<f64> {
    let (w, h) = (rig.camera.width, rig.camera.height);
    let cfg = rig.lanes_config(q, dr - dl)?;
    let xm = cfg.units.xm_per_px;
    let mut radii = Vec::new();
    for d in [dl, dr] {
        let (mut ys, mut xs) = (Vec::new(), Vec::new());
        let mut y = 0.0;
        while y < h as f64 {
            let z = Rig::distance_of_birdseye_row(q, y, h);
            let x = road.lateral_at_forward_distance(d, z).ok_or_else(|| {
                Error::Invalid(format!("lane line does not reach {z:.1} m ahead"))
            })?;
            ys.push(y);
            xs.push(w as f64 / 2.0 + x / xm);
            y += 2.0;
        }
        let fit = fit_quadratic(&ys, &xs)
            .ok_or_else(|| Error::Invalid("singular quadratic fit of the true line".into()))?;
        radii.push(measure::radius_m(&fit, (h - 1) as f64, &cfg.units));
    }
    Ok(radii.iter().sum::<f64>() / radii.len() as f64)
}

/// Least-squares x = a y^2 + b y + c in f64 (y scaled for conditioning).
fn fit_quadratic(ys: &[f64], xs: &[f64]) -> Option<Poly2> {
    let s = ys.iter().copied().fold(1.0, f64::max);
    let mut m = Matrix3::<f64>::zeros();
    let mut r = Vector3::<f64>::zeros();
    for (y, x) in ys.iter().zip(xs) {
        let t = y / s;
        let v = [t * t, t, 1.0];
        for i in 0..3 {
            for j in 0..3 {
                m[(i, j)] += v[i] * v[j];
            }
            r[i] += v[i] * x;
        }
    }
    let sol = m.lu().solve(&r)?;
    Some(Poly2::new(sol[0] / (s * s), sol[1] / s, sol[2]))
}

/// Forward distance of the bottom bird's-eye row (`height - 1`), where `lanes` measures.
pub fn measure_distance(q: &QuadGeometry, birdseye_height: i32) -> f64 {
    Rig::distance_of_birdseye_row(q, (birdseye_height - 1) as f64, birdseye_height)
}

impl TruthFile {
    /// The header of a truth file for a rig, quad, scene and road profile, naming the camera
    /// and config files written beside it; frames are added by the caller.
    pub fn header(
        rig: &crate::tools::synth::rig::Rig,
        quad: &crate::tools::synth::rig::QuadGeometry,
        opts: &crate::tools::synth::scene::SceneOptions,
        profile: &crate::tools::synth::road::CurvatureProfile,
        cam: &str,
        cfg: &str,
    ) -> Self {
        Self {
            kind: KIND.into(),
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
            measure_distance_m: measure_distance(quad, rig.camera.height),
            truth_max_distance_m: TRUTH_MAX_DISTANCE_M,
            scene: *opts,
            profile: profile.clone(),
            frames: Vec::new(),
            manoeuvres: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Read and check a truth file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let t: TruthFile = serde_json::from_str(&text).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            message: format!("not a synthetic truth file ({e})"),
        })?;
        if t.kind != KIND {
            return Err(Error::Io {
                path: path.to_path_buf(),
                message: format!("kind is {:?}, expected {KIND:?}", t.kind),
            });
        }
        Ok(t)
    }

    /// Write as pretty JSON with arrays of numbers kept on one line.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Invalid(e.to_string()))?;
        std::fs::write(path, collapse_number_arrays(&text) + "\n").map_err(|e| Error::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// A path named in the file, resolved against the file's directory.
    pub fn resolve(truth_path: &Path, name: &str) -> PathBuf {
        truth_path
            .parent()
            .map(|p| p.join(name))
            .unwrap_or_else(|| PathBuf::from(name))
    }
}

/// Join pretty-printed arrays whose elements are all numbers onto one line.
fn collapse_number_arrays(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.trim_end().ends_with('[') {
            let mut j = i + 1;
            let mut items = Vec::new();
            while j < lines.len() {
                let t = lines[j].trim().trim_end_matches(',');
                if t.parse::<f64>().is_ok() {
                    items.push(t);
                    j += 1;
                } else {
                    break;
                }
            }
            if j < lines.len() && !items.is_empty() && lines[j].trim().starts_with(']') {
                out.push(format!(
                    "{}{}{}",
                    l.trim_end(),
                    items.join(", "),
                    lines[j].trim()
                ));
                i = j + 1;
                continue;
            }
        }
        out.push(l.to_string());
        i += 1;
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_arrays_are_collapsed() {
        let v = serde_json::json!({"a": [1.5, -2.0], "b": [[1, 2], [3]], "c": ["x", "y"]});
        let text = collapse_number_arrays(&serde_json::to_string_pretty(&v).unwrap());
        assert!(text.contains("\"a\": [1.5, -2.0]"), "{text}");
        assert!(text.contains("[1, 2],"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }
}
