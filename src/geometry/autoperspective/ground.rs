//! Metres along the road from the ground-plane geometry: with the camera matrix K, the
//! vanishing point gives the road direction in camera coordinates; assuming zero roll (the
//! camera's x axis is parallel to the road), that fixes the ground plane up to the camera
//! height, and the known lane width fixes the height. Every image point on the road then has
//! metric ground coordinates, so the quad's along-road length is known.
//!
//! Because the source quad is the image of a ground rectangle (lane width x that length) and
//! the destination is a rectangle, the warp composed with the ground-to-image map sends the
//! ground rectangle to the bird's-eye rectangle: a homography fixed by four corners, which is
//! then the axis-aligned scaling itself. So `ym_per_px = length / dst height` exactly (for a
//! straight, flat road and zero camera yaw; a small yaw shears the view slightly).

use super::lines::ImageLine;
use nalgebra::{Matrix3, Vector3};

/// The camera's pose relative to the road and the scale it implies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundScale {
    /// Metres per bird's-eye pixel along the road.
    pub ym_per_px: f64,
    /// Along-road length covered by the quad (bottom row to top row), metres.
    pub quad_length_m: f64,
    /// Distance from the camera to the quad's bottom row along the road, metres.
    pub near_m: f64,
    /// Camera height above the road, metres (follows from the lane width).
    pub camera_height_m: f64,
    /// Downward pitch of the optical axis relative to the road, degrees.
    pub pitch_deg: f64,
    /// Yaw of the optical axis relative to the road, degrees (positive: camera looks right of the road).
    pub yaw_deg: f64,
    /// Lane width at the quad's top row over that at its bottom row (1 when the lines are parallel
    /// on a flat road and the roll is zero).
    pub width_ratio_top_bottom: f64,
}

/// The ground geometry of two parallel lane lines meeting at `vp`, for quad rows `(y_top,
/// y_bottom)` mapped onto `dst_height` bird's-eye rows. `None` when the geometry is degenerate
/// (singular K, vanishing point at infinity, rows at or above the horizon).
pub fn ground_scale(
    k: &[[f64; 3]; 3],
    vp: (f64, f64),
    (left, right): (&ImageLine, &ImageLine),
    (y_top, y_bottom): (f64, f64),
    lane_width_m: f64,
    dst_height: f64,
) -> Option<GroundScale> {
    let km = Matrix3::new(
        k[0][0], k[0][1], k[0][2], k[1][0], k[1][1], k[1][2], k[2][0], k[2][1], k[2][2],
    );
    let kinv = km.try_inverse()?;
    let mut d = (kinv * Vector3::new(vp.0, vp.1, 1.0)).normalize();
    if d.z < 0.0 {
        d = -d;
    }
    let mut n = d.cross(&Vector3::x()).try_normalize(1e-12)?;
    if n.y < 0.0 {
        n = -n; // the ground normal points down (camera y is down)
    }
    let mut l = n.cross(&d);
    if l.x < 0.0 {
        l = -l;
    }
    // Ground point of a pixel for a camera 1 m above the road.
    let ground = |x: f64, y: f64| -> Option<Vector3<f64>> {
        let r = kinv * Vector3::new(x, y, 1.0);
        let t = n.dot(&r);
        (t > 1e-9).then(|| r / t)
    };
    let at = |y: f64| -> Option<(Vector3<f64>, Vector3<f64>)> {
        Some((ground(left.x_at(y), y)?, ground(right.x_at(y), y)?))
    };
    let (lb, rb) = at(y_bottom)?;
    let (lt, rt) = at(y_top)?;
    let sep_b = l.dot(&(rb - lb));
    let sep_t = l.dot(&(rt - lt));
    if sep_b <= 1e-9 {
        return None;
    }
    let height = lane_width_m / sep_b;
    let along = ((d.dot(&lt) - d.dot(&lb)) + (d.dot(&rt) - d.dot(&rb))) / 2.0 * height;
    let near = (d.dot(&lb) + d.dot(&rb)) / 2.0 * height;
    if !(along.is_finite() && along > 0.0) {
        return None;
    }
    Some(GroundScale {
        ym_per_px: along / dst_height,
        quad_length_m: along,
        near_m: near,
        camera_height_m: height,
        pitch_deg: (-d.y).atan2((d.x * d.x + d.z * d.z).sqrt()).to_degrees(),
        yaw_deg: d.x.atan2(d.z).to_degrees(),
        width_ratio_top_bottom: sep_t / sep_b,
    })
}

/// The narrowest horizontal field of view the side check allows for when the field of view is
/// assumed, degrees: 45. Dashcams see 50-140 degrees and a phone's main camera 65-75, but a
/// clip cut from a wider frame or a phone's stabilised video is narrower. With the focal length
/// unknown, the vanishing point's offset from the centre gives the camera's yaw only within
/// that range; the check takes the smallest angle it can be (the longest focal length), so a
/// frame is refused only when its lines meet to the side whatever the lens.
pub const NARROWEST_ASSUMED_HFOV_DEG: f64 = 45.0;

