//! Colour thresholds on the bird's-eye view: HLS L for white lines, LAB B for yellow lines,
//! combined into one binary mask (0 or 255). By default each pixel is compared with the road
//! on both sides of it (local contrast); the reference's rule scales each channel by its
//! maximum over the view instead (`threshold.method`).

use crate::base::config::{ThresholdConfig, ThresholdMethod};
use crate::base::error::Result;
use crate::base::frame::{BgrFrame, BinaryMask, GrayImage};
use crate::lane::warp::{BirdseyeRemap, ColumnBands};
use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;
use rayon::prelude::*;

/// A threshold pass's mask as it was computed (`Thresholded::mask_as_computed`).
pub enum MaskRef<'a> {
    /// Over the whole view.
    View(&'a BinaryMask),
    /// Packed like the bands' L and B (see `ColumnBands`).
    Bands(&'a BinaryMask, &'a ColumnBands),
}

/// The channels and mask a threshold pass produces (channels after scaling, for display).
pub struct Thresholded {
    /// Union of the enabled thresholds, 0 or 255: over the whole view, or packed like `l` and
    /// `b` when `bands` is set (see `mask` and `mask_as_computed`).
    mask: BinaryMask,
    /// HLS L as computed (unscaled); packed as the band image when `bands` is set.
    pub l: GrayImage,
    /// LAB B as computed (unscaled); packed as the band image when `bands` is set.
    pub b: GrayImage,
    /// The bands `l` and `b` are packed from, when only bands were computed.
    pub bands: Option<ColumnBands>,
    /// Maximum of L over the image.
    pub l_max: u8,
    /// Maximum of B over the image.
    pub b_max: u8,
    /// Whether B was scaled (its maximum exceeded the gate).
    pub b_was_scaled: bool,
}

impl Thresholded {
    /// L scaled so its maximum is 255 (what the white threshold compares), over the whole
    /// view, for display.
    pub fn l_scaled(&self) -> Result<GrayImage> {
        let mut m = self.unpacked(self.l.mat())?;
        scale_to_max(m.data_bytes_mut()?, self.l_max);
        GrayImage::new(m)
    }
    /// B as the yellow threshold compares it (scaled only above the gate), over the whole
    /// view, for display.
    pub fn b_scaled(&self) -> Result<GrayImage> {
        let mut m = self.unpacked(self.b.mat())?;
        if self.b_was_scaled {
            scale_to_max(m.data_bytes_mut()?, self.b_max);
        }
        GrayImage::new(m)
    }
    /// The mask over the whole view (a copy, or the bands' mask unpacked, zero elsewhere).
    pub fn mask(&self) -> Result<BinaryMask> {
        BinaryMask::new(self.unpacked(self.mask.mat())?)
    }
    /// The mask as computed, without a copy: over the whole view, or packed with its bands.
    pub fn mask_as_computed(&self) -> MaskRef<'_> {
        match &self.bands {
            None => MaskRef::View(&self.mask),
            Some(b) => MaskRef::Bands(&self.mask, b),
        }
    }
    /// The mask over the whole view, consuming the result.
    pub fn into_mask(self) -> Result<BinaryMask> {
        match self.bands {
            None => Ok(self.mask),
            Some(_) => self.mask(),
        }
    }
    /// A channel over the whole view: a copy, or the band image unpacked (zero elsewhere).
    fn unpacked(&self, ch: &Mat) -> Result<Mat> {
        let Some(bands) = &self.bands else {
            return Ok(ch.try_clone()?);
        };
        let mut m = Mat::new_rows_cols_with_default(
            bands.height,
            bands.width,
            core::CV_8UC1,
            core::Scalar::all(0.0),
        )?;
        let src = ch.data_bytes()?;
        let d = m.data_bytes_mut()?;
        let (w, pw) = (bands.width as usize, bands.packed_width());
        // Every view row, from its own packed row or its stand-in's (`RowPlan`).
        for y in 0..bands.height.max(0) as usize {
            for k in 0..bands.bands {
                if let Some((r, rg, x)) = bands.run_on_view_row(y, k) {
                    let (v, p) = (y * w + x, r * pw + rg.start);
                    d[v..v + rg.len()].copy_from_slice(&src[p..p + rg.len()]);
                }
            }
        }
        Ok(m)
    }
}

