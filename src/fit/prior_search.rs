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
        if !(lo.is_finite() && hi.is_finite()) || hi < 0.0 || lo >= w as f64 {
            continue;
        }
        let x0 = lo.floor().max(0.0) as usize;
        let x1 = (hi.ceil().max(0.0) as usize).min(w - 1);
        let row = &d[y * w..(y + 1) * w];
        for (x, v) in row.iter().enumerate().take(x1 + 1).skip(x0) {
            if *v != 0 {
                let xf = x as f64;
                if xf > lo && xf < hi {
                    out.xs.push(x as u32);
                    out.ys.push(y as u32);
                }
            }
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