/// How far to the side of the camera's axis lines meeting at `vp` point, degrees (positive:
/// right): the camera's yaw relative to the road when they are its lines (as `GroundScale`'s
/// `yaw_deg`). With the camera matrix `k`, else `hfov_deg`'s, else at
/// [`NARROWEST_ASSUMED_HFOV_DEG`] for a `size` frame. `None` for a singular `k`.
pub fn side_angle_deg(
    vp: (f64, f64),
    k: Option<&[[f64; 3]; 3]>,
    hfov_deg: Option<f64>,
    (w, h): (i32, i32),
) -> Option<f64> {
    let k = match k {
        Some(k) => *k,
        None => match hfov_deg {
            Some(f) => crate::base::camera::k_from_hfov(w, h, f),
            None => crate::base::camera::k_across_long_side(w, h, NARROWEST_ASSUMED_HFOV_DEG),
        },
    };
    let km = Matrix3::new(
        k[0][0], k[0][1], k[0][2], k[1][0], k[1][1], k[1][2], k[2][0], k[2][1], k[2][2],
    );
    let d = km.try_inverse()? * Vector3::new(vp.0, vp.1, 1.0);
    let d = if d.z < 0.0 { -d } else { d };
    Some(d.x.atan2(d.z).to_degrees())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Project a ground point (lateral x, along z; camera `h` m up, pitched down `pitch` rad).
    fn project(k: &[[f64; 3]; 3], h: f64, pitch: f64, x: f64, z: f64) -> (f64, f64) {
        // World: x right, y down, z forward; camera rotated about x by `pitch` (looking down).
        let (c, s) = (pitch.cos(), pitch.sin());
        let (yw, zw) = (h, z);
        let yc = c * yw - s * zw;
        let zc = s * yw + c * zw;
        (k[0][0] * x / zc + k[0][2], k[1][1] * yc / zc + k[1][2])
    }

    #[test]
    fn recovers_height_pitch_and_along_road_length_of_a_synthetic_camera() {
        let k = [[1000.0, 0.0, 640.0], [0.0, 1000.0, 360.0], [0.0, 0.0, 1.0]];
        let (h, pitch) = (1.4, 3.0f64.to_radians());
        let w = 3.6;
        let (z_near, z_far) = (8.0, 30.0);
        let pl = |z: f64| project(&k, h, pitch, -w / 2.0, z);
        let pr = |z: f64| project(&k, h, pitch, w / 2.0, z);
        let left = ImageLine::through(pl(z_near), pl(z_far)).unwrap();
        let right = ImageLine::through(pr(z_near), pr(z_far)).unwrap();
        let vp = left.intersect(&right).unwrap();
        let (yb, yt) = (pl(z_near).1, pl(z_far).1);
        let g = ground_scale(&k, vp, (&left, &right), (yt, yb), w, 720.0).unwrap();
        assert!((g.camera_height_m - h).abs() < 1e-6, "{g:?}");
        assert!((g.pitch_deg - 3.0).abs() < 1e-6, "{g:?}");
        assert!((g.quad_length_m - (z_far - z_near)).abs() < 1e-6, "{g:?}");
        assert!((g.ym_per_px - (z_far - z_near) / 720.0).abs() < 1e-9);
        assert!((g.width_ratio_top_bottom - 1.0).abs() < 1e-9);
        assert!(g.yaw_deg.abs() < 1e-9);
    }

    #[test]
    fn the_side_angle_is_the_ground_geometrys_yaw_and_the_narrowest_lens_without_one() {
        let k = [[1000.0, 0.0, 640.0], [0.0, 1000.0, 360.0], [0.0, 0.0, 1.0]];
        // 10 degrees to the right on the horizon's row.
        let vp = (640.0 + 1000.0 * 10f64.to_radians().tan(), 300.0);
        let a = side_angle_deg(vp, Some(&k), None, (1280, 720)).unwrap();
        assert!((a - 10.0).abs() < 1e-9, "{a}");
        // Without a camera matrix: a given field of view, else the narrowest assumed (45
        // degrees, the smallest angle the offset can be), never the assumed 58.
        let at = |fov: f64| {
            ((vp.0 - 640.0) / (640.0 / (fov / 2.0f64).to_radians().tan()))
                .atan()
                .to_degrees()
        };
        let given = side_angle_deg(vp, None, Some(70.0), (1280, 720)).unwrap();
        assert!((given - at(70.0)).abs() < 1e-9, "{given}");
        let narrow = side_angle_deg(vp, None, None, (1280, 720)).unwrap();
        assert!(
            (narrow - at(NARROWEST_ASSUMED_HFOV_DEG)).abs() < 1e-9,
            "{narrow}"
        );
        assert!(narrow < at(crate::base::camera::ASSUMED_HFOV_DEG));
        // CULane A00720 (1640x590): lines meeting at x 1352 are 19.8 degrees to the side at
        // 58 degrees, 15.0 at 45.
        let a720 = side_angle_deg((1352.0, 390.9), None, None, (1640, 590)).unwrap();
        assert!((a720 - 15.0).abs() < 0.1, "{a720}");
    }
}
