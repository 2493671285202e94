//! `BirdseyeRemap`: undistortion and warp in one remap from the raw frame, computed once; its
//! row plans and the column bands the analysis reads.

use super::kernel::{PlaneSource, Source};
use super::perspective::Perspective;
use crate::base::camera::Camera;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::base::planes::RawFrame;
use opencv::core::{self, Mat};
use opencv::prelude::*;

/// One remap from the raw (distorted) frame straight to the bird's-eye view: for every
/// bird's-eye pixel, its source in the raw frame is `distort(M^-1 * p)`. Computed once.
pub struct BirdseyeRemap {
    map1: Mat,
    map2: Mat,
    pub width: i32,
    pub height: i32,
}

impl BirdseyeRemap {
    /// Compose `camera`'s distortion (none when `None`) with the perspective's inverse; the
    /// output is the bird's-eye view scaled by `scale` (1 = the perspective's own size).
    pub fn new(
        persp: &Perspective,
        camera: Option<&Camera>,
        scale: crate::base::config::Scale,
    ) -> Result<Self> {
        let w = ((persp.width as f64 * scale.x).round() as i32).max(1);
        let h = ((persp.height as f64 * scale.y).round() as i32).max(1);
        // The fixed-point maps `remap` reads, written directly: per pixel the source position
        // in 1/32 px (`INTER_BITS` = 5), split into its integer part (`map1`, CV_16SC2) and the
        // index of its fraction (`map2`, CV_16UC1), as `convertMaps(CV_32FC2 -> CV_16SC2)`
        // rounds and splits it (a float map and that conversion cost 2 ms a 720p view).
        // SAFETY: 16-bit buffers, every element written below before anything reads them.
        let mut m1 = unsafe { Mat::new_rows_cols(h, w, core::CV_16SC2) }?;
        let mut m2 = unsafe { Mat::new_rows_cols(h, w, core::CV_16UC1) }?;
        {
            let ints: &mut [core::Vec2s] = m1.data_typed_mut()?;
            let fracs: &mut [u16] = m2.data_typed_mut()?;
            // Scaled pixel u samples nominal coordinate u / scale, so that a curve fitted in the
            // scaled view maps back exactly with `Poly2::from_scaled`.
            let cols: Vec<f64> = (0..w).map(|u| u as f64 / scale.x).collect();
            let minv = persp.inverse();
            // `Perspective::apply` per pixel is `minv * (un, vn, 1)`: each component
            // `(m0 * un + m1 * vn) + m2`. The products with a column's `un` are formed once per
            // column and those with a row's `vn` once per row, then added in that same order:
            // the same values to the bit (`a_map_s_sums_hoisted_out_of_the_pixel_loop...`).
            let col_terms: Vec<[f64; 3]> = cols
                .iter()
                .map(|&un| [minv[(0, 0)] * un, minv[(1, 0)] * un, minv[(2, 0)] * un])
                .collect();
            let lens = camera.map(Camera::distortion);
            // Per row: the source positions first (arithmetic only, which the compiler runs on
            // several pixels at once), then their fixed-point entries.
            let fill = |v0: usize, ints: &mut [core::Vec2s], fracs: &mut [u16]| {
                let mut src = vec![(0.0f64, 0.0f64); w as usize];
                for (k, (ints, fracs)) in ints
                    .chunks_mut(w as usize)
                    .zip(fracs.chunks_mut(w as usize))
                    .enumerate()
                {
                    let vn = (v0 + k) as f64 / scale.y;
                    let row = [minv[(0, 1)] * vn, minv[(1, 1)] * vn, minv[(2, 1)] * vn];
                    let last = [minv[(0, 2)], minv[(1, 2)], minv[(2, 2)]];
                    let at = |c: &[f64; 3]| {
                        let v = [
                            (c[0] + row[0]) + last[0],
                            (c[1] + row[1]) + last[1],
                            (c[2] + row[2]) + last[2],
                        ];
                        (v[0] / v[2], v[1] / v[2])
                    };
                    match &lens {
                        Some(d) => {
                            for (s, c) in src.iter_mut().zip(&col_terms) {
                                let (x, y) = at(c);
                                *s = d.pixel(x, y);
                            }
                        }
                        None => {
                            for (s, c) in src.iter_mut().zip(&col_terms) {
                                *s = at(c);
                            }
                        }
                    }
                    for ((int, frac), &(sx, sy)) in ints.iter_mut().zip(fracs.iter_mut()).zip(&src)
                    {
                        (*int, *frac) = map_entry(sx, sy);
                    }
                }
            };
            // Rows split between plain threads (4.9 ms on one core for a 1280x360 view on the
            // machine of 2026-12-04; 14 ms with the Udacity lens on that of 2026-12-07 before the
            // two passes above, 8 ms after): not
            // rayon, whose workers build pipelines under locks in the tuner (a `join` here
            // could steal a job that waits for a lock its own thread holds).
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
            let rows_each = (h as usize).div_ceil(threads) * w as usize;
            std::thread::scope(|sc| {
                for (t, (ints, fracs)) in ints
                    .chunks_mut(rows_each)
                    .zip(fracs.chunks_mut(rows_each))
                    .enumerate()
                {
                    let fill = &fill;
                    let v0 = t * rows_each / w as usize;
                    sc.spawn(move || fill(v0, ints, fracs));
                }
            });
        }
        Ok(Self {
            map1: m1,
            map2: m2,
            width: w,
            height: h,
        })
    }

