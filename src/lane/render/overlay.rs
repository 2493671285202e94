//! The lane overlay: the lane area between the fits, warped back by its vertices and blended,
//! with the radius and offset as text.

use super::text::draw_text_lines_squeezed;
use crate::base::config::RenderConfig;
use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::lane::confidence::LaneStatus;
use crate::lane::fit::Poly2;
use crate::lane::measure::LaneMeasure;
use crate::lane::warp::Perspective;
use opencv::core::{self, Mat, Point, Rect, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// The lane polygon in bird's-eye coordinates from row `top` to the bottom: down the left
/// line, up the right line.
pub fn lane_polygon_birdseye(
    left: &Poly2,
    right: &Poly2,
    height: i32,
    top: f64,
    points: u32,
) -> Vec<(f64, f64)> {
    let n = points.max(2) as usize;
    let bottom = (height - 1) as f64;
    let top = top.clamp(0.0, bottom);
    let ys: Vec<f64> = (0..n)
        .map(|i| top + (bottom - top) * i as f64 / (n - 1) as f64)
        .collect();
    let mut poly = Vec::with_capacity(2 * n);
    for &y in &ys {
        poly.push((left.eval(y), y));
    }
    for &y in ys.iter().rev() {
        poly.push((right.eval(y), y));
    }
    poly
}

/// The lane polygon in undistorted-frame pixels (vertices mapped by the inverse perspective).
pub fn lane_polygon_frame(
    left: &Poly2,
    right: &Poly2,
    persp: &Perspective,
    top: f64,
    points: u32,
) -> Vec<(f64, f64)> {
    lane_polygon_birdseye(left, right, persp.height, top, points)
        .into_iter()
        .map(|(x, y)| persp.from_birdseye(x, y))
        .collect()
}

/// Finite sub-pixel vertices as integer points (clamped far outside any image).
pub fn points_from_f64(poly: &[(f64, f64)]) -> Vec<Point> {
    poly.iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|(x, y)| {
            Point::new(
                x.clamp(-1e5, 1e5).round() as i32,
                y.clamp(-1e5, 1e5).round() as i32,
            )
        })
        .collect()
}

/// Fill a polygon with `color` blended at `alpha` (added, as the reference's
/// `addWeighted(img, 1, lane, alpha, 0)`), touching only the polygon's bounding box.
pub fn fill_polygon_blended(
    img: &mut Mat,
    poly: &[(f64, f64)],
    color: [u8; 3],
    alpha: f64,
) -> Result<()> {
    if poly.len() < 3 {
        return Ok(());
    }
    let pts = points_from_f64(poly);
    if pts.len() < 3 {
        return Ok(());
    }
    let (w, h) = (img.cols(), img.rows());
    let x0 = pts.iter().map(|p| p.x).min().unwrap_or(0).max(0);
    let y0 = pts.iter().map(|p| p.y).min().unwrap_or(0).max(0);
    let x1 = (pts.iter().map(|p| p.x).max().unwrap_or(0) + 1).min(w);
    let y1 = (pts.iter().map(|p| p.y).max().unwrap_or(0) + 1).min(h);
    if x1 <= x0 || y1 <= y0 {
        return Ok(());
    }
    let roi_rect = Rect::new(x0, y0, x1 - x0, y1 - y0);
    let mut mask = Mat::zeros(roi_rect.height, roi_rect.width, core::CV_8UC1)?.to_mat()?;
    let shifted: Vector<Point> = pts.iter().map(|p| Point::new(p.x - x0, p.y - y0)).collect();
    let polys: Vector<Vector<Point>> = std::iter::once(shifted).collect();
    imgproc::fill_poly_def(&mut mask, &polys, Scalar::all(255.0))?;
    // img += alpha * color inside the polygon (saturating), as addWeighted(img, 1, lane, alpha, 0).
    let add: [u16; 3] = [
        (color[0] as f64 * alpha).round() as u16,
        (color[1] as f64 * alpha).round() as u16,
        (color[2] as f64 * alpha).round() as u16,
    ];
    let step = img.cols() as usize * 3;
    let md = mask.data_bytes()?;
    let d = img.data_bytes_mut()?;
    let rw = roi_rect.width as usize;
    for r in 0..roi_rect.height as usize {
        let row = &mut d[(y0 as usize + r) * step + x0 as usize * 3
            ..(y0 as usize + r) * step + (x0 as usize + rw) * 3];
        let mrow = &md[r * rw..(r + 1) * rw];
        for (c, m) in mrow.iter().enumerate() {
            if *m != 0 {
                let px = &mut row[c * 3..c * 3 + 3];
                for k in 0..3 {
                    px[k] = (px[k] as u16 + add[k]).min(255) as u8;
                }
            }
        }
    }
    Ok(())
}

