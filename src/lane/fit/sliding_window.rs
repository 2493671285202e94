//! Sliding-window search: line bases from a histogram of the mask's bottom half, then windows
//! stacked upward that re-centre on their pixels.

use super::pixels::{LinePixels, SearchMode, SearchResult, Window};
use crate::base::config::SearchConfig;
use crate::base::error::Result;
use crate::base::frame::BinaryMask;

/// Column sums (count of set pixels) of rows `h/2..h`.
pub fn histogram(mask: &BinaryMask) -> Result<Vec<u32>> {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let d = mask.bytes()?;
    let mut hist = vec![0u32; w];
    for y in h / 2..h {
        let row = &d[y * w..(y + 1) * w];
        for (x, v) in row.iter().enumerate() {
            if *v != 0 {
                hist[x] += 1;
            }
        }
    }
    Ok(hist)
}

/// Index of the first maximum of `v[lo..hi]` (as numpy's argmax), offset by `lo`.
fn argmax(v: &[u32], lo: usize, hi: usize) -> usize {
    let hi = hi.min(v.len());
    let mut best = lo;
    let mut best_v = 0u32;
    let mut first = true;
    for (i, x) in v.iter().enumerate().take(hi).skip(lo) {
        if first || *x > best_v {
            best = i;
            best_v = *x;
            first = false;
        }
    }
    best
}

/// Collect the set pixels of `mask` inside a window and append them to `out`; returns the sum of x.
fn collect(d: &[u8], w: usize, win: &Window, out: &mut LinePixels) -> (usize, u64) {
    let x0 = win.x_low.max(0) as usize;
    let x1 = (win.x_high.max(0) as usize).min(w);
    let mut n = 0usize;
    let mut sum = 0u64;
    if x0 >= x1 {
        return (0, 0);
    }
    for y in win.y_low.max(0) as usize..win.y_high.max(0) as usize {
        let row = &d[y * w + x0..y * w + x1];
        for (i, v) in row.iter().enumerate() {
            if *v != 0 {
                let x = (x0 + i) as u32;
                out.xs.push(x);
                out.ys.push(y as u32);
                n += 1;
                sum += x as u64;
            }
        }
    }
    (n, sum)
}

/// Sliding-window search over a bird's-eye mask.
///
/// The left base is the histogram peak between the quarter point and the midpoint, the right
/// base the peak between the midpoint and the three-quarter point. Each of `cfg.windows` windows
/// is `2*cfg.margin` wide; a window holding more than `cfg.min_pixels` pixels moves the next
/// window to their mean x.
pub fn sliding_window_search(mask: &BinaryMask, cfg: &SearchConfig) -> Result<SearchResult> {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let hist = histogram(mask)?;
    let mid = w / 2;
    let quarter = mid / 2;
    let mut left_x = argmax(&hist, quarter, mid) as i32;
    let mut right_x = argmax(&hist, mid, mid + quarter) as i32;
    // Robust search: the last step of each line's window centres, carried through windows
    // without enough pixels so the stack follows a bend instead of stopping.
    let (mut left_step, mut right_step) = (0i32, 0i32);
    let d = mask.bytes()?;
    let n = cfg.windows as usize;
    let wh = (h / n.max(1)) as i32;
    let margin = cfg.margin as i32;
    let mut res = SearchResult {
        mode: SearchMode::Sliding,
        left: LinePixels::default(),
        right: LinePixels::default(),
        left_windows: Vec::with_capacity(n),
        right_windows: Vec::with_capacity(n),
        histogram: hist,
    };
    for k in 0..n as i32 {
        let y_low = h as i32 - (k + 1) * wh;
        let y_high = h as i32 - k * wh;
        let lw = Window {
            x_low: left_x - margin,
            x_high: left_x + margin,
            y_low,
            y_high,
        };
        let rw = Window {
            x_low: right_x - margin,
            x_high: right_x + margin,
            y_low,
            y_high,
        };
        let (ln, lsum) = collect(d, w, &lw, &mut res.left);
        let (rn, rsum) = collect(d, w, &rw, &mut res.right);
        res.left_windows.push(lw);
        res.right_windows.push(rw);
        for (n, sum, x, step) in [
            (ln, lsum, &mut left_x, &mut left_step),
            (rn, rsum, &mut right_x, &mut right_step),
        ] {
            if n > cfg.min_pixels as usize {
                let nx = (sum / n as u64) as i32;
                if cfg.robust && k > 0 {
                    // At most a window's half-width per window.
                    *step = (nx - *x).clamp(-margin / 2, margin / 2);
                }
                *x = nx;
            } else if cfg.robust {
                *x += *step;
            }
        }
    }
    Ok(res)
}

/// The windows of one line guided by its partner `guide` (a line of the same lane, in this
/// view's pixels): the first window sits at the strongest column of the mask's bottom half
/// between `gap.0` and `gap.1` px from the guide (negative: left of it); each next window moves
/// as the guide does, and re-centres on its pixels when it holds more than `cfg.min_pixels`. So
/// the windows follow a dashed line through its gaps, and a lane that narrows towards the top
/// (a perspective quad that does not fit the road's slope) as well.
pub fn guided_search(
    mask: &BinaryMask,
    guide: &crate::base::poly::Poly2,
    gap: (f64, f64),
    cfg: &SearchConfig,
) -> Result<LinePixels> {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let d = mask.bytes()?;
    let hist = histogram(mask)?;
    let gx = guide.eval((h - 1) as f64);
    let (lo, hi) = (gx + gap.0.min(gap.1), gx + gap.0.max(gap.1));
    let (lo, hi) = (lo.max(0.0) as usize, (hi.max(0.0) as usize).min(w));
    let mut out = LinePixels::default();
    if lo >= hi {
        return Ok(out);
    }
    let base = argmax(&hist, lo, hi);
    if hist[base] == 0 {
        return Ok(out);
    }
    let n = cfg.windows as usize;
    let wh = (h / n.max(1)) as i32;
    let margin = cfg.margin as i32;
    let mut x = base as i32;
    for k in 0..n as i32 {
        let y_low = h as i32 - (k + 1) * wh;
        let y_high = h as i32 - k * wh;
        let win = Window {
            x_low: x - margin,
            x_high: x + margin,
            y_low,
            y_high,
        };
        let (cnt, sum) = collect(d, w, &win, &mut out);
        // Where the guide goes from this window's centre row to the next one's.
        let step = guide.eval((y_low - wh / 2) as f64) - guide.eval((y_low + wh / 2) as f64);
        if cnt > cfg.min_pixels as usize {
            x = (sum / cnt as u64) as i32;
        }
        x += step.round() as i32;
    }
    Ok(out)
}
