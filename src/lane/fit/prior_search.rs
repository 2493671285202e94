//! Prior search: the pixels within a margin of the previous frame's fits.

use super::pixels::{LinePixels, SearchMode, SearchResult};
use crate::base::error::Result;
use crate::base::frame::BinaryMask;
use crate::base::poly::Poly2;
use crate::lane::warp::ColumnBands;

/// The columns `x0..=x1` strictly within `margin` of `fit` on row `y` of a `w` wide view.
fn columns(fit: &Poly2, margin: f64, y: usize, w: usize) -> Option<(usize, usize)> {
    let fx = fit.eval(y as f64);
    let (lo, hi) = (fx - margin, fx + margin);
    if !(lo.is_finite() && hi.is_finite()) || hi <= 0.0 || lo >= (w - 1) as f64 {
        return None;
    }
    // Columns x with lo < x < hi.
    let x0 = (lo.floor() + 1.0).max(0.0) as usize;
    let x1 = ((hi.ceil() - 1.0) as usize).min(w - 1);
    (x0 <= x1).then_some((x0, x1))
}

/// Push the set pixels of `row` (view columns from `x0`, view row `y`).
fn collect(out: &mut LinePixels, row: &[u8], x0: usize, y: usize) {
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

fn band(d: &[u8], w: usize, h: usize, fit: &Poly2, margin: f64) -> LinePixels {
    let mut out = LinePixels::default();
    for y in 0..h {
        if let Some((x0, x1)) = columns(fit, margin, y, w) {
            collect(&mut out, &d[y * w + x0..=y * w + x1], x0, y);
        }
    }
    out
}

/// `band` on a mask computed only on `bands`, packed: run `k` holds every column strictly
/// within the margin of curve `k`, so the same pixels come out in the same order. A view row
/// that was not computed takes its stand-in's run, shifted along the curve
/// (`ColumnBands::run_on_view_row`).
fn band_packed(d: &[u8], bands: &ColumnBands, k: usize, fit: &Poly2, margin: f64) -> LinePixels {
    let mut out = LinePixels::default();
    let (w, pw) = (bands.width as usize, bands.packed_width());
    for y in 0..bands.height.max(0) as usize {
        let (Some((x0, x1)), Some((r, rg, xv))) =
            (columns(fit, margin, y, w), bands.run_on_view_row(y, k))
        else {
            continue;
        };
        // The wanted columns within the run's (view columns xv..xv + len).
        let (a, b) = (x0.max(xv), x1.min(xv + rg.len() - 1));
        if a > b {
            continue;
        }
        let p = r * pw + rg.start + (a - xv);
        collect(&mut out, &d[p..=p + (b - a)], a, y);
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

/// `prior_search` on the packed mask of `ColumnBands::around(&[left, right], margin, ..)`
/// (`threshold::MaskRef::Bands`): the same pixels, in the same order, as `prior_search` on the
/// whole view's mask.
pub fn prior_search_bands(
    mask: &BinaryMask,
    bands: &ColumnBands,
    left: &Poly2,
    right: &Poly2,
    margin: u32,
) -> Result<SearchResult> {
    if bands.bands != 2
        || mask.width() as usize != bands.packed_width()
        || mask.height() as usize != bands.rows()
    {
        return Err(crate::base::error::Error::Invalid(format!(
            "packed mask {}x{} does not match its {} bands ({}x{})",
            mask.width(),
            mask.height(),
            bands.bands,
            bands.packed_width(),
            bands.rows()
        )));
    }
    let d = mask.bytes()?;
    Ok(SearchResult {
        mode: SearchMode::Prior,
        left: band_packed(d, bands, 0, left, margin as f64),
        right: band_packed(d, bands, 1, right, margin as f64),
        left_windows: Vec::new(),
        right_windows: Vec::new(),
        histogram: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::Mat;
    use opencv::prelude::*;

    #[test]
    fn packed_search_finds_the_same_pixels_in_the_same_order() {
        let (w, h) = (320usize, 90usize);
        // Curves inside, across the left edge, and crossing each other (overlapping bands).
        let cases = [
            (Poly2::new(0.0, 0.0, 80.0), Poly2::new(0.0, 0.0, 240.0)),
            (Poly2::new(0.0, 1.5, -40.0), Poly2::new(0.01, -1.0, 200.0)),
            (Poly2::new(0.0, 1.0, 100.0), Poly2::new(0.0, -1.0, 190.0)),
        ];
        let mut state = 7u64;
        let plan = std::sync::Arc::new(crate::lane::warp::RowPlan::every(h as i32, 1));
        for margin in [30u32, 17] {
            for (l, r) in cases {
                let bands = ColumnBands::around(&[l, r], margin, w as i32, h as i32, &plan);
                // A random whole-view mask, zero outside the bands (what a band threshold
                // stands for), and its packed form.
                let mut inside = vec![false; w * h];
                for sp in bands.spans() {
                    inside[sp.view..sp.view + sp.len].fill(true);
                }
                let full: Vec<u8> = inside
                    .iter()
                    .map(|inb| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        if *inb && (state >> 60) < 5 {
                            255
                        } else {
                            0
                        }
                    })
                    .collect();
                let mut packed = vec![0u8; bands.rows() * bands.packed_width()];
                for sp in bands.spans() {
                    packed[sp.packed..sp.packed + sp.len]
                        .copy_from_slice(&full[sp.view..sp.view + sp.len]);
                }
                let mat = |d: &[u8], rows: usize, cols: usize| {
                    let m = Mat::new_rows_cols_with_data(rows as i32, cols as i32, d)
                        .unwrap()
                        .try_clone()
                        .unwrap();
                    BinaryMask::new(m).unwrap()
                };
                let pm = mat(&packed, bands.rows(), bands.packed_width());
                let fm = mat(&full, h, w);
                let a = prior_search_bands(&pm, &bands, &l, &r, margin).unwrap();
                let b = prior_search(&fm, &l, &r, margin).unwrap();
                assert!(b.left.xs.len() > 50 && b.right.xs.len() > 50);
                assert_eq!((&a.left.xs, &a.left.ys), (&b.left.xs, &b.left.ys));
                assert_eq!((&a.right.xs, &a.right.ys), (&b.right.xs, &b.right.ys));
            }
        }
    }

    #[test]
    fn a_row_not_computed_takes_its_stand_ins_pixels_along_the_curve() {
        // Every third row computed; a slanted curve (1.5 px per row) and a vertical one.
        let (w, h) = (200usize, 9usize);
        let (l, r) = (Poly2::new(0.0, 1.5, 40.0), Poly2::new(0.0, 0.0, 150.0));
        let plan = std::sync::Arc::new(crate::lane::warp::RowPlan::every(h as i32, 3));
        assert_eq!(plan.computed, vec![0, 3, 6]);
        let bands = ColumnBands::around(&[l, r], 10, w as i32, h as i32, &plan);
        // One marking pixel per run on each computed row, 2 px right of the curve.
        let pw = bands.packed_width();
        let mut packed = vec![0u8; bands.rows() * pw];
        for (ri, yc) in plan.computed.iter().enumerate() {
            for (k, c) in [l, r].iter().enumerate() {
                let x = (c.eval(*yc as f64) + 2.0).round() as i32;
                let j = (x - bands.x0[*yc as usize * 2 + k]) as usize;
                packed[ri * pw + k * bands.cols + j] = 255;
            }
        }
        let m = Mat::new_rows_cols_with_data(bands.rows() as i32, pw as i32, &packed[..])
            .unwrap()
            .try_clone()
            .unwrap();
        let found = prior_search_bands(&BinaryMask::new(m).unwrap(), &bands, &l, &r, 10).unwrap();
        // Every view row has the pixel, 2 px right of the curve on its own row (the stand-in's
        // offset from its run's start, placed at this row's run start).
        for (px, c) in [(&found.left, l), (&found.right, r)] {
            assert_eq!(px.ys, (0..h as u32).collect::<Vec<_>>());
            for (x, y) in px.xs.iter().zip(&px.ys) {
                let want = c.eval(*y as f64) + 2.0;
                assert!(
                    (*x as f64 - want).abs() <= 1.0,
                    "row {y}: x {x}, want {want}"
                );
            }
        }
    }
}