    /// The raw frame's row each bird's-eye row samples at the view's centre column (from the
    /// remap's entries: the integer part and the 1/32 fraction). A row outside the frame is
    /// not finite.
    pub fn source_rows(&self) -> Result<Vec<f64>> {
        let map1: &[core::Vec2s] = self.map1.data_typed()?;
        let map2: &[u16] = self.map2.data_typed()?;
        let (w, h) = (self.width as usize, self.height as usize);
        Ok((0..h)
            .map(|y| {
                let i = y * w + w / 2;
                let y0 = map1[i][1] as f64;
                if y0 <= -1.0e4 {
                    f64::NAN
                } else {
                    y0 + (map2[i] >> 5) as f64 / 32.0
                }
            })
            .collect())
    }

    /// The bird's-eye view of a raw frame on `bands` only (which index into this view), run by
    /// run, without storing it: for each run, `f(packed_index_of_its_first_pixel, pixels)` gets
    /// its `[b, g, r]` pixels. From a BGR frame: exactly the pixels `apply` (OpenCV's `remap`)
    /// gives at the same places: OpenCV's fixed-point bilinear rule on the same map entries
    /// (weights in 1/1024, rounded, a constant black border). From the decoder's planes: the
    /// same rule on Y, U and V, converted once per pixel (`PlaneSource`: the BGR path's pixel
    /// within one grey level away from the conversion's clamps), so the frame is never
    /// converted whole. The caller consumes each run while it is in the L1 cache; the band
    /// view itself is never written.
    pub fn visit_band_runs(
        &self,
        raw: RawFrame,
        bands: &ColumnBands,
        f: impl FnMut(usize, &[[u8; 3]]),
    ) -> Result<()> {
        if bands.width != self.width || bands.height != self.height {
            return Err(Error::Invalid(format!(
                "column bands for a {}x{} view used on a {}x{} bird's-eye remap",
                bands.width, bands.height, self.width, self.height
            )));
        }
        match raw {
            RawFrame::Bgr(bgr) => {
                let src = Source {
                    img: bgr.bytes()?,
                    width: bgr.width(),
                    height: bgr.height(),
                };
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("sse4.1") {
                    // SAFETY: SSE4.1 is present (checked here).
                    let run =
                        |m1: &[_], m2: &[_], out: &mut [_]| unsafe { src.run_sse41(m1, m2, out) };
                    return self.visit_runs(bands, |m1| src.prefetch(m1), run, f);
                }
                self.visit_runs(
                    bands,
                    |m1| src.prefetch(m1),
                    |m1, m2, out| src.run(m1, m2, out),
                    f,
                )
            }
            RawFrame::Yuv(planes) => {
                let src = PlaneSource(planes);
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: AVX2 is present (checked here).
                    let run =
                        |m1: &[_], m2: &[_], out: &mut [_]| unsafe { src.run_avx2(m1, m2, out) };
                    return self.visit_runs(bands, |m1| src.prefetch(m1), run, f);
                }
                self.visit_runs(
                    bands,
                    |m1| src.prefetch(m1),
                    |m1, m2, out| src.run(m1, m2, out),
                    f,
                )
            }
        }
    }

    /// The run loop of `visit_band_runs` on one source: `prefetch` the next run's taps,
    /// `sample` this run's pixels, hand them to `f`.
    fn visit_runs(
        &self,
        bands: &ColumnBands,
        prefetch: impl Fn(&[core::Vec2s]),
        sample: impl Fn(&[core::Vec2s], &[u16], &mut [[u8; 3]]),
        mut f: impl FnMut(usize, &[[u8; 3]]),
    ) -> Result<()> {
        let map1: &[core::Vec2s] = self.map1.data_typed()?;
        let map2: &[u16] = self.map2.data_typed()?;
        let mut run = vec![[0u8; 3]; bands.cols];
        let mut spans = bands.spans().peekable();
        while let Some(sp) = spans.next() {
            // The next run's source pixels are fetched while this run is computed.
            if let Some(next) = spans.peek() {
                prefetch(&map1[next.view..next.view + next.len]);
            }
            let out = &mut run[..sp.len];
            sample(
                &map1[sp.view..sp.view + sp.len],
                &map2[sp.view..sp.view + sp.len],
                out,
            );
            f(sp.packed, out);
        }
        Ok(())
    }

    /// Produce the bird's-eye view of a raw frame (bilinear).
    pub fn apply(&self, raw: &BgrFrame) -> Result<BgrFrame> {
        raw.remapped(&self.map1, &self.map2)
    }
}