/// HLS lightness of an 8-bit BGR pixel as OpenCV computes it: round((max + min) / 2).
#[inline]
fn lightness(b: u8, g: u8, r: u8) -> u8 {
    let mx = b.max(g).max(r) as u16;
    let mn = b.min(g).min(r) as u16;
    (mx + mn).div_ceil(2) as u8
}

/// HLS saturation of an 8-bit BGR pixel on 0..255, as OpenCV's 8-bit HLS.
#[inline]
fn saturation(b: u8, g: u8, r: u8) -> u8 {
    let mx = b.max(g).max(r) as f32 / 255.0;
    let mn = b.min(g).min(r) as f32 / 255.0;
    let l = (mx + mn) * 0.5;
    let d = mx - mn;
    let s = if d < f32::EPSILON {
        0.0
    } else if l < 0.5 {
        d / (mx + mn)
    } else {
        d / (2.0 - mx - mn)
    };
    (s * 255.0).round().clamp(0.0, 255.0) as u8
}

/// The 16 MiB B table, placed on 2 MiB boundaries inside an over-allocated buffer so the
/// kernel can back it with transparent huge pages: looked up at random-ish places per pixel,
/// it then costs 8 TLB entries instead of 4096.
struct BTable {
    buf: Vec<u8>,
    start: usize,
}

impl BTable {
    const LEN: usize = 1 << 24;
    const ALIGN: usize = 1 << 21;

    fn new() -> Self {
        // Zeroed and above the mmap threshold: fresh pages from the kernel, not yet touched, so
        // the advice applies to all of them (pages never touched cost no memory).
        let len = (Self::LEN + Self::ALIGN).max(crate::base::frame::MMAP_THRESHOLD + Self::ALIGN);
        let buf = vec![0u8; len];
        let addr = buf.as_ptr() as usize;
        let start = (Self::ALIGN - addr % Self::ALIGN) % Self::ALIGN;
        // SAFETY: the range [addr + start, addr + start + LEN) lies inside `buf`, which is
        // alive; madvise only changes how the kernel backs these pages, never their contents.
        // A refusal (no THP support) is harmless and ignored.
        unsafe {
            libc::madvise(
                buf.as_ptr().add(start) as *mut libc::c_void,
                Self::LEN,
                libc::MADV_HUGEPAGE,
            );
        }
        Self { buf, start }
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + Self::LEN]
    }
    fn as_slice(&self) -> &[u8] {
        &self.buf[self.start..self.start + Self::LEN]
    }
}

static B_LUT: std::sync::OnceLock<std::result::Result<BTable, String>> = std::sync::OnceLock::new();

/// Place of colour (b, g, r) in the B table: the table is tiled in 4x4x4 colour cubes of 64
/// bytes, one cache line each, so that the similar colours of a road (grey, where b, g and r
/// move together) share lines; a row-major table would touch a new line for nearly every
/// step of b or g.
#[inline(always)]
fn b_index(b: u8, g: u8, r: u8) -> usize {
    let (b, g, r) = (b as usize, g as usize, r as usize);
    ((b >> 2) << 18)
        | ((g >> 2) << 12)
        | ((r >> 2) << 6)
        | ((b & 3) << 4)
        | ((g & 3) << 2)
        | (r & 3)
}

/// OpenCV's fixed-point BGR -> Lab (8-bit, `RGB2Lab_b` in `color_lab.cpp`): its two small tables
/// and the coefficient rows for Y and Z (X does not enter B), so that B can be computed without
/// `cvtColor`. Table values follow OpenCV's construction (single-precision inputs, values
/// rounded half to even); the unit test `b_table_equals_cvtcolor_on_every_colour` checks the
/// result against `cvtColor` on all 2^24 colours.
struct LabFixed {
    /// sRGB gamma of each 8-bit value, in 1/8 units of 0..255 (`sRGBGammaTab_b`).
    gamma: [u16; 256],
    /// f(t) = cbrt(t) (or the linear toe) in 1/2^15, for t = i / (255 * 8) (`LabCbrtTab_b`).
    cbrt: Vec<u16>,
    /// Y and Z rows of sRGB -> XYZ (D65 white) in 1/2^12, in B, G, R order.
    y: [i32; 3],
    z: [i32; 3],
}

impl LabFixed {
    const LAB_SHIFT: u32 = 12;
    const LAB_SHIFT2: u32 = 15;

