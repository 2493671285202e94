//! The search picture (windows, line pixels, fitted curves, histogram) and the diagnostic
//! composite of the stages with its text panels.

use super::overlay::{draw_poly, offset_text, radius_text};
use super::text::TextStamp;
use crate::base::config::RenderConfig;
use crate::base::error::Result;
use crate::base::frame::{BgrFrame, BinaryMask};
use crate::lane::fit::{Poly2, SearchResult};
use crate::lane::measure::LaneMeasure;
use opencv::core::{self, Mat, Point, Rect, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;

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
