//! Pictures of the estimate: a frame with its lines and quad, and the bird's-eye view.

use super::lines::ImageLine;
use crate::base::config::PerspectiveConfig;
use crate::base::error::Result;
use crate::base::frame::{BgrFrame, BinaryMask};
use crate::lane::warp::Perspective;
use opencv::core::{Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;

fn pt(x: f64, y: f64) -> Point {
    Point::new(
        x.clamp(-1e5, 1e5).round() as i32,
        y.clamp(-1e5, 1e5).round() as i32,
    )
}

/// The picture of one frame for the user to check: candidate pixels tinted, the found lines
/// (red left, blue right) up to the vanishing point, the horizon (cyan) and the quad (green).
pub fn frame_picture(
    frame: &BgrFrame,
    mask: Option<&BinaryMask>,
    left: Option<&ImageLine>,
    right: Option<&ImageLine>,
    vp: Option<(f64, f64)>,
    quad: Option<&PerspectiveConfig>,
    caption: &str,
) -> Result<BgrFrame> {
    let mut img = frame.mat().try_clone()?;
    let (w, h) = (img.cols(), img.rows());
    if let Some(m) = mask {
        let md = m.bytes()?;
        let d = img.data_bytes_mut()?;
        for (i, &v) in md.iter().enumerate() {
            if v != 0 {
                d[i * 3] = 255;
                d[i * 3 + 1] = 0;
                d[i * 3 + 2] = 255;
            }
        }
    }
    let thick = (w / 640).max(1) + 1;
    if let Some(vp) = vp {
        imgproc::line(
            &mut img,
            pt(0.0, vp.1),
            pt(w as f64, vp.1),
            Scalar::new(255.0, 255.0, 0.0, 0.0),
            1,
            imgproc::LINE_AA,
            0,
        )?;
        imgproc::circle(
            &mut img,
            pt(vp.0, vp.1),
            3 * thick,
            Scalar::new(255.0, 255.0, 0.0, 0.0),
            thick,
            imgproc::LINE_AA,
            0,
        )?;
    }
    let top = vp.map(|v| v.1).unwrap_or(0.0).max(0.0);
    for (l, c) in [
        (left, Scalar::new(0.0, 0.0, 255.0, 0.0)),
        (right, Scalar::new(255.0, 0.0, 0.0, 0.0)),
    ] {
        if let Some(l) = l {
            imgproc::line(
                &mut img,
                pt(l.x_at(top), top),
                pt(l.x_at(h as f64), h as f64),
                c,
                1,
                imgproc::LINE_AA,
                0,
            )?;
        }
    }
    if let Some(q) = quad {
        let poly: Vector<Point> = [q.src[0], q.src[1], q.src[3], q.src[2]]
            .iter()
            .map(|p| pt(p[0], p[1]))
            .collect();
        let polys: Vector<Vector<Point>> = std::iter::once(poly).collect();
        imgproc::polylines(
            &mut img,
            &polys,
            true,
            Scalar::new(0.0, 255.0, 0.0, 0.0),
            thick,
            imgproc::LINE_AA,
            0,
        )?;
    }
    let scale = (w as f64 / 1280.0).max(0.4);
    crate::lane::render::draw_text_lines(
        &mut img,
        &[caption.to_string()],
        ((20.0 * scale) as i32, (40.0 * scale) as i32),
        0.9 * scale,
        Scalar::new(255.0, 255.0, 255.0, 0.0),
    )?;
    BgrFrame::new(img)
}

/// The bird's-eye view of a frame with the destination lines (green) where the lane lines should run.
pub fn birdseye_picture(
    frame: &BgrFrame,
    persp: &Perspective,
    q: &PerspectiveConfig,
) -> Result<BgrFrame> {
    let warped = persp.warp(frame)?;
    let mut img = warped.into_mat();
    let h = img.rows() as f64;
    for x in [q.dst[0][0], q.dst[1][0]] {
        imgproc::line(
            &mut img,
            pt(x, 0.0),
            pt(x, h),
            Scalar::new(0.0, 255.0, 0.0, 0.0),
            1,
            imgproc::LINE_AA,
            0,
        )?;
    }
    BgrFrame::new(img)
}
