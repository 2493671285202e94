//! Still images read with checks: the size is read from the header and refused over
//! `MAX_PIXELS` before anything is decoded; a truncated or corrupt JPEG or PNG is an error, not
//! a picture the decoder padded with gray; gray, alpha and 16-bit inputs are converted to 8-bit
//! BGR and the conversion is reported.
//!
//! libjpeg only *warns* ("Premature end of JPEG file", "Corrupt JPEG data") and returns a
//! picture. Two checks:
//! - a strict read first: the JPEG's headers by `zune-jpeg` in strict mode (a file cut or
//!   damaged before its entropy-coded data), the whole PNG by the `png` decoder (truncation,
//!   bad chunk CRCs, bad zlib data);
//! - libjpeg's own warnings, counted while it decodes the picture used (`imageio`): premature
//!   end of data, bad Huffman codes, "N extraneous bytes before marker" after a damaged
//!   restart interval (see `check_jpeg` for how many damaged files they catch).
//!
//! The pixels are libjpeg's with the settings OpenCV's imgcodecs used (`imageio`), so every
//! number is what it was when imgcodecs decoded them.

use crate::base::error::{Error, Result};
use crate::base::imageio;
use opencv::core::Mat;
use opencv::prelude::*;
use std::io::Cursor;
use std::path::Path;

/// Images with more pixels than this (64 megapixels, e.g. 8000x8000) are refused from their
/// header: decoding one would take seconds and gigabytes, and no dashcam records that size.
pub const MAX_PIXELS: u64 = 64_000_000;

/// File extensions taken as still images given by name (any case): JPEG, PNG, BMP, TIFF and
/// WebP (`lanes calibrate` reads these; `lanes video` names them as stills).
pub const STILL_EXTENSIONS: &[&str] = &["jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp"];

/// Whether `path`'s extension is one of [`STILL_EXTENSIONS`].
pub fn is_still_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| STILL_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// A still decoded to 8-bit BGR, and what had to be converted to get there.
#[derive(Debug)]
pub struct Decoded {
    /// 8-bit, 3-channel BGR pixels.
    pub mat: Mat,
    /// The conversion applied, e.g. "gray to BGR" or "16-bit RGBA to 8-bit BGR, alpha
    /// dropped"; `None` when the file was 8-bit colour.
    pub converted: Option<String>,
}

fn corrupt(path: &Path, detail: impl std::fmt::Display) -> Error {
    Error::CorruptImage {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}

/// Read and decode a still image file (JPEG, PNG checked; other formats OpenCV reads as is).
pub fn read_bgr(path: &Path) -> Result<Decoded> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    decode_bgr(path, &bytes)
}

/// Read and decode a still as 8-bit gray (lane masks), with the same checks as `read_bgr`.
pub fn read_gray(path: &Path) -> Result<Mat> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    decode_checked(path, &bytes, true).map(|d| d.mat)
}

/// A still's format as guessed from its bytes, and its size from the header (as stored, before
/// any EXIF rotation) refused when zero or over `MAX_PIXELS`, before anything is decoded (every
/// format the reader knows).
fn check_header(path: &Path, bytes: &[u8]) -> Result<(Option<image::ImageFormat>, (u32, u32))> {
    let reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| corrupt(path, e))?;
    let format = reader.format();
    let mut size = (0, 0);
    if format.is_some() {
        size = reader.into_dimensions().map_err(|e| match e {
            // A valid file of a kind the reader does not support (a YCbCr TIFF) is not corrupt.
            image::ImageError::Unsupported(u) => Error::UnsupportedImage {
                path: path.to_path_buf(),
                detail: u.to_string(),
            },
            e => corrupt(path, format!("bad header: {e}")),
        })?;
        check_pixels(path, size.0, size.1)?;
    }
    Ok((format, size))
}

/// The strict decode of a JPEG or PNG, with the conversion `read_bgr` reports. Other formats
/// pass unchecked (no strict decoder here).
fn check_strict(
    path: &Path,
    bytes: &[u8],
    format: Option<image::ImageFormat>,
) -> Result<Option<String>> {
    match format {
        Some(image::ImageFormat::Jpeg) => check_jpeg(path, bytes),
        Some(image::ImageFormat::Png) => check_png(path, bytes),
        _ => Ok(None),
    }
}

