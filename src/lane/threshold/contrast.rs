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
        for (src, p) in [(l, &mut *pl), (b, &mut *pb)] {
            p.clear();
            p.reserve(n + 1);
            let mut acc = 0u32;
            p.push(0);
            for v in src {
                acc += *v as u32;
                p.push(acc);
            }
        }
        let (d, s) = (self.d, self.s as u32);
        let (l_min_s, b_min_s) = (self.l_min * s, self.b_min * s);
        for x in r..n - r {
            // Sums over the two samples of s pixels each.
            let side_l = (pl[x - d] - pl[x - r]).max(pl[x + r + 1] - pl[x + d + 1]);
            let v = l[x] as u32 * s;
            let need = l_min_s.max((side_l * self.l_ratio) >> 8);
            let white = v >= side_l + need;
            let bx = b[x];
            let yellow = bx >= self.b_yellow && {
                let side_b = (pb[x - d] - pb[x - r]).max(pb[x + r + 1] - pb[x + d + 1]);
                bx as u32 * s >= side_b + b_min_s
            };
            if white || yellow {
                out[x] = 255;
            }
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
