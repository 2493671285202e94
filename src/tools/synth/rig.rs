//! The synthetic camera rig: a pinhole camera with lens distortion mounted at a known height and
//! pitch above a flat road; projection of ground points into the image and rays out of it, and
//! the `lanes` config (perspective quad, metres per pixel) computed exactly from the geometry.

use crate::base::camera::Camera;
use crate::base::config::{Config, PerspectiveConfig};
use crate::base::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Camera pose above the road: the camera looks straight ahead (no yaw or roll), pitched down.
#[derive(Debug, Clone, PartialEq)]
pub struct Rig {
    pub camera: Camera,
    /// Height of the optical centre above the road, m.
    pub height_m: f64,
    /// Downward pitch of the optical axis, degrees.
    pub pitch_deg: f64,
}

/// Where the perspective quad sits on the ground (straight road, vehicle centred).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuadGeometry {
    /// Forward distance of the quad's bottom edge (the bird's-eye bottom row), m.
    pub near_m: f64,
    /// Forward distance of the quad's top edge, m.
    pub far_m: f64,
    /// Lateral half-span of the quad, m (half the lane width: the quad's sides are the lines).
    pub half_width_m: f64,
}

impl Default for QuadGeometry {
    fn default() -> Self {
        Self {
            near_m: 4.5,
            far_m: 30.0,
            half_width_m: 1.85,
        }
    }
}

/// The bird's-eye destination rectangle used for synthetic configs: the `lanes` default
/// (450..830 x 0..720 at 1280x720), scaled to the image size.
pub fn dst(width: i32, height: i32) -> [[f64; 2]; 4] {
    let (sx, sy) = (width as f64 / 1280.0, height as f64 / 720.0);
    [
        [450.0 * sx, 0.0],
        [830.0 * sx, 0.0],
        [450.0 * sx, 720.0 * sy],
        [830.0 * sx, 720.0 * sy],
    ]
}

impl Default for Rig {
    /// 1280x720, fx = fy = 1000 px (a 65 degree horizontal field of view), principal point a
    /// little off centre, moderate barrel distortion (k1 = -0.25) with a trace of tangential
    /// distortion; mounted 1.45 m above the road, pitched 2 degrees down.
    fn default() -> Self {
        Self {
            camera: Camera {
                width: 1280,
                height: 720,
                k: [[1000.0, 0.0, 641.5], [0.0, 1000.0, 358.5], [0.0, 0.0, 1.0]],
                dist: vec![-0.25, 0.07, 0.0004, -0.0003, 0.0],
            },
            height_m: 1.45,
            pitch_deg: 2.0,
        }
    }
}

impl Rig {
    /// Check the rig is usable: positive height, pitch within +-30 degrees, a distortion the
    /// renderer can invert over the whole image.
    pub fn validate(&self) -> Result<()> {
        if !(self.height_m.is_finite() && self.height_m > 0.1 && self.height_m < 20.0) {
            return Err(Error::Invalid(format!(
                "camera height {} m (expected 0.1..20)",
                self.height_m
            )));
        }
        if !(self.pitch_deg.is_finite() && self.pitch_deg.abs() < 30.0) {
            return Err(Error::Invalid(format!(
                "camera pitch {} degrees (expected -30..30)",
                self.pitch_deg
            )));
        }
        let c = &self.camera;
        if !(c.fx() > 0.0 && c.fy() > 0.0 && c.width > 0 && c.height > 0) {
            return Err(Error::Invalid(
                "camera: fx, fy and the image size must be positive".into(),
            ));
        }
        for &(u, v) in &[
            (0.0, 0.0),
            (c.width as f64, 0.0),
            (0.0, c.height as f64),
            (c.width as f64, c.height as f64),
        ] {
            let (x, y) = self.undistort_normalized((u - c.cx()) / c.fx(), (v - c.cy()) / c.fy());
            let (xd, yd) = c.distort_normalized(x, y);
            let err =
                ((xd * c.fx() + c.cx() - u).powi(2) + (yd * c.fy() + c.cy() - v).powi(2)).sqrt();
            if err.is_nan() || err >= 1e-3 {
                return Err(Error::Invalid(format!(
                    "camera distortion {:?} cannot be inverted at image corner ({u}, {v})",
                    c.dist
                )));
            }
        }
        Ok(())
    }

