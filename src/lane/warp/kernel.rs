//! Fixed-point bilinear sampling with OpenCV's weights and rounding: scalar, SSE4.1 (BGR
//! frames) and AVX2 (the decoder's planes).

use crate::base::planes::{Yuv420Planes, CUB, CUG, CVG, CVR, CY, SHIFT};
use opencv::core;

/// OpenCV's bilinear weights for each of the 32 x 32 sub-pixel positions of a CV_16UC1 remap
/// map (index `(fy << 5) | fx`), in units of 1/1024: `[(32-fy)(32-fx), (32-fy)fx, fy(32-fx),
/// fy fx]`. OpenCV's fixed-point weights are these times 32, and its rounding
/// `(sum + 2^14) >> 15` is then exactly `(sum' + 2^9) >> 10` on these.
pub(super) fn bilinear_weights() -> &'static [[i16; 4]; 1024] {
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
pub(super) fn round_weighted(v: i32) -> u8 {
    ((v + (1 << 9)) >> 10).clamp(0, 255) as u8
}

/// A raw BGR frame as the source of a remap.
pub(super) struct Source<'a> {
    pub(super) img: &'a [u8],
    pub(super) width: i32,
    pub(super) height: i32,
}

impl Source<'_> {
    /// The bilinear pixels at the map entries `m1` (integer point) and `m2` (sub-pixel index).
    #[inline(always)]
    pub(super) fn run_with(
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

    /// Ask the cache for the source pixels the taps of map entries `m1` will read.
    #[inline]
    pub(super) fn prefetch(&self, m1: &[core::Vec2s]) {
        if let Some((xs, ys)) = tap_box(m1, self.width, self.height) {
            prefetch_box(self.img, self.width as usize * 3, 3, xs, ys);
        }
    }

    pub(super) fn run(&self, m1: &[core::Vec2s], m2: &[u16], out: &mut [[u8; 3]]) {
        self.run_with(m1, m2, out, bilinear_inside)
    }

    /// `run` with SSE4.1 for the taps inside the image.
    ///
    /// # Safety
    /// SSE4.1 must be available.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse4.1")]
    pub(super) unsafe fn run_sse41(&self, m1: &[core::Vec2s], m2: &[u16], out: &mut [[u8; 3]]) {
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
    pub(super) fn border(&self, x: i32, y: i32, w: &[i16; 4]) -> [u8; 3] {
        let (sw, sh) = (self.width, self.height);
        let step = sw as usize * 3;
        let tap = |xx: i32, yy: i32| -> [u8; 3] {
            if xx >= 0 && yy >= 0 && xx < sw && yy < sh {
                let i = yy as usize * step + xx as usize * 3;
                [self.img[i], self.img[i + 1], self.img[i + 2]]
            } else {
                [0; 3]
            }
        };
        blend4(
            &[tap(x, y), tap(x + 1, y), tap(x, y + 1), tap(x + 1, y + 1)],
            w,
        )
    }
}

/// OpenCV's fixed-point bilinear blend of four BGR taps (top-left, top-right, bottom-left,
/// bottom-right) with weights `w` in 1/1024.
#[inline(always)]
fn blend4(t: &[[u8; 3]; 4], w: &[i16; 4]) -> [u8; 3] {
    let w = w.map(|v| v as i32);
    let mut out = [0u8; 3];
    for (c, o) in out.iter_mut().enumerate() {
        *o = round_weighted(
            t[0][c] as i32 * w[0]
                + t[1][c] as i32 * w[1]
                + t[2][c] as i32 * w[2]
                + t[3][c] as i32 * w[3],
        );
    }
    out
}

/// The bounding box (columns, rows, inclusive, inside the frame) of the first, middle and
/// last of the map entries `m1` plus one row and column: where a run's taps lie (a run's taps
/// lie on one to three source rows that the hardware prefetcher has not seen).
#[inline]
fn tap_box(
    m1: &[core::Vec2s],
    width: i32,
    height: i32,
) -> Option<((usize, usize), (usize, usize))> {
    let (a, b) = (m1.first()?, m1.last()?);
    if width < 1 || height < 1 {
        return None;
    }
    let c = m1[m1.len() / 2];
    let span = |i: usize, last: i32| {
        let v = [a[i], b[i], c[i]].map(|v| v as i32);
        let (lo, hi) = (v[0].min(v[1]).min(v[2]), v[0].max(v[1]).max(v[2]) + 1);
        (lo.clamp(0, last) as usize, hi.clamp(0, last) as usize)
    };
    Some((span(0, width - 1), span(1, height - 1)))
}

/// Prefetch the box `xs` x `ys` (at most 8 rows) of an image of `bpp` bytes per pixel and row
/// stride `step`.
#[inline]
#[allow(unused_variables)]
fn prefetch_box(
    img: &[u8],
    step: usize,
    bpp: usize,
    (x0, x1): (usize, usize),
    (y0, y1): (usize, usize),
) {
    #[cfg(target_arch = "x86_64")]
    for y in y0..=y1.min(y0 + 7) {
        let (lo, hi) = (y * step + x0 * bpp, y * step + x1 * bpp + bpp - 1);
        for i in (lo..=hi).step_by(64).chain(std::iter::once(hi)) {
            if let Some(p) = img.get(i) {
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

/// A raw frame's video-range 4:2:0 planes as the source of a remap: each bird's-eye pixel is
/// OpenCV's fixed-point bilinear rule (same taps, same weights) on Y, U and V, the chroma taps
/// read at their 2 x 2 block (as OpenCV's I420 conversion upsamples them), converted to BGR
/// once from the unrounded sums. Away from the conversion's clamps this is the BGR path's pixel
/// within one grey level (linear maps commute with bilinear weights; the two paths round at
/// different places); where the four taps straddle a clamp (a marking's edge brighter than
/// BGR can hold) it is the interpolation of the signal before clipping. Points with taps outside
/// the frame take the BGR path's rule exactly (each tap converted, black outside).
pub(super) struct PlaneSource<'a>(pub(super) Yuv420Planes<'a>);

impl PlaneSource<'_> {
    #[inline]
    pub(super) fn prefetch(&self, m1: &[core::Vec2s]) {
        let p = &self.0;
        if let Some((xs, ys)) = tap_box(m1, p.width, p.height) {
            prefetch_box(p.y, p.y_stride, 1, xs, ys);
            let half = |(a, b): (usize, usize)| (a / 2, b / 2);
            prefetch_box(p.u, p.u_stride, 1, half(xs), half(ys));
            prefetch_box(p.v, p.v_stride, 1, half(xs), half(ys));
        }
    }

    /// The bilinear pixels at the map entries `m1` (integer point) and `m2` (sub-pixel index).
    pub(super) fn run(&self, m1: &[core::Vec2s], m2: &[u16], out: &mut [[u8; 3]]) {
        let tab = bilinear_weights();
        let (sw, sh) = (self.0.width, self.0.height);
        for ((xy, fr), o) in m1.iter().zip(m2.iter()).zip(out.iter_mut()) {
            let (x, y) = (xy[0] as i32, xy[1] as i32);
            let w = &tab[(*fr & 1023) as usize];
            *o = if x >= 0 && y >= 0 && x < sw - 1 && y < sh - 1 {
                self.inside(x as usize, y as usize, w)
            } else if x >= sw || x + 1 < 0 || y >= sh || y + 1 < 0 {
                [0; 3]
            } else {
                self.border(x, y, w)
            };
        }
    }

    /// `run` with AVX2: eight points at a time, each plane's two tap rows read by 32-bit
    /// gathers (a row's two taps are adjacent bytes), the weights, sums and conversion in
    /// 32-bit lanes with exactly the scalar integer arithmetic, so the pixels are identical.
    /// Groups with a point near the frame's edge (where a 4-byte read could pass the last row)
    /// or outside it take the scalar path.
    ///
    /// # Safety
    /// AVX2 must be available.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run_avx2(&self, m1: &[core::Vec2s], m2: &[u16], out: &mut [[u8; 3]]) {
        use std::arch::x86_64::*;
        let p = &self.0;
        let n = m1.len().min(m2.len()).min(out.len());
        let (sw, sh) = (p.width, p.height);
        // The fast path's bounds: 0 <= x <= width - 2 and 0 <= y <= height - 4. Then the
        // 4-byte reads at (y, x) and (y + 1, x), and at the chroma rows (y >> 1, x >> 1) and
        // ((y + 1) >> 1, x >> 1), end at most 3 bytes past a row that is not its plane's last
        // (the luma rows are at most height - 3, the chroma rows at most height / 2 - 2), so
        // they stay inside the planes `Yuv420Planes::new` checked.
        if sw < 4 || sh < 6 || n < 8 {
            return self.run(m1, m2, out);
        }
        let set = _mm256_set1_epi32;
        let [cy, cub, cug, cvg, cvr] = FAST_COEFFS.map(|c| set(c));
        let (x_max, y_max) = (set(sw - 2), set(sh - 4));
        let (ys, us, vs) = (
            set(p.y_stride as i32),
            set(p.u_stride as i32),
            set(p.v_stride as i32),
        );
        let (c32, c31, c1023, cff) = (set(32), set(31), set(1023), set(0xff));
        let zero = _mm256_setzero_si256();
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY (all loads): `i + 8 <= n`, within `m1` (8 x 4 bytes) and `m2` (8 x 2).
            let xy = _mm256_loadu_si256(m1.as_ptr().add(i) as *const __m256i);
            let x = _mm256_srai_epi32(_mm256_slli_epi32(xy, 16), 16);
            let y = _mm256_srai_epi32(xy, 16);
            let outside = _mm256_or_si256(
                _mm256_or_si256(_mm256_cmpgt_epi32(zero, x), _mm256_cmpgt_epi32(x, x_max)),
                _mm256_or_si256(_mm256_cmpgt_epi32(zero, y), _mm256_cmpgt_epi32(y, y_max)),
            );
            if _mm256_testz_si256(outside, outside) == 0 {
                self.run(&m1[i..i + 8], &m2[i..i + 8], &mut out[i..i + 8]);
                i += 8;
                continue;
            }
            let fr = _mm256_and_si256(
                _mm256_cvtepu16_epi32(_mm_loadu_si128(m2.as_ptr().add(i) as *const __m128i)),
                c1023,
            );
            let (fx, fy) = (_mm256_and_si256(fr, c31), _mm256_srli_epi32(fr, 5));
            let (gx, gy) = (_mm256_sub_epi32(c32, fx), _mm256_sub_epi32(c32, fy));
            let mul = |a, b| _mm256_mullo_epi32(a, b);
            let w = [mul(gy, gx), mul(gy, fx), mul(fy, gx), mul(fy, fx)];
            // Four taps of one plane from its two rows' 32-bit gathers: the low byte and the
            // byte `shift` bits up of each.
            let taps = |base: *const u8, top: __m256i, stride: __m256i, shift: __m256i| {
                let r0 = _mm256_i32gather_epi32::<1>(base as *const i32, top);
                let r1 =
                    _mm256_i32gather_epi32::<1>(base as *const i32, _mm256_add_epi32(top, stride));
                let lo = |r| _mm256_and_si256(r, cff);
                let hi = |r| _mm256_and_si256(_mm256_srlv_epi32(r, shift), cff);
                _mm256_add_epi32(
                    _mm256_add_epi32(mul(lo(r0), w[0]), mul(hi(r0), w[1])),
                    _mm256_add_epi32(mul(lo(r1), w[2]), mul(hi(r1), w[3])),
                )
            };
            let luma = taps(p.y.as_ptr(), _mm256_add_epi32(mul(y, ys), x), ys, set(8));
            // Chroma taps at (x >> 1, (x + 1) >> 1): the same byte for an even x, the next
            // one for an odd x; rows y >> 1 and (y + 1) >> 1 likewise.
            let cx = _mm256_srli_epi32(x, 1);
            let odd_x = _mm256_slli_epi32(_mm256_and_si256(x, set(1)), 3);
            let cy0 = _mm256_srli_epi32(y, 1);
            let odd_y = _mm256_and_si256(y, set(1));
            let u = taps(
                p.u.as_ptr(),
                _mm256_add_epi32(mul(cy0, us), cx),
                mul(odd_y, us),
                odd_x,
            );
            let v = taps(
                p.v.as_ptr(),
                _mm256_add_epi32(mul(cy0, vs), cx),
                mul(odd_y, vs),
                odd_x,
            );
            // `sums_to_bgr_fast`, lane by lane.
            let yy = _mm256_add_epi32(
                mul(
                    _mm256_srai_epi32(
                        _mm256_max_epi32(_mm256_sub_epi32(luma, set(16 << 10)), zero),
                        5,
                    ),
                    cy,
                ),
                set(1 << 18),
            );
            let uu = _mm256_srai_epi32(_mm256_sub_epi32(u, set(128 << 10)), 5);
            let vv = _mm256_srai_epi32(_mm256_sub_epi32(v, set(128 << 10)), 5);
            let c = |s| _mm256_min_epi32(_mm256_max_epi32(_mm256_srai_epi32(s, 19), zero), cff);
            let b = c(_mm256_add_epi32(yy, mul(cub, uu)));
            let g = c(_mm256_add_epi32(
                yy,
                _mm256_add_epi32(mul(cug, uu), mul(cvg, vv)),
            ));
            let r = c(_mm256_add_epi32(yy, mul(cvr, vv)));
            let bgr = _mm256_or_si256(
                b,
                _mm256_or_si256(_mm256_slli_epi32(g, 8), _mm256_slli_epi32(r, 16)),
            );
            let mut lanes = [0u32; 8];
            _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, bgr);
            for (o, v) in out[i..i + 8].iter_mut().zip(lanes) {
                *o = [v as u8, (v >> 8) as u8, (v >> 16) as u8];
            }
            i += 8;
        }
        self.run(&m1[i..n], &m2[i..n], &mut out[i..n]);
    }

    /// The pixel at a point whose four taps are inside the frame (`x + 1 < width`,
    /// `y + 1 < height`).
    #[inline(always)]
    fn inside(&self, x: usize, y: usize, w: &[i16; 4]) -> [u8; 3] {
        let p = &self.0;
        let w = w.map(|v| v as i32);
        let taps = |pl: &[u8], s: usize, (x0, x1): (usize, usize), (y0, y1): (usize, usize)| {
            let at = |i: usize| {
                debug_assert!(i < pl.len());
                // SAFETY: `Yuv420Planes::new` checked that every plane holds its rows
                // (`(rows - 1) * stride + row width` bytes); the luma taps are inside the frame
                // (the caller's condition) and the chroma taps, halved, inside the half-size
                // planes of an even-sized frame.
                unsafe { *pl.get_unchecked(i) as i32 }
            };
            at(y0 * s + x0) * w[0]
                + at(y0 * s + x1) * w[1]
                + at(y1 * s + x0) * w[2]
                + at(y1 * s + x1) * w[3]
        };
        let luma = taps(p.y, p.y_stride, (x, x + 1), (y, y + 1));
        let (cx, cy) = ((x / 2, x.div_ceil(2)), (y / 2, y.div_ceil(2)));
        let u = taps(p.u, p.u_stride, cx, cy);
        let v = taps(p.v, p.v_stride, cx, cy);
        sums_to_bgr_fast(luma, u, v)
    }

    /// Bilinear BGR at a point with some taps outside the frame (black there), as `Source`.
    #[cold]
    fn border(&self, x: i32, y: i32, w: &[i16; 4]) -> [u8; 3] {
        let p = &self.0;
        let tap = |xx: i32, yy: i32| -> [u8; 3] {
            if xx >= 0 && yy >= 0 && xx < p.width && yy < p.height {
                p.bgr_at(xx as usize, yy as usize)
            } else {
                [0; 3]
            }
        };
        blend4(
            &[tap(x, y), tap(x + 1, y), tap(x, y + 1), tap(x + 1, y + 1)],
            w,
        )
    }
}