/// `read_bgr` on bytes already in memory (`path` only names the file in errors). One thread:
/// callers hold locks around it (the tuner's caches) and run it on rayon's workers, where a
/// `rayon::join` here could steal a job that waits for the lock this thread holds.
pub fn decode_bgr(path: &Path, bytes: &[u8]) -> Result<Decoded> {
    decode_checked(path, bytes, false)
}

/// The header's size limit, the strict decode, then libjpeg's (or the `image` crate's) decode
/// to BGR or gray (`gray`), refused when libjpeg warned; `converted` says what a BGR decode
/// converted.
fn decode_checked(path: &Path, bytes: &[u8], gray: bool) -> Result<Decoded> {
    let (format, _) = check_header(path, bytes)?;
    decode_after_header(path, bytes, format, gray)
}

/// `read_bgr`, with `beside(width, height)` run on another thread while the pixels are decoded:
/// set-up that needs only the size (a pipeline's maps) costs no time after the decode. The
/// size is the header's, before any EXIF rotation, so the caller checks it against the
/// decoded still. `beside` does not run when the header is refused.
pub fn read_bgr_beside<T: Send>(
    path: &Path,
    beside: impl FnOnce(u32, u32) -> T + Send,
) -> Result<(Decoded, T)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let (format, (w, h)) = check_header(path, &bytes)?;
    std::thread::scope(|sc| {
        let built = sc.spawn(move || beside(w, h));
        let decoded = decode_after_header(path, &bytes, format, false);
        let built = built
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok((decoded?, built))
    })
}

/// `decode_checked` after `check_header`.
fn decode_after_header(
    path: &Path,
    bytes: &[u8],
    format: Option<image::ImageFormat>,
    gray: bool,
) -> Result<Decoded> {
    let converted = check_strict(path, bytes, format)?;
    let jpeg = format == Some(image::ImageFormat::Jpeg);
    let (mat, warning) = imageio::decode_warned(bytes, gray).map_err(|e| {
        if jpeg {
            // Its headers were read above: libjpeg stopped in the data.
            corrupt(path, format!("libjpeg: {}", e.trim()))
        } else {
            Error::UnreadableImage {
                path: path.to_path_buf(),
            }
        }
    })?;
    if let Some(w) = warning.filter(|w| w.contains("JPEG") || w.contains("jpeg")) {
        return Err(corrupt(path, format!("libjpeg: {}", w.trim())));
    }
    if mat.empty() {
        return Err(Error::UnreadableImage {
            path: path.to_path_buf(),
        });
    }
    Ok(Decoded { mat, converted })
}

/// Refuse a header size that is zero or over `MAX_PIXELS`.
fn check_pixels(path: &Path, w: u32, h: u32) -> Result<()> {
    let pixels = w as u64 * h as u64;
    if pixels == 0 || pixels > MAX_PIXELS {
        return Err(Error::ImageSize {
            path: path.to_path_buf(),
            width: w,
            height: h,
            problem: if pixels == 0 {
                "an empty image".to_string()
            } else {
                format!(
                    "{:.1} megapixels, over the limit of {} megapixels",
                    pixels as f64 / 1e6,
                    MAX_PIXELS / 1_000_000
                )
            },
        });
    }
    Ok(())
}

