//! Road geometry for synthetic scenes: a centre line of known curvature integrated into a table
//! in the vehicle's ground frame, with Frenet projection and lane-line crossings.
//!
//! # Frames and signs
//! - Ground frame of the vehicle: `X` metres to the right, `Z` metres forward, origin under the
//!   camera. (The camera height and pitch live in [`super::scene::Rig`].)
//! - Arc length `s` runs along the road's centre line from the road's start.
//! - Lateral coordinate `d` is positive to the right of the centre line.
//! - Curvature `k` (1/m) is positive where the road bends left (counter-clockwise seen from
//!   above); the radius is `1/|k|`.
//! - The vehicle's `offset_m` is its `d` (positive = right of centre, as `lanes` reports it);
//!   its `yaw_rad` is its heading relative to the road tangent, positive = turned left.

use serde::{Deserialize, Serialize};

/// A piece of the centre line whose curvature changes linearly from `k_start` to `k_end`
/// (a clothoid; constant when both are equal).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub length_m: f64,
    pub k_start: f64,
    pub k_end: f64,
}

/// Curvature along the road as a function of arc length from the road's start. Before 0 the
/// first segment's start curvature holds; after the last segment its end curvature holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvatureProfile {
    pub segments: Vec<Segment>,
}

/// Which way a bend turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Left,
    Right,
    Straight,
}

impl Direction {
    /// The direction of a signed curvature (`|k| < 1e-9` is straight).
    pub fn of_curvature(k: f64) -> Direction {
        if k > 1e-9 {
            Direction::Left
        } else if k < -1e-9 {
            Direction::Right
        } else {
            Direction::Straight
        }
    }
    pub fn as_str(&self) -> &'static str {
        match self {
            Direction::Left => "left",
            Direction::Right => "right",
            Direction::Straight => "straight",
        }
    }
}

/// Signed curvature of a bend of `radius_m` (`None` or infinite = straight) turning `dir`.
pub fn curvature(radius_m: Option<f64>, dir: Direction) -> f64 {
    match (radius_m, dir) {
        (None, _) | (_, Direction::Straight) => 0.0,
        (Some(r), _) if !r.is_finite() || r <= 0.0 => 0.0,
        (Some(r), Direction::Left) => 1.0 / r,
        (Some(r), Direction::Right) => -1.0 / r,
    }
}

impl CurvatureProfile {
    /// One constant curvature everywhere.
    pub fn constant(k: f64) -> Self {
        Self {
            segments: vec![Segment {
                length_m: 1.0,
                k_start: k,
                k_end: k,
            }],
        }
    }

    /// Curvature at arc length `s`.
    pub fn curvature_at(&self, s: f64) -> f64 {
        let Some(first) = self.segments.first() else {
            return 0.0;
        };
        if s <= 0.0 {
            return first.k_start;
        }
        let mut s0 = 0.0;
        for seg in &self.segments {
            if s < s0 + seg.length_m {
                let f = if seg.length_m > 0.0 {
                    (s - s0) / seg.length_m
                } else {
                    1.0
                };
                return seg.k_start + f * (seg.k_end - seg.k_start);
            }
            s0 += seg.length_m;
        }
        self.segments.last().map(|g| g.k_end).unwrap_or(0.0)
    }
}

/// Where the vehicle is on the road.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VehiclePose {
    /// Arc length of the vehicle's foot point on the centre line, m.
    pub s_m: f64,
    /// Lateral position of the camera, m, positive right of the centre line.
    pub offset_m: f64,
    /// Heading relative to the road tangent, radians, positive = turned left.
    pub yaw_rad: f64,
}

/// A point of the centre-line table: position, unit tangent and curvature, in the vehicle frame.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    x: f64,
    z: f64,
    tx: f64,
    tz: f64,
    k: f64,
}

