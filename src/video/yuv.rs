//! The decoder's own frames: `Yuv420` (video-range 8-bit 4:2:0 planes as FFmpeg decoded them,
//! shared, not copied; what the analysis reads) and the conversions to BGR, done only where
//! something needs BGR: OpenCV's fixed-point BT.601 for 4:2:0, libswscale for the rest.

use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::base::planes::Yuv420Planes;
use crate::lane::shot::{plane_sample, LumaSample};
use ffmpeg::ffi;
use ffmpeg_next as ffmpeg;
use opencv::core::{self, Mat};
use opencv::prelude::*;
use std::cell::RefCell;

/// A libswscale context, freed on drop; `exact` asks for the bit-exact mode.
pub(crate) struct Sws {
    ctx: *mut ffi::SwsContext,
    exact: bool,
}

// SAFETY: a SwsContext may be used from any thread, one at a time (`&mut self` below).
unsafe impl Send for Sws {}

impl Sws {
    /// A context for frames the analysis reads: bit-exact (see `convert_raw`).
    pub(crate) const fn new() -> Self {
        Sws {
            ctx: std::ptr::null_mut(),
            exact: true,
        }
    }

    /// A context for frames written to a video: libswscale's fast paths (a pixel may differ by
    /// one level between CPUs, which no viewer sees; `accurate_rnd` would triple the
    /// conversion's time, about 3.5 ms of a 720p frame here).
    pub(crate) const fn fast() -> Self {
        Sws {
            ctx: std::ptr::null_mut(),
            exact: false,
        }
    }

    /// Convert `f` (any pixel format libswscale reads) into `dst` planes of `dst_fmt`, same
    /// size (bicubic flags, as OpenCV's FFmpeg reader asks; a same-size conversion does not
    /// resample); an `exact` context adds `accurate_rnd` and `bitexact`: libswscale's fast x86
    /// paths give results that differ by the machine's CPU features, and a frame the analysis
    /// reads must be the same on every machine (self-calibration judges frames at an
    /// acceptance edge; CI runs elsewhere).
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
        let flags = if self.exact {
            ffi::SWS_BICUBIC | ffi::SWS_ACCURATE_RND | ffi::SWS_BITEXACT
        } else {
            ffi::SWS_BICUBIC
        };
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