/// A JPEG's headers read (its markers, frame and scan headers, Huffman and quantisation
/// tables: a file cut or damaged there is an error here); report a gray or CMYK input's
/// conversion. The entropy-coded data is checked by libjpeg's warnings while it decodes the
/// pixels (`decode_checked`). On 3 200 damaged copies of 8 JPEGs (Udacity, CULane, TuSimple,
/// P1 and a chessboard; cut short, or 1-300 bytes flipped) those warnings refused 2 538; a full
/// strict decode by zune-jpeg, what this did until 2026-12-05 at 3-4 ms a 720p still, refused 8
/// more, and 654 no decoder noticed (a few flipped bits can leave a valid bitstream).
fn check_jpeg(path: &Path, bytes: &[u8]) -> Result<Option<String>> {
    use zune_core::bytestream::ZCursor;
    use zune_core::colorspace::ColorSpace;
    let options = zune_core::options::DecoderOptions::default()
        .set_strict_mode(true)
        .set_max_width(usize::MAX)
        .set_max_height(usize::MAX);
    let mut dec = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
    dec.decode_headers()
        .map_err(|e| corrupt(path, format!("JPEG: {e:?}")))?;
    Ok(match dec.input_colorspace() {
        Some(ColorSpace::Luma) => Some("gray to BGR".to_string()),
        Some(ColorSpace::CMYK) | Some(ColorSpace::YCCK) => Some("CMYK to BGR".to_string()),
        _ => None,
    })
}

/// Decode a PNG fully (the pixels are discarded); report gray, alpha and 16-bit conversions.
fn check_png(path: &Path, bytes: &[u8]) -> Result<Option<String>> {
    use image::ImageDecoder;
    let dec = image::codecs::png::PngDecoder::new(Cursor::new(bytes))
        .map_err(|e| corrupt(path, format!("PNG: {e}")))?;
    let color = dec.color_type();
    let mut buf = vec![0u8; dec.total_bytes() as usize];
    dec.read_image(&mut buf)
        .map_err(|e| corrupt(path, format!("PNG: {e}")))?;
    Ok(conversion(color))
}

/// How an image of `color` becomes 8-bit BGR (OpenCV's `IMREAD_COLOR`: gray is replicated,
/// alpha dropped, 16-bit samples divided by 256).
fn conversion(color: image::ColorType) -> Option<String> {
    use image::ColorType::*;
    let (bits16, what) = match color {
        L8 => (false, "gray"),
        La8 => (false, "gray+alpha"),
        Rgb8 => return None,
        Rgba8 => (false, "RGBA"),
        L16 => (true, "gray"),
        La16 => (true, "gray+alpha"),
        Rgb16 => (true, "RGB"),
        Rgba16 => (true, "RGBA"),
        _ => (false, "other"),
    };
    let alpha = color.has_alpha();
    Some(format!(
        "{}{what} to {}BGR{}",
        if bits16 { "16-bit " } else { "" },
        if bits16 {
            "8-bit (scaled by 1/256) "
        } else {
            ""
        },
        if alpha { ", alpha dropped" } else { "" }
    ))
}