/// The centre line around one vehicle pose, tabulated every `STEP_M` in the vehicle's ground frame.
#[derive(Debug, Clone)]
pub struct RoadFrame {
    /// Arc length of the first node.
    s0: f64,
    nodes: Vec<Node>,
    pub pose: VehiclePose,
}

/// Table spacing along the centre line, m.
pub const STEP_M: f64 = 0.1;
/// Integration sub-steps per table step.
const SUBSTEPS: usize = 4;

/// Frenet coordinates of a ground point: arc length and lateral offset (positive right).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frenet {
    pub s: f64,
    pub d: f64,
}

impl RoadFrame {
    /// Tabulate `profile` from `behind_m` behind to `ahead_m` ahead of the vehicle at `pose`.
    pub fn new(profile: &CurvatureProfile, pose: VehiclePose, behind_m: f64, ahead_m: f64) -> Self {
        // Road tangent in the vehicle frame at the vehicle: heading phi = -yaw (CCW positive),
        // tangent (-sin phi, cos phi), right normal (cos phi, sin phi).
        let phi0 = -pose.yaw_rad;
        let (nx0, nz0) = (phi0.cos(), phi0.sin());
        let (cx0, cz0) = (-pose.offset_m * nx0, -pose.offset_m * nz0);
        let n_ahead = (ahead_m / STEP_M).ceil() as usize;
        let n_behind = (behind_m / STEP_M).ceil() as usize;
        let integrate = |dir: f64, n: usize| -> Vec<Node> {
            let mut out = Vec::with_capacity(n + 1);
            let (mut x, mut z, mut phi) = (cx0, cz0, phi0);
            let mut s = pose.s_m;
            let k = profile.curvature_at(s);
            out.push(Node {
                x,
                z,
                tx: -phi.sin(),
                tz: phi.cos(),
                k,
            });
            let h = dir * STEP_M / SUBSTEPS as f64;
            for _ in 0..n {
                for _ in 0..SUBSTEPS {
                    // Midpoint rule on heading; curvature is piecewise linear in s.
                    let k0 = profile.curvature_at(s);
                    let km = profile.curvature_at(s + h / 2.0);
                    let k1 = profile.curvature_at(s + h);
                    let phi_mid = phi + (k0 + km) / 2.0 * h / 2.0;
                    x += h * -phi_mid.sin();
                    z += h * phi_mid.cos();
                    phi += (k0 + 4.0 * km + k1) / 6.0 * h;
                    s += h;
                }
                out.push(Node {
                    x,
                    z,
                    tx: -phi.sin(),
                    tz: phi.cos(),
                    k: profile.curvature_at(s),
                });
            }
            out
        };
        let fwd = integrate(1.0, n_ahead);
        let back = integrate(-1.0, n_behind);
        let mut nodes: Vec<Node> = back.into_iter().skip(1).rev().collect();
        nodes.extend(fwd);
        Self {
            s0: pose.s_m - n_behind as f64 * STEP_M,
            nodes,
            pose,
        }
    }

    /// Arc-length range covered by the table.
    pub fn s_range(&self) -> (f64, f64) {
        (
            self.s0,
            self.s0 + (self.nodes.len().saturating_sub(1)) as f64 * STEP_M,
        )
    }

    /// Interpolated node at arc length `s` (clamped to the table).
    fn at(&self, s: f64) -> Node {
        let last = self.nodes.len() - 1;
        let t = ((s - self.s0) * (1.0 / STEP_M)).clamp(0.0, last as f64);
        // t >= 0, so truncation is floor.
        let i = (t as usize).min(last.saturating_sub(1));
        let f = t - i as f64;
        let a = &self.nodes[i];
        let b = &self.nodes[(i + 1).min(last)];
        let l = |p: f64, q: f64| p + f * (q - p);
        // Interpolated unit tangents 0.1 m apart stay unit to ~1e-8 on any drivable bend.
        Node {
            x: l(a.x, b.x),
            z: l(a.z, b.z),
            tx: l(a.tx, b.tx),
            tz: l(a.tz, b.tz),
            k: l(a.k, b.k),
        }
    }

