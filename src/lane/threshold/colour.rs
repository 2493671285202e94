//! The colour cues: HLS L and LAB B of 8-bit BGR pixels, in fixed point through lookup tables
//! (the same values as OpenCV's conversions), computed in one pass.
//!
//! The yellow cue (`Cue::Yellow`, what the local-contrast threshold and self-calibration read)
//! is LAB B with clearly red colours set to neutral (128): yellow paint lies near the b axis
//! (a* about 0, a little more for orange paint in low sun), while tail and brake lights, red
//! cars and red signs have a* above b* (hue below 45 degrees) and above 20, so their high B
//! is not yellowness. The reference's rule reads the exact B (`Cue::ExactB`).

use crate::base::error::Result;
use crate::base::frame::{BgrFrame, GrayImage};
use opencv::core::{self, Mat};
use opencv::prelude::*;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};

/// HLS lightness of an 8-bit BGR pixel as OpenCV computes it: round((max + min) / 2).
#[inline]
pub(super) fn lightness(b: u8, g: u8, r: u8) -> u8 {
    let mx = b.max(g).max(r) as u16;
    let mn = b.min(g).min(r) as u16;
    (mx + mn).div_ceil(2) as u8
}

/// HLS saturation of an 8-bit BGR pixel on 0..255, as OpenCV's 8-bit HLS.
#[inline]
pub(super) fn saturation(b: u8, g: u8, r: u8) -> u8 {
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

/// The B of every 8-bit BGR colour, at `b_index(b, g, r)`, filled in blocks of 1024 colours
/// the first time a pixel needs one (a road video shows a few hundred of the 16384 blocks:
/// greys, a few paints and cars), so a run computes only the colours it sees instead of all
/// 2^24 up front (0.1 s of CPU, most of it for colours no frame has). The values are those of
/// `LabFixed`, exactly as before. The 16 MiB are placed on 2 MiB boundaries inside an
/// over-allocated zeroed buffer so the kernel can back them with transparent huge pages
/// (pages never touched cost no memory).
pub(super) struct BTable {
    /// Owns the memory; only `base` is used to reach it once made.
    _buf: Vec<u8>,
    /// The table's first byte (2 MiB aligned inside `_buf`), taken from `as_mut_ptr` so that
    /// the blocks may be written through it.
    base: *mut u8,
    /// Per block: `EMPTY`, `FILLING` (one thread writes it) or `READY`.
    state: Box<[AtomicU8]>,
    cue: Cue,
}

const EMPTY: u8 = 0;
const FILLING: u8 = 1;
const READY: u8 = 2;

// SAFETY: the bytes of a block are written only by the one thread whose compare-exchange moved
// its state from EMPTY to FILLING, before that thread stores READY (Release); they are read
// only after a load of READY (Acquire). So no byte is read while it is written, and no byte is
// written twice. `base` points into `_buf`, which moves with the table and lives as long.
unsafe impl Sync for BTable {}
// SAFETY: as above; the table owns its memory.
unsafe impl Send for BTable {}

impl BTable {
    const LEN: usize = 1 << 24;
    const ALIGN: usize = 1 << 21;
    /// log2 of a block's colours: 16 of the 4x4x4 tiles, along red (see `b_index`).
    const BLOCK_BITS: u32 = 10;

    pub(super) fn new(cue: Cue) -> Self {
        // Zeroed and above the mmap threshold: fresh pages from the kernel, not yet touched, so
        // the advice applies to all of them.
        let len = (Self::LEN + Self::ALIGN).max(crate::base::frame::MMAP_THRESHOLD + Self::ALIGN);
        let mut buf = vec![0u8; len];
        let addr = buf.as_ptr() as usize;
        let start = (Self::ALIGN - addr % Self::ALIGN) % Self::ALIGN;
        // SAFETY: the range [addr + start, addr + start + LEN) lies inside `buf`, which is
        // alive (and kept in the table); madvise only changes how the kernel backs these
        // pages, never their contents. A refusal (no THP support) is harmless and ignored.
        let base = unsafe {
            let base = buf.as_mut_ptr().add(start);
            libc::madvise(base as *mut libc::c_void, Self::LEN, libc::MADV_HUGEPAGE);
            base
        };
        let state = (0..Self::LEN >> Self::BLOCK_BITS)
            .map(|_| AtomicU8::new(EMPTY))
            .collect();
        Self {
            _buf: buf,
            base,
            state,
            cue,
        }
    }

    /// B at table place `i` (`b_index` of a colour).
    #[inline(always)]
    pub(super) fn at(&self, i: usize) -> u8 {
        let i = i & (Self::LEN - 1);
        if self.state[i >> Self::BLOCK_BITS].load(Ordering::Acquire) == READY {
            // SAFETY: `i < LEN` and the block is READY: written once and never again (see the
            // `Sync` impl).
            unsafe { *self.base.add(i) }
        } else {
            self.fill(i)
        }
    }

    /// Fill the block of place `i` and return its value; when another thread is filling it,
    /// compute this one colour instead of waiting.
    #[cold]
    #[inline(never)]
    fn fill(&self, i: usize) -> u8 {
        let lab = lab_fixed();
        let block = i >> Self::BLOCK_BITS;
        let st = &self.state[block];
        if st
            .compare_exchange(EMPTY, FILLING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            let (b, g, r) = colour_at(i);
            return if st.load(Ordering::Acquire) == READY {
                // SAFETY: as in `at`.
                unsafe { *self.base.add(i) }
            } else {
                lab.cue(self.cue, b, g, r)
            };
        }
        let first = block << Self::BLOCK_BITS;
        // SAFETY: this thread alone moved the block to FILLING, so no other thread reads or
        // writes these bytes until READY is stored below; the range lies inside `buf`.
        let out =
            unsafe { std::slice::from_raw_parts_mut(self.base.add(first), 1 << Self::BLOCK_BITS) };
        for (k, v) in out.iter_mut().enumerate() {
            let (b, g, r) = colour_at(first + k);
            *v = lab.cue(self.cue, b, g, r);
        }
        let value = out[i - first];
        st.store(READY, Ordering::Release);
        value
    }
}

/// The colour (b, g, r) at table place `i`: the inverse of `b_index`.
#[inline(always)]
fn colour_at(i: usize) -> (u8, u8, u8) {
    let b = (((i >> 18) & 63) << 2) | ((i >> 4) & 3);
    let g = (((i >> 12) & 63) << 2) | ((i >> 2) & 3);
    let r = (((i >> 6) & 63) << 2) | (i & 3);
    (b as u8, g as u8, r as u8)
}

static B_LUT: std::sync::OnceLock<BTable> = std::sync::OnceLock::new();
static YELLOW_LUT: std::sync::OnceLock<BTable> = std::sync::OnceLock::new();

/// Which B a threshold reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cue {
    /// LAB B exactly as OpenCV's `cvtColor` gives it (the reference's rule).
    ExactB,
    /// LAB B, with clearly red colours (a* above b* and above 20) at neutral 128.
    Yellow,
}

