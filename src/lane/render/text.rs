//! Text on frames: glyphs rasterised once and blended per string, on a darkened box.

use crate::base::error::Result;
use opencv::core::{self, Mat, Point, Rect, Scalar};
use opencv::imgproc;
use opencv::prelude::*;

/// A string drawn from glyphs rasterised once: OpenCV's Hershey font, anti-aliased, at one
/// size and thickness. Per frame a string then costs a blend of its glyphs' coverage masks
/// instead of re-rasterising thick anti-aliased strokes (about 1 ms per overlay line here).
/// Glyphs sit where `putText` puts them, to within half a pixel. Each glyph is rasterised when
/// first drawn (all 95 took 1.5 ms, a still's overlay uses about 30).
pub struct TextStamp {
    font: i32,
    scale: f64,
    thickness: i32,
    /// Rows above the baseline and below it in every glyph mask, and the margin around it.
    ascent: i32,
    descent: i32,
    pad: i32,
    /// Printable ASCII, from ' '.
    glyphs: Vec<std::sync::OnceLock<Glyph>>,
    /// Glyphs' widths and advances times this: 1, or the inverse of an anamorphic video's
    /// pixel aspect, so that text shown at the video's display shape has its own.
    x_scale: f64,
}

struct Glyph {
    width: i32,
    mask: Vec<u8>,
    /// Horizontal advance, px (fractional, as `putText` accumulates it).
    advance: f64,
}

impl TextStamp {
    /// The metrics of `font` at `scale` and `thickness`; glyphs come on first use.
    pub fn new(font: i32, scale: f64, thickness: i32) -> Result<Self> {
        Self::squeezed(font, scale, thickness, 1.0)
    }

    /// As `new`, every glyph narrowed (or widened) by `x_scale` (an area average).
    pub fn squeezed(font: i32, scale: f64, thickness: i32, x_scale: f64) -> Result<Self> {
        let mut base = 0;
        let cap = imgproc::get_text_size("M", font, scale, thickness, &mut base)?;
        Ok(Self {
            font,
            scale,
            thickness,
            ascent: cap.height + thickness,
            descent: base + thickness,
            pad: thickness + 2 + (cap.height / 4),
            glyphs: (32u8..127).map(|_| std::sync::OnceLock::new()).collect(),
            x_scale,
        })
    }

    /// Glyph `i` (its byte minus 32), rasterised the first time it is asked for.
    fn glyph(&self, i: usize) -> Result<&Glyph> {
        if let Some(g) = self.glyphs[i].get() {
            return Ok(g);
        }
        let (font, scale, thickness) = (self.font, self.scale, self.thickness);
        let mut base = 0;
        let one = ((i as u8 + 32) as char).to_string();
        let many = one.repeat(64);
        let sz = imgproc::get_text_size(&one, font, scale, thickness, &mut base)?;
        let szm = imgproc::get_text_size(&many, font, scale, thickness, &mut base)?;
        let advance = (szm.width - thickness) as f64 / 64.0;
        let width = sz.width + 2 * self.pad;
        let rows = self.ascent + self.descent + 2 * self.pad;
        let mut m = Mat::new_rows_cols_with_default(rows, width, core::CV_8UC1, Scalar::all(0.0))?;
        imgproc::put_text(
            &mut m,
            &one,
            Point::new(self.pad, self.pad + self.ascent),
            font,
            scale,
            Scalar::all(255.0),
            thickness,
            imgproc::LINE_AA,
            false,
        )?;
        let g = if self.x_scale == 1.0 {
            Glyph {
                width,
                mask: m.data_bytes()?.to_vec(),
                advance,
            }
        } else {
            let narrow = ((width as f64 * self.x_scale).round() as i32).max(1);
            let mut n = Mat::default();
            imgproc::resize(
                &m,
                &mut n,
                core::Size::new(narrow, rows),
                0.0,
                0.0,
                imgproc::INTER_AREA,
            )?;
            Glyph {
                width: narrow,
                mask: n.data_bytes()?.to_vec(),
                advance: advance * self.x_scale,
            }
        };
        // Another thread may have set it meanwhile: the same pixels either way.
        Ok(self.glyphs[i].get_or_init(|| g))
    }

    /// The stamp for (`font`, `scale`, `thickness`), built on first use and kept for the
    /// process (a handful of sizes are used).
    pub fn cached(font: i32, scale: f64, thickness: i32) -> Result<std::sync::Arc<TextStamp>> {
        Self::cached_squeezed(font, scale, thickness, 1.0)
    }

    /// `cached` for glyphs narrowed by `x_scale` (`squeezed`).
    pub fn cached_squeezed(
        font: i32,
        scale: f64,
        thickness: i32,
        x_scale: f64,
    ) -> Result<std::sync::Arc<TextStamp>> {
        type Key = (i32, u64, i32, u64);
        static CACHE: std::sync::OnceLock<
            std::sync::Mutex<std::collections::HashMap<Key, std::sync::Arc<TextStamp>>>,
        > = std::sync::OnceLock::new();
        let key = (font, scale.to_bits(), thickness, x_scale.to_bits());
        let cache = CACHE.get_or_init(Default::default);
        if let Some(s) = cache.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(s);
        }
        let stamp = std::sync::Arc::new(TextStamp::squeezed(font, scale, thickness, x_scale)?);
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
        let pad_x = (self.pad as f64 * self.x_scale).round() as i32;
        let step = w as usize * ch;
        let d = img.data_bytes_mut()?;
        let mut x = 0.0f64;
        for c in text.bytes() {
            let i = if (32..127).contains(&c) {
                c - 32
            } else {
                b'?' - 32
            };
            let g = self.glyph(i as usize)?;
            let gx = origin.x + x.round() as i32 - pad_x;
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
    draw_text_lines_squeezed(img, lines, origin, (scale, 1.0), color)
}

/// `draw_text_lines` with the text and its box narrowed by `x_scale` (`scale_x.1`): on the
/// frames of an anamorphic video, shown wider than stored, the inverse of its pixel aspect.
pub fn draw_text_lines_squeezed(
    img: &mut Mat,
    lines: &[String],
    origin: (i32, i32),
    (scale, x_scale): (f64, f64),
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
    let narrow = |v: i32| (v as f64 * x_scale).round() as i32;
    let rect = Rect::new(
        origin.0 - narrow(pad),
        top.max(0),
        narrow(width + 2 * pad),
        step * lines.len() as i32 + pad,
    ) & Rect::new(0, 0, img.cols(), img.rows());
    if rect.width > 0 && rect.height > 0 {
        let mut roi = Mat::roi_mut(img, rect)?;
        let mut dark = Mat::default();
        roi.convert_to(&mut dark, -1, 0.45, 0.0)?;
        dark.copy_to(&mut roi)?;
    }
    let stamp = TextStamp::cached_squeezed(font, scale, thick, x_scale)?;
    for (i, line) in lines.iter().enumerate() {
        let p = Point::new(origin.0, origin.1 + i as i32 * step);
        stamp.draw(img, line, p, color)?;
    }
    Ok(())
}
