//! Perspective warp to the bird's-eye view and back: a `Perspective` holds M and its inverse,
//! and a `BirdseyeRemap` composes undistortion and warp into one remap from the raw frame.

use crate::base::camera::Camera;
use crate::base::config::PerspectiveConfig;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use nalgebra::{Matrix3, Vector3};
use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;

/// A planar homography from the undistorted frame to the bird's-eye view, and its inverse.
#[derive(Debug, Clone, PartialEq)]
pub struct Perspective {
    m: Matrix3<f64>,
    minv: Matrix3<f64>,
    /// Size of the bird's-eye view, pixels.
    pub width: i32,
    pub height: i32,
}

fn mat3_from_cv(m: &Mat) -> Result<Matrix3<f64>> {
    let mut out = Matrix3::zeros();
    for r in 0..3 {
        for c in 0..3 {
            out[(r, c)] = *m.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    Ok(out)
}

fn mat3_to_cv(m: &Matrix3<f64>) -> Result<Mat> {
    let rows: [[f64; 3]; 3] = [
        [m[(0, 0)], m[(0, 1)], m[(0, 2)]],
        [m[(1, 0)], m[(1, 1)], m[(1, 2)]],
        [m[(2, 0)], m[(2, 1)], m[(2, 2)]],
    ];
    Ok(Mat::from_slice_2d(&rows)?)
}

/// Twice the signed area of a quad given in (tl, tr, bl, br) order.
fn quad_area(q: &[[f64; 2]; 4]) -> f64 {
    // polygon order tl, tr, br, bl
    let poly = [q[0], q[1], q[3], q[2]];
    let mut a = 0.0;
    for i in 0..4 {
        let p = poly[i];
        let n = poly[(i + 1) % 4];
        a += p[0] * n[1] - n[0] * p[1];
    }
    a
}

impl Perspective {
    /// Build from a source quad and destination quad (tl, tr, bl, br); the bird's-eye view has
    /// size `width` x `height`. Refuses degenerate quads.
    pub fn new(src: &[[f64; 2]; 4], dst: &[[f64; 2]; 4], width: i32, height: i32) -> Result<Self> {
        for (name, q) in [("src", src), ("dst", dst)] {
            if quad_area(q).abs() < 1.0 {
                return Err(Error::SingularPerspective(format!(
                    "{name} quad {q:?} has no area"
                )));
            }
        }
        let to_vec = |q: &[[f64; 2]; 4]| -> core::Vector<core::Point2f> {
            q.iter()
                .map(|p| core::Point2f::new(p[0] as f32, p[1] as f32))
                .collect()
        };
        let m = imgproc::get_perspective_transform_def(&to_vec(src), &to_vec(dst))?;
        let m = mat3_from_cv(&m)?;
        let minv = m
            .try_inverse()
            .ok_or_else(|| Error::SingularPerspective(format!("src {src:?} -> dst {dst:?}")))?;
        if !m.iter().all(|v| v.is_finite()) || m.determinant().abs() < 1e-12 {
            return Err(Error::SingularPerspective(format!(
                "src {src:?} -> dst {dst:?}"
            )));
        }
        Ok(Self {
            m,
            minv,
            width,
            height,
        })
    }

    /// From the config section; the bird's-eye view has the section's `view` size, or the
    /// given (frame) size when it names none.
    pub fn from_config(cfg: &PerspectiveConfig, width: i32, height: i32) -> Result<Self> {
        let [w, h] = cfg.view.unwrap_or([width, height]);
        Self::new(&cfg.src, &cfg.dst, w, h)
    }

    /// The forward matrix (undistorted frame -> bird's-eye).
    pub fn matrix(&self) -> &Matrix3<f64> {
        &self.m
    }
    /// The inverse matrix (bird's-eye -> undistorted frame).
    pub fn inverse(&self) -> &Matrix3<f64> {
        &self.minv
    }

    fn apply(m: &Matrix3<f64>, x: f64, y: f64) -> (f64, f64) {
        let v = m * Vector3::new(x, y, 1.0);
        (v[0] / v[2], v[1] / v[2])
    }

    /// Map a point of the undistorted frame into the bird's-eye view.
    pub fn to_birdseye(&self, x: f64, y: f64) -> (f64, f64) {
        Self::apply(&self.m, x, y)
    }
    /// Map a bird's-eye point back into the undistorted frame.
    pub fn from_birdseye(&self, x: f64, y: f64) -> (f64, f64) {
        Self::apply(&self.minv, x, y)
    }

    /// Warp a whole undistorted frame to the bird's-eye view (bilinear).
    pub fn warp(&self, frame: &BgrFrame) -> Result<BgrFrame> {
        let mut out = Mat::default();
        imgproc::warp_perspective(
            frame.mat(),
            &mut out,
            &mat3_to_cv(&self.m)?,
            core::Size::new(self.width, self.height),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        BgrFrame::new(out)
    }

    /// Warp a bird's-eye image back to a frame of the given size (bilinear).
    pub fn unwarp(&self, img: &Mat, width: i32, height: i32) -> Result<Mat> {
        let mut out = Mat::default();
        imgproc::warp_perspective(
            img,
            &mut out,
            &mat3_to_cv(&self.minv)?,
            core::Size::new(width, height),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        Ok(out)
    }
}

/// OpenCV's bilinear weights for each of the 32 x 32 sub-pixel positions of a CV_16UC1 remap
/// map (index `(fy << 5) | fx`), in units of 1/1024: `[(32-fy)(32-fx), (32-fy)fx, fy(32-fx),
/// fy fx]`. OpenCV's fixed-point weights are these times 32, and its rounding
/// `(sum + 2^14) >> 15` is then exactly `(sum' + 2^9) >> 10` on these.
fn bilinear_weights() -> &'static [[i16; 4]; 1024] {
    static TAB: std::sync::OnceLock<[[i16; 4]; 1024]> = std::sync::OnceLock::new();
    TAB.get_or_init(|| {
        let mut t = [[0i16; 4]; 1024];
        for fy in 0..32i16 {
            for fx in 0..32i16 {
                t[(fy * 32 + fx) as usize] = [
                    (32 - fy) * (32 - fx),
                    (32 - fy) * fx,
                    fy * (32 - fx),
                    fy * fx,
                ];
            }
        }
        t
    })
}

#[inline(always)]
fn round_weighted(v: i32) -> u8 {
    ((v + (1 << 9)) >> 10).clamp(0, 255) as u8
}

/// A raw BGR frame as the source of a remap.
struct Source<'a> {
    img: &'a [u8],
    width: i32,
    height: i32,
}

impl Source<'_> {
    /// The bilinear pixels at the map entries `m1` (integer point) and `m2` (sub-pixel index).
    #[inline(always)]
    fn run_with(
        &self,
        m1: &[core::Vec2s],
        m2: &[u16],
        out: &mut [[u8; 3]],
        inside: impl Fn(&[u8], usize, &[i16; 4]) -> [u8; 3],
    ) {
        let tab = bilinear_weights();
        let (sw, sh) = (self.width, self.height);
        let step = sw as usize * 3;
        for ((xy, fr), o) in m1.iter().zip(m2.iter()).zip(out.iter_mut()) {
            let (x, y) = (xy[0] as i32, xy[1] as i32);
            let w = &tab[(*fr & 1023) as usize];
            *o = if x >= 0 && y >= 0 && x < sw - 1 && y < sh - 1 {
                inside(&self.img[y as usize * step + x as usize * 3..], step, w)
            } else if x >= sw || x + 1 < 0 || y >= sh || y + 1 < 0 {
                [0; 3]
            } else {
                self.border(x, y, w)
            };
        }
    }

    /// Ask the cache for the source pixels the taps of map entries `m1` will read: the bounding
    /// box of their first, middle and last points plus one row and column (at most 8 rows).
    #[inline]
    fn prefetch(&self, m1: &[core::Vec2s]) {
        #[cfg(target_arch = "x86_64")]
        {
            let (Some(a), Some(b)) = (m1.first(), m1.last()) else {
                return;
            };
            if self.width < 1 || self.height < 1 {
                return;
            }
            let c = m1[m1.len() / 2];
            // Bounding box of the three points, one more row and column, inside the frame.
            let span = |i: usize, last: i32| {
                let v = [a[i], b[i], c[i]].map(|v| v as i32);
                let (lo, hi) = (v[0].min(v[1]).min(v[2]), v[0].max(v[1]).max(v[2]) + 1);
                (lo.clamp(0, last) as usize, hi.clamp(0, last) as usize)
            };
            let ((x0, x1), (y0, y1)) = (span(0, self.width - 1), span(1, self.height - 1));
            let step = self.width as usize * 3;
            for y in y0..=y1.min(y0 + 7) {
                let (lo, hi) = (y * step + x0 * 3, y * step + x1 * 3 + 2);
                for i in (lo..=hi).step_by(64).chain(std::iter::once(hi)) {
                    if let Some(p) = self.img.get(i) {
                        // SAFETY: a prefetch only hints the cache; `p` is inside `img`.
                        unsafe {
                            std::arch::x86_64::_mm_prefetch(
                                p as *const u8 as *const i8,
                                std::arch::x86_64::_MM_HINT_T0,
                            )
                        };
                    }
                }
            }
        }
    }

    fn run(&self, m1: &[core::Vec2s], m2: &[u16], out: &mut [[u8; 3]]) {
        self.run_with(m1, m2, out, bilinear_inside)
    }

    /// `run` with SSE4.1 for the taps inside the image.
    ///
    /// # Safety
    /// SSE4.1 must be available.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse4.1")]
    unsafe fn run_sse41(&self, m1: &[core::Vec2s], m2: &[u16], out: &mut [[u8; 3]]) {
        self.run_with(m1, m2, out, |s, step, w| {
            if s.len() >= step + 8 {
                // SAFETY: SSE4.1 is available (this function's contract) and 8 bytes are
                // readable at the start of `s` and `step` bytes on (checked).
                unsafe { bilinear_sse41(s.as_ptr(), step, w) }
            } else {
                bilinear_inside(s, step, w)
            }
        })
    }

    /// Bilinear BGR at a source point with some taps outside the image, which count as black.
    #[cold]
    fn border(&self, x: i32, y: i32, w: &[i16; 4]) -> [u8; 3] {
        let (sw, sh) = (self.width, self.height);
        let step = sw as usize * 3;
        let tap = |xx: i32, yy: i32, c: usize| -> i32 {
            if xx >= 0 && yy >= 0 && xx < sw && yy < sh {
                self.img[yy as usize * step + xx as usize * 3 + c] as i32
            } else {
                0
            }
        };
        let w = w.map(|v| v as i32);
        let mut out = [0u8; 3];
        for (c, o) in out.iter_mut().enumerate() {
            *o = round_weighted(
                tap(x, y, c) * w[0]
                    + tap(x + 1, y, c) * w[1]
                    + tap(x, y + 1, c) * w[2]
                    + tap(x + 1, y + 1, c) * w[3],
            );
        }
        out
    }
}

/// Bilinear BGR at a source point whose four taps are inside the image: `s` starts at the
/// top-left tap.
#[inline(always)]
fn bilinear_inside(s: &[u8], step: usize, w: &[i16; 4]) -> [u8; 3] {
    let (r0, r1) = (&s[..6], &s[step..step + 6]);
    let w = w.map(|v| v as i32);
    let mut out = [0u8; 3];
    for (c, o) in out.iter_mut().enumerate() {
        *o = round_weighted(
            r0[c] as i32 * w[0]
                + r0[c + 3] as i32 * w[1]
                + r1[c] as i32 * w[2]
                + r1[c + 3] as i32 * w[3],
        );
    }
    out
}

/// `bilinear_inside` with SSE4.1: each row's two taps are interleaved per channel and
/// multiplied-added with their two weights in one `pmaddwd`.
///
/// # Safety
/// SSE4.1 must be available, and 8 bytes must be readable at `p` and at `p + step`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.1")]
#[inline]
unsafe fn bilinear_sse41(p: *const u8, step: usize, w: &[i16; 4]) -> [u8; 3] {
    use std::arch::x86_64::*;
    // b0 b1 g0 g1 r0 r1 of the 8 bytes b0 g0 r0 b1 g1 r1 . . ; the rest zero.
    let order = _mm_setr_epi8(0, 3, 1, 4, 2, 5, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    let row = |q: *const u8| {
        _mm_cvtepu8_epi16(_mm_shuffle_epi8(
            _mm_loadl_epi64(q as *const __m128i),
            order,
        ))
    };
    let pair = |a: i16, b: i16| _mm_set1_epi32(((b as u16 as i32) << 16) | a as u16 as i32);
    let s = _mm_add_epi32(
        _mm_madd_epi16(row(p), pair(w[0], w[1])),
        _mm_madd_epi16(row(p.add(step)), pair(w[2], w[3])),
    );
    let s = _mm_srai_epi32(_mm_add_epi32(s, _mm_set1_epi32(1 << 9)), 10);
    let v = _mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(s, s), s)) as u32;
    [v as u8, (v >> 8) as u8, (v >> 16) as u8]
}

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
        let mut map =
            Mat::new_rows_cols_with_default(h, w, core::CV_32FC2, core::Scalar::all(-1.0))?;
        {
            let data: &mut [core::Vec2f] = map.data_typed_mut()?;
            let minv = persp.inverse();
            for v in 0..h {
                for u in 0..w {
                    // Scaled pixel u samples nominal coordinate u / scale, so that a curve fitted
                    // in the scaled view maps back exactly with `Poly2::from_scaled`.
                    let un = u as f64 / scale.x;
                    let vn = v as f64 / scale.y;
                    let (x, y) = Perspective::apply(minv, un, vn);
                    let (sx, sy) = match camera {
                        Some(cam) => cam.distort_pixel(x, y),
                        None => (x, y),
                    };
                    let (sx, sy) =
                        if sx.is_finite() && sy.is_finite() && sx.abs() < 1e6 && sy.abs() < 1e6 {
                            (sx as f32, sy as f32)
                        } else {
                            (-1.0e5, -1.0e5)
                        };
                    data[(v * w + u) as usize] = core::Vec2f::from([sx, sy]);
                }
            }
        }
        let mut m1 = Mat::default();
        let mut m2 = Mat::default();
        imgproc::convert_maps(
            &map,
            &Mat::default(),
            &mut m1,
            &mut m2,
            core::CV_16SC2,
            false,
        )?;
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
    /// its `[b, g, r]` pixels, exactly the pixels `apply` (OpenCV's `remap`) gives at the same
    /// places: OpenCV's fixed-point bilinear rule on the same map entries (weights in 1/1024,
    /// rounded, a constant black border). The caller consumes each run while it is in the L1
    /// cache; the band view itself is never written.
    pub fn visit_band_runs(
        &self,
        raw: &BgrFrame,
        bands: &ColumnBands,
        mut f: impl FnMut(usize, &[[u8; 3]]),
    ) -> Result<()> {
        if bands.width != self.width || bands.height != self.height {
            return Err(Error::Invalid(format!(
                "column bands for a {}x{} view used on a {}x{} bird's-eye remap",
                bands.width, bands.height, self.width, self.height
            )));
        }
        let map1: &[core::Vec2s] = self.map1.data_typed()?;
        let map2: &[u16] = self.map2.data_typed()?;
        let src = Source {
            img: raw.bytes()?,
            width: raw.width(),
            height: raw.height(),
        };
        #[cfg(target_arch = "x86_64")]
        let simd = std::arch::is_x86_feature_detected!("sse4.1");
        let mut run = vec![[0u8; 3]; bands.cols];
        let mut spans = bands.spans().peekable();
        while let Some(sp) = spans.next() {
            // The next run's source pixels are fetched while this run is computed: a run's
            // taps lie on one to three source rows that the hardware prefetcher has not seen.
            if let Some(next) = spans.peek() {
                src.prefetch(&map1[next.view..next.view + next.len]);
            }
            let out = &mut run[..sp.len];
            let (m1, m2) = (
                &map1[sp.view..sp.view + sp.len],
                &map2[sp.view..sp.view + sp.len],
            );
            #[cfg(target_arch = "x86_64")]
            if simd {
                // SAFETY: SSE4.1 is present (checked above).
                unsafe { src.run_sse41(m1, m2, out) };
            } else {
                src.run(m1, m2, out);
            }
            #[cfg(not(target_arch = "x86_64"))]
            src.run(m1, m2, out);
            f(sp.packed, out);
        }
        Ok(())
    }

    /// Produce the bird's-eye view of a raw frame (bilinear).
    pub fn apply(&self, raw: &BgrFrame) -> Result<BgrFrame> {
        raw.remapped(&self.map1, &self.map2)
    }
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
    use crate::base::config::PerspectiveConfig;

    #[test]
    fn default_quad_maps_src_corners_to_dst_corners() {
        let c = PerspectiveConfig::default();
        let p = Perspective::from_config(&c, 1280, 720).unwrap();
        for i in 0..4 {
            let (x, y) = p.to_birdseye(c.src[i][0], c.src[i][1]);
            assert!(
                (x - c.dst[i][0]).abs() < 1e-3 && (y - c.dst[i][1]).abs() < 1e-3,
                "{i}: {x},{y}"
            );
        }
    }

    #[test]
    fn warp_then_unwarp_is_identity_within_a_pixel() {
        let c = PerspectiveConfig::default();
        let p = Perspective::from_config(&c, 1280, 720).unwrap();
        for &(x, y) in &[
            (300.0, 700.0),
            (640.0, 500.0),
            (1000.0, 650.0),
            (600.0, 470.0),
        ] {
            let (bx, by) = p.to_birdseye(x, y);
            let (rx, ry) = p.from_birdseye(bx, by);
            assert!((rx - x).abs() < 1.0 && (ry - y).abs() < 1.0);
        }
    }

    #[test]
    fn degenerate_quad_is_refused() {
        let src = [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]];
        let dst = PerspectiveConfig::default().dst;
        assert!(matches!(
            Perspective::new(&src, &dst, 1280, 720),
            Err(Error::SingularPerspective(_))
        ));
    }

    #[test]
    fn spans_and_gaps_cover_the_packed_image_exactly_once() {
        // Curves inside, across the left and right edges, entirely outside, and not finite.
        let curves = [
            crate::base::poly::Poly2::new(0.0, 0.0, 300.0),
            crate::base::poly::Poly2::new(0.0, 2.0, -100.0),
            crate::base::poly::Poly2::new(0.0, -1.5, 1000.0),
            crate::base::poly::Poly2::new(0.0, 0.0, 5000.0),
            crate::base::poly::Poly2::new(f64::NAN, 0.0, 0.0),
        ];
        for step in [1, 3] {
            let plan = std::sync::Arc::new(RowPlan::every(360, step));
            let bands = ColumnBands::around(&curves, 40, 640, 360, &plan);
            let mut seen = vec![0u8; bands.rows() * bands.packed_width()];
            let (mut in_spans, mut in_gaps) = (0, 0);
            for sp in bands.spans() {
                seen[sp.packed..sp.packed + sp.len]
                    .iter_mut()
                    .for_each(|v| *v += 1);
                in_spans += sp.len;
            }
            for g in bands.gaps() {
                in_gaps += g.len();
                seen[g].iter_mut().for_each(|v| *v += 1);
            }
            assert!(seen.iter().all(|v| *v == 1), "row step {step}");
            assert!(in_spans > 0 && in_gaps > 0, "{in_spans} {in_gaps}");
        }
    }

    #[test]
    fn band_pixels_equal_opencv_remap_everywhere() {
        // Every column of the view (the band spans it all), on a noise frame, through the
        // Udacity lens: inside, at the frame's edges (taps partly outside) and outside it.
        let cam = Camera::load(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("calibration/udacity.yml"),
        )
        .unwrap();
        let p = Perspective::from_config(&PerspectiveConfig::default(), 1280, 720).unwrap();
        let remap = BirdseyeRemap::new(
            &p,
            Some(&cam),
            crate::base::config::Scale { x: 1.0, y: 0.5 },
        )
        .unwrap();
        let mut raw =
            Mat::new_rows_cols_with_default(720, 1280, core::CV_8UC3, core::Scalar::all(0.0))
                .unwrap();
        let mut state = 12345u64;
        for v in raw.data_bytes_mut().unwrap() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *v = (state >> 56) as u8;
        }
        let raw = BgrFrame::new(raw).unwrap();
        let whole = remap.apply(&raw).unwrap();
        let centre = crate::base::poly::Poly2::new(0.0, 0.0, 640.0);
        let plan = std::sync::Arc::new(RowPlan::every(remap.height, 1));
        let bands = ColumnBands::around(&[centre], 641, remap.width, remap.height, &plan);
        let mut packed = vec![0u8; bands.rows() * bands.packed_width() * 3];
        remap
            .visit_band_runs(&raw, &bands, |a, run| {
                for (i, px) in run.iter().enumerate() {
                    packed[(a + i) * 3..(a + i) * 3 + 3].copy_from_slice(px);
                }
            })
            .unwrap();
        let (wd, pd) = (whole.bytes().unwrap(), &packed);
        let (w, pw) = (remap.width as usize, bands.packed_width());
        let (mut n, mut black) = (0, 0);
        for r in 0..bands.rows() {
            let (rg, x) = bands.run(r, 0).unwrap();
            assert_eq!(rg.len(), w);
            for i in 0..rg.len() {
                let a = (r * w + x + i) * 3;
                let b = (r * pw + rg.start + i) * 3;
                assert_eq!(&wd[a..a + 3], &pd[b..b + 3], "row {r} column {}", x + i);
                n += 1;
                black += (wd[a..a + 3] == [0, 0, 0]) as usize;
            }
        }
        assert_eq!(n, 1280 * 360);
        assert!(
            black > 1000,
            "the view reaches outside the frame ({black} black pixels)"
        );
    }

    #[test]
    fn scalar_and_sse41_bilinear_agree_on_every_sub_pixel_position() {
        let (w, h) = (40usize, 30usize);
        let mut state = 99u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let img: Vec<u8> = (0..w * h * 3).map(|_| next() as u8).collect();
        let src = Source {
            img: &img,
            width: w as i32,
            height: h as i32,
        };
        // Every sub-pixel index, at points inside, on the last row and column, and outside.
        let m1: Vec<core::Vec2s> = (0..1024)
            .map(|_| {
                let x = (next() % (w as u32 + 4)) as i16 - 2;
                let y = (next() % (h as u32 + 4)) as i16 - 2;
                core::Vec2s::from([x, y])
            })
            .collect();
        let m2: Vec<u16> = (0..1024).collect();
        let mut a = vec![[0u8; 3]; 1024];
        src.run(&m1, &m2, &mut a);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("sse4.1") {
            let mut b = vec![[1u8; 3]; 1024];
            // SAFETY: SSE4.1 was detected.
            unsafe { src.run_sse41(&m1, &m2, &mut b) };
            assert_eq!(a, b);
        } else {
            println!("no SSE4.1 on this machine: only the scalar path was run");
        }
        assert!(a.contains(&[0, 0, 0]) && a.iter().any(|p| *p != [0, 0, 0]));
    }
}
