//! Prior search: the pixels within a margin of the previous frame's fits.

use super::{LinePixels, Poly2, SearchMode, SearchResult};
use crate::error::Result;
use crate::frame::BinaryMask;

fn band(d: &[u8], w: usize, h: usize, fit: &Poly2, margin: f64) -> LinePixels {
    let mut out = LinePixels::default();
    for y in 0..h {
        let fx = fit.eval(y as f64);
        let lo = fx - margin;
        let hi = fx + margin;
        if !(lo.is_finite() && hi.is_finite()) || hi <= 0.0 || lo >= (w - 1) as f64 {
            continue;
        }
        // Columns x with lo < x < hi.
        let x0 = (lo.floor() + 1.0).max(0.0) as usize;
        let x1 = ((hi.ceil() - 1.0) as usize).min(w - 1);
        if x1 < x0 {
            continue;
        }
        let row = &d[y * w + x0..=y * w + x1];
        // Mostly empty rows: skip eight zero bytes at a time.
        let mut i = 0;
        while i < row.len() {
            if i + 8 <= row.len() && row[i..i + 8].iter().all(|v| *v == 0) {
                i += 8;
                continue;
            }
            if row[i] != 0 {
                out.xs.push((x0 + i) as u32);
                out.ys.push(y as u32);
            }
            i += 1;
        }
    }
    out
}

/// Pixels strictly within `margin` px (horizontally) of each previous fit.
pub fn prior_search(
    mask: &BinaryMask,
    left: &Poly2,
    right: &Poly2,
    margin: u32,
) -> Result<SearchResult> {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let d = mask.bytes()?;
    Ok(SearchResult {
        mode: SearchMode::Prior,
        left: band(d, w, h, left, margin as f64),
        right: band(d, w, h, right, margin as f64),
        left_windows: Vec::new(),
        right_windows: Vec::new(),
        histogram: Vec::new(),
    })
}