    fn pitch(&self) -> (f64, f64) {
        let t = self.pitch_deg.to_radians();
        (t.sin(), t.cos())
    }

    /// Camera coordinates of a world point (X right, Y down from the camera, Z forward).
    fn to_camera(&self, x: f64, y: f64, z: f64) -> (f64, f64, f64) {
        let (sn, cs) = self.pitch();
        (x, y * cs - z * sn, y * sn + z * cs)
    }

    /// World direction of a camera-frame direction.
    fn to_world(&self, xc: f64, yc: f64, zc: f64) -> (f64, f64, f64) {
        let (sn, cs) = self.pitch();
        (xc, yc * cs + zc * sn, -yc * sn + zc * cs)
    }

    /// Undistorted (ideal pinhole) pixel of ground point `(x, z)` (m, vehicle frame); `None`
    /// behind the camera.
    pub fn ground_to_undistorted(&self, x: f64, z: f64) -> Option<(f64, f64)> {
        let (xc, yc, zc) = self.to_camera(x, self.height_m, z);
        if zc <= 1e-6 {
            return None;
        }
        let c = &self.camera;
        Some((c.fx() * xc / zc + c.cx(), c.fy() * yc / zc + c.cy()))
    }

    /// Pixel of the rendered (distorted) image where ground point `(x, z)` appears.
    pub fn ground_to_image(&self, x: f64, z: f64) -> Option<(f64, f64)> {
        let (u, v) = self.ground_to_undistorted(x, z)?;
        Some(self.camera.distort_pixel(u, v))
    }

    /// Invert the distortion model on normalized coordinates (Newton's method, to 1e-12).
    pub fn undistort_normalized(&self, xd: f64, yd: f64) -> (f64, f64) {
        let c = &self.camera;
        let (mut x, mut y) = (xd, yd);
        for _ in 0..30 {
            let (fx, fy) = c.distort_normalized(x, y);
            let (ex, ey) = (fx - xd, fy - yd);
            if ex.abs() < 1e-13 && ey.abs() < 1e-13 {
                break;
            }
            // Numerical Jacobian (the model is smooth; h small relative to coordinates).
            let h = 1e-7;
            let (ax, ay) = c.distort_normalized(x + h, y);
            let (bx, by) = c.distort_normalized(x, y + h);
            let (j11, j21) = ((ax - fx) / h, (ay - fy) / h);
            let (j12, j22) = ((bx - fx) / h, (by - fy) / h);
            let det = j11 * j22 - j12 * j21;
            if det.abs() < 1e-12 {
                break;
            }
            x -= (j22 * ex - j12 * ey) / det;
            y -= (-j21 * ex + j11 * ey) / det;
        }
        (x, y)
    }

    /// World ray (X right, Y down, Z forward; not normalized) through distorted pixel `(u, v)`.
    pub fn ray(&self, u: f64, v: f64) -> (f64, f64, f64) {
        let c = &self.camera;
        let (x, y) = self.undistort_normalized((u - c.cx()) / c.fx(), (v - c.cy()) / c.fy());
        self.to_world(x, y, 1.0)
    }

    /// The image row of the horizon at the image centre column (undistorted), px.
    pub fn horizon_row(&self) -> f64 {
        self.camera.cy() - self.camera.fy() * self.pitch_deg.to_radians().tan()
    }

