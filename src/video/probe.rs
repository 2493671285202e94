//! What a video file holds besides the stream `VideoSource` reads: a second video stream (a
//! dual dashcam's rear camera), named in a note.

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
