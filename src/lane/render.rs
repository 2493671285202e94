//! Drawing: the lane overlay (polygon warped back by its vertices, blended, with text) and the
//! search picture (windows, line pixels, fitted curves, histogram).

use crate::base::config::RenderConfig;
use crate::base::error::Result;
use crate::base::frame::{BgrFrame, BinaryMask};
use crate::lane::confidence::LaneStatus;
use crate::lane::fit::{Poly2, SearchResult};
use crate::lane::measure::LaneMeasure;
use crate::lane::warp::Perspective;
use opencv::core::{self, Mat, Point, Rect, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// The lane polygon in bird's-eye coordinates: down the left line, up the right line.
pub fn lane_polygon_birdseye(
    left: &Poly2,
    right: &Poly2,
    height: i32,
    points: u32,
) -> Vec<(f64, f64)> {
    let n = points.max(2) as usize;
    let ys: Vec<f64> = (0..n)
        .map(|i| (height - 1) as f64 * i as f64 / (n - 1) as f64)
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
    points: u32,
) -> Vec<(f64, f64)> {
    lane_polygon_birdseye(left, right, persp.height, points)
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

/// A string drawn from glyphs rasterised once: OpenCV's Hershey font, anti-aliased, at one
/// size and thickness. Per frame a string then costs a blend of its glyphs' coverage masks
/// instead of re-rasterising thick anti-aliased strokes (about 1 ms per overlay line here).
/// Glyphs sit where `putText` puts them, to within half a pixel.
pub struct TextStamp {
    /// Rows above the baseline and below it in every glyph mask, and the margin around it.
    ascent: i32,
    descent: i32,
    pad: i32,
    glyphs: Vec<Glyph>,
}

struct Glyph {
    width: i32,
    mask: Vec<u8>,
    /// Horizontal advance, px (fractional, as `putText` accumulates it).
    advance: f64,
}

impl TextStamp {
    /// Rasterise the printable ASCII glyphs of `font` at `scale` and `thickness`.
    pub fn new(font: i32, scale: f64, thickness: i32) -> Result<Self> {
        let mut base = 0;
        let cap = imgproc::get_text_size("M", font, scale, thickness, &mut base)?;
        let ascent = cap.height + thickness;
        let descent = base + thickness;
        let pad = thickness + 2 + (cap.height / 4);
        let rows = ascent + descent + 2 * pad;
        let mut glyphs = Vec::with_capacity(95);
        for c in 32u8..127 {
            let one = (c as char).to_string();
            let many = one.repeat(64);
            let sz = imgproc::get_text_size(&one, font, scale, thickness, &mut base)?;
            let szm = imgproc::get_text_size(&many, font, scale, thickness, &mut base)?;
            let advance = (szm.width - thickness) as f64 / 64.0;
            let width = sz.width + 2 * pad;
            let mut m =
                Mat::new_rows_cols_with_default(rows, width, core::CV_8UC1, Scalar::all(0.0))?;
            imgproc::put_text(
                &mut m,
                &one,
                Point::new(pad, pad + ascent),
                font,
                scale,
                Scalar::all(255.0),
                thickness,
                imgproc::LINE_AA,
                false,
            )?;
            glyphs.push(Glyph {
                width,
                mask: m.data_bytes()?.to_vec(),
                advance,
            });
        }
        Ok(Self {
            ascent,
            descent,
            pad,
            glyphs,
        })
    }

    /// The stamp for (`font`, `scale`, `thickness`), built on first use and kept for the
    /// process (a handful of sizes are used).
    pub fn cached(font: i32, scale: f64, thickness: i32) -> Result<std::sync::Arc<TextStamp>> {
        type Key = (i32, u64, i32);
        static CACHE: std::sync::OnceLock<
            std::sync::Mutex<std::collections::HashMap<Key, std::sync::Arc<TextStamp>>>,
        > = std::sync::OnceLock::new();
        let key = (font, scale.to_bits(), thickness);
        let cache = CACHE.get_or_init(Default::default);
        if let Some(s) = cache.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(s);
        }
        let stamp = std::sync::Arc::new(TextStamp::new(font, scale, thickness)?);
        if let Ok(mut m) = cache.lock() {
            m.insert(key, stamp.clone());
        }
        Ok(stamp)
    }

    /// Draw `text` with its baseline's left end at `origin`, in `color` (BGR, as for
    /// `putText`), as `putText` would. Characters outside printable ASCII are drawn as '?', as
    /// `putText` does.
    pub fn draw(&self, img: &mut Mat, text: &str, origin: Point, color: Scalar) -> Result<()> {
        let color = [color[0], color[1], color[2]].map(|v| v.clamp(0.0, 255.0) as u8);
        let (w, h) = (img.cols(), img.rows());
        let ch = img.channels() as usize;
        let rows = self.ascent + self.descent + 2 * self.pad;
        let step = w as usize * ch;
        let d = img.data_bytes_mut()?;
        let mut x = 0.0f64;
        for c in text.bytes() {
            let i = if (32..127).contains(&c) {
                c - 32
            } else {
                b'?' - 32
            };
            let g = &self.glyphs[i as usize];
            let gx = origin.x + x.round() as i32 - self.pad;
            let gy = origin.y - self.ascent - self.pad;
            x += g.advance;
            for r in 0..rows {
                let y = gy + r;
                if y < 0 || y >= h {
                    continue;
                }
                let mrow = &g.mask[(r * g.width) as usize..((r + 1) * g.width) as usize];
                for (k, &a) in mrow.iter().enumerate() {
                    let xx = gx + k as i32;
                    if a == 0 || xx < 0 || xx >= w {
                        continue;
                    }
                    let o = y as usize * step + xx as usize * ch;
                    let a = a as i32;
                    for (q, v) in d[o..o + ch.min(3)].iter_mut().enumerate() {
                        let p = *v as i32;
                        *v = (p + ((color[q] as i32 - p) * a + 127) / 255) as u8;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Draw text lines on a darkened box so they read on any background (cheaper than an
/// anti-aliased outline, which costs milliseconds per line).
pub fn draw_text_lines(
    img: &mut Mat,
    lines: &[String],
    origin: (i32, i32),
    scale: f64,
    color: Scalar,
) -> Result<()> {
    let step = (36.0 * scale).round() as i32;
    let thick = (2.0 * scale).round().max(1.0) as i32;
    let font = imgproc::FONT_HERSHEY_DUPLEX;
    let mut width = 0;
    for line in lines {
        let mut base = 0;
        let sz = imgproc::get_text_size(line, font, scale, thick, &mut base)?;
        width = width.max(sz.width);
    }
    let pad = (10.0 * scale) as i32;
    let top = origin.1 - step + pad / 2;
    let rect = Rect::new(
        origin.0 - pad,
        top.max(0),
        width + 2 * pad,
        step * lines.len() as i32 + pad,
    ) & Rect::new(0, 0, img.cols(), img.rows());
    if rect.width > 0 && rect.height > 0 {
        let mut roi = Mat::roi_mut(img, rect)?;
        let mut dark = Mat::default();
        roi.convert_to(&mut dark, -1, 0.45, 0.0)?;
        dark.copy_to(&mut roi)?;
    }
    let stamp = TextStamp::cached(font, scale, thick)?;
    for (i, line) in lines.iter().enumerate() {
        let p = Point::new(origin.0, origin.1 + i as i32 * step);
        stamp.draw(img, line, p, color)?;
    }
    Ok(())
}

/// The overlay: lane area filled between the fits (when both exist), text with radius and offset.
///
/// Draws in place on `frame` (which is consumed). `to_frame` maps undistorted-frame pixels to
/// the pixels of `frame` (identity for an undistorted frame; the lens distortion for a raw one).
pub fn overlay(
    frame: BgrFrame,
    lane: Option<(&Poly2, &Poly2)>,
    persp: &Perspective,
    to_frame: &dyn Fn(f64, f64) -> (f64, f64),
    measure: Option<&LaneMeasure>,
    status: LaneStatus,
    cfg: &RenderConfig,
) -> Result<BgrFrame> {
    let width = frame.width();
    let mut out = frame.into_mat();
    if let Some((l, r)) = lane {
        let poly: Vec<(f64, f64)> = lane_polygon_frame(l, r, persp, cfg.polygon_points)
            .into_iter()
            .map(|(x, y)| to_frame(x, y))
            .collect();
        fill_polygon_blended(&mut out, &poly, cfg.lane_color, cfg.alpha)?;
    }
    let scale = (width as f64 / 1280.0).max(0.4);
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
    let origin = ((40.0 * scale) as i32, (60.0 * scale) as i32);
    draw_text_lines(
        &mut out,
        &lines,
        origin,
        1.2 * scale,
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
        for (xs, ys, c) in [
            (&search.left.xs, &search.left.ys, [0u8, 0, 255]),
            (&search.right.xs, &search.right.ys, [255, 0, 0]),
        ] {
            for (x, y) in xs.iter().zip(ys.iter()) {
                let i = ((*y as i32 * w + *x as i32) * 3) as usize;
                if i + 2 < d.len() {
                    d[i..i + 3].copy_from_slice(&c);
                }
            }
        }
    }
    for win in search
        .left_windows
        .iter()
        .chain(search.right_windows.iter())
    {
        let r = Rect::new(
            win.x_low,
            win.y_low,
            win.x_high - win.x_low,
            win.y_high - win.y_low,
        );
        imgproc::rectangle(
            &mut img,
            r,
            Scalar::new(0.0, 255.0, 0.0, 0.0),
            2,
            imgproc::LINE_8,
            0,
        )?;
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
        imgproc::polylines(
            &mut img,
            &polys,
            false,
            Scalar::new(255.0, 0.0, 255.0, 0.0),
            2,
            imgproc::LINE_AA,
            0,
        )?;
    }
    BgrFrame::new(img)
}

/// Resize into a cell of `dst`. Bilinear: the cells are half the frame, where it averages
/// pixel pairs like an area filter, and it is several times cheaper than `INTER_AREA` for the
/// search picture's 2:1 shrink.
fn resize_into(src: &Mat, dst: &mut Mat, rect: Rect) -> Result<()> {
    let mut small = Mat::default();
    imgproc::resize(
        src,
        &mut small,
        core::Size::new(rect.width, rect.height),
        0.0,
        0.0,
        imgproc::INTER_LINEAR,
    )?;
    let mut roi = Mat::roi_mut(dst, rect)?;
    small.copy_to(&mut roi)?;
    Ok(())
}

fn fmt_coeffs(p: Option<&Poly2>) -> [String; 3] {
    match p {
        Some(p) => [
            format!("{:+.2e}", p.a),
            format!("{:+.4}", p.b),
            format!("{:+.1}", p.c),
        ],
        None => ["-".into(), "-".into(), "-".into()],
    }
}

/// Extra per-frame data for the diagnostic composite.
pub struct DiagInfo {
    pub analysis: crate::lane::pipeline::Analysis,
    pub track: crate::lane::track::TrackOutput,
    pub kept_left: Vec<Poly2>,
    pub kept_right: Vec<Poly2>,
    pub frame: usize,
}

/// The diagnostic composite, same size as the frame, as a 2x2 grid: overlay | bird's-eye
/// binary with the search; bird's-eye view with this frame's fits (yellow), the kept fits
/// (gray) and the smoothed fit (green) | a text panel of coefficients, differences (red when
/// over the tracking limits), kept counts, search mode, radius and offset.
pub fn diagnostic(
    overlay: &BgrFrame,
    birdseye_panel: (BgrFrame, crate::lane::fit::Scale),
    d: &DiagInfo,
    lane: Option<&(Poly2, Poly2)>,
    measure: Option<&LaneMeasure>,
    limits: [f64; 3],
    cfg: &RenderConfig,
) -> Result<BgrFrame> {
    let (w, h) = (overlay.width(), overlay.height());
    let (cw, ch) = (w / 2, h / 2);
    let mut out = Mat::zeros(h, w, core::CV_8UC3)?.to_mat()?;
    resize_into(overlay.mat(), &mut out, Rect::new(0, 0, cw, ch))?;
    let a = &d.analysis;
    let pic = search_picture(&a.thresholded.mask()?, &a.search, None, None)?;
    resize_into(pic.mat(), &mut out, Rect::new(cw, 0, w - cw, ch))?;
    let fits = fits_panel(birdseye_panel, d, lane)?;
    let cell = Rect::new(0, ch, cw, h - ch);
    if fits.cols() == cell.width && fits.rows() == cell.height {
        let mut roi = Mat::roi_mut(&mut out, cell)?;
        fits.copy_to(&mut roi)?;
    } else {
        resize_into(&fits, &mut out, cell)?;
    }
    text_panel(
        &mut out,
        Rect::new(cw, ch, w - cw, h - ch),
        d,
        lane,
        measure,
        limits,
        cfg,
    )?;
    cell_borders(&mut out, cw, ch)?;
    BgrFrame::new(out)
}

/// Bottom-left panel: the bird's-eye view with the kept fits (gray), this frame's fits
/// (yellow) and the smoothed lane (green, thick).
fn fits_panel(
    (panel, s): (BgrFrame, crate::lane::fit::Scale),
    d: &DiagInfo,
    lane: Option<&(Poly2, Poly2)>,
) -> Result<Mat> {
    let a = &d.analysis;
    let mut fits = panel.into_mat();
    let thick = ((fits.cols() as f64 / 400.0).round() as i32).max(2);
    for k in d.kept_left.iter().chain(d.kept_right.iter()) {
        draw_poly(
            &mut fits,
            &k.to_scaled(s),
            Scalar::new(160.0, 160.0, 160.0, 0.0),
            thick,
        )?;
    }
    for f in [a.fit.left.as_ref(), a.fit.right.as_ref()]
        .into_iter()
        .flatten()
    {
        draw_poly(
            &mut fits,
            &f.to_scaled(s),
            Scalar::new(0.0, 255.0, 255.0, 0.0),
            thick,
        )?;
    }
    if let Some((l, r)) = lane {
        for p in [l, r] {
            draw_poly(
                &mut fits,
                &p.to_scaled(s),
                Scalar::new(0.0, 255.0, 0.0, 0.0),
                thick * 2,
            )?;
        }
    }
    Ok(fits)
}

/// Text rows of the bottom-right panel, written top to bottom into `cell` of `out`.
struct TextPanel<'a> {
    out: &'a mut Mat,
    stamp: &'a TextStamp,
    col: [i32; 4],
    y: i32,
    step: i32,
}

impl TextPanel<'_> {
    fn put(&mut self, text: &str, col: usize, c: Scalar) -> Result<()> {
        self.stamp
            .draw(self.out, text, Point::new(self.col[col], self.y), c)
    }
    fn next_row(&mut self) {
        self.y += self.step;
    }
}

const WHITE: (f64, f64, f64) = (255.0, 255.0, 255.0);
const RED: (f64, f64, f64) = (60.0, 60.0, 255.0);
const GRAY: (f64, f64, f64) = (170.0, 170.0, 170.0);

fn bgr(c: (f64, f64, f64)) -> Scalar {
    Scalar::new(c.0, c.1, c.2, 0.0)
}

/// Bottom-right panel: frame and search mode, each line's fit, smoothed fit, difference to the
/// kept fits (red over `limits`), kept count and verdict; radius, offset and lane width.
fn text_panel(
    out: &mut Mat,
    cell: Rect,
    d: &DiagInfo,
    lane: Option<&(Poly2, Poly2)>,
    measure: Option<&LaneMeasure>,
    limits: [f64; 3],
    cfg: &RenderConfig,
) -> Result<()> {
    let cw = cell.width;
    let scale = (cw as f64 / 640.0 * 0.55).max(0.3);
    let step = (cw as f64 / 640.0 * 25.0).max(12.0) as i32;
    let col = [0.03, 0.30, 0.55, 0.78].map(|f| cell.x + (cw as f64 * f) as i32);
    let stamp = TextStamp::cached(imgproc::FONT_HERSHEY_SIMPLEX, scale, 1)?;
    let mut p = TextPanel {
        out,
        stamp: &stamp,
        col,
        y: cell.y + step,
        step,
    };
    let a = &d.analysis;
    let det = if d.track.detected {
        "accepted"
    } else {
        "rejected"
    };
    let head = format!(
        "frame {}   search: {}   fits {}",
        d.frame,
        a.search.mode.as_str(),
        det
    );
    p.put(&head, 0, bgr(WHITE))?;
    p.next_row();
    p.put("", 0, bgr(WHITE))?;
    for (k, name) in ["a", "b", "c"].iter().enumerate() {
        p.put(name, k + 1, bgr(GRAY))?;
    }
    p.next_row();
    let rows = [
        (
            "left",
            a.fit.left.as_ref(),
            d.track.left_diff,
            d.track.left_verdict,
            d.kept_left.len(),
        ),
        (
            "right",
            a.fit.right.as_ref(),
            d.track.right_diff,
            d.track.right_verdict,
            d.kept_right.len(),
        ),
    ];
    for (i, (name, fit, diff, verdict, kept)) in rows.into_iter().enumerate() {
        let smooth = lane.map(|l| if i == 0 { l.0 } else { l.1 });
        line_rows(&mut p, name, fit, smooth.as_ref(), diff, limits)?;
        p.put(
            &format!("{name}: {kept} kept, verdict {}", verdict.as_str()),
            0,
            bgr(GRAY),
        )?;
        p.next_row();
    }
    let mtext = match measure {
        Some(m) => format!(
            "{}   {}",
            radius_text(m.radius_m, cfg.straight_above_m),
            offset_text(m.offset_m)
        ),
        None => "no lane".into(),
    };
    p.put(&mtext, 0, bgr(WHITE))?;
    p.next_row();
    if let Some(m) = measure {
        let t = format!(
            "lane width {:.2} m   pixels L {} R {}",
            m.lane_width_m, a.fit.left_pixels, a.fit.right_pixels
        );
        p.put(&t, 0, bgr(WHITE))?;
    }
    Ok(())
}

/// One line's three rows of the text panel: this frame's fit, the smoothed fit, the
/// difference to the kept fits.
fn line_rows(
    p: &mut TextPanel,
    name: &str,
    fit: Option<&Poly2>,
    smooth: Option<&Poly2>,
    diff: Option<[f64; 3]>,
    limits: [f64; 3],
) -> Result<()> {
    p.put(&format!("{name} fit"), 0, bgr(WHITE))?;
    for (k, s) in fmt_coeffs(fit).iter().enumerate() {
        p.put(s, k + 1, bgr(WHITE))?;
    }
    p.next_row();
    p.put(
        &format!("{name} smooth"),
        0,
        Scalar::new(0.0, 255.0, 0.0, 0.0),
    )?;
    for (k, s) in fmt_coeffs(smooth).iter().enumerate() {
        p.put(s, k + 1, bgr(WHITE))?;
    }
    p.next_row();
    p.put(&format!("{name} diff"), 0, bgr(WHITE))?;
    match diff {
        Some(dv) => {
            for k in 0..3 {
                let s = if k == 0 {
                    format!("{:.2e}", dv[k])
                } else {
                    format!("{:.3}", dv[k])
                };
                let c = if dv[k] > limits[k] { RED } else { WHITE };
                p.put(&s, k + 1, bgr(c))?;
            }
        }
        None => p.put("-", 1, bgr(WHITE))?,
    }
    p.next_row();
    Ok(())
}

/// The gray lines between the four cells.
fn cell_borders(out: &mut Mat, cw: i32, ch: i32) -> Result<()> {
    let (w, h) = (out.cols(), out.rows());
    for (a, b) in [
        (Point::new(cw, 0), Point::new(cw, h)),
        (Point::new(0, ch), Point::new(w, ch)),
    ] {
        imgproc::line(out, a, b, Scalar::all(80.0), 1, imgproc::LINE_8, 0)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_stamp_matches_put_text() {
        for (font, scale, thick) in [
            (imgproc::FONT_HERSHEY_DUPLEX, 1.2, 2),
            (imgproc::FONT_HERSHEY_SIMPLEX, 0.55, 1),
        ] {
            let mut a = Mat::new_rows_cols_with_default(120, 700, core::CV_8UC3, Scalar::all(60.0))
                .unwrap();
            let mut b = a.clone();
            let t = "Curve radius: 885 m  0.14 m left (g,y)";
            imgproc::put_text(
                &mut a,
                t,
                Point::new(20, 60),
                font,
                scale,
                Scalar::all(255.0),
                thick,
                imgproc::LINE_AA,
                false,
            )
            .unwrap();
            TextStamp::new(font, scale, thick)
                .unwrap()
                .draw(&mut b, t, Point::new(20, 60), Scalar::all(255.0))
                .unwrap();
            let mut d = Mat::default();
            core::absdiff(&a, &b, &mut d).unwrap();
            let diff = core::mean(&d, &core::no_array()).unwrap()[0];
            // Ink: the total brightness above the background (coverage, whatever the sub-pixel
            // phase of each glyph).
            let ink = |m: &Mat| -> u64 {
                m.data_bytes()
                    .unwrap()
                    .iter()
                    .map(|v| (*v as u64).saturating_sub(60))
                    .sum()
            };
            let (ia, ib) = (ink(&a) as f64, ink(&b) as f64);
            // Same glyphs within half a pixel: the mean difference is a small fraction of the
            // ink's (about 8 gray levels on average for this text), and the ink agrees to 5%.
            assert!(diff < 2.0, "font {font}: mean abs diff {diff:.2}");
            assert!((ia - ib).abs() / ia < 0.05, "font {font}: ink {ia} vs {ib}");
        }
    }
}
