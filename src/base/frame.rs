//! Thin newtypes over `Mat` that check type and channels once: `BgrFrame`, `BinaryMask`, `GrayImage`.

use crate::base::error::{Error, Result};
use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;
use std::path::Path;

fn type_name(typ: i32) -> String {
    core::type_to_string(typ).unwrap_or_else(|_| format!("type {typ}"))
}

macro_rules! mat_newtype {
    ($name:ident, $cv_type:expr, $what:literal) => {
        #[doc = concat!("A ", $what, " image backed by an OpenCV `Mat` of the checked type.")]
        #[derive(Debug, Clone)]
        pub struct $name(Mat);

        impl $name {
            /// Wrap a `Mat`, checking its element type.
            pub fn new(mat: Mat) -> Result<Self> {
                if mat.typ() != $cv_type || mat.empty() {
                    return Err(Error::BadMat {
                        what: $what,
                        expected: type_name($cv_type),
                        got: if mat.empty() {
                            "empty".into()
                        } else {
                            type_name(mat.typ())
                        },
                    });
                }
                Ok(Self(mat))
            }
            /// A zero-filled image of the given size.
            pub fn zeros(width: i32, height: i32) -> Result<Self> {
                let m = Mat::zeros(height, width, $cv_type)?.to_mat()?;
                Ok(Self(m))
            }
            /// The underlying `Mat`.
            pub fn mat(&self) -> &Mat {
                &self.0
            }
            /// The underlying `Mat`, mutably (the type cannot change through drawing calls).
            pub fn mat_mut(&mut self) -> &mut Mat {
                &mut self.0
            }
            /// Unwrap into the `Mat`.
            pub fn into_mat(self) -> Mat {
                self.0
            }
            pub fn width(&self) -> i32 {
                self.0.cols()
            }
            pub fn height(&self) -> i32 {
                self.0.rows()
            }
            pub fn size(&self) -> core::Size {
                core::Size::new(self.0.cols(), self.0.rows())
            }
            /// Contiguous pixel bytes, row-major.
            pub fn bytes(&self) -> Result<&[u8]> {
                Ok(self.0.data_bytes()?)
            }
            /// Write to an image file (format from the extension).
            pub fn write(&self, path: &Path) -> Result<()> {
                write_mat(&self.0, path)
            }
        }
    };
}

mat_newtype!(BgrFrame, core::CV_8UC3, "BGR 8-bit");
mat_newtype!(BinaryMask, core::CV_8UC1, "binary mask 8-bit");
mat_newtype!(GrayImage, core::CV_8UC1, "gray 8-bit");

/// Check that an image of `got` (width, height) has the `expected` size; the error names `path`.
pub fn check_size(path: &Path, expected: (i32, i32), got: (i32, i32)) -> Result<()> {
    if expected != got {
        return Err(Error::SizeMismatch {
            path: path.to_path_buf(),
            expected_w: expected.0,
            expected_h: expected.1,
            got_w: got.0,
            got_h: got.1,
        });
    }
    Ok(())
}

/// Write any 8-bit gray, BGR or BGRA `Mat` to an image file (format from the extension: JPEG
/// at quality 95, PNG, ...), mapping a failure to a typed error. A failed write removes what
/// it may have left (no half-written image stays behind).
pub fn write_mat(mat: &Mat, path: &Path) -> Result<()> {
    write_mat_at(mat, path, crate::base::imageio::JPEG_QUALITY)
}

