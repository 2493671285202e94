//! A decoder's own frame as the analysis reads it: `Yuv420Planes` (borrowed video-range 8-bit
//! 4:2:0 planes), `RawFrame` (planes or BGR) and OpenCV's BT.601 conversion of one pixel,
//! `yuv_to_bgr`, so that band analysis converts only the pixels it samples.

use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use opencv::core::Mat;
use std::cell::RefCell;

/// OpenCV's fixed-point BT.601 video-range coefficients (`color_yuv.simd.hpp`, 2^20 units).
pub const CY: i64 = 1_220_542;
pub const CUB: i64 = 2_116_026;
pub const CUG: i64 = -409_993;
pub const CVG: i64 = -852_492;
pub const CVR: i64 = 1_673_527;
/// The coefficients' fixed-point shift.
pub const SHIFT: u32 = 20;

/// One video-range pixel as BGR, exactly as OpenCV's `COLOR_YUV2BGR_I420` converts it.
#[inline(always)]
pub fn yuv_to_bgr(y: u8, u: u8, v: u8) -> [u8; 3] {
    let yy = ((y as i64) - 16).max(0) * CY + (1 << (SHIFT - 1));
    let (uu, vv) = (u as i64 - 128, v as i64 - 128);
    let c = |s: i64| (s >> SHIFT).clamp(0, 255) as u8;
    [
        c(yy + CUB * uu),
        c(yy + CUG * uu + CVG * vv),
        c(yy + CVR * vv),
    ]
}

/// Borrowed video-range 8-bit 4:2:0 planes of an even-sized frame: Y at full size, U and V at
/// half size each way, each with its row stride in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Yuv420Planes<'a> {
    pub width: i32,
    pub height: i32,
    pub y: &'a [u8],
    pub y_stride: usize,
    pub u: &'a [u8],
    pub u_stride: usize,
    pub v: &'a [u8],
    pub v_stride: usize,
}

impl<'a> Yuv420Planes<'a> {
    /// Check the sizes: even width and height, strides at least a row, planes long enough.
    pub fn new(
        (width, height): (i32, i32),
        y: (&'a [u8], usize),
        u: (&'a [u8], usize),
        v: (&'a [u8], usize),
    ) -> Result<Self> {
        let even = width > 0 && height > 0 && width % 2 == 0 && height % 2 == 0;
        let (w, h) = (width.max(0) as usize, height.max(0) as usize);
        let fits = |(p, s): (&[u8], usize), pw: usize, ph: usize| {
            s >= pw && ph > 0 && p.len() >= (ph - 1) * s + pw
        };
        if !even || !fits(y, w, h) || !fits(u, w / 2, h / 2) || !fits(v, w / 2, h / 2) {
            return Err(Error::Invalid(format!(
                "4:2:0 planes of a {width}x{height} frame: sizes do not fit (strides {}, {}, {})",
                y.1, u.1, v.1
            )));
        }
        Ok(Self {
            width,
            height,
            y: y.0,
            y_stride: y.1,
            u: u.0,
            u_stride: u.1,
            v: v.0,
            v_stride: v.1,
        })
    }

    /// The BGR pixel at (`x`, `y`), inside the frame.
    #[inline(always)]
    pub fn bgr_at(&self, x: usize, y: usize) -> [u8; 3] {
        let c = (y / 2) * self.u_stride + x / 2;
        let cv = (y / 2) * self.v_stride + x / 2;
        yuv_to_bgr(self.y[y * self.y_stride + x], self.u[c], self.v[cv])
    }

    /// The whole frame as BGR through OpenCV's BT.601 conversion (fixed point: the same on
    /// every CPU): the conversion a decoded frame gets when something needs all of it.
    pub fn to_bgr(&self) -> Result<BgrFrame> {
        let (w, h) = (self.width as usize, self.height as usize);
        I420.with(|buf| {
            let mut packed = buf.borrow_mut();
            packed.clear();
            for (p, s, pw, ph) in [
                (self.y, self.y_stride, w, h),
                (self.u, self.u_stride, w / 2, h / 2),
                (self.v, self.v_stride, w / 2, h / 2),
            ] {
                for row in 0..ph {
                    packed.extend_from_slice(&p[row * s..row * s + pw]);
                }
            }
            let i420 = Mat::new_rows_cols_with_data(self.height * 3 / 2, self.width, &packed[..])?;
            let mut bgr = Mat::default();
            opencv::imgproc::cvt_color(&i420, &mut bgr, opencv::imgproc::COLOR_YUV2BGR_I420, 0)?;
            BgrFrame::new(bgr)
        })
    }
}

thread_local! {
    /// Each converting thread's I420 buffer, reused frame after frame (a fresh 1.4 MB buffer
    /// per 720p frame would be a fresh mapping and its page faults every time).
    static I420: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A raw frame as the analysis reads it: the decoder's planes, or BGR (stills, other pixel
/// formats, rotated videos, and whatever is drawn on).
#[derive(Debug, Clone, Copy)]
pub enum RawFrame<'a> {
    Bgr(&'a BgrFrame),
    Yuv(Yuv420Planes<'a>),
}

impl<'a> From<&'a BgrFrame> for RawFrame<'a> {
    fn from(b: &'a BgrFrame) -> Self {
        RawFrame::Bgr(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 56) as u8
            })
            .collect()
    }

    #[test]
    fn pixel_formula_equals_opencv_i420_conversion_on_every_pixel() {
        // Noise planes cover every Y, U and V value many times over, clamps included; strides
        // wider than the rows.
        let (w, h) = (256usize, 128usize);
        let (ys, cs) = (w + 8, w / 2 + 4);
        let y = noise(ys * h, 1);
        let u = noise(cs * h / 2, 2);
        let v = noise(cs * h / 2, 3);
        let p = Yuv420Planes::new(
            (w as i32, h as i32),
            (&y[..], ys),
            (&u[..], cs),
            (&v[..], cs),
        )
        .unwrap();
        let bgr = p.to_bgr().unwrap();
        let d = bgr.bytes().unwrap();
        let mut clamped = 0;
        for yy in 0..h {
            for xx in 0..w {
                let got = p.bgr_at(xx, yy);
                let i = (yy * w + xx) * 3;
                assert_eq!(got, [d[i], d[i + 1], d[i + 2]], "pixel {xx},{yy}");
                clamped += got.iter().any(|c| *c == 0 || *c == 255) as usize;
            }
        }
        assert!(clamped > 1000, "the clamps were exercised ({clamped})");
    }

    #[test]
    fn planes_that_do_not_fit_are_refused() {
        let y = [0u8; 64];
        let c = [0u8; 16];
        assert!(Yuv420Planes::new((8, 8), (&y[..], 8), (&c[..], 4), (&c[..], 4)).is_ok());
        assert!(Yuv420Planes::new((7, 8), (&y[..], 8), (&c[..], 4), (&c[..], 4)).is_err());
        assert!(Yuv420Planes::new((8, 8), (&y[..60], 8), (&c[..], 4), (&c[..], 4)).is_err());
        assert!(Yuv420Planes::new((8, 8), (&y[..], 8), (&c[..], 3), (&c[..], 4)).is_err());
    }
}
