//! The local-contrast filter: a pixel is a marking when it is brighter (L) or yellower (B)
//! than the road on both sides at about one marking width; then only vertical runs are kept.

use crate::base::config::{ThresholdConfig, ThresholdMethod};
use crate::base::error::Result;
use opencv::core::{self, Mat};
use opencv::imgproc;

/// The symmetric local threshold in integer form (see `ThresholdMethod::LocalContrast`).
#[derive(Debug, Clone, Copy)]
pub(super) struct LocalContrast {
    /// Distance from the pixel to the near end of each side's road sample, px.
    d: usize,
    /// Length of each side's sample, px.
    s: usize,
    l_min: u32,
    /// `l_contrast_ratio` in 1/256.
    l_ratio: u32,
    b_min: u32,
    b_yellow: u8,
}

impl LocalContrast {
    pub(super) fn new(cfg: &ThresholdConfig) -> Self {
        Self {
            d: cfg.marking_width_px.max(1) as usize,
            s: cfg.side_px.max(1) as usize,
            l_min: cfg.l_contrast_min as u32,
            l_ratio: (cfg.l_contrast_ratio * 256.0).round().clamp(0.0, 1e6) as u32,
            b_min: cfg.b_contrast_min as u32,
            b_yellow: cfg.b_yellow_min,
        }
    }

    /// Pixels a decision needs on each side.
    pub(super) fn reach(&self) -> usize {
        self.d + self.s
    }

    /// Marking decisions (0 or 255) for one contiguous row segment of L and B: a pixel is white
    /// when its L exceeds the brighter of the two road samples (`[x-d-s, x-d)` and
    /// `(x+d, x+d+s]`) by `max(l_min, l_ratio * side)`, yellow when its B is at least `b_yellow`
    /// and exceeds the yellower side by `b_min`. Taking the brighter side makes it symmetric:
    /// at a shadow edge or a light/dark seam one side is as bright as the pixel, so it fails.
    /// The first and last `reach()` pixels have no road sample on one side and stay 0.
    /// `pl` and `pb` are scratch buffers for the prefix sums.
    pub(super) fn row(
        &self,
        l: &[u8],
        b: &[u8],
        out: &mut [u8],
        pl: &mut Vec<u32>,
        pb: &mut Vec<u32>,
    ) {
        let n = l.len();
        out.fill(0);
        let r = self.reach();
        if n < 2 * r + 1 {
            return;
        }
        // Prefix sums of both channels in one pass (two independent add chains side by side).
        pl.resize(n + 1, 0);
        pb.resize(n + 1, 0);
        (pl[0], pb[0]) = (0, 0);
        let (mut acc_l, mut acc_b) = (0u32, 0u32);
        for ((ql, qb), (vl, vb)) in pl[1..].iter_mut().zip(&mut pb[1..]).zip(l.iter().zip(b)) {
            acc_l += *vl as u32;
            acc_b += *vb as u32;
            (*ql, *qb) = (acc_l, acc_b);
        }
        let (d, s) = (self.d, self.s as u32);
        let (l_min_s, b_min_s) = (self.l_min * s, self.b_min * s);
        // For x in r..n-r the two samples are [x-r, x-d) and (x+d, x+r]: as prefix-sum
        // differences, four slices of the sums shifted against each other. Written as one
        // zip over equal-length slices, without branches, so the compiler vectorises it.
        let m = n - 2 * r;
        fn shifted(p: &[u32], r: usize, d: usize, m: usize) -> [&[u32]; 4] {
            [
                &p[r - d..r - d + m],
                &p[..m],
                &p[2 * r + 1..2 * r + 1 + m],
                &p[r + d + 1..r + d + 1 + m],
            ]
        }
        let [l_a, l_b, l_c, l_d] = shifted(pl, r, d, m);
        let [b_a, b_b, b_c, b_d] = shifted(pb, r, d, m);
        let cols = out[r..n - r]
            .iter_mut()
            .zip(&l[r..n - r])
            .zip(&b[r..n - r])
            .zip(l_a.iter().zip(l_b).zip(l_c.iter().zip(l_d)))
            .zip(b_a.iter().zip(b_b).zip(b_c.iter().zip(b_d)));
        for ((((o, lx), bx), ((la, lb), (lc, ld))), ((ba, bb), (bc, bd))) in cols {
            // Sums over the two samples of s pixels each.
            let side_l = (la - lb).max(lc - ld);
            let need = l_min_s.max(side_l.wrapping_mul(self.l_ratio) >> 8);
            let white = *lx as u32 * s >= side_l + need;
            let side_b = (ba - bb).max(bc - bd);
            let yellow = *bx >= self.b_yellow && *bx as u32 * s >= side_b + b_min_s;
            *o = if white | yellow { 255 } else { 0 };
        }
    }
}