/// `write_mat`, a JPEG at `jpeg_quality` (0..=100).
pub fn write_mat_at(mat: &Mat, path: &Path, jpeg_quality: i32) -> Result<()> {
    let written = crate::base::imageio::encode_for(path, mat, jpeg_quality)
        .ok()
        .and_then(|bytes| std::fs::write(path, bytes).ok());
    if written.is_none() {
        let _ = std::fs::remove_file(path);
        return Err(Error::WriteImage {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Pixels per axis a still may be off its camera file's size and still be used with it (placed
/// at the top-left, [`BgrFrame::fitted_within`]): the default of `lanes calibrate
/// --size-tolerance` and `lanes undistort --size-tolerance` (the Udacity board set has two
/// 1281x721 photos among 1280x720).
pub const STILL_SIZE_TOLERANCE: i32 = 2;

impl BgrFrame {
    /// This frame as a `w` x `h` one when its size is within `tolerance` px per axis of it:
    /// placed at the top-left (cut or padded with black at the right and bottom), the rule
    /// `lanes calibrate` applies to board photos a pixel off (`RunOptions::size_tolerance`).
    /// The frame unchanged at that size; `None` further off.
    pub fn fitted_within(&self, (w, h): (i32, i32), tolerance: i32) -> Result<Option<BgrFrame>> {
        if (self.width(), self.height()) == (w, h) {
            return Ok(Some(self.clone()));
        }
        if (self.width() - w).abs() > tolerance || (self.height() - h).abs() > tolerance {
            return Ok(None);
        }
        let mut out = BgrFrame::zeros(w, h)?;
        let roi = core::Rect::new(0, 0, self.width().min(w), self.height().min(h));
        let src = Mat::roi(self.mat(), roi)?;
        let mut dst = Mat::roi_mut(out.mat_mut(), roi)?;
        src.copy_to(&mut dst)?;
        Ok(Some(out))
    }

    /// This frame resampled through a pair of remap maps (bilinear, black outside): the one
    /// remap behind undistortion and the bird's-eye warp.
    pub fn remapped(&self, map1: &Mat, map2: &Mat) -> Result<BgrFrame> {
        let mut out = Mat::default();
        imgproc::remap(
            self.mat(),
            &mut out,
            map1,
            map2,
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        BgrFrame::new(out)
    }

    /// Read a colour image from a file (checked: see `crate::base::still`). Gray, alpha and 16-bit
    /// images are converted to 8-bit BGR; a truncated or corrupt file is an error.
    pub fn read(path: &Path) -> Result<Self> {
        Self::read_converted(path).map(|(f, _)| f)
    }

    /// `read`, and the conversion that was applied (e.g. "gray to BGR"), if any.
    pub fn read_converted(path: &Path) -> Result<(Self, Option<String>)> {
        let d = crate::base::still::read_bgr(path)?;
        Ok((Self::new(d.mat)?, d.converted))
    }

    /// `read_converted`, with `beside(width, height)` run while the pixels are decoded (see
    /// `still::read_bgr_beside`).
    pub fn read_converted_beside<T: Send>(
        path: &Path,
        beside: impl FnOnce(u32, u32) -> T + Send,
    ) -> Result<(Self, Option<String>, T)> {
        let (d, t) = crate::base::still::read_bgr_beside(path, beside)?;
        Ok((Self::new(d.mat)?, d.converted, t))
    }

    /// Convert to a gray image.
    pub fn to_gray(&self) -> Result<GrayImage> {
        let mut g = Mat::default();
        imgproc::cvt_color_def(&self.0, &mut g, imgproc::COLOR_BGR2GRAY)?;
        GrayImage::new(g)
    }
}

impl BinaryMask {
    /// Number of set pixels.
    pub fn count(&self) -> Result<i32> {
        Ok(core::count_non_zero(&self.0)?)
    }
    /// The mask as a 3-channel image (white on black) for display.
    pub fn to_bgr(&self) -> Result<BgrFrame> {
        let mut m = Mat::default();
        imgproc::cvt_color_def(&self.0, &mut m, imgproc::COLOR_GRAY2BGR)?;
        BgrFrame::new(m)
    }
}

impl GrayImage {
    /// The image as a 3-channel image for display.
    pub fn to_bgr(&self) -> Result<BgrFrame> {
        let mut m = Mat::default();
        imgproc::cvt_color_def(&self.0, &mut m, imgproc::COLOR_GRAY2BGR)?;
        BgrFrame::new(m)
    }
}

/// Allocations at least this large are mapped from the kernel; smaller ones come from the heap
/// (set by `keep_frame_buffers_in_the_heap`; glibc's own limit for the setting).
pub const MMAP_THRESHOLD: usize = 32 << 20;

/// Frames are 1-3 MB buffers allocated and freed for every frame (decode, overlay, composite).
/// By default glibc maps each one fresh from the kernel and unmaps it on free, so every frame
/// pays page faults and zeroing (2.4 ms for one 1280x720 composite here); with these limits the
/// buffers are reused from the heap. Peak memory is unchanged (bounded by the frames in flight).
/// Call first thing in `main`, before other threads exist.
pub fn keep_frame_buffers_in_the_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called before any other thread
    // exists. A refusal leaves the defaults, which are correct, only slower.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}