    /// The perspective section whose source quad is the image of a ground rectangle
    /// (`+-half_width_m` laterally, `near_m..far_m` ahead) and whose destination is [`dst`].
    pub fn perspective(&self, q: &QuadGeometry) -> Result<PerspectiveConfig> {
        let p = |x: f64, z: f64| -> Result<[f64; 2]> {
            self.ground_to_undistorted(x, z)
                .map(|(u, v)| [u, v])
                .ok_or_else(|| {
                    Error::Invalid(format!("quad corner ({x} m, {z} m) is behind the camera"))
                })
        };
        let w = q.half_width_m;
        Ok(PerspectiveConfig {
            src: [
                p(-w, q.far_m)?,
                p(w, q.far_m)?,
                p(-w, q.near_m)?,
                p(w, q.near_m)?,
            ],
            dst: dst(self.camera.width, self.camera.height),
            ..PerspectiveConfig::default()
        })
    }

    /// The `lanes` config matching this rig: the exact quad, metres per pixel from the quad's
    /// ground size, the expected lane width in bird's-eye pixels, and the bird's-eye analysed
    /// at full resolution. Other sections default.
    pub fn lanes_config(&self, q: &QuadGeometry, lane_width_m: f64) -> Result<Config> {
        let mut cfg = Config {
            perspective: self.perspective(q)?,
            ..Config::default()
        };
        let d = dst(self.camera.width, self.camera.height);
        let dst_w = d[1][0] - d[0][0];
        let dst_h = d[2][1] - d[0][1];
        cfg.units.xm_per_px = 2.0 * q.half_width_m / dst_w;
        cfg.units.ym_per_px = (q.far_m - q.near_m) / dst_h;
        cfg.tracking.lane_width_px = lane_width_m / cfg.units.xm_per_px;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Forward distance of bird's-eye row `y` for quad `q` in a bird's-eye view `height` rows
    /// tall (the view is a pure scaling of the ground when the quad is exact):
    /// `far - y * (far - near) / height`.
    pub fn distance_of_birdseye_row(q: &QuadGeometry, y: f64, height: i32) -> f64 {
        q.far_m - y * (q.far_m - q.near_m) / height as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lane::warp::Perspective;

    #[test]
    fn undistortion_inverts_distortion() {
        let rig = Rig::default();
        for &(u, v) in &[(0.0, 0.0), (1280.0, 720.0), (640.0, 360.0), (100.0, 650.0)] {
            let c = &rig.camera;
            let (x, y) = rig.undistort_normalized((u - c.cx()) / c.fx(), (v - c.cy()) / c.fy());
            let (pu, pv) = c.distort_pixel(x * c.fx() + c.cx(), y * c.fy() + c.cy());
            assert!(
                (pu - u).abs() < 1e-8 && (pv - v).abs() < 1e-8,
                "{u},{v} -> {pu},{pv}"
            );
        }
        rig.validate().unwrap();
    }

    #[test]
    fn ray_hits_the_ground_point_it_came_from() {
        let rig = Rig::default();
        for &(x, z) in &[(0.0, 5.0), (-1.85, 12.0), (3.0, 40.0)] {
            let (u, v) = rig.ground_to_image(x, z).unwrap();
            let (dx, dy, dz) = rig.ray(u, v);
            let t = rig.height_m / dy;
            assert!(
                (t * dx - x).abs() < 1e-6 && (t * dz - z).abs() < 1e-6,
                "({x},{z}) -> ({},{})",
                t * dx,
                t * dz
            );
        }
    }

    #[test]
    fn birdseye_is_a_scaling_of_the_ground() {
        let rig = Rig::default();
        let q = QuadGeometry::default();
        let cfg = rig.lanes_config(&q, 3.7).unwrap();
        let p = Perspective::from_config(&cfg.perspective, 1280, 720).unwrap();
        for &(x, z) in &[(0.0, 10.0), (-1.0, 20.0), (2.5, 6.0)] {
            let (u, v) = rig.ground_to_undistorted(x, z).unwrap();
            let (bx, by) = p.to_birdseye(u, v);
            let ex = 640.0 + x / cfg.units.xm_per_px;
            let ez = Rig::distance_of_birdseye_row(&q, by, 720);
            assert!(
                (bx - ex).abs() < 0.01 && (ez - z).abs() < 1e-3,
                "({x},{z}): {bx},{by} vs {ex}, {ez}"
            );
        }
    }
}
