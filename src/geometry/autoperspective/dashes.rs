//! Dash lengths of a dashed lane line, in bird's-eye pixels: runs of marking along the fitted
//! image line, their ends mapped through the perspective. A dash counts only when it lies wholly
//! inside the quad with a gap on both sides, so dashes cut by the quad's edges are not measured.

use super::lines::ImageLine;
use crate::base::error::Result;
use crate::base::frame::BinaryMask;
use crate::lane::warp::Perspective;

/// One measured dash.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dash {
    /// First and last image row of the dash (undistorted frame).
    pub rows: (i32, i32),
    /// Its length in bird's-eye pixels (along y).
    pub length_px: f64,
    /// Its centre's bird's-eye row.
    pub centre_y: f64,
}

/// Image rows `[y_top, y_bottom]` where the mask has a marking on `line`: a row is marked when
/// at least a quarter of the expected marking width (about 1/25 of `lane_px(y)`, at least one
/// pixel) is set within that width of the line.
fn marked_rows(
    mask: &BinaryMask,
    line: &ImageLine,
    lane_px: &dyn Fn(f64) -> f64,
    y_top: i32,
    y_bottom: i32,
) -> Result<Vec<bool>> {
    let (w, h) = (mask.width(), mask.height());
    let data = mask.bytes()?;
    let mut out = Vec::new();
    for y in y_top.max(0)..=y_bottom.min(h - 1) {
        let mw = lane_px(y as f64) / 25.0;
        let half = mw.max(1.0) + 1.0;
        let xc = line.x_at(y as f64);
        let xa = ((xc - half).floor() as i32).max(0);
        let xb = ((xc + half).ceil() as i32).min(w - 1);
        let off = (y * w) as usize;
        let set = (xa..=xb).filter(|&x| data[off + x as usize] != 0).count() as f64;
        out.push(set >= (0.25 * mw).max(1.0));
    }
    Ok(out)
}

/// The complete dashes of one line between quad rows `y_top..=y_bottom`. Gaps shorter than
/// `min_gap_px` bird's-eye pixels are closed first (worn paint, a reflector); a dash must be at
/// least `min_gap_px` long too.
pub fn measure_dashes(
    mask: &BinaryMask,
    line: &ImageLine,
    persp: &Perspective,
    lane_px: &dyn Fn(f64) -> f64,
    y_top: i32,
    y_bottom: i32,
    min_gap_px: f64,
) -> Result<Vec<Dash>> {
    let marked = marked_rows(mask, line, lane_px, y_top, y_bottom)?;
    let by = |y: f64| persp.to_birdseye(line.x_at(y), y).1;
    // Runs of marked rows as (first, last) image rows.
    let mut runs: Vec<(i32, i32)> = Vec::new();
    let y0 = y_top.max(0);
    for (i, &m) in marked.iter().enumerate() {
        let y = y0 + i as i32;
        if !m {
            continue;
        }
        match runs.last_mut() {
            Some(r) if r.1 == y - 1 => r.1 = y,
            _ => runs.push((y, y)),
        }
    }
    // Close short gaps (measured in bird's-eye pixels).
    let mut merged: Vec<(i32, i32)> = Vec::new();
    for r in runs {
        match merged.last_mut() {
            Some(p) if by(r.0 as f64 - 0.5) - by(p.1 as f64 + 0.5) < min_gap_px => p.1 = r.1,
            _ => merged.push(r),
        }
    }
    let last_row = y0 + marked.len() as i32 - 1;
    let mut dashes = Vec::new();
    for r in merged {
        // Touching the quad's top or bottom: the dash may continue outside; not measured.
        if r.0 <= y0 || r.1 >= last_row {
            continue;
        }
        let (top, bottom) = (by(r.0 as f64 - 0.5), by(r.1 as f64 + 0.5));
        let length_px = bottom - top;
        if length_px >= min_gap_px {
            dashes.push(Dash {
                rows: r,
                length_px,
                centre_y: (top + bottom) / 2.0,
            });
        }
    }
    Ok(dashes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::PerspectiveConfig;
    use opencv::core::{self, Mat};
    use opencv::prelude::*;

    #[test]
    fn dashes_inside_the_quad_are_measured_cut_ones_are_not() {
        // Identity-like perspective: src == dst, so bird's-eye rows are image rows.
        let q = [[300.0, 0.0], [700.0, 0.0], [300.0, 400.0], [700.0, 400.0]];
        let persp = Perspective::new(&q, &q, 1000, 400).unwrap();
        let mut m =
            Mat::new_rows_cols_with_default(400, 1000, core::CV_8UC1, core::Scalar::all(0.0))
                .unwrap();
        {
            let d = m.data_bytes_mut().unwrap();
            // A vertical line at x = 300: dashes at rows 0..40 (cut), 100..160, 250..310, 380..400 (cut).
            for (a, b) in [(0, 40), (100, 160), (250, 310), (380, 400)] {
                for y in a..b {
                    for x in 296..305 {
                        d[y * 1000 + x] = 255;
                    }
                }
            }
        }
        let mask = BinaryMask::new(m).unwrap();
        let line = ImageLine { m: 0.0, c: 300.0 };
        let dashes = measure_dashes(&mask, &line, &persp, &|_| 200.0, 0, 399, 10.0).unwrap();
        assert_eq!(dashes.len(), 2, "{dashes:?}");
        assert!((dashes[0].length_px - 60.0).abs() < 1e-6);
        assert!((dashes[1].length_px - 60.0).abs() < 1e-6);
        let _ = PerspectiveConfig::default();
    }
}