/// A source position as `remap`'s fixed-point maps hold it, exactly as OpenCV's `convertMaps`
/// computes it: x and y times 32 rounded to the nearest integer (ties to even, as `cvRound`),
/// the integer pixel saturated to 16 bits, and the fraction's index `(y & 31) * 32 + (x & 31)`.
/// A map entry for source position `(sx, sy)`: its fixed point, or a point far outside the
/// frame (black) where the position is not finite or beyond a million pixels.
#[inline(always)]
fn map_entry(sx: f64, sy: f64) -> (core::Vec2s, u16) {
    let finite = sx.is_finite() && sy.is_finite() && sx.abs() < 1e6 && sy.abs() < 1e6;
    if finite {
        fixed_point(sx as f32, sy as f32)
    } else {
        fixed_point(-1.0e5, -1.0e5)
    }
}

pub(super) fn fixed_point(sx: f32, sy: f32) -> (core::Vec2s, u16) {
    const BITS: i32 = 5;
    const MASK: i32 = (1 << BITS) - 1;
    // Ties to even by adding and taking away 1.5 * 2^52 in f64 (exact for |v| < 2^51; the map
    // holds |v| < 2^26): `round_ties_even` is a libm call on x86-64 without SSE4.1, 3 ms a view.
    const EVEN: f64 = 6_755_399_441_055_744.0;
    let round = |v: f32| (((v * (1 << BITS) as f32) as f64 + EVEN) - EVEN) as i32;
    let (ix, iy) = (round(sx), round(sy));
    let int = |i: i32| (i >> BITS).clamp(i16::MIN as i32, i16::MAX as i32) as i16;
    (
        core::Vec2s::from([int(ix), int(iy)]),
        (((iy & MASK) << BITS) + (ix & MASK)) as u16,
    )
}

/// Which rows of a bird's-eye view band analysis computes, and which computed row stands for
/// each row of the view. Built once per pipeline (`Pipeline::new`).
#[derive(Debug, Clone, PartialEq)]
pub struct RowPlan {
    /// The computed view rows, ascending; the first row is always computed.
    pub computed: Vec<u32>,
    /// For every view row, the index into `computed` of the computed row standing for it (the
    /// nearest one).
    pub stand_in: Vec<u32>,
}

impl RowPlan {
    /// Every `step`-th row of a view `height` rows high.
    pub fn every(height: i32, step: usize) -> Self {
        let computed: Vec<u32> = (0..height.max(0) as u32).step_by(step.max(1)).collect();
        Self::with_rows(height, computed)
    }

    /// Every `step`-th row, further thinned where the view is stretched: a row is computed when
    /// its source row (`source_y[row]`, in the raw frame) lies at least `min_advance` source
    /// rows from the last computed one. The far rows of a bird's-eye view are interpolated
    /// from few source rows (a tenth of a source row per row at the top of the default view),
    /// so neighbouring rows there repeat what one computed row says. `min_advance` 0 keeps
    /// every `step`-th row.
    pub fn thinned(source_y: &[f64], step: usize, min_advance: f64) -> Self {
        let step = step.max(1);
        let mut computed = Vec::new();
        let mut last = f64::NAN;
        for (y, sy) in source_y.iter().enumerate().step_by(step) {
            let far_enough = min_advance <= 0.0
                || !(last.is_finite() && sy.is_finite())
                || (sy - last).abs() >= min_advance;
            if computed.is_empty() || far_enough {
                computed.push(y as u32);
                last = *sy;
            }
        }
        Self::with_rows(source_y.len() as i32, computed)
    }

