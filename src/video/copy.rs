//! Streams of the input copied into an output video beside its frames: the audio stream and the
//! subtitle tracks (a dashcam's or phone app's GPS position and speed, as timed text), cut to the
//! frames written and kept in step with them. Audio the container cannot hold is converted to
//! AAC (`audio::AacConvert`), a text subtitle track to the container's own text format
//! (`subtitle::TextConvert`).

use super::audio::AacConvert;
use super::libav::{codec_short_name, muxer_holds};
use super::subtitle::{default_text_codec, TextConvert};
use ffmpeg::media::Type;
use ffmpeg::Rational;
use ffmpeg_next as ffmpeg;
use std::path::Path;

/// One input stream's packets, copied into the output (each copy reads the input on its own).
pub(super) struct StreamCopy {
    input: ffmpeg::format::context::Input,
    stream: usize,
    in_tb: Rational,
    out_index: usize,
    out_tb: Rational,
    /// The input time (s) of the output's start: the first video frame's time.
    offset_s: Option<f64>,
    pending: Option<ffmpeg::Packet>,
    ended: bool,
    /// The stream's codec (`aac`, `mov_text`), for the summary.
    pub codec: String,
    /// A subtitle track: a line shown when the output starts is kept, from the start.
    subtitle: bool,
    /// Audio the output's container cannot hold, converted to AAC in place of a copy.
    convert: Option<AacConvert>,
    /// A text subtitle track the container cannot hold, converted to its own text format.
    text: Option<TextConvert>,
    /// The input's other audio streams, not copied: a note for the summary.
    others_note: Option<String>,
}

