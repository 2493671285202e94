//! What a video file holds, read from its header: a second video stream besides the one
//! `VideoSource` reads (a dual dashcam's rear camera), named in a note; the work its run costs.

use ffmpeg_next as ffmpeg;
use std::path::Path;

/// A note when the video holds more than one video stream (a dual dashcam's front and rear
/// cameras in one file): which one is analysed (FFmpeg's choice, the default stream, as
/// `VideoSource` reads it) and how to extract another. `None` for one stream, or a file FFmpeg
/// cannot open (its error comes when it is read).
pub fn other_streams_note(path: &Path) -> Option<String> {
    // FFmpeg's own log quiet, as for every file read (`libav::init`).
    super::libav::init();
    let input = ffmpeg::format::input(&path).ok()?;
    let chosen = input.streams().best(ffmpeg::media::Type::Video)?.index();
    let videos: Vec<(usize, String)> = input
        .streams()
        .filter(|st| st.parameters().medium() == ffmpeg::media::Type::Video)
        .filter(|st| {
            !st.disposition()
                .contains(ffmpeg::format::stream::Disposition::ATTACHED_PIC)
        })
        .map(|st| {
            // SAFETY: the stream's own parameters, read only.
            let (w, h) = unsafe {
                let p = st.parameters().as_ptr();
                ((*p).width, (*p).height)
            };
            (st.index(), format!("stream {} ({w}x{h})", st.index()))
        })
        .collect();
    if videos.len() < 2 {
        return None;
    }
    let (analysed, others): (Vec<_>, Vec<_>) = videos.into_iter().partition(|v| v.0 == chosen);
    let name = |v: &[(usize, String)]| v.iter().map(|v| v.1.clone()).collect::<Vec<_>>();
    Some(format!(
        "{} video streams (a dual camera?): {} is analysed, {} not; `ffmpeg -i {} -map 0:{} -c copy other.mp4` extracts one to process on its own",
        analysed.len() + others.len(),
        name(&analysed).join(""),
        name(&others).join(", "),
        path.display(),
        others.first().map(|v| v.0).unwrap_or(0)
    ))
}

/// `--start N` refused before anything is decoded when the container's index counts at most
/// `N` frames (an MP4's, an AVI's; it may count more frames than a cut clip shows, never
/// fewer): a video of 50 frames has its last at `--start 49`. Without an index (Matroska,
/// MPEG-TS) the frame loop finds the end when it skips there. A file FFmpeg cannot open is
/// left to the reader, which names its error.
pub fn check_start(path: &Path, start: usize) -> crate::base::error::Result<()> {
    if start == 0 {
        return Ok(());
    }
    super::libav::init();
    let Ok(input) = ffmpeg::format::input(&path) else {
        return Ok(());
    };
    let Some(st) = input.streams().best(ffmpeg::media::Type::Video) else {
        return Ok(());
    };
    let indexed = st.frames();
    if indexed > 0 && start as i64 >= indexed {
        return Err(past_the_end(path, start, indexed as usize));
    }
    Ok(())
}

/// The error of a `--start` at or past a video's `frames`.
pub fn past_the_end(path: &Path, start: usize, frames: usize) -> crate::base::error::Error {
    crate::base::error::Error::Video {
        path: path.to_path_buf(),
        message: format!(
            "--start {start} is past the end ({frames} frames: the last is --start {}, counted from 0)",
            frames.saturating_sub(1)
        ),
    }
}

/// The frame rate a video `stream` of `input` announces (its average, else its base rate; 25
/// when neither is plausible) and the frames it shows: its sample count, or its duration
/// times the rate, the smaller of the two when both are known (an MP4 cut with `-c copy` holds
/// the packets from the keyframe before its cut, which its edit list leaves out: its sample
/// count counts them, its duration does not); 0 when unknown.
pub(super) fn header_rate_and_frames(
    input: &ffmpeg::format::context::Input,
    stream: &ffmpeg::format::stream::Stream,
) -> (f64, i64) {
    let rate = [stream.avg_frame_rate(), stream.rate()]
        .into_iter()
        .map(f64::from)
        .find(|r| r.is_finite() && *r > 0.0 && *r < 1000.0)
        .unwrap_or(25.0);
    let d = stream.duration();
    let secs = if d > 0 && d != ffmpeg::ffi::AV_NOPTS_VALUE {
        d as f64 * f64::from(stream.time_base())
    } else if input.duration() > 0 {
        input.duration() as f64 / ffmpeg::ffi::AV_TIME_BASE as f64
    } else {
        0.0
    };
    let by_duration = (secs * rate).round() as i64;
    let frames = match (stream.frames(), by_duration) {
        (nb, d) if nb > 0 && d > 0 => nb.min(d),
        (nb, _) if nb > 0 => nb,
        (_, d) => d,
    };
    (rate, frames)
}

/// About how much CPU a video's run costs, in milliseconds, from its header (no frame
/// decoded): its frames, each costing the analysis (about 1 ms whatever the size) plus its
/// decoding (about 2 ms for 1280x720, in proportion to the pixels; `lanes bench`). `None` for a
/// file FFmpeg cannot open or without a video stream. `lanes batch` starts the costliest
/// videos first, so that one long video does not run alone at the end.
pub fn work_estimate(path: &Path) -> Option<f64> {
    super::libav::init();
    let input = ffmpeg::format::input(&path).ok()?;
    let st = input.streams().best(ffmpeg::media::Type::Video)?;
    // SAFETY: the stream's own parameters, read only.
    let (w, h) = unsafe {
        let p = st.parameters().as_ptr();
        ((*p).width as f64, (*p).height as f64)
    };
    let (_, frames) = header_rate_and_frames(&input, &st);
    let per_frame = 1.0 + 2.0 * (w * h) / (1280.0 * 720.0);
    Some(frames.max(0) as f64 * per_frame)
}