    fn with_rows(height: i32, computed: Vec<u32>) -> Self {
        let mut stand_in = Vec::with_capacity(height.max(0) as usize);
        let mut i = 0usize;
        for y in 0..height.max(0) as u32 {
            while i + 1 < computed.len() && computed[i + 1].abs_diff(y) <= computed[i].abs_diff(y) {
                i += 1;
            }
            stand_in.push(i as u32);
        }
        Self { computed, stand_in }
    }
}

/// Runs of columns to compute on the rows a `RowPlan` computes: `bands` runs of `cols` columns
/// per computed row, run `k` of packed row `r` (view row `plan.computed[r]`) starting at the
/// column `x0` gives for that row and curve. Columns outside the view are part of a run's
/// layout but are empty (never computed, never reported). A row that is not computed takes
/// its stand-in's run placed at its own `x0` (`run_on_view_row`): shifted along the band's
/// curve.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnBands {
    /// Columns per run.
    pub cols: usize,
    /// Runs per row.
    pub bands: usize,
    /// The rows computed and their stand-ins.
    pub plan: std::sync::Arc<RowPlan>,
    /// First column of each run on every view row, row-major.
    pub x0: Vec<i32>,
    /// Size of the full bird's-eye view the runs index into.
    pub width: i32,
    pub height: i32,
}

impl ColumnBands {
    /// The runs covering every column strictly within `margin` px of each curve (the prior
    /// search's band) on the rows `plan` computes, of a `width` x `height` view (`plan`
    /// covers `height` rows). A row where a curve is not finite gets an empty run.
    pub fn around(
        curves: &[crate::base::poly::Poly2],
        margin: u32,
        width: i32,
        height: i32,
        plan: &std::sync::Arc<RowPlan>,
    ) -> Self {
        let m = margin as f64;
        let cols = 2 * margin as usize + 2;
        let mut x0 = Vec::with_capacity(curves.len() * height.max(0) as usize);
        for y in 0..height.max(0) {
            for c in curves {
                let lo = c.eval(y as f64) - m;
                let start = if lo.is_finite() && lo.abs() < 1e8 {
                    lo.floor() as i32
                } else {
                    i32::MIN / 2
                };
                x0.push(start);
            }
        }
        // A plan for another height than the view's would index past it: every row then.
        let plan = if plan.stand_in.len() == height.max(0) as usize {
            plan.clone()
        } else {
            std::sync::Arc::new(RowPlan::every(height, 1))
        };
        Self {
            cols,
            bands: curves.len(),
            plan,
            x0,
            width,
            height,
        }
    }

    /// Number of computed rows (rows of the packed band image).
    pub fn rows(&self) -> usize {
        self.plan.computed.len()
    }

    /// The view row of packed row `r`.
    #[inline]
    pub fn view_row(&self, r: usize) -> usize {
        self.plan.computed[r] as usize
    }

    /// Width of the packed band image (all runs of a row side by side).
    pub fn packed_width(&self) -> usize {
        self.cols * self.bands
    }

    /// The valid packed range of run `k` on packed row `r` and the view column of its first
    /// entry.
    #[inline]
    pub fn run(&self, r: usize, k: usize) -> Option<(std::ops::Range<usize>, usize)> {
        self.run_on_view_row(self.view_row(r), k)
            .map(|(_, range, x)| (range, x))
    }

    /// Run `k` as view row `y` sees it: the packed row standing for `y`, the packed range of
    /// that row's run to use and the view column of its first entry. The stand-in's entry at
    /// band offset `j` stands at column `x0(y) + j`; only offsets inside the view on both rows
    /// are used. On a computed row this is `run`.
    #[inline]
    pub fn run_on_view_row(
        &self,
        y: usize,
        k: usize,
    ) -> Option<(usize, std::ops::Range<usize>, usize)> {
        let r = *self.plan.stand_in.get(y)? as usize;
        let xc = self.x0[self.view_row(r) * self.bands + k] as i64;
        let xy = self.x0[y * self.bands + k] as i64;
        let w = self.width as i64;
        let lo = (-xc).max(-xy).max(0);
        let hi = (w - xc).min(w - xy).min(self.cols as i64);
        if lo >= hi {
            return None;
        }
        let j0 = k * self.cols + lo as usize;
        Some((r, j0..j0 + (hi - lo) as usize, (xy + lo) as usize))
    }