/// The BT.601 coefficients (`CY`, `CUB`, `CUG`, `CVG`, `CVR`) rounded from 2^-`SHIFT` to 2^-14:
/// what `sums_to_bgr_fast` and the AVX2 sampler multiply by.
const FAST_COEFFS: [i32; 5] = {
    const S: u32 = SHIFT - 14;
    const fn k(c: i64) -> i32 {
        ((c + (1 << (S - 1))) >> S) as i32
    }
    [k(CY), k(CUB), k(CUG), k(CVG), k(CVR)]
};

/// OpenCV's BT.601 conversion (`yuv_to_bgr`) of Y, U and V given as bilinear sums in 1/1024
/// units, rounded once, in 32-bit integers: the sums taken to 1/32 and the coefficients to
/// 2^-14 (a relative change below 1e-4: under 0.03 grey level).
#[inline(always)]
pub(super) fn sums_to_bgr_fast(y: i32, u: i32, v: i32) -> [u8; 3] {
    let [cy, cub, cug, cvg, cvr] = FAST_COEFFS;
    let yy = ((y - (16 << 10)).max(0) >> 5) * cy + (1 << 18);
    let (uu, vv) = ((u - (128 << 10)) >> 5, (v - (128 << 10)) >> 5);
    let c = |s: i32| (s >> 19).clamp(0, 255) as u8;
    [
        c(yy + cub * uu),
        c(yy + cug * uu + cvg * vv),
        c(yy + cvr * vv),
    ]
}

/// Bilinear BGR at a source point whose four taps are inside the image: `s` starts at the
/// top-left tap.
#[inline(always)]
pub(super) fn bilinear_inside(s: &[u8], step: usize, w: &[i16; 4]) -> [u8; 3] {
    let px = |i: usize| [s[i], s[i + 1], s[i + 2]];
    blend4(&[px(0), px(3), px(step), px(step + 3)], w)
}

/// `bilinear_inside` with SSE4.1: each row's two taps are interleaved per channel and
/// multiplied-added with their two weights in one `pmaddwd`.
///
/// # Safety
/// SSE4.1 must be available, and 8 bytes must be readable at `p` and at `p + step`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.1")]
#[inline]
pub(super) unsafe fn bilinear_sse41(p: *const u8, step: usize, w: &[i16; 4]) -> [u8; 3] {
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
