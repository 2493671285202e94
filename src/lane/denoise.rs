//! Sensor noise: measured on each frame, and smoothed away before the analysis where it is
//! strong enough to pass for markings.
//!
//! The local-contrast threshold keeps a pixel that is brighter than the road beside it by
//! `threshold.l_contrast_min` (15 grey levels by default). The road samples beside a pixel are
//! averages, but the pixel itself is one sample: in a frame whose noise has a standard deviation
//! of a third of that margin, a pixel of plain road passes by noise alone more than once in a
//! thousand (a one-sided three-sigma event), and the mask fills with speckle that the search
//! climbs on (a cheap dashcam at night, high gain). Such a frame is smoothed first (Gaussian,
//! wide enough to bring the noise to half that level), and the analysis reads the smoothed
//! copy; what is drawn on is the frame as decoded. Noise from a quarter of the margin
//! (`SMOOTH_FROM` of the gate) gets the narrowest blur (1 px): plain road stays clean there,
//! but a faint marking, whose contrast is near the margin (dusk, a dim camera), passes only
//! where the noise adds to it and is left as speckle the line's evidence does not count.
//! Frames below a quarter of the margin are not touched, nor are frames beyond what a 3 px
//! blur brings to half the level (`beyond_rescue`): smoothed, such noise forms blobs that
//! pass for markings.
//!
//! The noise is measured as Immerkaer's estimator does ("Fast noise variance estimation",
//! 1996): the mean absolute response of a 3x3 mask that cancels any plane, `sqrt(pi/2) / 6`
//! times it, on the luma (every 32nd row, every 2nd column: 14 000 samples, about 20
//! microseconds, a 720p frame).
//! Texture adds to it a little: the shared clips measure 0.2-4 grey levels, most under 1.5.

use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::base::planes::{RawFrame, Yuv420Planes};
use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;

/// Rows and columns between the noise estimate's samples.
const ROW_STEP: usize = 32;
const COL_STEP: usize = 2;

/// The widest smoothing, px (Gaussian sigma): beyond it far markings blur away.
const MAX_BLUR: f64 = 3.0;

/// The noise level (grey levels, standard deviation) at which plain road passes for markings,
/// for a white-marking contrast of `l_contrast_min`: a third of it. Frames are smoothed from
/// `SMOOTH_FROM` of it, to half of it (`blur_for`).
pub fn gate(l_contrast_min: u8) -> f64 {
    l_contrast_min as f64 / 3.0
}

/// The share of the gate from which a frame is smoothed: 0.75, noise of a quarter of the
/// contrast margin (3.75 grey levels at the default 15). There a faint marking falls apart:
/// the Autobahn clip darkened with noise of 4.5 grey levels had its dashed line at a
/// confidence of 0.25-0.55 on a quarter of its frames (both lines on 287 of 390; smoothed,
/// 382), and 8 of the 30 CULane frames measure 3.8-4.2 (their ego lines found: 28 -> 30 of 56).
/// The shared clips and stills (but those CULane frames) measure under it and are not touched.
pub const SMOOTH_FROM: f64 = 0.75;

/// The noise of an 8-bit plane (`stride` bytes a row, `step` bytes between a row's pixels),
/// grey levels; 0 for a plane under 3x3.
pub fn sigma(data: &[u8], width: usize, height: usize, stride: usize, step: usize) -> f64 {
    if width < 3 || height < 3 {
        return 0.0;
    }
    let at = |x: usize, y: usize| data[y * stride + x * step] as i32;
    let (mut sum, mut n) = (0u64, 0u64);
    for y in (1..height - 1).step_by(ROW_STEP) {
        for x in (1..width - 1).step_by(COL_STEP) {
            let v = at(x - 1, y - 1) - 2 * at(x, y - 1) + at(x + 1, y - 1) - 2 * at(x - 1, y)
                + 4 * at(x, y)
                - 2 * at(x + 1, y)
                + at(x - 1, y + 1)
                - 2 * at(x, y + 1)
                + at(x + 1, y + 1);
            sum += v.unsigned_abs() as u64;
            n += 1;
        }
    }
    if n == 0 {
        return 0.0;
    }
    (std::f64::consts::PI / 2.0).sqrt() * sum as f64 / (6.0 * n as f64)
}