/// Pixels on each side a `threshold.method = local_contrast` decision needs (0 for the
/// reference's rule): band analysis computes this much more on each side of its bands.
pub fn context_px(cfg: &ThresholdConfig) -> u32 {
    match cfg.method {
        ThresholdMethod::LocalContrast => LocalContrast::new(cfg).reach() as u32,
        ThresholdMethod::GlobalMax => 0,
    }
}

/// Keep only mask pixels on a vertical run of at least `k` rows (a morphological opening with
/// a `1 x k` column): markings run along the bird's-eye view, speckle does not.
pub(super) fn keep_vertical_runs(mask: Mat, k: u32) -> Result<Mat> {
    if k <= 1 {
        return Ok(mask);
    }
    let kernel = imgproc::get_structuring_element(
        imgproc::MORPH_RECT,
        core::Size::new(1, k as i32),
        core::Point::new(-1, -1),
    )?;
    let mut out = Mat::default();
    imgproc::morphology_ex(
        &mask,
        &mut out,
        imgproc::MORPH_OPEN,
        &kernel,
        core::Point::new(-1, -1),
        1,
        core::BORDER_CONSTANT,
        imgproc::morphology_default_border_value()?,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decision of `row` written pixel by pixel, as it was before the vectorised loop.
    fn row_by_pixel(c: &LocalContrast, l: &[u8], b: &[u8]) -> Vec<u8> {
        let n = l.len();
        let mut out = vec![0u8; n];
        let r = c.reach();
        if n < 2 * r + 1 {
            return out;
        }
        let prefix = |v: &[u8]| {
            std::iter::once(0u32)
                .chain(v.iter().scan(0u32, |acc, x| {
                    *acc += *x as u32;
                    Some(*acc)
                }))
                .collect::<Vec<u32>>()
        };
        let (pl, pb) = (prefix(l), prefix(b));
        let (d, s) = (c.d, c.s as u32);
        for x in r..n - r {
            let side_l = (pl[x - d] - pl[x - r]).max(pl[x + r + 1] - pl[x + d + 1]);
            let need = (c.l_min * s).max((side_l * c.l_ratio) >> 8);
            let white = l[x] as u32 * s >= side_l + need;
            let yellow = b[x] >= c.b_yellow && {
                let side_b = (pb[x - d] - pb[x - r]).max(pb[x + r + 1] - pb[x + d + 1]);
                b[x] as u32 * s >= side_b + c.b_min * s
            };
            if white || yellow {
                out[x] = 255;
            }
        }
        out
    }

    #[test]
    fn the_vectorised_row_decides_as_the_pixel_loop() {
        let cfg = ThresholdConfig::default();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut pl, mut pb) = (Vec::new(), Vec::new());
        let mut marked = 0;
        for (d, s, n) in [
            (4, 10, 640),
            (1, 1, 3),
            (2, 3, 11),
            (6, 20, 1280),
            (3, 8, 40),
        ] {
            let c = LocalContrast {
                d,
                s,
                ..LocalContrast::new(&cfg)
            };
            for _ in 0..50 {
                // Road-like rows: a base level with noise, stripes of bright and yellow paint.
                let base = (next() % 200) as u8;
                let l: Vec<u8> = (0..n)
                    .map(|i| {
                        let stripe = (i / 7) % 9 == 0;
                        base.saturating_add((next() % 30) as u8)
                            .saturating_add(if stripe { 80 } else { 0 })
                    })
                    .collect();
                let b: Vec<u8> = (0..n).map(|_| 100 + (next() % 90) as u8).collect();
                let mut out = vec![7u8; n];
                c.row(&l, &b, &mut out, &mut pl, &mut pb);
                assert_eq!(out, row_by_pixel(&c, &l, &b), "d {d} s {s} n {n}");
                marked += out.iter().filter(|v| **v == 255).count();
            }
        }
        assert!(marked > 1000, "the rows have markings to find ({marked})");
    }
}
