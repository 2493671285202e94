//! The decoder's own frames: `Yuv420` (8-bit 4:2:0 planes as FFmpeg decoded them, shared, not
//! copied) and the conversions to BGR through libswscale, done only where something needs BGR.

use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use ffmpeg::ffi;
use ffmpeg_next as ffmpeg;
use opencv::core::{self, Mat};
use opencv::prelude::*;
use std::cell::RefCell;

/// A libswscale context, freed on drop.
pub(crate) struct Sws(*mut ffi::SwsContext);

// SAFETY: a SwsContext may be used from any thread, one at a time (`&mut self` below).
unsafe impl Send for Sws {}

impl Sws {
    pub(crate) const fn new() -> Self {
        Sws(std::ptr::null_mut())
    }

    /// Convert `f` (any pixel format libswscale reads) into `dst` planes of `dst_fmt`, same
    /// size (bicubic flags, as OpenCV's FFmpeg reader asks; a same-size conversion does not
    /// resample), with `accurate_rnd` and `bitexact`: libswscale's fast x86 paths give results
    /// that differ by the machine's CPU features, and a frame must be the same on every
    /// machine (self-calibration judges frames at an acceptance edge; CI runs elsewhere).
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
        let ctx = unsafe {
            ffi::sws_getCachedContext(
                self.0,
                w,
                h,
                src_fmt,
                dw,
                dh,
                dst_fmt,
                ffi::SWS_BICUBIC | ffi::SWS_ACCURATE_RND | ffi::SWS_BITEXACT,
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
        self.0 = ctx;
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
        if !self.0.is_null() {
            // SAFETY: a context from sws_getCachedContext, freed once.
            unsafe { ffi::sws_freeContext(self.0) };
        }
    }
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
    if f.format() == ffmpeg::format::Pixel::YUV420P
        && f.color_range() != ffmpeg::color::Range::JPEG
        && w % 2 == 0
        && h % 2 == 0
    {
        return bgr_mat_from_i420(f, w, h).map_err(|e| e.message);
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

thread_local! {
    /// Each converting thread's I420 buffer, reused frame after frame (a fresh 1.4 MB buffer
    /// per 720p frame would be a fresh mapping and its page faults every time).
    static I420: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// `f` (video-range `yuv420p`, even `w` x `h`) packed into one I420 buffer and converted by
/// OpenCV.
fn bgr_mat_from_i420(f: &ffmpeg::frame::Video, w: i32, h: i32) -> opencv::Result<Mat> {
    let (wu, hu) = (w as usize, h as usize);
    I420.with(|buf| {
        let mut packed = buf.borrow_mut();
        packed.clear();
        for (plane, pw, ph) in [(0, wu, hu), (1, wu / 2, hu / 2), (2, wu / 2, hu / 2)] {
            let (data, stride) = (f.data(plane), f.stride(plane));
            for row in 0..ph {
                packed.extend_from_slice(&data[row * stride..row * stride + pw]);
            }
        }
        let i420 = Mat::new_rows_cols_with_data(h * 3 / 2, w, &packed[..])?;
        let mut bgr = Mat::default();
        opencv::imgproc::cvt_color(&i420, &mut bgr, opencv::imgproc::COLOR_YUV2BGR_I420, 0)?;
        Ok(bgr)
    })
}

/// A decoded 8-bit 4:2:0 frame (`yuv420p`, or `yuvj420p` full range), planes as the decoder
/// left them: Y at full size, U and V at half size each way (rounded up).
pub struct Yuv420 {
    frame: ffmpeg::frame::Video,
}

impl Yuv420 {
    /// Keep `f` as planes when `keep` and it is 8-bit 4:2:0; otherwise hand it back.
    pub(crate) fn from_frame(
        f: ffmpeg::frame::Video,
        keep: bool,
    ) -> std::result::Result<Self, ffmpeg::frame::Video> {
        use ffmpeg::format::Pixel;
        let ok = keep
            && matches!(f.format(), Pixel::YUV420P | Pixel::YUVJ420P)
            && f.width() > 0
            && f.height() > 0;
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

    /// Full-range (JPEG) levels rather than video levels (16..235).
    pub fn full_range(&self) -> bool {
        self.frame.format() == ffmpeg::format::Pixel::YUVJ420P
            || self.frame.color_range() == ffmpeg::color::Range::JPEG
    }

    /// Plane `i` (0 = Y, 1 = U, 2 = V) and its stride in bytes.
    pub fn plane(&self, i: usize) -> (&[u8], usize) {
        (self.frame.data(i), self.frame.stride(i))
    }

    /// The frame as BGR through libswscale (the same conversion `VideoSource::read` does).
    pub fn to_bgr(&self) -> Result<BgrFrame> {
        let m = bgr_mat_from_frame(&self.frame).map_err(Error::Invalid)?;
        BgrFrame::new(m)
    }
}