/// Place of colour (b, g, r) in the B table: the table is tiled in 4x4x4 colour cubes of 64
/// bytes, one cache line each, so that the similar colours of a road (grey, where b, g and r
/// move together) share lines; a row-major table would touch a new line for nearly every
/// step of b or g.
#[inline(always)]
pub(super) fn b_index(b: u8, g: u8, r: u8) -> usize {
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
pub(super) struct LabFixed {
    /// sRGB gamma of each 8-bit value, in 1/8 units of 0..255 (`sRGBGammaTab_b`).
    gamma: [u16; 256],
    /// f(t) = cbrt(t) (or the linear toe) in 1/2^15, for t = i / (255 * 8) (`LabCbrtTab_b`).
    cbrt: Vec<u16>,
    /// Y and Z rows of sRGB -> XYZ (D65 white) in 1/2^12, in B, G, R order.
    y: [i32; 3],
    z: [i32; 3],
    /// The X row (a* needs it).
    x: [i32; 3],
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
            x: row(0),
        }
    }

    /// LAB B of one BGR colour, exactly as `cvtColor(BGR2Lab)` gives it.
    #[inline(always)]
    fn b(&self, b: u8, g: u8, r: u8) -> u8 {
        let c = self.gammas(b, g, r);
        Self::b_from(self.f(c, &self.y), self.f(c, &self.z))
    }

    /// The yellow cue of one BGR colour: `b`, or 128 for a red colour: a* above b* > 0
    /// (a* = 500 (fx - fy), b* = 200 (fy - fz)), a hue redder than 45 degrees, and a* above 20
    /// (a clear red: tail lights and red cars reach 40-80, while a grey road's faint tint, a*
    /// and b* of a few units, keeps its B and so the road samples beside a line stay as they
    /// were).
    #[inline(always)]
    fn yellow(&self, b: u8, g: u8, r: u8) -> u8 {
        let c = self.gammas(b, g, r);
        let (fy, fz) = (self.f(c, &self.y), self.f(c, &self.z));
        let v = Self::b_from(fy, fz);
        let da = self.f(c, &self.x) - fy;
        // a* > 20 in 1/2^15 units of f: 500 da / 2^15 > 20, i.e. 25 da > 2^16.
        if v > 128 && 5 * da > 2 * (fy - fz) && 25 * da > 1 << 16 {
            128
        } else {
            v
        }
    }

    /// The B a cue reads.
    #[inline(always)]
    fn cue(&self, cue: Cue, b: u8, g: u8, r: u8) -> u8 {
        match cue {
            Cue::ExactB => self.b(b, g, r),
            Cue::Yellow => self.yellow(b, g, r),
        }
    }

    /// The linear (gamma-expanded) values of a BGR colour, in 1/8 units.
    #[inline(always)]
    fn gammas(&self, b: u8, g: u8, r: u8) -> (i32, i32, i32) {
        (
            self.gamma[b as usize] as i32,
            self.gamma[g as usize] as i32,
            self.gamma[r as usize] as i32,
        )
    }

    /// f(X), f(Y) or f(Z) of linear colour `c` by its coefficient row, in 1/2^15 (the sRGB
    /// cube never leaves the table; X of a saturated colour can pass white's, hence the clamp).
    #[inline(always)]
    fn f(&self, (cb, cg, cr): (i32, i32, i32), row: &[i32; 3]) -> i32 {
        let half = 1 << (Self::LAB_SHIFT - 1);
        let t = (cb * row[0] + cg * row[1] + cr * row[2] + half) >> Self::LAB_SHIFT;
        self.cbrt[(t.max(0) as usize).min(self.cbrt.len() - 1)] as i32
    }

    /// B (0..255, 128 neutral) from f(Y) and f(Z), rounded as OpenCV rounds it.
    #[inline(always)]
    fn b_from(fy: i32, fz: i32) -> u8 {
        let v = (200 * (fy - fz) + (128 << Self::LAB_SHIFT2) + (1 << (Self::LAB_SHIFT2 - 1)))
            >> Self::LAB_SHIFT2;
        v.clamp(0, 255) as u8
    }
}

