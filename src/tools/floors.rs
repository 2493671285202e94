//! Floors a lane pipeline is measured against: what decoding alone takes (FFmpeg's libraries,
//! frames converted to BGR, as the frame loop reads them), and decoding and re-encoding with the
//! default codec (`lanes bench` prints the pipeline's rates as ratios of these).

use crate::base::error::Result;
use crate::video::{self, Codec, StageSeries, VideoSink, VideoSource};
use std::path::Path;
use std::time::Instant;

/// Read every frame of a clip and nothing else: (frames, seconds).
pub fn decode_only(path: &Path) -> Result<(usize, f64)> {
    let mut src = VideoSource::open(path)?;
    let t = Instant::now();
    let mut n = 0;
    while src.read()?.is_some() {
        n += 1;
    }
    Ok((n, t.elapsed().as_secs_f64()))
}

/// Read every frame and write it again with the preferred codec: (frames, seconds, codec).
pub fn decode_encode(path: &Path, out: &Path) -> Result<(usize, f64, Codec)> {
    let mut src = VideoSource::open(path)?;
    let mut sink = VideoSink::create(
        out,
        src.fps,
        src.width,
        src.height,
        video::preferred_codec(),
    )?;
    let codec = sink.codec;
    let t = Instant::now();
    let mut n = 0;
    while let Some(f) = src.read()? {
        sink.write(&f)?;
        n += 1;
    }
    sink.finish()?;
    Ok((n, t.elapsed().as_secs_f64(), codec))
}

/// The per-stage series with the names `lanes bench` prints.
pub fn stage_rows(s: &StageSeries) -> Vec<(&'static str, &Vec<f64>)> {
    vec![
        ("remap (undistort+warp; bands: set-up)", &s.warp),
        ("threshold (bands: with their remap)", &s.threshold),
        ("search + fit", &s.search_fit),
        ("tracking", &s.track),
        ("undistort (render)", &s.undistort),
        ("overlay", &s.overlay),
        ("composite", &s.composite),
        ("encode (write)", &s.encode),
    ]
}
