//! Image files in and out without OpenCV's imgcodecs: JPEG through the system's libjpeg
//! (`csrc/jpeg.c`, the same library and settings imgcodecs used, so the pixels are the same),
//! the other formats through the `image` crate, converted to 8-bit BGR as imgcodecs'
//! `IMREAD_COLOR` did (gray replicated, alpha dropped, 16-bit samples shifted right by 8, the
//! EXIF orientation applied).
//!
//! Why not imgcodecs: its library links GDAL, HDF5, Poppler, OpenEXR and a hundred more, and
//! resolving them cost every start of the binary about 90 ms (`lanes --version` 130 -> 37 ms).

use opencv::core::{self, Mat};
use opencv::prelude::*;
use std::ffi::{c_char, c_int, c_uchar, c_ulong, c_void};
use std::io::Cursor;
use std::path::Path;

/// Gives `lanes_jpeg_decode` the buffer for the pixels (`csrc/jpeg.c`'s `lanes_alloc_fn`).
type AllocFn = unsafe extern "C" fn(*mut c_void, c_int, c_int, c_int) -> *mut c_uchar;

extern "C" {
    #[allow(clippy::too_many_arguments)]
    fn lanes_jpeg_decode(
        data: *const c_uchar,
        len: c_ulong,
        gray: c_int,
        alloc: AllocFn,
        ctx: *mut c_void,
        warnings: *mut c_int,
        msg: *mut c_char,
        msg_len: usize,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    fn lanes_jpeg_encode(
        pixels: *const c_uchar,
        width: c_int,
        height: c_int,
        stride: usize,
        channels: c_int,
        quality: c_int,
        out: *mut *mut c_uchar,
        out_len: *mut c_ulong,
        msg: *mut c_char,
        msg_len: usize,
    ) -> c_int;
    fn lanes_jpeg_free(p: *mut c_uchar);
}

/// A decoded JPEG and libjpeg's first warning, if it warned (corrupt data it resynchronised
/// past, a premature end: the picture may be partly gray).
pub struct Jpeg {
    pub mat: Mat,
    pub warning: Option<String>,
}

fn text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The decoder's buffer: a `Mat` of the size and channels asked for, kept in `ctx` (an
/// `Option<Mat>`), its pixels left for libjpeg to write (every row is written).
unsafe extern "C" fn alloc_mat(ctx: *mut c_void, w: c_int, h: c_int, ch: c_int) -> *mut c_uchar {
    // SAFETY: `decode_jpeg` passes a pointer to its own `Option<Mat>`, alive for the call.
    let slot = unsafe { &mut *(ctx as *mut Option<Mat>) };
    let typ = if ch == 1 {
        core::CV_8UC1
    } else {
        core::CV_8UC3
    };
    // SAFETY: an uninitialised 8-bit buffer, fully written by the decoder before it is read.
    match unsafe { Mat::new_rows_cols(h, w, typ) } {
        Ok(mut m) if m.is_continuous() && !m.empty() => {
            let p = m.data_mut();
            *slot = Some(m);
            p
        }
        _ => std::ptr::null_mut(),
    }
}

/// Decode JPEG bytes to 8-bit BGR (`gray` false) or gray, with the EXIF orientation applied.
/// `Err` carries libjpeg's message.
pub fn decode_jpeg(bytes: &[u8], gray: bool) -> Result<Jpeg, String> {
    let mut slot: Option<Mat> = None;
    let mut warnings = 0;
    let mut msg = [0u8; 200];
    // SAFETY: `bytes` is only read; `slot`, `warnings` and `msg` are locals that outlive the
    // call; `alloc_mat` is called (at most once) before the pixels are written.
    let rc = unsafe {
        lanes_jpeg_decode(
            bytes.as_ptr(),
            bytes.len() as c_ulong,
            gray as c_int,
            alloc_mat,
            (&mut slot as *mut Option<Mat>).cast(),
            &mut warnings,
            msg.as_mut_ptr().cast(),
            msg.len(),
        )
    };
    let mat = match (rc, slot) {
        (0, Some(m)) => m,
        _ => return Err(text(&msg)),
    };
    let mat = oriented(mat, jpeg_orientation(bytes)).map_err(|e| e.to_string())?;
    Ok(Jpeg {
        mat,
        warning: (warnings > 0).then(|| text(&msg)),
    })
}

/// The EXIF orientation of a JPEG (1, no change, when there is none or it cannot be read).
fn jpeg_orientation(bytes: &[u8]) -> u8 {
    use image::ImageDecoder;
    image::codecs::jpeg::JpegDecoder::new(Cursor::new(bytes))
        .and_then(|mut d| d.orientation())
        .map(|o| o.to_exif())
        .unwrap_or(1)
}

/// `mat` turned upright by an EXIF orientation, as imgcodecs' `ApplyExifOrientation`.
fn oriented(mat: Mat, exif: u8) -> opencv::Result<Mat> {
    let mut out = Mat::default();
    match exif {
        2 => core::flip(&mat, &mut out, 1)?,
        3 => core::flip(&mat, &mut out, -1)?,
        4 => core::flip(&mat, &mut out, 0)?,
        5 => core::transpose(&mat, &mut out)?,
        6 => core::rotate(&mat, &mut out, core::ROTATE_90_CLOCKWISE)?,
        7 => {
            let mut t = Mat::default();
            core::transpose(&mat, &mut t)?;
            core::flip(&t, &mut out, -1)?;
        }
        8 => core::rotate(&mat, &mut out, core::ROTATE_90_COUNTERCLOCKWISE)?,
        _ => return Ok(mat),
    }
    Ok(out)
}

/// A picture decoded by the `image` crate as 8-bit BGR (`gray` false) or gray, converted the way
/// imgcodecs did: 16-bit samples shifted right by 8, alpha dropped, gray replicated; gray from
/// colour with OpenCV's BGR-to-gray weights.
fn from_image(img: image::DynamicImage, gray: bool) -> opencv::Result<Mat> {
    use image::DynamicImage as D;
    let (w, h) = (img.width() as i32, img.height() as i32);
    let (channels, samples): (usize, Vec<u8>) = match img {
        D::ImageLuma8(b) => (1, b.into_raw()),
        D::ImageLumaA8(b) => (1, b.into_raw().chunks(2).map(|p| p[0]).collect()),
        D::ImageRgb8(b) => (3, b.into_raw()),
        D::ImageRgba8(b) => (
            3,
            b.into_raw()
                .chunks(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect(),
        ),
        D::ImageLuma16(b) => (1, b.into_raw().iter().map(|v| (v >> 8) as u8).collect()),
        D::ImageLumaA16(b) => (
            1,
            b.into_raw().chunks(2).map(|p| (p[0] >> 8) as u8).collect(),
        ),
        D::ImageRgb16(b) => (3, b.into_raw().iter().map(|v| (v >> 8) as u8).collect()),
        D::ImageRgba16(b) => (
            3,
            b.into_raw()
                .chunks(4)
                .flat_map(|p| [(p[0] >> 8) as u8, (p[1] >> 8) as u8, (p[2] >> 8) as u8])
                .collect(),
        ),
        other => (3, other.to_rgb8().into_raw()),
    };
    let typ = if channels == 1 {
        core::CV_8UC1
    } else {
        core::CV_8UC3
    };
    let mut m = Mat::new_rows_cols_with_default(h, w, typ, core::Scalar::all(0.0))?;
    m.data_bytes_mut()?.copy_from_slice(&samples);
    let code = match (channels, gray) {
        (1, false) => opencv::imgproc::COLOR_GRAY2BGR,
        (3, false) => opencv::imgproc::COLOR_RGB2BGR,
        (3, true) => opencv::imgproc::COLOR_RGB2GRAY,
        _ => return Ok(m),
    };
    let mut out = Mat::default();
    opencv::imgproc::cvt_color_def(&m, &mut out, code)?;
    Ok(out)
}

/// Decode any still (format from its bytes) to 8-bit BGR or gray. `Err` carries the decoder's
/// message.
pub fn decode(bytes: &[u8], gray: bool) -> Result<Mat, String> {
    decode_warned(bytes, gray).map(|(m, _)| m)
}

/// `decode`, with libjpeg's first warning when the still is a JPEG it warned about.
pub fn decode_warned(bytes: &[u8], gray: bool) -> Result<(Mat, Option<String>), String> {
    let reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    if reader.format() == Some(image::ImageFormat::Jpeg) {
        return decode_jpeg(bytes, gray).map(|j| (j.mat, j.warning));
    }
    let png = reader.format() == Some(image::ImageFormat::Png);
    let mut reader = reader;
    reader.no_limits();
    let img = reader.decode().map_err(|e| e.to_string())?;
    if gray && png && img.color().has_color() {
        return png_gray(&img.to_rgb8())
            .map(|m| (m, None))
            .map_err(|e| e.to_string());
    }
    from_image(img, gray)
        .map(|m| (m, None))
        .map_err(|e| e.to_string())
}

/// Gray from a colour PNG as imgcodecs read it: libpng's own conversion with the weights
/// 0.299 and 0.587 in 15-bit fixed point, truncated (it differs from `cvtColor` by a level).
fn png_gray(rgb: &image::RgbImage) -> opencv::Result<Mat> {
    let (w, h) = (rgb.width() as i32, rgb.height() as i32);
    let mut m = Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, core::Scalar::all(0.0))?;
    for (g, p) in m.data_bytes_mut()?.iter_mut().zip(rgb.pixels()) {
        let [r, gr, b] = p.0.map(u32::from);
        *g = if r == gr && r == b {
            r as u8
        } else {
            ((9797 * r + 19234 * gr + 3737 * b) >> 15) as u8
        };
    }
    Ok(m)
}

/// Encode an 8-bit gray, BGR or BGRA `Mat` as JPEG at `quality` (0..=100; alpha dropped).
pub fn encode_jpeg(mat: &Mat, quality: i32) -> Result<Vec<u8>, String> {
    let bgr;
    let mat = match mat.typ() {
        core::CV_8UC1 | core::CV_8UC3 => mat,
        core::CV_8UC4 => {
            let mut m = Mat::default();
            opencv::imgproc::cvt_color_def(mat, &mut m, opencv::imgproc::COLOR_BGRA2BGR)
                .map_err(|e| e.to_string())?;
            bgr = m;
            &bgr
        }
        t => return Err(format!("cannot write a {} image as JPEG", type_text(t))),
    };
    let mat = continuous(mat)?;
    let bytes = mat.data_bytes().map_err(|e| e.to_string())?;
    let (w, h) = (mat.cols(), mat.rows());
    let channels = mat.channels();
    let mut out: *mut c_uchar = std::ptr::null_mut();
    let mut len: c_ulong = 0;
    let mut msg = [0u8; 200];
    // SAFETY: `bytes` holds h rows of w * channels bytes, read only; the outputs are locals;
    // `out` is copied and then freed with the shim's own free.
    let rc = unsafe {
        lanes_jpeg_encode(
            bytes.as_ptr(),
            w,
            h,
            w as usize * channels as usize,
            channels,
            quality,
            &mut out,
            &mut len,
            msg.as_mut_ptr().cast(),
            msg.len(),
        )
    };
    if rc != 0 || out.is_null() {
        return Err(text(&msg));
    }
    // SAFETY: the shim's buffer holds `len` bytes.
    let v = unsafe { std::slice::from_raw_parts(out, len as usize) }.to_vec();
    // SAFETY: as above; not used after.
    unsafe { lanes_jpeg_free(out) };
    Ok(v)
}

/// `mat` itself when its rows are packed, else a packed copy (a view into a larger `Mat`).
fn continuous(mat: &Mat) -> Result<std::borrow::Cow<'_, Mat>, String> {
    if mat.is_continuous() {
        Ok(std::borrow::Cow::Borrowed(mat))
    } else {
        mat.try_clone()
            .map(std::borrow::Cow::Owned)
            .map_err(|e| e.to_string())
    }
}

