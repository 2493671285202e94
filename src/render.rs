//! Drawing: the lane overlay (polygon warped back by its vertices, blended, with text) and the
//! search picture (windows, line pixels, fitted curves, histogram).

use crate::config::RenderConfig;
use crate::error::Result;
use crate::fit::{Poly2, SearchResult};
use crate::frame::{BgrFrame, BinaryMask};
use crate::measure::LaneMeasure;
use crate::warp::Perspective;
use opencv::core::{self, Mat, Point, Rect, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// The lane polygon in bird's-eye coordinates: down the left line, up the right line.
pub fn lane_polygon_birdseye(left: &Poly2, right: &Poly2, height: i32, points: u32) -> Vec<(f64, f64)> {
    let n = points.max(2) as usize;
    let ys: Vec<f64> = (0..n).map(|i| (height - 1) as f64 * i as f64 / (n - 1) as f64).collect();
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
pub fn lane_polygon_frame(left: &Poly2, right: &Poly2, persp: &Perspective, points: u32) -> Vec<(f64, f64)> {
    lane_polygon_birdseye(left, right, persp.height, points)
        .into_iter()
        .map(|(x, y)| persp.from_birdseye(x, y))
        .collect()
}

/// Fill a polygon with `color` blended at `alpha` (added, as the reference's
/// `addWeighted(img, 1, lane, alpha, 0)`), touching only the polygon's bounding box.
pub fn fill_polygon_blended(img: &mut Mat, poly: &[(f64, f64)], color: [u8; 3], alpha: f64) -> Result<()> {
    if poly.len() < 3 {
        return Ok(());
    }
    let pts: Vec<Point> = poly
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|(x, y)| Point::new(x.clamp(-1e5, 1e5).round() as i32, y.clamp(-1e5, 1e5).round() as i32))
        .collect();
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
    let mut layer = Mat::zeros(roi_rect.height, roi_rect.width, core::CV_8UC3)?.to_mat()?;
    let shifted: Vector<Point> = pts.iter().map(|p| Point::new(p.x - x0, p.y - y0)).collect();
    let polys: Vector<Vector<Point>> = std::iter::once(shifted).collect();
    let c = Scalar::new(color[0] as f64, color[1] as f64, color[2] as f64, 0.0);
    imgproc::fill_poly_def(&mut layer, &polys, c)?;
    let mut roi = Mat::roi_mut(img, roi_rect)?;
    let mut blended = Mat::default();
    core::add_weighted_def(&roi, 1.0, &layer, alpha, 0.0, &mut blended)?;
    blended.copy_to(&mut roi)?;
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

/// "0.21 m right of centre" / "0.21 m left of centre".
pub fn offset_text(offset_m: f64) -> String {
    let side = if offset_m >= 0.0 { "right" } else { "left" };
    format!("{:.2} m {} of centre", offset_m.abs(), side)
}

/// Draw text lines with a dark outline so they read on any background.
pub fn draw_text_lines(img: &mut Mat, lines: &[String], origin: (i32, i32), scale: f64, color: Scalar) -> Result<()> {
    let step = (36.0 * scale).round() as i32;
    for (i, line) in lines.iter().enumerate() {
        let p = Point::new(origin.0, origin.1 + i as i32 * step);
        let thick = (2.0 * scale).round().max(1.0) as i32;
        imgproc::put_text(img, line, p, imgproc::FONT_HERSHEY_DUPLEX, scale, Scalar::all(0.0), thick + 3, imgproc::LINE_AA, false)?;
        imgproc::put_text(img, line, p, imgproc::FONT_HERSHEY_DUPLEX, scale, color, thick, imgproc::LINE_AA, false)?;
    }
    Ok(())
}

/// The overlay: lane area filled between the fits (when both exist), text with radius and offset.
pub fn overlay(
    frame: &BgrFrame,
    lane: Option<(&Poly2, &Poly2)>,
    persp: &Perspective,
    measure: Option<&LaneMeasure>,
    cfg: &RenderConfig,
) -> Result<BgrFrame> {
    let mut out = frame.mat().try_clone()?;
    if let Some((l, r)) = lane {
        let poly = lane_polygon_frame(l, r, persp, cfg.polygon_points);
        fill_polygon_blended(&mut out, &poly, cfg.lane_color, cfg.alpha)?;
    }
    let scale = (frame.width() as f64 / 1280.0).max(0.4);
    let lines = match measure {
        Some(m) => vec![radius_text(m.radius_m, cfg.straight_above_m), offset_text(m.offset_m)],
        None => vec!["Lane not found".to_string()],
    };
    let origin = ((40.0 * scale) as i32, (60.0 * scale) as i32);
    draw_text_lines(&mut out, &lines, origin, 1.2 * scale, Scalar::new(255.0, 255.0, 255.0, 0.0))?;
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
    imgproc::polylines(img, &polys, false, color, thickness, imgproc::LINE_AA, 0)?;
    Ok(())
}

/// The search picture: mask in gray, left pixels red, right pixels blue, windows green,
/// fitted curves yellow, histogram along the bottom in magenta.
pub fn search_picture(
    mask: &BinaryMask,
    search: &SearchResult,
    left: Option<&Poly2>,
    right: Option<&Poly2>,
) -> Result<BgrFrame> {
    let mut img = Mat::default();
    imgproc::cvt_color_def(mask.mat(), &mut img, imgproc::COLOR_GRAY2BGR)?;
    let (w, h) = (img.cols(), img.rows());
    {
        let d = img.data_bytes_mut()?;
        for v in d.iter_mut() {
            *v /= 2;
        }
        for (xs, ys, c) in [(&search.left.xs, &search.left.ys, [0u8, 0, 255]), (&search.right.xs, &search.right.ys, [255, 0, 0])] {
            for (x, y) in xs.iter().zip(ys.iter()) {
                let i = ((*y as i32 * w + *x as i32) * 3) as usize;
                if i + 2 < d.len() {
                    d[i..i + 3].copy_from_slice(&c);
                }
            }
        }
    }
    for win in search.left_windows.iter().chain(search.right_windows.iter()) {
        let r = Rect::new(win.x_low, win.y_low, win.x_high - win.x_low, win.y_high - win.y_low);
        imgproc::rectangle(&mut img, r, Scalar::new(0.0, 255.0, 0.0, 0.0), 2, imgproc::LINE_8, 0)?;
    }
    for fit in [left, right].into_iter().flatten() {
        draw_poly(&mut img, fit, Scalar::new(0.0, 255.0, 255.0, 0.0), 3)?;
    }
    if !search.histogram.is_empty() {
        let max = search.histogram.iter().copied().max().unwrap_or(1).max(1) as f64;
        let span = h as f64 / 4.0;
        let pts: Vector<Point> = search
            .histogram
            .iter()
            .enumerate()
            .map(|(x, v)| Point::new(x as i32, h - 1 - (*v as f64 / max * span) as i32))
            .collect();
        let polys: Vector<Vector<Point>> = std::iter::once(pts).collect();
        imgproc::polylines(&mut img, &polys, false, Scalar::new(255.0, 0.0, 255.0, 0.0), 2, imgproc::LINE_AA, 0)?;
    }
    BgrFrame::new(img)
}
