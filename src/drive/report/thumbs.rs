//! Event thumbnails: frames read from the drive's video (FFmpeg), scaled down with OpenCV and encoded as
//! JPEG `data:` URIs so the report stays one self-contained file.

use crate::base::error::{Error, Result};
use crate::video::VideoSource;
use base64::Engine;
use opencv::core::Size;
use opencv::imgproc;
use opencv::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Width of a thumbnail, px (height keeps the aspect ratio).
pub const THUMB_WIDTH: i32 = 320;

/// Frames further ahead than this are reached by seeking rather than by decoding each one.
const SEEK_AFTER: usize = 50;

/// Thumbnails by frame number, and what did not match.
#[derive(Debug, Default)]
pub struct Thumbnails {
    pub by_frame: BTreeMap<usize, String>,
    /// Counted problems (the video is shorter than the telemetry, or longer): one line each.
    pub warnings: Vec<String>,
}

/// Read `frames` (any order) from `video` and return them as JPEG data URIs. `last_frame` is
/// the telemetry's last frame: a video whose announced frame count differs from
/// `last_frame + 1` by more than 2 frames + 1% gets a warning, and frames past the video's end get none.
pub fn read(video: &Path, frames: &[usize], last_frame: Option<usize>) -> Result<Thumbnails> {
    let mut src = VideoSource::open(video)?;
    let mut out = Thumbnails::default();
    let announced = src.announced_frames.max(0) as usize;
    // The announced count is the container's estimate (duration x rate): a clip whose 160
    // frames decode may announce 162. Differences within 2 frames + 1% are not reported.
    let off = |l: &usize| {
        let n = l + 1;
        announced > 0 && announced.abs_diff(n) > 2 + n / 100
    };
    if let Some(last_frame) = last_frame.filter(off) {
        out.warnings.push(format!(
            "{}: warning: the video has {announced} frames, the telemetry {} (frames 0..={last_frame}); is it the same drive?",
            video.display(),
            last_frame + 1
        ));
    }
    let mut wanted: Vec<usize> = frames.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut pos = 0usize;
    let mut missing = 0usize;
    for f in wanted {
        // Far ahead: seek (decoding from the keyframe before it); if the source cannot
        // say where it is afterwards, start again from the first frame.
        if f > pos + SEEK_AFTER {
            if src.seek(f)? {
                pos = f;
            } else {
                src = VideoSource::open(video)?;
                pos = 0;
            }
        }
        while pos < f {
            if !src.skip()? {
                break;
            }
            pos += 1;
        }
        if pos < f {
            missing += 1;
            continue;
        }
        match src.read()? {
            Some(frame) => {
                pos += 1;
                out.by_frame.insert(f, jpeg_data_uri(frame.mat(), video)?);
            }
            None => missing += 1,
        }
    }
    if missing > 0 {
        out.warnings.push(format!(
            "{}: warning: {missing} event frames are past the end of the video (no thumbnail)",
            video.display()
        ));
    }
    Ok(out)
}

/// Scale a BGR frame to `THUMB_WIDTH` and encode it as a `data:image/jpeg;base64,` URI.
pub fn jpeg_data_uri(m: &Mat, video: &Path) -> Result<String> {
    let (w, h) = (m.cols().max(1), m.rows().max(1));
    let tw = THUMB_WIDTH.min(w);
    let th = ((h as f64) * tw as f64 / w as f64).round().max(1.0) as i32;
    let mut small = Mat::default();
    imgproc::resize(
        m,
        &mut small,
        Size::new(tw, th),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )?;
    let buf = crate::base::imageio::encode_jpeg(&small, 75).map_err(|e| Error::Video {
        path: video.to_path_buf(),
        message: format!("cannot encode a thumbnail as JPEG: {e}"),
    })?;
    Ok(format!(
        "data:image/jpeg;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&buf)
    ))
}