/// The noise of a raw frame: its luma plane's, or a BGR frame's green channel's.
pub fn frame_sigma(raw: RawFrame) -> Result<f64> {
    Ok(match raw {
        RawFrame::Yuv(p) => sigma(p.y, p.width as usize, p.height as usize, p.y_stride, 1),
        RawFrame::Bgr(b) => {
            let bytes = b.mat().data_bytes()?;
            let (w, h) = (b.width() as usize, b.height() as usize);
            sigma(&bytes[1..], w, h, w * 3, 3)
        }
    })
}

/// The Gaussian sigma that brings noise `sigma` to half the `gate` (white noise falls by
/// `1 / (2 sqrt(pi) s)` under a blur of sigma `s`), at least 1 px and at most `MAX_BLUR`.
pub fn blur_for(sigma: f64, gate: f64) -> f64 {
    (sigma / (gate * std::f64::consts::PI.sqrt())).clamp(1.0, MAX_BLUR)
}

/// A frame smoothed for the analysis, owning its pixels.
pub enum Smoothed {
    Bgr(BgrFrame),
    /// Y, U and V, each contiguous.
    Planes {
        width: i32,
        height: i32,
        y: Mat,
        u: Mat,
        v: Mat,
    },
}

impl Smoothed {
    /// The smoothed frame as the analysis reads it.
    pub fn raw(&self) -> Result<RawFrame<'_>> {
        Ok(match self {
            Smoothed::Bgr(b) => RawFrame::Bgr(b),
            Smoothed::Planes {
                width,
                height,
                y,
                u,
                v,
            } => RawFrame::Yuv(Yuv420Planes::new(
                (*width, *height),
                (y.data_bytes()?, *width as usize),
                (u.data_bytes()?, *width as usize / 2),
                (v.data_bytes()?, *width as usize / 2),
            )?),
        })
    }
}

/// A Gaussian blur of `sigma` px (the picture's edge replicated).
fn gauss(m: &impl core::ToInputArray, sigma: f64) -> Result<Mat> {
    let mut out = Mat::default();
    imgproc::gaussian_blur(
        m,
        &mut out,
        core::Size::new(0, 0),
        sigma,
        sigma,
        core::BORDER_REPLICATE,
    )?;
    Ok(out)
}

/// `raw` smoothed with a Gaussian of `blur` px; the chroma planes (half size) by as many of their
/// own pixels: the yellow rule's margin (`b_contrast_min`, 8) is half the white rule's, and a
/// marking's colour needs less detail than its edges.
pub fn smooth(raw: RawFrame, blur: f64) -> Result<Smoothed> {
    Ok(match raw {
        RawFrame::Bgr(b) => Smoothed::Bgr(BgrFrame::new(gauss(b.mat(), blur)?)?),
        RawFrame::Yuv(p) => {
            // Each plane read in place, rows `stride` bytes apart (no packed copy).
            let plane = |data: &[u8], stride: usize, w: i32, h: i32| -> Result<Mat> {
                // SAFETY: `Yuv420Planes::new` checked that `data` holds `h` rows of `w` bytes
                // `stride` apart; the header only lives for the blur, which reads it (the
                // pointer is cast to mutable for the constructor's type, nothing writes to it).
                let m = unsafe {
                    Mat::new_rows_cols_with_data_unsafe(
                        h,
                        w,
                        core::CV_8UC1,
                        data.as_ptr() as *mut std::ffi::c_void,
                        stride,
                    )
                }?;
                gauss(&m, blur)
            };
            let (w, h) = (p.width, p.height);
            Smoothed::Planes {
                width: w,
                height: h,
                y: plane(p.y, p.y_stride, w, h)?,
                u: plane(p.u, p.u_stride, w / 2, h / 2)?,
                v: plane(p.v, p.v_stride, w / 2, h / 2)?,
            }
        }
    })
}

/// The noise above which a frame is left as it is, for a `gate`: what the widest blur
/// (`MAX_BLUR`) brings only to half the gate (26.6 grey levels at the default gate of 5).
pub fn beyond_rescue(gate: f64) -> f64 {
    MAX_BLUR * gate * std::f64::consts::PI.sqrt()
}