    /// Every non-empty run, in packed order, with its places in the packed band image and in
    /// the whole view (both row-major).
    pub fn spans(&self) -> impl Iterator<Item = Span> + '_ {
        let (pw, w) = (self.packed_width(), self.width as usize);
        (0..self.rows()).flat_map(move |r| {
            (0..self.bands).filter_map(move |k| {
                self.run(r, k).map(|(rg, x)| Span {
                    packed: r * pw + rg.start,
                    view: self.view_row(r) * w + x,
                    len: rg.len(),
                })
            })
        })
    }

    /// The packed indices (row-major) that no run covers: in each run's slot, the columns
    /// outside the view, and whole slots of empty runs. With `spans`, they cover the packed
    /// band image exactly once.
    pub fn gaps(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let pw = self.packed_width();
        (0..self.rows()).flat_map(move |r| {
            (0..self.bands).flat_map(move |k| {
                let slot = r * pw + k * self.cols;
                let (lo, hi) = match self.run(r, k) {
                    Some((rg, _)) => (r * pw + rg.start, r * pw + rg.end),
                    None => (slot, slot),
                };
                [slot..lo, hi..slot + self.cols]
                    .into_iter()
                    .filter(|g| !g.is_empty())
            })
        })
    }
}

/// One computed run of `ColumnBands`: `len` pixels starting at index `packed` of the packed
/// band image and at index `view` of the whole view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub packed: usize,
    pub view: usize,
    pub len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::Scale;

    /// The maps as they were first written: `Perspective::apply` per pixel.
    fn reference(persp: &Perspective, scale: Scale) -> (Vec<core::Vec2s>, Vec<u16>) {
        let w = ((persp.width as f64 * scale.x).round() as i32).max(1);
        let h = ((persp.height as f64 * scale.y).round() as i32).max(1);
        let (mut ints, mut fracs) = (Vec::new(), Vec::new());
        for v in 0..h {
            for u in 0..w {
                let (x, y) =
                    Perspective::apply(persp.inverse(), u as f64 / scale.x, v as f64 / scale.y);
                let (i, f) = map_entry(x, y);
                ints.push(i);
                fracs.push(f);
            }
        }
        (ints, fracs)
    }

    #[test]
    fn a_map_s_sums_hoisted_out_of_the_pixel_loop_give_the_same_entries() {
        let quads: [[[f64; 2]; 4]; 3] = [
            // The Udacity default, a found geometry's odd corners, a quad reaching outside the
            // frame (entries far outside: black).
            [
                [585.0, 455.0],
                [705.0, 455.0],
                [190.0, 720.0],
                [1130.0, 720.0],
            ],
            [
                [397.60071153383063, 279.60602353794627],
                [497.46330851839934, 279.60602353794627],
                [215.7948474669489, 456.0],
                [803.221888552647, 456.0],
            ],
            [
                [600.0, 300.0],
                [640.0, 300.0],
                [-900.0, 720.0],
                [2100.0, 720.0],
            ],
        ];
        let dst = [[450.0, 0.0], [830.0, 0.0], [450.0, 720.0], [830.0, 720.0]];
        for src in &quads {
            let persp = Perspective::new(src, &dst, 1280, 720).unwrap();
            for scale in [Scale { x: 1.0, y: 0.5 }, Scale { x: 0.75, y: 1.0 }] {
                let map = BirdseyeRemap::new(&persp, None, scale).unwrap();
                let (ints, fracs) = reference(&persp, scale);
                let got_ints: &[core::Vec2s] = map.map1.data_typed().unwrap();
                let got_fracs: &[u16] = map.map2.data_typed().unwrap();
                assert_eq!(got_ints.len(), ints.len());
                let differ = (0..ints.len())
                    .filter(|&i| got_ints[i] != ints[i] || got_fracs[i] != fracs[i])
                    .count();
                assert_eq!(differ, 0, "{src:?} at {scale:?}");
            }
        }
    }
}
