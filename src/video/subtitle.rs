//! A text subtitle track the output's container cannot hold, converted to the container's own
//! text format: a dashcam's GPS track as SubRip in an .mkv becomes `mov_text` in an MP4, an
//! MP4's `mov_text` becomes ASS in an .mkv, as FFmpeg's own tool does by default for an .mkv
//! and with `-c:s mov_text` for an MP4: each cue is decoded to its text and encoded again, its
//! time and duration kept from the input packet. Bitmap subtitles (DVD, Blu-ray) have no text to carry
//! over and are left out with a note, as before.

use super::libav::muxer_holds;
use ffmpeg::ffi;
use ffmpeg::packet::Ref;
use ffmpeg_next as ffmpeg;

/// The largest encoded cue, bytes (FFmpeg's own tool allows 1 MiB too).
const MAX_CUE_BYTES: usize = 1 << 20;

/// Whether a codec carries subtitles as text (SubRip, ASS, WebVTT, `mov_text`).
fn is_text(id: ffmpeg::codec::Id) -> bool {
    // SAFETY: avcodec_descriptor_get returns a static descriptor or null.
    unsafe {
        let d = ffi::avcodec_descriptor_get(id.into());
        !d.is_null() && ((*d).props & ffi::AV_CODEC_PROP_TEXT_SUB) != 0
    }
}

/// The text subtitle format of the output's container: `mov_text` where it holds it (MP4, MOV:
/// FFmpeg's own tool needs `-c:s mov_text` for an MP4, whose muxer names no default), else the
/// muxer's default (ASS for Matroska, WebVTT for WebM), when it has one.
pub(super) fn default_text_codec(
    out: &ffmpeg::format::context::Output,
) -> Option<ffmpeg::codec::Id> {
    use ffmpeg::codec::Id;
    if muxer_holds(out, Id::MOV_TEXT) == Some(true) {
        return Some(Id::MOV_TEXT);
    }
    // SAFETY: the output's own format descriptor, read only.
    let id: Id = unsafe { (*(*out.as_ptr()).oformat).subtitle_codec }.into();
    (id != Id::None && is_text(id)).then_some(id)
}

/// The converter of one text subtitle track: its decoder, the encoder of the output's format,
/// and the buffer a cue is encoded into.
pub(super) struct TextConvert {
    decoder: ffmpeg::decoder::Subtitle,
    encoder: ffmpeg::encoder::subtitle::Encoder,
    buf: Vec<u8>,
    /// The output's codec (`mov_text`, `ass`), for the summary.
    pub(super) target: String,
}

impl TextConvert {
    /// A converter of an input track of `params` (time base `in_tb`) to `target`, its stream
    /// added to `out`; the stream's index. `Err(reason)` when either side is not text or
    /// FFmpeg has no decoder or encoder for it.
    pub(super) fn new(
        params: ffmpeg::codec::Parameters,
        in_tb: ffmpeg::Rational,
        target: ffmpeg::codec::Id,
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<(Self, usize), String> {
        let source = params.id();
        if !is_text(source) || !is_text(target) {
            return Err("not text subtitles".into());
        }
        let mut ctx = ffmpeg::codec::context::Context::from_parameters(params)
            .map_err(|e| format!("no decoder: {e}"))?;
        // SAFETY: a field of the context just made, before it is opened.
        unsafe { (*ctx.as_mut_ptr()).pkt_timebase = in_tb.into() };
        let decoder = ctx
            .decoder()
            .subtitle()
            .map_err(|e| format!("no decoder: {e}"))?;
        let codec = ffmpeg::encoder::find(target).ok_or("no encoder")?;
        let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
            .encoder()
            .subtitle()
            .map_err(|e| e.to_string())?;
        // SAFETY: fields of the encoder's context before it is opened. The subtitle header (the
        // ASS styles a text encoder starts from) is the decoder's, copied into memory FFmpeg
        // owns and frees with the context, as FFmpeg's own tool does.
        unsafe {
            let (e, d) = (enc.as_mut_ptr(), decoder.as_ptr());
            (*e).time_base = ffi::AVRational {
                num: 1,
                den: ffi::AV_TIME_BASE,
            };
            let n = (*d).subtitle_header_size;
            if !(*d).subtitle_header.is_null() && n > 0 {
                let copy = ffi::av_mallocz(n as usize + 1) as *mut u8;
                if copy.is_null() {
                    return Err("out of memory".into());
                }
                std::ptr::copy_nonoverlapping((*d).subtitle_header, copy, n as usize);
                (*e).subtitle_header = copy;
                (*e).subtitle_header_size = n;
            }
            if out
                .format()
                .flags()
                .contains(ffmpeg::format::Flags::GLOBAL_HEADER)
            {
                (*e).flags |= ffi::AV_CODEC_FLAG_GLOBAL_HEADER as i32;
            }
        }
        let encoder = enc.open_as(codec).map_err(|e| format!("encoder: {e}"))?;
        let mut ost = out.add_stream(codec).map_err(|e| e.to_string())?;
        ost.set_parameters(&encoder);
        ost.set_time_base(in_tb);
        let index = ost.index();
        Ok((
            Self {
                decoder,
                encoder,
                buf: vec![0; MAX_CUE_BYTES],
                target: super::libav::codec_short_name(target),
            },
            index,
        ))
    }

    /// The cue of `packet` in the output's format, with the packet's times (in the input's time
    /// base); `None` for a packet that holds no cue or does not decode (a cue lost, not a
    /// failed run).
    pub(super) fn convert(&mut self, packet: &ffmpeg::Packet) -> Option<ffmpeg::Packet> {
        // SAFETY: an AVSubtitle zeroed (as FFmpeg expects), filled by the decoder, read by
        // the encoder and freed once; the packet and buffer outlive the calls.
        let n = unsafe {
            let mut sub: ffi::AVSubtitle = std::mem::zeroed();
            let mut got = 0;
            let r = ffi::avcodec_decode_subtitle2(
                self.decoder.as_mut_ptr(),
                &mut sub,
                &mut got,
                packet.as_ptr() as *mut _,
            );
            if r < 0 || got == 0 {
                ffi::avsubtitle_free(&mut sub);
                return None;
            }
            // Encoders take a cue that starts at its own time (FFmpeg's tool shifts it so).
            sub.end_display_time = sub.end_display_time.saturating_sub(sub.start_display_time);
            sub.start_display_time = 0;
            let n = if sub.num_rects == 0 {
                -1
            } else {
                ffi::avcodec_encode_subtitle(
                    self.encoder.as_mut_ptr(),
                    self.buf.as_mut_ptr(),
                    self.buf.len() as i32,
                    &sub,
                )
            };
            ffi::avsubtitle_free(&mut sub);
            n
        };
        if n <= 0 {
            return None;
        }
        let mut p = ffmpeg::Packet::copy(&self.buf[..n as usize]);
        p.set_pts(packet.pts());
        p.set_dts(packet.dts());
        p.set_duration(packet.duration());
        p.set_flags(ffmpeg::packet::Flags::KEY);
        Some(p)
    }
}
