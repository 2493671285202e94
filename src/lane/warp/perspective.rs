//! The perspective homography from the undistorted frame to the bird's-eye view and back.

use crate::base::config::PerspectiveConfig;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use nalgebra::{Matrix3, Vector3};
use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;

/// A planar homography from the undistorted frame to the bird's-eye view, and its inverse.
#[derive(Debug, Clone, PartialEq)]
pub struct Perspective {
    m: Matrix3<f64>,
    minv: Matrix3<f64>,
    /// Size of the bird's-eye view, pixels.
    pub width: i32,
    pub height: i32,
}

fn mat3_from_cv(m: &Mat) -> Result<Matrix3<f64>> {
    let mut out = Matrix3::zeros();
    for r in 0..3 {
        for c in 0..3 {
            out[(r, c)] = *m.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    Ok(out)
}

fn mat3_to_cv(m: &Matrix3<f64>) -> Result<Mat> {
    let rows: [[f64; 3]; 3] = [
        [m[(0, 0)], m[(0, 1)], m[(0, 2)]],
        [m[(1, 0)], m[(1, 1)], m[(1, 2)]],
        [m[(2, 0)], m[(2, 1)], m[(2, 2)]],
    ];
    Ok(Mat::from_slice_2d(&rows)?)
}

/// Twice the signed area of a quad given in (tl, tr, bl, br) order.
fn quad_area(q: &[[f64; 2]; 4]) -> f64 {
    // polygon order tl, tr, br, bl
    let poly = [q[0], q[1], q[3], q[2]];
    let mut a = 0.0;
    for i in 0..4 {
        let p = poly[i];
        let n = poly[(i + 1) % 4];
        a += p[0] * n[1] - n[0] * p[1];
    }
    a
}

impl Perspective {
    /// Build from a source quad and destination quad (tl, tr, bl, br); the bird's-eye view has
    /// size `width` x `height`. Refuses degenerate quads.
    pub fn new(src: &[[f64; 2]; 4], dst: &[[f64; 2]; 4], width: i32, height: i32) -> Result<Self> {
        for (name, q) in [("src", src), ("dst", dst)] {
            if quad_area(q).abs() < 1.0 {
                return Err(Error::SingularPerspective(format!(
                    "{name} quad {q:?} has no area"
                )));
            }
        }
        let to_vec = |q: &[[f64; 2]; 4]| -> core::Vector<core::Point2f> {
            q.iter()
                .map(|p| core::Point2f::new(p[0] as f32, p[1] as f32))
                .collect()
        };
        let m = imgproc::get_perspective_transform_def(&to_vec(src), &to_vec(dst))?;
        let m = mat3_from_cv(&m)?;
        let minv = m
            .try_inverse()
            .ok_or_else(|| Error::SingularPerspective(format!("src {src:?} -> dst {dst:?}")))?;
        if !m.iter().all(|v| v.is_finite()) || m.determinant().abs() < 1e-12 {
            return Err(Error::SingularPerspective(format!(
                "src {src:?} -> dst {dst:?}"
            )));
        }
        Ok(Self {
            m,
            minv,
            width,
            height,
        })
    }

    /// From the config section; the bird's-eye view has the section's `view` size, or the
    /// given (frame) size when it names none.
    pub fn from_config(cfg: &PerspectiveConfig, width: i32, height: i32) -> Result<Self> {
        let [w, h] = cfg.view.unwrap_or([width, height]);
        Self::new(&cfg.src, &cfg.dst, w, h)
    }

    /// The forward matrix (undistorted frame -> bird's-eye).
    pub fn matrix(&self) -> &Matrix3<f64> {
        &self.m
    }
    /// The inverse matrix (bird's-eye -> undistorted frame).
    pub fn inverse(&self) -> &Matrix3<f64> {
        &self.minv
    }

    pub(super) fn apply(m: &Matrix3<f64>, x: f64, y: f64) -> (f64, f64) {
        let v = m * Vector3::new(x, y, 1.0);
        (v[0] / v[2], v[1] / v[2])
    }

    /// Map a point of the undistorted frame into the bird's-eye view.
    pub fn to_birdseye(&self, x: f64, y: f64) -> (f64, f64) {
        Self::apply(&self.m, x, y)
    }
    /// Map a bird's-eye point back into the undistorted frame.
    pub fn from_birdseye(&self, x: f64, y: f64) -> (f64, f64) {
        Self::apply(&self.minv, x, y)
    }

    /// Warp a whole undistorted frame to the bird's-eye view (bilinear).
    pub fn warp(&self, frame: &BgrFrame) -> Result<BgrFrame> {
        let mut out = Mat::default();
        imgproc::warp_perspective(
            frame.mat(),
            &mut out,
            &mat3_to_cv(&self.m)?,
            core::Size::new(self.width, self.height),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        BgrFrame::new(out)
    }

    /// Warp a bird's-eye image back to a frame of the given size (bilinear).
    pub fn unwarp(&self, img: &Mat, width: i32, height: i32) -> Result<Mat> {
        let mut out = Mat::default();
        imgproc::warp_perspective(
            img,
            &mut out,
            &mat3_to_cv(&self.minv)?,
            core::Size::new(width, height),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        Ok(out)
    }
}