impl StreamCopy {
    /// The input's audio stream (FFmpeg's choice), added to `out`; `Err(reason)` when there is
    /// none ("no audio stream") or the container cannot hold its codec.
    pub(super) fn audio(
        path: &Path,
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<Self, String> {
        let input = ffmpeg::format::input(&path).map_err(|e| e.to_string())?;
        let stream = input
            .streams()
            .best(Type::Audio)
            .ok_or_else(|| "no audio stream".to_string())?
            .index();
        let others = input
            .streams()
            .filter(|st| st.parameters().medium() == Type::Audio)
            .count()
            .saturating_sub(1);
        let id = input
            .stream(stream)
            .map(|st| st.parameters().id())
            .unwrap_or(ffmpeg::codec::Id::None);
        // A muxer without a codec list cannot say: the common audio codecs of dashcams and
        // phones go in every container written here.
        use ffmpeg::codec::Id;
        let common = matches!(id, Id::AAC | Id::MP3 | Id::MP2 | Id::AC3);
        if !muxer_holds(out, id).unwrap_or(common) {
            // Converted to AAC, as FFmpeg's own tool would; where even that fails, Matroska
            // holds every audio codec FFmpeg reads (PCM from a dashcam's MOV too).
            return Self::converted(input, stream, out)
                .map(|c| c.with_others(others, path))
                .map_err(|why| {
                format!(
                    "audio codec {} cannot be stored in {} and was not converted to AAC: {why}; an output named .mkv keeps it",
                    codec_short_name(id),
                    out.format().name()
                )
            });
        }
        Self::add(input, stream, out).map(|c| c.with_others(others, path))
    }

    /// The note on `others` audio streams of `path` beside the one copied (a second microphone
    /// or commentary track), which are not: FFmpeg's own tool maps one audio stream too.
    fn with_others(mut self, others: usize, path: &Path) -> Self {
        if others > 0 {
            self.others_note = Some(format!(
                "; {others} more audio stream{} not copied (`ffmpeg -i {} -map 0:a:1 -c copy audio2.mka` extracts the second)",
                if others == 1 { "" } else { "s" },
                path.display()
            ));
        }
        self
    }

    /// What the output got of this stream, for the summary: `audio aac copied`, `audio
    /// pcm_s16le converted to AAC (128 kb/s)`, `subtitles`' codec names are listed by the caller.
    pub(super) fn described(&self) -> String {
        let copied = match &self.convert {
            Some(c) => format!(
                "audio {} converted to AAC ({} kb/s)",
                self.codec,
                c.bit_rate / 1000
            ),
            None => format!("audio {} copied", self.codec),
        };
        copied + self.others_note.as_deref().unwrap_or("")
    }

    /// `input`'s audio stream `stream` converted to AAC, added to `out`.
    fn converted(
        input: ffmpeg::format::context::Input,
        stream: usize,
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<Self, String> {
        let st = input.stream(stream).ok_or("no such stream")?;
        let (convert, out_index) = AacConvert::new(st.parameters(), out)?;
        Self::of(input, stream, out_index, Some(convert))
    }

    /// The input's subtitle tracks, each added to `out` where the container holds its codec
    /// (an MP4 holds `mov_text`, Matroska SubRip, ASS and WebVTT), else converted to the
    /// container's own text format when the track is text (`subtitle::TextConvert`); the
    /// codecs of those left out (bitmap subtitles), for a note.
    pub(super) fn subtitles(
        path: &Path,
        out: &mut ffmpeg::format::context::Output,
    ) -> (Vec<Self>, Vec<String>) {
        let Ok(input) = ffmpeg::format::input(&path) else {
            return (Vec::new(), Vec::new());
        };
        let tracks: Vec<(usize, ffmpeg::codec::Id)> = input
            .streams()
            .filter(|st| st.parameters().medium() == Type::Subtitle)
            .map(|st| (st.index(), st.parameters().id()))
            .collect();
        drop(input);
        let (mut copied, mut left) = (Vec::new(), Vec::new());
        let target = default_text_codec(out);
        for (stream, id) in tracks {
            let reopened = || ffmpeg::format::input(&path).map_err(|e| e.to_string());
            let added = match (muxer_holds(out, id), target) {
                (Some(true), _) => reopened().and_then(|input| Self::add(input, stream, out)),
                (Some(false), Some(t)) => {
                    reopened().and_then(|input| Self::text_converted(input, stream, t, out))
                }
                _ => Err("not held".into()),
            }
            .ok();
            match added {
                Some(c) => copied.push(c),
                None => left.push(codec_short_name(id)),
            }
        }
        (copied, left)
    }

    /// `input`'s text subtitle track `stream` converted to `target`, added to `out`.
    fn text_converted(
        input: ffmpeg::format::context::Input,
        stream: usize,
        target: ffmpeg::codec::Id,
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<Self, String> {
        let st = input.stream(stream).ok_or("no such stream")?;
        let (text, out_index) = TextConvert::new(st.parameters(), st.time_base(), target, out)?;
        let mut copy = Self::of(input, stream, out_index, None)?;
        copy.text = Some(text);
        Ok(copy)
    }

    /// What the output got of this subtitle track, for the summary: `mov_text copied`, or
    /// `subrip converted to mov_text`.
    pub(super) fn subtitle_described(&self) -> String {
        match &self.text {
            Some(t) => format!("{} converted to {}", self.codec, t.target),
            None => format!("{} copied", self.codec),
        }
    }

    /// Add a copy of `input`'s stream `stream` to `out`.
    fn add(
        input: ffmpeg::format::context::Input,
        stream: usize,
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<Self, String> {
        let st = input.stream(stream).ok_or("no such stream")?;
        let mut ost = out
            .add_stream(ffmpeg::encoder::find(ffmpeg::codec::Id::None))
            .map_err(|e| e.to_string())?;
        ost.set_parameters(st.parameters());
        ost.set_time_base(st.time_base());
        // SAFETY: clear the input container's codec tag so the output's muxer picks its own.
        unsafe { (*ost.parameters().as_mut_ptr()).codec_tag = 0 };
        let out_index = ost.index();
        Self::of(input, stream, out_index, None)
    }

    /// The copy (or conversion) of `input`'s stream `stream` as the output's stream
    /// `out_index`; its time base until the header is written (`header_written`) the input's.
    fn of(
        input: ffmpeg::format::context::Input,
        stream: usize,
        out_index: usize,
        convert: Option<AacConvert>,
    ) -> std::result::Result<Self, String> {
        let st = input.stream(stream).ok_or("no such stream")?;
        let (in_tb, params) = (st.time_base(), st.parameters());
        let codec = codec_short_name(params.id());
        let subtitle = params.medium() == Type::Subtitle;
        Ok(Self {
            input,
            stream,
            in_tb,
            out_index,
            out_tb: in_tb,
            offset_s: None,
            pending: None,
            ended: false,
            codec,
            subtitle,
            convert,
            text: None,
            others_note: None,
        })
    }

    /// The output stream's time base, as the muxer set it when it wrote the header.
    pub(super) fn header_written(&mut self, out: &ffmpeg::format::context::Output) {
        self.out_tb = out
            .stream(self.out_index)
            .map(|s| s.time_base())
            .unwrap_or(self.in_tb);
    }

    /// The output starts at input time `s` (its first video frame's), once.
    pub(super) fn start_at(&mut self, s: f64) {
        self.offset_s.get_or_insert(s);
    }

    /// The next packet of the stream, kept until written.
    fn peek(&mut self) -> Option<&ffmpeg::Packet> {
        while self.pending.is_none() && !self.ended {
            let mut p = ffmpeg::Packet::empty();
            match p.read(&mut self.input) {
                Ok(()) if p.stream() == self.stream => self.pending = Some(p),
                Ok(()) => {}
                Err(_) => self.ended = true,
            }
        }
        self.pending.as_ref()
    }

    /// Write the packets that start before `until_s` (output time).
    pub(super) fn write_until(
        &mut self,
        until_s: f64,
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<(), ffmpeg::Error> {
        let Some(offset) = self.offset_s else {
            return Ok(());
        };
        let tb = f64::from(self.in_tb);
        loop {
            let Some(p) = self.peek() else {
                return Ok(());
            };
            let Some(ts) = p.pts().or(p.dts()) else {
                self.pending = None;
                continue;
            };
            let t = ts as f64 * tb - offset;
            if t >= until_s {
                return Ok(());
            }
            let Some(mut p) = self.pending.take() else {
                return Ok(());
            };
            if let Some(c) = self.text.as_mut() {
                // The cue in the output's format, with the input packet's times.
                match c.convert(&p) {
                    Some(converted) => p = converted,
                    None => continue,
                }
            }
            if let Some(c) = self.convert.as_mut() {
                if t >= -1e-3 {
                    c.push(&p, t, (self.out_index, self.out_tb), out)?;
                }
                continue;
            }
            let shift = (offset / tb).round() as i64;
            if t < -1e-3 {
                // Before the first frame written (--start): dropped, but for a subtitle line
                // still shown then (a GPS position held for seconds), kept from the start.
                let end = p.duration() as f64 * tb + t;
                if !self.subtitle || end <= 1e-3 {
                    continue;
                }
                p.set_duration((end / tb).round() as i64);
                p.set_pts(Some(shift));
                p.set_dts(Some(shift));
            }
            // A packet kept within the millisecond before the first frame (the shift rounded
            // in another time base) starts at 0, its decoding time not after it.
            p.set_pts(p.pts().map(|v| (v - shift).max(0)));
            p.set_dts(p.dts().map(|v| (v - shift).max(0)));
            p.rescale_ts(self.in_tb, self.out_tb);
            p.set_position(-1);
            p.set_stream(self.out_index);
            p.write_interleaved(out)?;
        }
    }

    /// The end of the output at `end_s` (output seconds): a converted stream's last samples
    /// and the encoder's last packets (a copy has nothing held back).
    pub(super) fn finish(
        &mut self,
        end_s: f64,
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<(), ffmpeg::Error> {
        match self.convert.as_mut() {
            Some(c) => c.finish(end_s, (self.out_index, self.out_tb), out),
            None => Ok(()),
        }
    }
}
