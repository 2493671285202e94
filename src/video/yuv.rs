//! The decoder's own frames: `Yuv420` (video-range 8-bit 4:2:0 planes as FFmpeg decoded them,
//! shared, not copied; what the analysis reads) and the conversions to BGR, done only where
//! something needs BGR: OpenCV's fixed-point BT.601 for 4:2:0, libswscale for the rest; and
//! back, a drawn BGR frame into the encoder's yuv420p (`BgrToYuv420p`).

use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::base::planes::Yuv420Planes;
use crate::lane::shot::{plane_sample, LumaSample};
use ffmpeg::ffi;
use ffmpeg_next as ffmpeg;
use opencv::core::{self, Mat};
use opencv::prelude::*;
use std::cell::RefCell;

/// A libswscale context in its bit-exact mode, freed on drop.
pub(crate) struct Sws {
    ctx: *mut ffi::SwsContext,
}

// SAFETY: a SwsContext may be used from any thread, one at a time (`&mut self` below).
unsafe impl Send for Sws {}

impl Sws {
    /// A context for frames the analysis reads: bit-exact (see `convert_raw`).
    pub(crate) const fn new() -> Self {
        Sws {
            ctx: std::ptr::null_mut(),
        }
    }

    /// Convert `f` (any pixel format libswscale reads) into `dst` planes of `dst_fmt`, same
    /// size (bicubic flags, as OpenCV's FFmpeg reader asks; a same-size conversion does not
    /// resample), with `accurate_rnd` and `bitexact`: libswscale's fast x86 paths give results
    /// that differ by the machine's CPU features, and a frame the analysis reads must be the
    /// same on every machine (self-calibration judges frames at an acceptance edge; CI runs
    /// elsewhere).
    /// `dst` and `dst_stride` are the destination's plane pointers and strides.
    ///
    /// # Safety
    /// `dst` must point at planes large enough for a `f.width()` x `f.height()` image of
    /// `dst_fmt` with the given strides.
    pub(crate) unsafe fn convert_raw(
        &mut self,
        src: &[*const u8; 4],
        src_stride: &[i32; 4],
        (w, h, src_fmt): (i32, i32, ffi::AVPixelFormat),
        dst: &[*mut u8; 4],
        dst_stride: &[i32; 4],
        (dw, dh, dst_fmt): (i32, i32, ffi::AVPixelFormat),
    ) -> std::result::Result<(), String> {
        let flags = ffi::SWS_BICUBIC | ffi::SWS_ACCURATE_RND | ffi::SWS_BITEXACT;
        let ctx = unsafe {
            ffi::sws_getCachedContext(
                self.ctx,
                w,
                h,
                src_fmt,
                dw,
                dh,
                dst_fmt,
                flags,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null(),
            )
        };
        if ctx.is_null() {
            return Err(format!(
                "libswscale cannot convert pixel format {} to {}",
                pix_fmt_name(src_fmt),
                pix_fmt_name(dst_fmt)
            ));
        }
        self.ctx = ctx;
        let r = unsafe {
            ffi::sws_scale(
                ctx,
                src.as_ptr(),
                src_stride.as_ptr(),
                0,
                h,
                dst.as_ptr(),
                dst_stride.as_ptr(),
            )
        };
        if r != dh {
            return Err(format!("libswscale converted {r} of {dh} rows"));
        }
        Ok(())
    }
}

impl Drop for Sws {
    fn drop(&mut self) {
        if !self.ctx.is_null() {
            // SAFETY: a context from sws_getCachedContext, freed once.
            unsafe { ffi::sws_freeContext(self.ctx) };
        }
    }
}

/// Video-range 8-bit 4:2:0 of even size: the frames OpenCV's I420 conversion takes.
fn is_i420(f: &ffmpeg::frame::Video) -> bool {
    f.format() == ffmpeg::format::Pixel::YUV420P
        && f.color_range() != ffmpeg::color::Range::JPEG
        && f.width() > 0
        && f.height() > 0
        && f.width().is_multiple_of(2)
        && f.height().is_multiple_of(2)
}