/// Output names for a set of input stills, one per path, all different: each file's name, or,
/// where two inputs share a name (`a/00000.jpg`, `b/00000.jpg`: datasets name frames by number
/// per folder), the name with as many of its parent folders as make it unique, joined by `_`
/// (`a_00000.jpg`, `b_00000.jpg`). Names are told apart without their extensions (outputs are
/// named by stem, `t1_overlay.jpg`): the same path given twice, or `t1.webp` beside `t1.tif`,
/// gets `-2`, `-3`, ... before its extension.
pub fn unique_names(paths: &[std::path::PathBuf]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let name = |i: usize, depth: usize| -> String {
        let c = &parts[i];
        let from = c.len().saturating_sub(depth.max(1));
        c[from..].join("_")
    };
    let mut depth = vec![1usize; paths.len()];
    loop {
        let names: Vec<String> = (0..paths.len()).map(|i| name(i, depth[i])).collect();
        // The folders each name comes from: a folder more tells names apart only where the
        // clashing files lie in different folders (`t1.webp` beside `t1.tif` get `-2`).
        let mut folders: std::collections::HashMap<&str, std::collections::HashSet<&[String]>> =
            std::collections::HashMap::new();
        let stems: Vec<String> = names.iter().map(|n| stem_of(n)).collect();
        for (i, n) in stems.iter().enumerate() {
            let folder = &parts[i][..parts[i].len().saturating_sub(1)];
            folders.entry(n.as_str()).or_default().insert(folder);
        }
        let mut grew = false;
        for i in 0..paths.len() {
            let clash = folders.get(stems[i].as_str()).is_some_and(|f| f.len() > 1);
            if clash && depth[i] < parts[i].len() {
                depth[i] += 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    (0..paths.len())
        .map(|i| {
            let n = name(i, depth[i]);
            let k = seen.entry(stem_of(&n)).or_insert(0);
            *k += 1;
            if *k == 1 {
                n
            } else {
                let p = std::path::Path::new(&n);
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
                match (stem, p.extension()) {
                    (Some(st), Some(ext)) => format!("{st}-{k}.{}", ext.to_string_lossy()),
                    _ => format!("{n}-{k}"),
                }
            }
        })
        .collect()
}

/// `name` without its extension (`a_00000.jpg` -> `a_00000`).
pub fn stem_of(name: &str) -> String {
    std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{ImageBuffer, Luma, LumaA, Rgb, Rgba};

    fn png_bytes<P: image::PixelWithColorType>(img: &ImageBuffer<P, Vec<P::Subpixel>>) -> Vec<u8>
    where
        [P::Subpixel]: image::EncodableLayout,
    {
        let mut out = Vec::new();
        img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    }

    fn jpeg_bytes(w: u32, h: u32) -> Vec<u8> {
        let img = ImageBuffer::from_fn(w, h, |x, y| {
            Rgb([
                (x * 7 % 256) as u8,
                (y * 3 % 256) as u8,
                ((x + y) % 256) as u8,
            ])
        });
        let mut out = Vec::new();
        img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Jpeg)
            .unwrap();
        out
    }

    #[test]
    fn valid_colour_jpeg_and_png_decode_without_conversion() {
        let p = Path::new("ok.jpg");
        let d = decode_bgr(p, &jpeg_bytes(64, 48)).unwrap();
        assert_eq!((d.mat.cols(), d.mat.rows(), d.mat.channels()), (64, 48, 3));
        assert_eq!(d.converted, None);
        let rgb = ImageBuffer::from_pixel(8, 4, Rgb([10u8, 20, 30]));
        let d = decode_bgr(Path::new("ok.png"), &png_bytes(&rgb)).unwrap();
        assert_eq!(d.converted, None);
        // BGR order: blue first.
        assert_eq!(
            *d.mat.at_2d::<opencv::core::Vec3b>(0, 0).unwrap(),
            opencv::core::Vec3b::from([30, 20, 10])
        );
    }

    #[test]
    fn truncated_jpeg_is_corrupt_at_many_cut_points() {
        let bytes = jpeg_bytes(256, 128);
        for cut in [bytes.len() / 4, bytes.len() / 2, bytes.len() - 40] {
            let e = decode_bgr(Path::new("cut.jpg"), &bytes[..cut]).unwrap_err();
            // The header is whole: libjpeg stops in the data.
            assert!(
                e.to_string()
                    .starts_with("cut.jpg: corrupt image (libjpeg: Premature end of JPEG file"),
                "{cut}: {e}"
            );
        }
    }

    #[test]
    fn truncated_png_is_corrupt() {
        let img = ImageBuffer::from_fn(64, 64, |x, y| Rgb([x as u8 * 3, y as u8 * 2, 7u8]));
        let bytes = png_bytes(&img);
        let e = decode_bgr(Path::new("cut.png"), &bytes[..bytes.len() - 30]).unwrap_err();
        assert!(
            e.to_string().starts_with("cut.png: corrupt image (PNG"),
            "{e}"
        );
    }

    #[test]
    fn gray_alpha_and_16_bit_pngs_are_converted_and_say_so() {
        let cases: Vec<(Vec<u8>, &str, u8)> = vec![
            (
                png_bytes(&ImageBuffer::from_pixel(4, 4, Luma([200u8]))),
                "gray to BGR",
                200,
            ),
            (
                png_bytes(&ImageBuffer::from_pixel(4, 4, Rgba([200u8, 200, 200, 0]))),
                "RGBA to BGR, alpha dropped",
                200,
            ),
            (
                png_bytes(&ImageBuffer::from_pixel(4, 4, LumaA([200u8, 9]))),
                "gray+alpha to BGR, alpha dropped",
                200,
            ),
            (
                png_bytes(&ImageBuffer::from_pixel(4, 4, Luma([51400u16]))),
                "16-bit gray to 8-bit (scaled by 1/256) BGR",
                200,
            ),
            (
                png_bytes(&ImageBuffer::from_pixel(
                    4,
                    4,
                    Rgba([51400u16, 51400, 51400, 65535]),
                )),
                "16-bit RGBA to 8-bit (scaled by 1/256) BGR, alpha dropped",
                200,
            ),
        ];
        for (bytes, what, v) in cases {
            let d = decode_bgr(Path::new("x.png"), &bytes).unwrap();
            assert_eq!(d.converted.as_deref(), Some(what));
            assert_eq!(d.mat.typ(), opencv::core::CV_8UC3);
            assert_eq!(
                *d.mat.at_2d::<opencv::core::Vec3b>(1, 1).unwrap(),
                opencv::core::Vec3b::from([v, v, v]),
                "{what}"
            );
        }
    }

    #[test]
    fn huge_header_is_refused_before_decoding() {
        // A real 1x1 PNG whose IHDR claims 16000x16000 (CRC fixed so only the size is wrong).
        let mut bytes = png_bytes(&ImageBuffer::from_pixel(1, 1, Rgb([1u8, 2, 3])));
        bytes[16..20].copy_from_slice(&16000u32.to_be_bytes());
        bytes[20..24].copy_from_slice(&16000u32.to_be_bytes());
        let crc = crc32fast::hash(&bytes[12..29]);
        bytes[29..33].copy_from_slice(&crc.to_be_bytes());
        let t = std::time::Instant::now();
        let e = decode_bgr(Path::new("big.png"), &bytes).unwrap_err();
        assert_eq!(
            e.to_string(),
            "big.png: image is 16000x16000, 256.0 megapixels, over the limit of 64 megapixels"
        );
        assert!(t.elapsed().as_secs_f64() < 1.0);
    }

    #[test]
    fn a_truncated_mask_is_refused_and_a_gray_one_reported() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mask.png");
        let bytes = png_bytes(&ImageBuffer::from_fn(64, 32, |x, _| Luma([(x * 4) as u8])));
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(
            read_bgr(&p).unwrap().converted.as_deref(),
            Some("gray to BGR")
        );
        assert_eq!(read_gray(&p).unwrap().cols(), 64);
        std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        let e = read_gray(&p).unwrap_err().to_string();
        assert!(e.contains("mask.png: corrupt image (PNG"), "{e}");
    }

    #[test]
    fn not_an_image_is_unreadable() {
        let e = decode_bgr(Path::new("t.jpg"), b"this is not a jpeg").unwrap_err();
        assert_eq!(e.to_string(), "t.jpg: cannot read as an image");
    }

    #[test]
    fn unique_names_add_parent_folders_only_where_names_clash() {
        let p = |s: &str| std::path::PathBuf::from(s);
        let names = unique_names(&[
            p("data/cul/06030819_0755.MP4/00000.jpg"),
            p("data/cul/06030822_0756.MP4/00000.jpg"),
            p("data/cul/06030822_0756.MP4/00360.jpg"),
            p("/abs/x/test1.jpg"),
            p("/abs/y/x/test1.jpg"),
            p("same.png"),
            p("same.png"),
            p("t1.webp"),
            p("t1.tif"),
            p("wf/t2.jpg"),
            p("wf/t2.png"),
        ]);
        assert_eq!(
            names,
            [
                "06030819_0755.MP4_00000.jpg",
                "06030822_0756.MP4_00000.jpg",
                "00360.jpg",
                "abs_x_test1.jpg",
                "y_x_test1.jpg",
                "same.png",
                "same-2.png",
                "t1.webp",
                "t1-2.tif",
                "t2.jpg",
                "t2-2.png",
            ]
        );
        assert_eq!(stem_of(&names[0]), "06030819_0755.MP4_00000");
    }
}