    fn new() -> Self {
        let round = |v: f64| v.round_ties_even();
        let mut gamma = [0u16; 256];
        for (i, g) in gamma.iter_mut().enumerate() {
            let x = (i as f32) / 255.0f32;
            let lin = if x <= 0.04045f32 {
                x / 12.92f32
            } else {
                (((x as f64 + 0.055) / 1.055).powf(2.4)) as f32
            };
            *g = round((2040.0f32 * lin) as f64) as u16;
        }
        let lthresh = 216.0f32 / 24389.0f32;
        let lscale = 841.0f32 / 108.0f32;
        let lbias = 16.0f32 / 116.0f32;
        let inv = 1.0f32 / 2040.0f32;
        let mut cbrt: Vec<u16> = (0..256 * 3 / 2 * 8)
            .map(|i| {
                let x = inv * i as f32;
                let f = if x < lthresh {
                    x.mul_add(lscale, lbias)
                } else {
                    (x as f64).cbrt() as f32
                };
                round((32768.0f32 * f) as f64) as u16
            })
            .collect();
        // The one entry where OpenCV's (softfloat) cube root lands one float below the correctly
        // rounded one: 2^15 * cbrt(324 / 2040) = 17745.4992 is within half a float step of the
        // tie 17745.5, which the f32 rounding above reaches (-> 17746, ties to even) and
        // OpenCV's value does not. Found by the exhaustive comparison with `cvtColor`
        // (`b_table_equals_cvtcolor_on_every_colour`), which pins it.
        cbrt[324] = 17745;
        // sRGB -> XYZ rows (R, G, B coefficients) and the D65 white point, as in OpenCV.
        const M: [[f64; 3]; 3] = [
            [0.412453, 0.357580, 0.180423],
            [0.212671, 0.715160, 0.072169],
            [0.019334, 0.119193, 0.950227],
        ];
        const WHITE: [f64; 3] = [0.950456, 1.0, 1.088754];
        let row = |i: usize| -> [i32; 3] {
            let c = |j: usize| round(4096.0 * M[i][j] / WHITE[i]) as i32;
            [c(2), c(1), c(0)]
        };
        Self {
            gamma,
            cbrt,
            y: row(1),
            z: row(2),
        }
    }

    /// LAB B of one BGR colour, exactly as `cvtColor(BGR2Lab)` gives it.
    #[inline(always)]
    fn b(&self, b: u8, g: u8, r: u8) -> u8 {
        let (cb, cg, cr) = (
            self.gamma[b as usize] as i32,
            self.gamma[g as usize] as i32,
            self.gamma[r as usize] as i32,
        );
        let half = 1 << (Self::LAB_SHIFT - 1);
        let yi = (cb * self.y[0] + cg * self.y[1] + cr * self.y[2] + half) >> Self::LAB_SHIFT;
        let zi = (cb * self.z[0] + cg * self.z[1] + cr * self.z[2] + half) >> Self::LAB_SHIFT;
        let fy = self.cbrt[yi as usize] as i32;
        let fz = self.cbrt[zi as usize] as i32;
        let v = (200 * (fy - fz) + (128 << Self::LAB_SHIFT2) + (1 << (Self::LAB_SHIFT2 - 1)))
            >> Self::LAB_SHIFT2;
        v.clamp(0, 255) as u8
    }
}

static LAB_FIXED: std::sync::OnceLock<LabFixed> = std::sync::OnceLock::new();

/// The small tables of OpenCV's fixed-point Lab, built once (a few microseconds).
fn lab_fixed() -> &'static LabFixed {
    LAB_FIXED.get_or_init(LabFixed::new)
}

/// LAB B of every 8-bit BGR colour, at `b_index(b, g, r)`, built once per process from
/// OpenCV's fixed-point formula (`LabFixed`, exact: tested against `cvtColor` on every colour)
/// in parallel over 4-wide blue slabs: about 10x faster than the earlier per-slab `cvtColor`
/// calls, which dominated the start-up of `lanes image` on one still.
fn b_lut() -> Result<&'static [u8]> {
    let r = B_LUT.get_or_init(|| {
        let lab = lab_fixed();
        let mut table = BTable::new();
        // b_index puts blue's high 6 bits outermost: each 2^18-byte chunk is one value of b >> 2.
        table
            .as_mut_slice()
            .par_chunks_mut(1 << 18)
            .enumerate()
            .for_each(|(bh, chunk)| {
                for (i, v) in chunk.iter_mut().enumerate() {
                    let b = ((bh << 2) | ((i >> 4) & 3)) as u8;
                    let g = ((((i >> 12) & 63) << 2) | ((i >> 2) & 3)) as u8;
                    let r = ((((i >> 6) & 63) << 2) | (i & 3)) as u8;
                    *v = lab.b(b, g, r);
                }
            });
        Ok::<BTable, String>(table)
    });
    match r {
        Ok(v) => Ok(v.as_slice()),
        Err(e) => Err(crate::base::error::Error::Invalid(format!(
            "building the LAB lookup table: {e}"
        ))),
    }
}