fn type_text(t: i32) -> String {
    core::type_to_string(t).unwrap_or_else(|_| format!("type {t}"))
}

/// JPEG quality of `encode_for` when none is asked for: imgcodecs' default.
pub const JPEG_QUALITY: i32 = 95;

/// Encode an 8-bit gray, BGR or BGRA `Mat` in the format of `path`'s extension: JPEG (at
/// `jpeg_quality`, 0..=100) or anything the `image` crate writes (PNG, BMP, TIFF, ...).
pub fn encode_for(path: &Path, mat: &Mat, jpeg_quality: i32) -> Result<Vec<u8>, String> {
    let format = image::ImageFormat::from_path(path)
        .map_err(|_| format!("{}: unknown image extension", path.display()))?;
    if format == image::ImageFormat::Jpeg {
        return encode_jpeg(mat, jpeg_quality);
    }
    let (w, h) = (mat.cols() as u32, mat.rows() as u32);
    let cont = continuous(mat)?;
    let px = cont.data_bytes().map_err(|e| e.to_string())?;
    let img = match mat.typ() {
        core::CV_8UC1 => {
            image::GrayImage::from_raw(w, h, px.to_vec()).map(image::DynamicImage::from)
        }
        core::CV_8UC3 => image::RgbImage::from_raw(
            w,
            h,
            px.chunks(3).flat_map(|p| [p[2], p[1], p[0]]).collect(),
        )
        .map(image::DynamicImage::from),
        core::CV_8UC4 => image::RgbaImage::from_raw(
            w,
            h,
            px.chunks(4)
                .flat_map(|p| [p[2], p[1], p[0], p[3]])
                .collect(),
        )
        .map(image::DynamicImage::from),
        t => return Err(format!("cannot write a {} image", type_text(t))),
    }
    .ok_or_else(|| "image buffer of the wrong size".to_string())?;
    let mut out = Cursor::new(Vec::new());
    if format == image::ImageFormat::Png {
        // imgcodecs' default PNG compression is level 1: fast.
        let enc = image::codecs::png::PngEncoder::new_with_quality(
            &mut out,
            image::codecs::png::CompressionType::Fast,
            image::codecs::png::FilterType::Adaptive,
        );
        img.write_with_encoder(enc).map_err(|e| e.to_string())?;
    } else {
        img.write_to(&mut out, format).map_err(|e| e.to_string())?;
    }
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient() -> Mat {
        let mut m =
            Mat::new_rows_cols_with_default(48, 64, core::CV_8UC3, core::Scalar::all(0.0)).unwrap();
        for (i, v) in m.data_bytes_mut().unwrap().iter_mut().enumerate() {
            *v = ((i * 7) % 251) as u8;
        }
        m
    }

    #[test]
    fn png_round_trip_is_exact_and_jpeg_is_close() {
        let m = gradient();
        let png = encode_for(Path::new("x.png"), &m, JPEG_QUALITY).unwrap();
        let back = decode(&png, false).unwrap();
        assert_eq!(back.data_bytes().unwrap(), m.data_bytes().unwrap());
        let flat = Mat::new_rows_cols_with_default(
            48,
            64,
            core::CV_8UC3,
            core::Scalar::new(40.0, 120.0, 200.0, 0.0),
        )
        .unwrap();
        let jpg = encode_jpeg(&flat, 95).unwrap();
        let j = decode_jpeg(&jpg, false).unwrap();
        assert!(j.warning.is_none());
        let max = j
            .mat
            .data_bytes()
            .unwrap()
            .iter()
            .zip(flat.data_bytes().unwrap())
            .map(|(a, b)| (*a as i32 - *b as i32).abs())
            .max()
            .unwrap();
        assert!(max <= 3, "flat colour within 3 levels after JPEG: {max}");
        let g = decode_jpeg(&jpg, true).unwrap();
        assert_eq!(g.mat.channels(), 1);
    }

    #[test]
    fn a_truncated_jpeg_warns_and_garbage_is_an_error() {
        let jpg = encode_jpeg(&gradient(), 90).unwrap();
        let cut = decode_jpeg(&jpg[..jpg.len() * 2 / 3], false).unwrap();
        let w = cut.warning.expect("libjpeg warns about a truncated file");
        assert!(w.contains("Premature end of JPEG file"), "{w}");
        let e = decode_jpeg(b"not a jpeg at all", false).err().unwrap();
        assert!(e.contains("JPEG"), "{e}");
    }
}