/// A pixel format's FFmpeg name (`yuv420p`, `yuv420p10le`).
pub(crate) fn pix_fmt_name(f: ffi::AVPixelFormat) -> String {
    // SAFETY: av_get_pix_fmt_name returns a static string or null.
    unsafe {
        let p = ffi::av_get_pix_fmt_name(f);
        if p.is_null() {
            "unknown".into()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

thread_local! {
    /// Each thread that converts decoded frames keeps its own cached context.
    static TO_BGR: RefCell<Sws> = const { RefCell::new(Sws::new()) };
}

/// A decoded frame (any pixel format, any bit depth) as a BGR `Mat` of its own size: video-range
/// 8-bit 4:2:0 of even size (nearly every dashcam) through OpenCV's BT.601 conversion (fixed
/// point, the same result on every CPU, and fast), anything else through libswscale in its
/// bit-exact mode.
pub(crate) fn bgr_mat_from_frame(f: &ffmpeg::frame::Video) -> std::result::Result<Mat, String> {
    let (w, h) = (f.width() as i32, f.height() as i32);
    if w <= 0 || h <= 0 {
        return Err("empty frame".into());
    }
    if is_i420(f) {
        return bgr_mat_from_i420(f, w, h).map_err(|e| e.to_string());
    }
    // SAFETY: every byte is written by sws_scale below before the Mat is read.
    let mut m = unsafe { Mat::new_rows_cols(h, w, core::CV_8UC3) }.map_err(|e| e.message)?;
    let fmt: ffi::AVPixelFormat = f.format().into();
    // SAFETY: the frame's own plane pointers and strides; the Mat holds h rows of w * 3 bytes.
    unsafe {
        let p = f.as_ptr();
        let src = (*p).data;
        let src = [
            src[0] as *const u8,
            src[1] as *const u8,
            src[2] as *const u8,
            src[3] as *const u8,
        ];
        let ls = (*p).linesize;
        let src_stride = [ls[0], ls[1], ls[2], ls[3]];
        let dst = [
            m.data_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        ];
        TO_BGR.with(|s| {
            s.borrow_mut().convert_raw(
                &src,
                &src_stride,
                (w, h, fmt),
                &dst,
                &[w * 3, 0, 0, 0],
                (w, h, ffi::AVPixelFormat::AV_PIX_FMT_BGR24),
            )
        })?;
    }
    Ok(m)
}

/// `f` (video-range `yuv420p`, even `w` x `h`) converted by OpenCV.
fn bgr_mat_from_i420(f: &ffmpeg::frame::Video, w: i32, h: i32) -> Result<Mat> {
    Ok(planes_of(f, w, h)?.to_bgr()?.into_mat())
}

/// The planes of `f` (8-bit 4:2:0, `w` x `h`) as a checked view.
fn planes_of(f: &ffmpeg::frame::Video, w: i32, h: i32) -> Result<Yuv420Planes<'_>> {
    Yuv420Planes::new(
        (w, h),
        (f.data(0), f.stride(0)),
        (f.data(1), f.stride(1)),
        (f.data(2), f.stride(2)),
    )
}

/// The luma grid of a decoded frame's Y plane as stored, when it is 8-bit planar YUV (any
/// chroma subsampling or range).
pub(crate) fn y_plane_sample(f: &ffmpeg::frame::Video) -> Option<LumaSample> {
    use ffmpeg::format::Pixel;
    let planar_yuv8 = matches!(
        f.format(),
        Pixel::YUV420P
            | Pixel::YUVJ420P
            | Pixel::YUV422P
            | Pixel::YUVJ422P
            | Pixel::YUV444P
            | Pixel::YUVJ444P
            | Pixel::NV12
            | Pixel::NV21
    );
    (planar_yuv8 && f.width() > 0 && f.height() > 0).then(|| {
        plane_sample(
            (f.width() as i32, f.height() as i32),
            f.data(0),
            f.stride(0),
        )
    })
}

/// A decoded video-range 8-bit 4:2:0 frame of even size (`yuv420p`, nearly every dashcam),
/// planes as the decoder left them: Y at full size, U and V at half size each way.
pub struct Yuv420 {
    frame: ffmpeg::frame::Video,
}

impl Yuv420 {
    /// Keep `f` as planes when it is video-range 8-bit 4:2:0 of even size (the frames
    /// `yuv_to_bgr`'s formula converts exactly as the BGR path does); otherwise hand it back.
    pub(crate) fn from_frame(
        f: ffmpeg::frame::Video,
    ) -> std::result::Result<Self, ffmpeg::frame::Video> {
        let (w, h) = (f.width() as i32, f.height() as i32);
        let ok = is_i420(&f) && planes_of(&f, w, h).is_ok();
        if ok {
            Ok(Self { frame: f })
        } else {
            Err(f)
        }
    }

    pub fn width(&self) -> i32 {
        self.frame.width() as i32
    }

    pub fn height(&self) -> i32 {
        self.frame.height() as i32
    }

    /// The planes as the analysis reads them.
    pub fn planes(&self) -> Result<Yuv420Planes<'_>> {
        planes_of(&self.frame, self.width(), self.height())
    }

    /// The frame as BGR (the same conversion `VideoSource::read` does).
    pub fn to_bgr(&self) -> Result<BgrFrame> {
        self.planes()?.to_bgr()
    }
}

/// Drawn BGR frames into the encoder's video-range BT.601 yuv420p planes, in three SIMD passes
/// of OpenCV: the luma of every pixel (`COLOR_BGR2YUV_I420`, whose own chroma is one pixel's of
/// each 2x2 block), the 2x2 blocks averaged (`INTER_AREA` at half size) and their full-range
/// chroma (`COLOR_BGR2YCrCb`) scaled to video range. libswscale's fast path for BGR24 (MMX) was
/// 8% of an overlay run's CPU and does not average the block. Made once per output video: its
/// scratch images are reused from frame to frame.
pub(crate) struct BgrToYuv420p {
    i420: Mat,
    half: Mat,
    ycc: Mat,
    /// Video-range chroma from full-range (JPEG) chroma: `128 + (c - 128) * 224 / 255`,
    /// rounded.
    chroma: [u8; 256],
}

impl BgrToYuv420p {
    pub(crate) fn new() -> Self {
        let mut chroma = [0u8; 256];
        for (c, v) in chroma.iter_mut().enumerate() {
            *v = (128.0 + (c as f64 - 128.0) * 224.0 / 255.0).round() as u8;
        }
        Self {
            i420: Mat::default(),
            half: Mat::default(),
            ycc: Mat::default(),
            chroma,
        }
    }

    /// `src` (BGR, even width and height) into the yuv420p planes `dst` with strides
    /// `dst_stride`.
    ///
    /// # Safety
    /// `dst` must point at a `src`-sized yuv420p image's planes with the given strides.
    pub(crate) unsafe fn convert(
        &mut self,
        src: &Mat,
        dst: &[*mut u8; 3],
        dst_stride: &[i32; 3],
    ) -> Result<()> {
        use opencv::imgproc;
        let (w, h) = (src.cols(), src.rows());
        imgproc::cvt_color_def(src, &mut self.i420, imgproc::COLOR_BGR2YUV_I420)?;
        imgproc::resize(
            src,
            &mut self.half,
            core::Size::new(w / 2, h / 2),
            0.0,
            0.0,
            imgproc::INTER_AREA,
        )?;
        imgproc::cvt_color_def(&self.half, &mut self.ycc, imgproc::COLOR_BGR2YCrCb)?;
        let (w, h) = (w as usize, h as usize);
        for y in 0..h {
            let row = self.i420.at_row::<u8>(y as i32)?;
            // SAFETY (caller): plane 0 holds h rows of at least w bytes at `dst_stride[0]`.
            let out = std::slice::from_raw_parts_mut(dst[0].add(y * dst_stride[0] as usize), w);
            out.copy_from_slice(&row[..w]);
        }
        for y in 0..h / 2 {
            let row = self.ycc.at_row::<core::Vec3b>(y as i32)?;
            // SAFETY (caller): planes 1 and 2 hold h/2 rows of at least w/2 bytes.
            let u = std::slice::from_raw_parts_mut(dst[1].add(y * dst_stride[1] as usize), w / 2);
            let v = std::slice::from_raw_parts_mut(dst[2].add(y * dst_stride[2] as usize), w / 2);
            for ((p, u), v) in row.iter().zip(u.iter_mut()).zip(v.iter_mut()) {
                // YCrCb: [Y, Cr, Cb].
                *u = self.chroma[p[2] as usize];
                *v = self.chroma[p[1] as usize];
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `BgrToYuv420p` on a picture with smooth ramps and sharp coloured edges, against
    /// BT.601's video-range formulas in floating point: luma within one level of each pixel's,
    /// chroma within two of each 2x2 block's mean colour (three roundings: the block mean, the
    /// full-range chroma, its scaling). libswscale's fast path, which wrote the overlay before,
    /// does not average the block: up to 76 levels from this at the picture's sharpest edges.
    #[test]
    fn bgr_to_yuv420p_follows_bt601_with_2x2_chroma() {
        let (w, h) = (64i32, 48i32);
        let mut m =
            Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, core::Scalar::all(0.0)).unwrap();
        for y in 0..h {
            for x in 0..w {
                let px: &mut core::Vec3b = m.at_2d_mut(y, x).unwrap();
                *px = if x < 20 {
                    core::Vec3b::from([(4 * x) as u8, (5 * y) as u8, 200])
                } else if (x / 3 + y / 5) % 2 == 0 {
                    core::Vec3b::from([0, 255, 0])
                } else {
                    core::Vec3b::from([230, 30, 90 + (x as u8)])
                };
            }
        }
        let (mut yp, mut up, mut vp) = (
            vec![0u8; (w * h) as usize],
            vec![0u8; (w * h / 4) as usize],
            vec![0u8; (w * h / 4) as usize],
        );
        // SAFETY: planes of a w x h yuv420p image with these strides.
        unsafe {
            BgrToYuv420p::new()
                .convert(
                    &m,
                    &[yp.as_mut_ptr(), up.as_mut_ptr(), vp.as_mut_ptr()],
                    &[w, w / 2, w / 2],
                )
                .unwrap();
        }
        let bgr = |x: i32, y: i32| {
            let p: &core::Vec3b = m.at_2d(y, x).unwrap();
            (p[0] as f64, p[1] as f64, p[2] as f64)
        };
        let luma = |(b, g, r): (f64, f64, f64)| 0.299 * r + 0.587 * g + 0.114 * b;
        for y in 0..h {
            for x in 0..w {
                let want = 16.0 + 219.0 / 255.0 * luma(bgr(x, y));
                let got = yp[(y * w + x) as usize] as f64;
                assert!(
                    (got - want).abs() <= 1.0,
                    "Y at {x},{y}: {got} vs {want:.2}"
                );
            }
        }
        for y in 0..h / 2 {
            for x in 0..w / 2 {
                let mut sum = (0.0, 0.0, 0.0);
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let p = bgr(2 * x + dx, 2 * y + dy);
                    sum = (sum.0 + p.0 / 4.0, sum.1 + p.1 / 4.0, sum.2 + p.2 / 4.0);
                }
                let l = luma(sum);
                let k = 224.0 / 255.0;
                let (u, v) = (
                    128.0 + k * 0.5 * (sum.0 - l) / (1.0 - 0.114),
                    128.0 + k * 0.5 * (sum.2 - l) / (1.0 - 0.299),
                );
                let i = (y * w / 2 + x) as usize;
                assert!(
                    (up[i] as f64 - u).abs() <= 2.0,
                    "U at {x},{y}: {} vs {u:.2}",
                    up[i]
                );
                assert!(
                    (vp[i] as f64 - v).abs() <= 2.0,
                    "V at {x},{y}: {} vs {v:.2}",
                    vp[i]
                );
            }
        }
    }
}