static LAB_FIXED: std::sync::OnceLock<LabFixed> = std::sync::OnceLock::new();

/// The small tables of OpenCV's fixed-point Lab, built once (a few microseconds).
pub(super) fn lab_fixed() -> &'static LabFixed {
    LAB_FIXED.get_or_init(LabFixed::new)
}

/// The B table of `cue` (see `BTable`), made once per process; its blocks are filled as
/// pixels need them.
pub(super) fn b_lut(cue: Cue) -> Result<&'static BTable> {
    Ok(lut_slot(cue).get_or_init(|| BTable::new(cue)))
}

/// Make the lookup table of `cue` now (an allocation; its blocks are filled as pixels need
/// them) rather than on the first frame, and let `channels` read it from then on.
pub fn prepare(cue: Cue) -> Result<()> {
    b_lut(cue).map(|_| ())
}

/// Build only the small tables; the 16 MiB B table waits for the first band frame, so a still
/// image (whole-view analysis, B computed per pixel by `LabFixed`) never makes it.
pub fn prepare_small() {
    let _ = lab_fixed();
}

/// Where the B table of `cue` is kept once built.
fn lut_slot(cue: Cue) -> &'static std::sync::OnceLock<BTable> {
    match cue {
        Cue::ExactB => &B_LUT,
        Cue::Yellow => &YELLOW_LUT,
    }
}

/// The B table of `cue` when it has been made already (by `prepare` or a band frame).
fn built_table(cue: Cue) -> Option<&'static BTable> {
    lut_slot(cue).get()
}

/// Compute the L and B channels (raw, unscaled; B as `cue` reads it) of a BGR image in one
/// pass. B is looked up in the cue's table when it has been made (a video run makes it for
/// its band frames; the geometry search makes it first), else computed per pixel (a still
/// never makes the 16 MiB table): the same values either way.
pub fn channels(img: &BgrFrame, cue: Cue) -> Result<(GrayImage, GrayImage)> {
    channels_with(img, cue, built_table(cue))
}

/// `channels` with B from `table` (the cue's) or, without one, computed per pixel.
pub(super) fn channels_with(
    img: &BgrFrame,
    cue: Cue,
    table: Option<&BTable>,
) -> Result<(GrayImage, GrayImage)> {
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
                let pixels = sc.chunks_exact(3).zip(lc.iter_mut()).zip(bc.iter_mut());
                match table {
                    Some(t) => {
                        for ((px, lo), bo) in pixels {
                            *lo = lightness(px[0], px[1], px[2]);
                            *bo = t.at(b_index(px[0], px[1], px[2]));
                        }
                    }
                    None => {
                        for ((px, lo), bo) in pixels {
                            *lo = lightness(px[0], px[1], px[2]);
                            *bo = lab.cue(cue, px[0], px[1], px[2]);
                        }
                    }
                }
            });
    }
    Ok((GrayImage::new(l)?, GrayImage::new(b)?))
}