/// Build the lookup tables now (about 0.1 s, once per process) rather than on the first frame.
pub fn prepare() -> Result<()> {
    b_lut().map(|_| ())
}

/// Build only the small tables; the 16 MiB B table waits for the first band frame, so a still
/// image (whole-view analysis, B computed per pixel by `LabFixed`) never builds it.
pub fn prepare_small() {
    let _ = lab_fixed();
}

/// Compute the L and B channels (raw, unscaled) of a BGR image in one pass.
pub fn channels(img: &BgrFrame) -> Result<(GrayImage, GrayImage)> {
    let (w, h) = (img.width(), img.height());
    let src = img.bytes()?;
    let lab = lab_fixed();
    let mut l = Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, core::Scalar::all(0.0))?;
    let mut b = Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, core::Scalar::all(0.0))?;
    {
        let ld = l.data_bytes_mut()?;
        let bd = b.data_bytes_mut()?;
        // Row bands in parallel (rayon): each pixel is independent, so the result is the same
        // as a single pass; on a video this uses the core the decoder leaves idle.
        let band = (w.max(1) as usize) * 16;
        ld.par_chunks_mut(band)
            .zip(bd.par_chunks_mut(band))
            .zip(src.par_chunks(band * 3))
            .for_each(|((lc, bc), sc)| {
                for ((px, lo), bo) in sc.chunks_exact(3).zip(lc.iter_mut()).zip(bc.iter_mut()) {
                    *lo = lightness(px[0], px[1], px[2]);
                    *bo = lab.b(px[0], px[1], px[2]);
                }
            });
    }
    Ok((GrayImage::new(l)?, GrayImage::new(b)?))
}