    /// Centre-line position `(X, Z)` at arc length `s`.
    pub fn centre(&self, s: f64) -> (f64, f64) {
        let n = self.at(s);
        (n.x, n.z)
    }

    /// The point at lateral offset `d` (positive right) from the centre line at arc length `s`.
    pub fn point(&self, s: f64, d: f64) -> (f64, f64) {
        let n = self.at(s);
        // right normal = (tz, -tx)
        (n.x + d * n.tz, n.z - d * n.tx)
    }

    /// Signed curvature of the centre line at arc length `s`.
    pub fn curvature(&self, s: f64) -> f64 {
        self.at(s).k
    }

    /// Frenet coordinates of ground point `(x, z)`, starting the search at `s_guess`.
    /// `None` when the projection leaves the table.
    pub fn frenet(&self, x: f64, z: f64, s_guess: f64) -> Option<Frenet> {
        let (lo, hi) = self.s_range();
        let mut s = s_guess.clamp(lo, hi);
        for _ in 0..12 {
            let n = self.at(s);
            let delta = (x - n.x) * n.tx + (z - n.z) * n.tz;
            // Newton step for the foot point on a curve of curvature k: delta / (1 + k*d).
            let d = (x - n.x) * n.tz - (z - n.z) * n.tx;
            let denom = (1.0 + n.k * d).max(0.2);
            s += delta / denom;
            if s < lo - 1.0 || s > hi + 1.0 {
                return None;
            }
            if delta.abs() < 1e-6 {
                break;
            }
        }
        if s < lo || s > hi {
            return None;
        }
        let n = self.at(s);
        Some(Frenet {
            s,
            d: (x - n.x) * n.tz - (z - n.z) * n.tx,
        })
    }

    /// Arc length at which the curve at lateral offset `d` first crosses forward distance `z`
    /// ahead of the vehicle (searching forward from the vehicle), interpolated between nodes.
    pub fn s_at_forward_distance(&self, d: f64, z: f64) -> Option<f64> {
        let (_, hi) = self.s_range();
        let mut s = self.pose.s_m - 5.0;
        let mut prev = self.point(s, d).1 - z;
        while s + STEP_M <= hi {
            let sn = s + STEP_M;
            let cur = self.point(sn, d).1 - z;
            if prev <= 0.0 && cur > 0.0 {
                // refine by bisection
                let (mut a, mut b) = (s, sn);
                for _ in 0..40 {
                    let m = (a + b) / 2.0;
                    if self.point(m, d).1 - z > 0.0 {
                        b = m;
                    } else {
                        a = m;
                    }
                }
                return Some((a + b) / 2.0);
            }
            prev = cur;
            s = sn;
        }
        None
    }

    /// Lateral position `X` where the curve at offset `d` crosses forward distance `z`.
    pub fn lateral_at_forward_distance(&self, d: f64, z: f64) -> Option<f64> {
        self.s_at_forward_distance(d, z).map(|s| self.point(s, d).0)
    }
}

/// A lateral manoeuvre of a drive; each moves the vehicle smoothly (a raised-cosine ramp).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Manoeuvre {
    /// Move one lane width to the right (`right`) or left over `duration_s` from `start_s`.
    LaneChange {
        start_s: f64,
        duration_s: f64,
        right: bool,
    },
    /// Drift `offset_m` sideways (positive right) over `ramp_s`, stay `hold_s`, come back
    /// over `ramp_s`.
    Drift {
        start_s: f64,
        ramp_s: f64,
        hold_s: f64,
        offset_m: f64,
    },
}

/// 0 before `t0`, 1 after `t0 + dur`, a raised cosine in between.
fn ramp(t: f64, t0: f64, dur: f64) -> f64 {
    let x = ((t - t0) / dur.max(1e-6)).clamp(0.0, 1.0);
    0.5 - 0.5 * (std::f64::consts::PI * x).cos()
}

