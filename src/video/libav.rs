//! FFmpeg's libraries set up once per process (`init`: their own log silenced) and their
//! names for codecs (`codec_short_name`), shared by the reader (`decode`), the writer
//! (`encode`) and the stream probe (`probe`).

use ffmpeg::ffi;
use ffmpeg_next as ffmpeg;

/// FFmpeg set up once per process, its own log silenced: every problem it reports reaches the
/// user as one `lanes:` line naming the file (and the codec) instead.
pub(crate) fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ffmpeg::init();
        let level = match std::env::var("LANES_FFMPEG_LOG").ok().as_deref() {
            Some("error") => ffmpeg::log::Level::Error,
            Some("warning") => ffmpeg::log::Level::Warning,
            Some("info") => ffmpeg::log::Level::Info,
            _ => ffmpeg::log::Level::Quiet,
        };
        ffmpeg::log::set_level(level);
    });
}

/// FFmpeg's short name of a codec (`h264`, `hevc`, `mpeg4`).
pub(crate) fn codec_short_name(id: ffmpeg::codec::Id) -> String {
    // SAFETY: avcodec_get_name returns a static string for every id.
    unsafe {
        let p = ffi::avcodec_get_name(id.into());
        if p.is_null() {
            "unknown".into()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

/// Whether the output's muxer holds `id`: FFmpeg's answer, or `None` for a muxer without a
/// codec list (MPEG-TS).
pub(crate) fn muxer_holds(
    out: &ffmpeg::format::context::Output,
    id: ffmpeg::codec::Id,
) -> Option<bool> {
    // SAFETY: the output's own format descriptor; a query only.
    let answer = unsafe {
        ffi::avformat_query_codec(
            (*out.as_ptr()).oformat,
            id.into(),
            ffi::FF_COMPLIANCE_NORMAL,
        )
    };
    (answer >= 0).then_some(answer == 1)
}

/// Ask an encoder for global headers (a container that stores them once, as MP4 and Matroska
/// do), keeping the flags it already has. The encoder's own defaults set some (libx264's
/// `+cgop`: closed GOPs, every keyframe an IDR picture where a decoder can start); replacing
/// them would turn libx264's keyframes after the first into open-GOP recovery points, where a
/// player that seeks there (a browser, `ffmpeg -ss`) starts decoding with references missing.
pub(crate) fn add_global_header(enc: &mut ffmpeg::codec::context::Context) {
    // SAFETY: reads a plain field of a valid codec context, not yet opened.
    let bits = unsafe { (*enc.as_ptr()).flags } as std::os::raw::c_uint;
    let kept = ffmpeg::codec::Flags::from_bits_truncate(bits);
    enc.set_flags(kept | ffmpeg::codec::Flags::GLOBAL_HEADER);
}