/// "Curve radius: 842 m" or "Curve radius: straight".
pub fn radius_text(radius_m: f64, straight_above_m: f64) -> String {
    if radius_m > straight_above_m {
        "Curve radius: straight".to_string()
    } else {
        format!("Curve radius: {:.0} m", radius_m)
    }
}

/// "0.21 m right of centre" / "0.21 m left of centre" / "centred in the lane" (under 5 mm).
pub fn offset_text(offset_m: f64) -> String {
    if offset_m.abs() < 0.005 {
        // Not "0.00 m right of centre".
        return "centred in the lane".to_string();
    }
    let side = if offset_m >= 0.0 { "right" } else { "left" };
    format!("{:.2} m {} of centre", offset_m.abs(), side)
}

/// A lane to draw: its two lines (nominal bird's-eye px), from the nominal bird's-eye row
/// `from_row` down (0: the whole view; a still's lane below a vehicle ahead ends under it).
#[derive(Debug, Clone, Copy)]
pub struct LaneToDraw<'a> {
    pub left: &'a Poly2,
    pub right: &'a Poly2,
    pub from_row: f64,
}

impl<'a> LaneToDraw<'a> {
    /// `lane`'s two lines, when there is one, drawn from the nominal bird's-eye row `from_row`
    /// down.
    pub fn of(lane: Option<(&'a Poly2, &'a Poly2)>, from_row: f64) -> Option<Self> {
        lane.map(|(left, right)| Self {
            left,
            right,
            from_row,
        })
    }
}

/// The overlay: lane area filled between the fits (when both exist), text with radius and
/// offset.
///
/// Draws in place on `frame` (which is consumed). `to_frame` maps undistorted-frame pixels to
/// the pixels of `frame` (identity for an undistorted frame; the lens distortion for a raw one).
/// `pixel_aspect`: a pixel's width over its height (1, or an anamorphic video's, shown wider
/// than stored): the text is sized for the frame as shown and narrowed by it as stored.
#[allow(clippy::too_many_arguments)]
pub fn overlay(
    frame: BgrFrame,
    lane: Option<LaneToDraw>,
    persp: &Perspective,
    to_frame: &dyn Fn(f64, f64) -> (f64, f64),
    measure: Option<&LaneMeasure>,
    status: LaneStatus,
    cfg: &RenderConfig,
    pixel_aspect: f64,
) -> Result<BgrFrame> {
    let width = frame.width();
    let mut out = frame.into_mat();
    if let Some(d) = lane {
        let poly: Vec<(f64, f64)> =
            lane_polygon_frame(d.left, d.right, persp, d.from_row, cfg.polygon_points)
                .into_iter()
                .map(|(x, y)| to_frame(x, y))
                .collect();
        fill_polygon_blended(&mut out, &poly, cfg.lane_color, cfg.alpha)?;
    }
    let aspect = if pixel_aspect.is_finite() && pixel_aspect > 0.0 {
        pixel_aspect
    } else {
        1.0
    };
    let scale = (width as f64 * aspect / 1280.0).max(0.4);
    let mut lines = match (measure, lane) {
        (Some(m), Some(_)) => vec![
            radius_text(m.radius_m, cfg.straight_above_m),
            offset_text(m.offset_m),
        ],
        _ => vec!["Lane not found".to_string()],
    };
    if lane.is_some() {
        match status {
            LaneStatus::LeftOnly => lines.push("Left line only".into()),
            LaneStatus::RightOnly => lines.push("Right line only".into()),
            LaneStatus::Predicted => lines.push("Lane predicted".into()),
            LaneStatus::Both | LaneStatus::None => {}
        }
    }
    let origin = ((40.0 * scale / aspect) as i32, (60.0 * scale) as i32);
    draw_text_lines_squeezed(
        &mut out,
        &lines,
        origin,
        (1.2 * scale, 1.0 / aspect),
        Scalar::new(255.0, 255.0, 255.0, 0.0),
    )?;
    BgrFrame::new(out)
}

/// Draw a fitted curve on a bird's-eye image.
pub fn draw_poly(img: &mut Mat, fit: &Poly2, color: Scalar, thickness: i32) -> Result<()> {
    let h = img.rows();
    let pts: Vector<Point> = (0..h)
        .step_by(4)
        .chain(std::iter::once(h - 1))
        .map(|y| Point::new(fit.eval(y as f64).clamp(-1e5, 1e5).round() as i32, y))
        .collect();
    let polys: Vector<Vector<Point>> = std::iter::once(pts).collect();
    imgproc::polylines(img, &polys, false, color, thickness, imgproc::LINE_8, 0)?;
    Ok(())
}