impl Manoeuvre {
    /// Lateral displacement at time `t` (m, positive right); `lane_width_m` for a change.
    pub fn offset_at(&self, t: f64, lane_width_m: f64) -> f64 {
        match *self {
            Manoeuvre::LaneChange {
                start_s,
                duration_s,
                right,
            } => {
                let d = if right { lane_width_m } else { -lane_width_m };
                d * ramp(t, start_s, duration_s)
            }
            Manoeuvre::Drift {
                start_s,
                ramp_s,
                hold_s,
                offset_m,
            } => offset_m * (ramp(t, start_s, ramp_s) - ramp(t, start_s + ramp_s + hold_s, ramp_s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pose(offset: f64, yaw: f64) -> VehiclePose {
        VehiclePose {
            s_m: 100.0,
            offset_m: offset,
            yaw_rad: yaw,
        }
    }

    #[test]
    fn constant_curvature_table_is_a_circle() {
        let r = 200.0;
        let road = RoadFrame::new(
            &CurvatureProfile::constant(1.0 / r),
            pose(0.0, 0.0),
            10.0,
            150.0,
        );
        // Left bend: centre of curvature at (-r, 0). Every node is at distance r from it.
        for s in [90.0, 100.0, 130.0, 249.0] {
            let (x, z) = road.centre(s);
            let dist = ((x + r).powi(2) + z * z).sqrt();
            assert!((dist - r).abs() < 1e-6, "s {s}: {dist}");
        }
        // The arc length maps to the angle.
        let (x, z) = road.centre(100.0 + 50.0);
        let ang = z.atan2(x + r);
        assert!((ang - 50.0 / r).abs() < 1e-6);
    }

    #[test]
    fn frenet_matches_distance_to_circle_centre() {
        let r = 300.0;
        let road = RoadFrame::new(
            &CurvatureProfile::constant(-1.0 / r),
            pose(0.4, 0.01),
            10.0,
            200.0,
        );
        for &(x, z) in &[(0.0, 5.0), (3.0, 20.0), (-2.0, 60.0), (10.0, 120.0)] {
            let f = road.frenet(x, z, 100.0 + z).unwrap();
            let (px, pz) = road.point(f.s, f.d);
            assert!(
                (px - x).abs() < 1e-5 && (pz - z).abs() < 1e-5,
                "({x},{z}) -> {f:?} -> ({px},{pz})"
            );
        }
        // The vehicle itself is at d = offset.
        let f = road.frenet(0.0, 0.0, 100.0).unwrap();
        assert!(
            (f.d - 0.4).abs() < 1e-9 && (f.s - 100.0).abs() < 1e-9,
            "{f:?}"
        );
    }

    #[test]
    fn straight_road_lines_are_at_plus_minus_half_width() {
        let road = RoadFrame::new(&CurvatureProfile::constant(0.0), pose(0.3, 0.0), 10.0, 50.0);
        let xl = road.lateral_at_forward_distance(-1.85, 10.0).unwrap();
        let xr = road.lateral_at_forward_distance(1.85, 10.0).unwrap();
        assert!(
            (xl - (-2.15)).abs() < 1e-9 && (xr - 1.55).abs() < 1e-9,
            "{xl} {xr}"
        );
    }

    #[test]
    fn clothoid_curvature_is_piecewise_linear() {
        let p = CurvatureProfile {
            segments: vec![
                Segment {
                    length_m: 50.0,
                    k_start: 0.0,
                    k_end: 0.0,
                },
                Segment {
                    length_m: 100.0,
                    k_start: 0.0,
                    k_end: 0.004,
                },
            ],
        };
        assert_eq!(p.curvature_at(-5.0), 0.0);
        assert!((p.curvature_at(100.0) - 0.002).abs() < 1e-12);
        assert!((p.curvature_at(500.0) - 0.004).abs() < 1e-12);
    }
}