/// `raw` smoothed when its noise is over `SMOOTH_FROM` of `gate` (grey levels): the smoothed
/// frame and the noise measured; `None` for a frame under it, and for one so noisy that the
/// widest blur leaves more than half the gate (`beyond_rescue`): such noise, smoothed, forms
/// blobs that pass for markings (a picture of pure noise would show a lane), while the frame
/// as it is shows none.
pub fn when_noisy(raw: RawFrame, gate: f64) -> Result<Option<(Smoothed, f64)>> {
    let s = frame_sigma(raw)?;
    if s <= SMOOTH_FROM * gate || s > beyond_rescue(gate) {
        return Ok(None);
    }
    Ok(Some((smooth(raw, blur_for(s, gate))?, s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::Scalar;

    /// A grey 200x120 BGR frame with a vertical stripe, plus uniform noise of +-`amp` levels.
    fn frame(amp: i32) -> BgrFrame {
        let mut m =
            Mat::new_rows_cols_with_default(120, 200, core::CV_8UC3, Scalar::all(90.0)).unwrap();
        let mut x: u64 = 12345;
        let b = m.data_bytes_mut().unwrap();
        for (i, v) in b.iter_mut().enumerate() {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = if amp > 0 {
                ((x >> 33) % (2 * amp as u64 + 1)) as i32 - amp
            } else {
                0
            };
            let col = (i / 3) % 200;
            let base = if (95..105).contains(&col) { 200 } else { 90 };
            *v = (base + n).clamp(0, 255) as u8;
        }
        BgrFrame::new(m).unwrap()
    }

    #[test]
    fn noise_is_measured_and_smoothed_only_over_the_gate() {
        // Uniform noise of +-a levels has a standard deviation of a / sqrt(3).
        let clean = frame_sigma(RawFrame::Bgr(&frame(0))).unwrap();
        assert!(clean < 0.5, "a flat frame with a stripe: {clean}");
        let s = frame_sigma(RawFrame::Bgr(&frame(24))).unwrap();
        assert!((s - 24.0 / 3f64.sqrt()).abs() < 2.0, "{s}");
        let g = gate(15);
        assert_eq!(g, 5.0);
        // +-5 levels: 2.9, under a quarter of the margin (3.75); +-7: 4.0, over it.
        assert!(when_noisy(RawFrame::Bgr(&frame(5)), g).unwrap().is_none());
        let (_, faint) = when_noisy(RawFrame::Bgr(&frame(7)), g).unwrap().unwrap();
        assert!(faint > SMOOTH_FROM * g && faint < g, "{faint}");
        assert_eq!(blur_for(faint, g), 1.0);
        let (sm, measured) = when_noisy(RawFrame::Bgr(&frame(24)), g).unwrap().unwrap();
        assert!(measured > g);
        let Smoothed::Bgr(b) = &sm else {
            panic!("a BGR frame stays BGR")
        };
        // Noise beyond rescue (+-60 levels, a standard deviation of 35) is left as it is.
        assert!(beyond_rescue(g) < 30.0);
        assert!(when_noisy(RawFrame::Bgr(&frame(60)), g).unwrap().is_none());
        let after = frame_sigma(RawFrame::Bgr(b)).unwrap();
        assert!(after < g / 2.0 + 0.5, "smoothed to {after}");
        // The stripe survives: its middle is still far above the road.
        let px = b.mat().at_2d::<core::Vec3b>(60, 100).unwrap()[1];
        let road = b.mat().at_2d::<core::Vec3b>(60, 40).unwrap()[1];
        assert!(px as i32 - road as i32 > 80, "{px} vs {road}");
    }

    #[test]
    fn planes_are_smoothed_as_planes() {
        let bgr = frame(24);
        let mut yuv = Mat::default();
        imgproc::cvt_color(bgr.mat(), &mut yuv, imgproc::COLOR_BGR2YUV_I420, 0).unwrap();
        let d = yuv.data_bytes().unwrap();
        let (w, h) = (200usize, 120usize);
        let p = Yuv420Planes::new(
            (200, 120),
            (&d[..w * h], w),
            (&d[w * h..w * h + w * h / 4], w / 2),
            (&d[w * h + w * h / 4..], w / 2),
        )
        .unwrap();
        let (sm, s) = when_noisy(RawFrame::Yuv(p), 5.0).unwrap().unwrap();
        assert!(s > 5.0);
        let RawFrame::Yuv(q) = sm.raw().unwrap() else {
            panic!("planes stay planes")
        };
        assert_eq!((q.width, q.height), (200, 120));
        assert!(frame_sigma(RawFrame::Yuv(q)).unwrap() < 3.0);
    }
}