/// The symmetric local threshold in integer form (see `ThresholdMethod::LocalContrast`).
#[derive(Debug, Clone, Copy)]
struct LocalContrast {
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
    fn new(cfg: &ThresholdConfig) -> Self {
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
    fn reach(&self) -> usize {
        self.d + self.s
    }

    /// Marking decisions (0 or 255) for one contiguous row segment of L and B: a pixel is white
    /// when its L exceeds the brighter of the two road samples (`[x-d-s, x-d)` and
    /// `(x+d, x+d+s]`) by `max(l_min, l_ratio * side)`, yellow when its B is at least `b_yellow`
    /// and exceeds the yellower side by `b_min`. Taking the brighter side makes it symmetric:
    /// at a shadow edge or a light/dark seam one side is as bright as the pixel, so it fails.
    /// The first and last `reach()` pixels have no road sample on one side and stay 0.
    /// `pl` and `pb` are scratch buffers for the prefix sums.
    fn row(&self, l: &[u8], b: &[u8], out: &mut [u8], pl: &mut Vec<u32>, pb: &mut Vec<u32>) {
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
fn keep_vertical_runs(mask: Mat, k: u32) -> Result<Mat> {
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

/// Threshold a bird's-eye BGR image into the lane-pixel mask.
///
/// Local contrast (default): see `ThresholdMethod::LocalContrast`; then only vertical runs of
/// `min_run_px` rows are kept. Global max (the reference's rule):
/// White: L scaled so that its maximum becomes 255, kept where `l_min < L <= l_max`.
/// Yellow: B scaled the same way only when its maximum is over `b_scale_gate`, kept where
/// `b_min < B <= b_max`. Optional Sobel-x on L and HLS S are added when enabled.
pub fn threshold(img: &BgrFrame, cfg: &ThresholdConfig) -> Result<Thresholded> {
    let (l, b) = channels(img)?;
    threshold_channels(img, l, b, cfg)
}

fn scale_to_max(ch: &mut [u8], max: u8) {
    if max == 0 {
        return;
    }
    let mut lut = [0u8; 256];
    for (v, o) in lut.iter_mut().enumerate() {
        *o = ((v as f64) * 255.0 / max as f64).min(255.0) as u8;
    }
    for v in ch.iter_mut() {
        *v = lut[*v as usize];
    }
}

/// The white and yellow decisions per channel value (255 = kept) for channel maxima `lmax`
/// and `bmax`: the comparison is in integers, exactly as float scaling would be:
/// `v*255/max > t  <=>  v*255 > t*max`. The loop is then two loads and an or per pixel.
fn decision_tables(lmax: u32, bmax: u32, cfg: &ThresholdConfig) -> ([u8; 256], [u8; 256]) {
    let b_scaled = bmax > cfg.b_scale_gate as u32;
    let (l_lo, l_hi) = (cfg.l_min as u32 * lmax, cfg.l_max as u32 * lmax);
    let (b_lo, b_hi) = if b_scaled {
        (cfg.b_min as u32 * bmax, cfg.b_max as u32 * bmax)
    } else {
        (cfg.b_min as u32 * 255, cfg.b_max as u32 * 255)
    };
    let mut white = [0u8; 256];
    let mut yellow = [0u8; 256];
    for v in 0..256u32 {
        let x = v * 255;
        white[v as usize] = if lmax > 0 && x > l_lo && x <= l_hi {
            255
        } else {
            0
        };
        yellow[v as usize] = if x > b_lo && x <= b_hi { 255 } else { 0 };
    }
    (white, yellow)
}

/// Threshold the bird's-eye view of `raw` on `bands` only: each band pixel comes straight from
/// `remap` (`BirdseyeRemap::visit_band_runs`, the pixel OpenCV's remap gives) and goes into L
/// and B at once, so the band view itself is never written. L and B are normalised by their
/// maxima over the bands; the mask, L and B come back packed (`MaskRef::Bands`). Two
/// passes on one thread (the bands are small; waking a second thread costs more than it saves
/// while the decoder is busy). The Sobel option needs whole rows and is not available here (the
/// pipeline uses the whole view when it is on).
pub fn threshold_bands(
    raw: &BgrFrame,
    remap: &BirdseyeRemap,
    bands: ColumnBands,
    cfg: &ThresholdConfig,
) -> Result<Thresholded> {
    let (rows, pw) = (bands.rows(), bands.packed_width());
    let lut = b_lut()?;
    // SAFETY: `new_rows_cols` leaves the bytes uninitialised; pass 1 (L, B) and pass 2 (the
    // mask) write every one of them (the spans and the gaps cover the packed image exactly)
    // before anything reads them.
    let uninit = |rows: usize, cols: usize| unsafe {
        Mat::new_rows_cols(rows as i32, cols as i32, core::CV_8UC1)
    };
    let (mut lm, mut bm, mut mask) = (uninit(rows, pw)?, uninit(rows, pw)?, uninit(rows, pw)?);
    // HLS S of the band pixels, only when the S threshold is on.
    let mut sat = if cfg.s_enabled {
        vec![0u8; rows * pw]
    } else {
        Vec::new()
    };
    let (mut lmax, mut bmax) = (0u8, 0u8);
    {
        // Pass 1: L and B of the band pixels, and their maxima; zeros in the gaps of all three.
        let ld = lm.data_bytes_mut()?;
        let bd = bm.data_bytes_mut()?;
        let md = mask.data_bytes_mut()?;
        for g in bands.gaps() {
            ld[g.clone()].fill(0);
            bd[g.clone()].fill(0);
            md[g].fill(0);
        }
        // Per run: L and the table places first, then the lookups in a loop of their own, so
        // that many of their cache misses on the 16 MiB table are in flight at once. The maxima
        // are kept in locals within a run: as captured variables they would be loaded and
        // stored on every pixel, which chains each lookup to the previous one.
        let mut idx = vec![0u32; bands.cols];
        remap.visit_band_runs(raw, &bands, |a, run| {
            let n = run.len();
            let (mut lm, mut bm) = (lmax, bmax);
            for ((px, lo), ix) in run.iter().zip(ld[a..a + n].iter_mut()).zip(idx.iter_mut()) {
                let l = lightness(px[0], px[1], px[2]);
                lm = lm.max(l);
                *lo = l;
                *ix = b_index(px[0], px[1], px[2]) as u32;
            }
            for (bo, ix) in bd[a..a + n].iter_mut().zip(idx.iter()) {
                let b = lut[*ix as usize];
                bm = bm.max(b);
                *bo = b;
            }
            (lmax, bmax) = (lm, bm);
            if cfg.s_enabled {
                for (so, px) in sat[a..a + n].iter_mut().zip(run.iter()) {
                    *so = saturation(px[0], px[1], px[2]);
                }
            }
        })?;
    }
    let (lmax, bmax) = (lmax as u32, bmax as u32);
    let b_scaled = bmax > cfg.b_scale_gate as u32;
    let (white, yellow) = decision_tables(lmax, bmax, cfg);
    let local = LocalContrast::new(cfg);
    let (mut pl, mut pb) = (Vec::new(), Vec::new());
    {
        // Pass 2: the decisions, packed like L and B (the gaps were zeroed in pass 1).
        let md = mask.data_bytes_mut()?;
        let ld = lm.data_bytes()?;
        let bd = bm.data_bytes()?;
        for sp in bands.spans() {
            let (a, n) = (sp.packed, sp.len);
            match cfg.method {
                ThresholdMethod::LocalContrast => local.row(
                    &ld[a..a + n],
                    &bd[a..a + n],
                    &mut md[a..a + n],
                    &mut pl,
                    &mut pb,
                ),
                ThresholdMethod::GlobalMax => {
                    for ((m, l), b) in md[a..a + n]
                        .iter_mut()
                        .zip(ld[a..a + n].iter())
                        .zip(bd[a..a + n].iter())
                    {
                        *m = white[*l as usize] | yellow[*b as usize];
                    }
                }
            }
            if cfg.s_enabled {
                for (m, s) in md[a..a + n].iter_mut().zip(sat[a..a + n].iter()) {
                    if *s > cfg.s_min && *s <= cfg.s_max {
                        *m = 255;
                    }
                }
            }
        }
    }
    Ok(Thresholded {
        mask: BinaryMask::new(mask)?,
        l: GrayImage::new(lm)?,
        b: GrayImage::new(bm)?,
        bands: Some(bands),
        l_max: lmax as u8,
        b_max: bmax as u8,
        b_was_scaled: b_scaled,
    })
}

/// Threshold from precomputed raw L and B channels (consumed and returned scaled).
pub fn threshold_channels(
    img: &BgrFrame,
    l: GrayImage,
    b: GrayImage,
    cfg: &ThresholdConfig,
) -> Result<Thresholded> {
    let (w, h) = (l.width(), l.height());
    let lm = l.into_mat();
    let bm = b.into_mat();
    let lmax = lm.data_bytes()?.iter().copied().max().unwrap_or(0) as u32;
    let bmax = bm.data_bytes()?.iter().copied().max().unwrap_or(0) as u32;
    let b_scaled = bmax > cfg.b_scale_gate as u32;
    let (white, yellow) = decision_tables(lmax, bmax, cfg);
    let mut mask = Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, core::Scalar::all(0.0))?;
    {
        let md = mask.data_bytes_mut()?;
        let ld = lm.data_bytes()?;
        let bd = bm.data_bytes()?;
        match cfg.method {
            ThresholdMethod::LocalContrast => {
                let local = LocalContrast::new(cfg);
                let w = (w.max(1)) as usize;
                // Rows are independent: in parallel, each with its own scratch sums.
                md.par_chunks_mut(w)
                    .zip(ld.par_chunks(w).zip(bd.par_chunks(w)))
                    .for_each_init(
                        || (Vec::new(), Vec::new()),
                        |(pl, pb), (m, (l, b))| local.row(l, b, m, pl, pb),
                    );
            }
            ThresholdMethod::GlobalMax => {
                for ((m, l), b) in md.iter_mut().zip(ld.iter()).zip(bd.iter()) {
                    *m = white[*l as usize] | yellow[*b as usize];
                }
            }
        }
    }
    if cfg.method == ThresholdMethod::LocalContrast {
        let k = cfg.min_run_px;
        mask = keep_vertical_runs(mask, k)?;
    }
    if cfg.s_enabled {
        let src = img.bytes()?;
        let md = mask.data_bytes_mut()?;
        for (i, px) in src.chunks_exact(3).enumerate() {
            let s = saturation(px[0], px[1], px[2]);
            if s > cfg.s_min && s <= cfg.s_max {
                md[i] = 255;
            }
        }
    }
    if cfg.sobel_enabled {
        let mut sx = Mat::default();
        imgproc::sobel_def(&lm, &mut sx, core::CV_64F, 1, 0)?;
        let mut abs = Mat::default();
        core::absdiff(&sx, &core::Scalar::all(0.0), &mut abs)?;
        let mut mx = 0.0;
        core::min_max_loc(&abs, None, Some(&mut mx), None, None, &core::no_array())?;
        if mx > 0.0 {
            let md = mask.data_bytes_mut()?;
            let ad: &[f64] = abs.data_typed()?;
            for i in 0..md.len() {
                let v = (ad[i] * 255.0 / mx) as u32;
                if v > cfg.sobel_min as u32 && v <= cfg.sobel_max as u32 {
                    md[i] = 255;
                }
            }
        }
    }
    Ok(Thresholded {
        mask: BinaryMask::new(mask)?,
        l: GrayImage::new(lm)?,
        b: GrayImage::new(bm)?,
        bands: None,
        l_max: lmax as u8,
        b_max: bmax as u8,
        b_was_scaled: b_scaled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solid(bgr: [u8; 3], w: i32, h: i32) -> BgrFrame {
        let m = Mat::new_rows_cols_with_default(
            h,
            w,
            core::CV_8UC3,
            core::Scalar::new(bgr[0] as f64, bgr[1] as f64, bgr[2] as f64, 0.0),
        )
        .unwrap();
        BgrFrame::new(m).unwrap()
    }

    #[test]
    fn lightness_matches_opencv_hls() {
        let img = {
            let mut m = solid([0, 0, 0], 256, 3);
            let d = m.mat_mut().data_bytes_mut().unwrap();
            for (i, px) in d.chunks_exact_mut(3).enumerate() {
                px[0] = (i * 7 % 256) as u8;
                px[1] = (i * 13 % 256) as u8;
                px[2] = (i * 29 % 256) as u8;
            }
            m
        };
        let mut hls = Mat::default();
        imgproc::cvt_color_def(img.mat(), &mut hls, imgproc::COLOR_BGR2HLS).unwrap();
        let (l, _) = channels(&img).unwrap();
        let hd = hls.data_bytes().unwrap();
        for (i, v) in l.bytes().unwrap().iter().enumerate() {
            assert!(
                (*v as i32 - hd[i * 3 + 1] as i32).abs() <= 1,
                "pixel {i}: {v} vs {}",
                hd[i * 3 + 1]
            );
        }
    }

    #[test]
    fn b_channel_equals_opencv_lab() {
        let mut img = solid([0, 0, 0], 512, 64);
        {
            let d = img.mat_mut().data_bytes_mut().unwrap();
            let mut state = 12345u32;
            for v in d.iter_mut() {
                state = state.wrapping_mul(1664525).wrapping_add(1013904223);
                *v = (state >> 24) as u8;
            }
        }
        let mut lab = Mat::default();
        imgproc::cvt_color_def(img.mat(), &mut lab, imgproc::COLOR_BGR2Lab).unwrap();
        let (_, b) = channels(&img).unwrap();
        let ld = lab.data_bytes().unwrap();
        for (i, v) in b.bytes().unwrap().iter().enumerate() {
            assert_eq!(*v, ld[i * 3 + 2], "pixel {i}");
        }
    }

    #[test]
    fn b_table_equals_cvtcolor_on_every_colour() {
        let lut = b_lut().unwrap();
        let mut slab =
            Mat::new_rows_cols_with_default(256, 256, core::CV_8UC3, core::Scalar::all(0.0))
                .unwrap();
        let mut lab = Mat::default();
        let mut wrong = 0usize;
        for b in 0..256usize {
            {
                let d = slab.data_bytes_mut().unwrap();
                for g in 0..256usize {
                    for r in 0..256usize {
                        let i = (g * 256 + r) * 3;
                        d[i] = b as u8;
                        d[i + 1] = g as u8;
                        d[i + 2] = r as u8;
                    }
                }
            }
            imgproc::cvt_color_def(&slab, &mut lab, imgproc::COLOR_BGR2Lab).unwrap();
            let ld = lab.data_bytes().unwrap();
            for g in 0..256usize {
                for r in 0..256usize {
                    let want = ld[(g * 256 + r) * 3 + 2];
                    let got = lut[b_index(b as u8, g as u8, r as u8)];
                    if want != got {
                        if wrong < 10 {
                            eprintln!("bgr ({b}, {g}, {r}): cvtColor {want}, table {got}");
                        }
                        wrong += 1;
                    }
                }
            }
        }
        assert_eq!(wrong, 0, "colours whose B differs from cvtColor");
    }

    #[test]
    fn white_and_yellow_stripes_are_kept_asphalt_is_not() {
        let mut img = solid([60, 60, 60], 100, 20);
        {
            let d = img.mat_mut().data_bytes_mut().unwrap();
            for y in 0..20 {
                for x in 10..15 {
                    let i = (y * 100 + x) * 3;
                    d[i..i + 3].copy_from_slice(&[250, 250, 250]);
                }
                for x in 80..85 {
                    let i = (y * 100 + x) * 3;
                    d[i..i + 3].copy_from_slice(&[30, 210, 230]); // yellow in BGR
                }
            }
        }
        let reference = ThresholdConfig {
            method: ThresholdMethod::GlobalMax,
            ..Default::default()
        };
        let t = threshold(&img, &reference).unwrap();
        let MaskRef::View(m) = t.mask_as_computed() else {
            panic!("a whole-view threshold gives a whole-view mask");
        };
        let m = m.bytes().unwrap();
        assert_eq!(m[5 * 100 + 12], 255, "white kept");
        assert_eq!(m[5 * 100 + 82], 255, "yellow kept");
        assert_eq!(m[5 * 100 + 50], 0, "asphalt dropped");
        assert_eq!(t.mask().unwrap().count().unwrap(), 2 * 5 * 20);
    }

    /// A 200x20 road of grey `road`, with `paint(x) -> Some(bgr)` drawn on every row.
    fn road_with(road: u8, paint: impl Fn(usize) -> Option<[u8; 3]>) -> BgrFrame {
        let mut img = solid([road, road, road], 200, 20);
        {
            let d = img.mat_mut().data_bytes_mut().unwrap();
            for y in 0..20 {
                for x in 0..200 {
                    if let Some(c) = paint(x) {
                        let i = (y * 200 + x) * 3;
                        d[i..i + 3].copy_from_slice(&c);
                    }
                }
            }
        }
        img
    }

    fn kept(img: &BgrFrame) -> Vec<usize> {
        let t = threshold(img, &ThresholdConfig::default()).unwrap();
        let m = t.mask().unwrap();
        let d = m.bytes().unwrap();
        (0..200).filter(|x| d[10 * 200 + x] == 255).collect()
    }

    #[test]
    fn local_contrast_keeps_stripes_and_drops_edges_seams_and_flat_images() {
        // A white stripe (x 90..105) and a yellow one (x 140..150) on asphalt: kept.
        let img = road_with(70, |x| match x {
            90..=104 => Some([235, 235, 235]),
            140..=149 => Some([40, 190, 210]),
            _ => None,
        });
        let k = kept(&img);
        assert!((90..=104).all(|x| k.contains(&x)), "{k:?}");
        assert!((140..=149).all(|x| k.contains(&x)), "{k:?}");
        assert_eq!(k.len(), 25, "{k:?}");
        // The same stripe in shade (everything at a third of the light): still kept.
        let shade = road_with(23, |x| (90..=104).contains(&x).then_some([78, 78, 78]));
        assert_eq!(kept(&shade).len(), 15);
        // A shadow edge / asphalt-concrete seam: dark left, light right. Nothing passes.
        let edge = road_with(60, |x| (x >= 100).then_some([170, 170, 170]));
        assert!(kept(&edge).is_empty(), "{:?}", kept(&edge));
        // A tar seam (dark stripe) on light concrete: nothing.
        let seam = road_with(160, |x| (95..=104).contains(&x).then_some([40, 40, 40]));
        assert!(kept(&seam).is_empty());
        // A flat grey image: nothing (the reference's max-scaling keeps every pixel).
        let flat = solid([128, 128, 128], 200, 20);
        assert!(kept(&flat).is_empty());
        let reference = ThresholdConfig {
            method: ThresholdMethod::GlobalMax,
            ..Default::default()
        };
        assert_eq!(
            threshold(&flat, &reference)
                .unwrap()
                .mask()
                .unwrap()
                .count()
                .unwrap(),
            200 * 20
        );
        // A region more than twice the widest marking (a bright patch of 90 px): its inside
        // is as bright as its sides, its edges have a bright side. Nothing passes.
        let patch = road_with(70, |x| (55..145).contains(&x).then_some([230, 230, 230]));
        assert!(kept(&patch).is_empty(), "{:?}", kept(&patch));
    }

    #[test]
    fn b_is_not_scaled_below_the_gate() {
        // Gray image: B = 128 everywhere, below the 175 gate: nothing yellow.
        let img = solid([90, 90, 90], 20, 20);
        let t = threshold(
            &img,
            &ThresholdConfig {
                l_min: 254,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!t.b_was_scaled);
        assert_eq!(t.b_scaled().unwrap().bytes().unwrap()[0], 128);
        assert_eq!(t.l_scaled().unwrap().bytes().unwrap()[0], 255);
    }
}
