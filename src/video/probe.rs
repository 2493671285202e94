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
    let rate = f64::from(st.avg_frame_rate());
    let secs = if st.duration() > 0 {
        st.duration() as f64 * f64::from(st.time_base())
    } else {
        input.duration().max(0) as f64 / f64::from(ffmpeg::ffi::AV_TIME_BASE)
    };
    let frames = if st.frames() > 0 {
        st.frames() as f64
    } else if rate.is_finite() && rate > 0.0 {
        secs * rate
    } else {
        secs * 25.0
    };
    let per_frame = 1.0 + 2.0 * (w * h) / (1280.0 * 720.0);
    Some(frames.max(0.0) * per_frame)
}
