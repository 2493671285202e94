//! Video input on FFmpeg's own libraries: `VideoSource` demuxes (libavformat) and decodes
//! (libavcodec, frame + slice threads set explicitly) the best video stream, honours the
//! container's rotation, and hands out frames with their presentation times, either as BGR
//! (libswscale) or as the decoder's own planes (`VideoFrame`).

use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::base::planes::RawFrame;
use crate::lane::shot::LumaSample;
use crate::video::libav::{codec_short_name, init};
use crate::video::recording::Recording;
use crate::video::resize::SizeKeeper;
use crate::video::rotation::{display_rotation, stream_pixel_shape, Rotation};
use crate::video::yuv::{y_plane_sample, Yuv420};
use ffmpeg::ffi;
use ffmpeg_next as ffmpeg;
use opencv::core::{self, Mat};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Decoder threads per video, 0 = automatic (see `decoder_threads`).
static DECODER_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Set the decoder threads of every video opened from now on (0 = automatic). `lanes batch`
/// with several jobs gives each video fewer: threaded decoding costs CPU in hand-offs, so with
/// several videos at once one thread per video decodes more frames per core.
pub fn set_decoder_threads(n: usize) {
    DECODER_THREADS.store(n, Ordering::Relaxed);
}

/// The decoder threads a video is opened with: the set value, else one more than the cores
/// this process may use (what FFmpeg's own "auto" picks, written down here so that it does not
/// depend on the library's default).
pub fn decoder_threads() -> usize {
    match DECODER_THREADS.load(Ordering::Relaxed) {
        0 => {
            let cores = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            if cores > 1 {
                (cores + 1).min(16)
            } else {
                1
            }
        }
        n => n.min(64),
    }
}

/// One decoded frame: its presentation time and its pixels, as BGR or as the decoder's planes.
pub struct VideoFrame {
    /// Presentation timestamp in the stream's time base (`VideoSource::time_base`), when the
    /// stream has one.
    pub pts: Option<i64>,
    /// Seconds from the stream's first frame (`pts` in seconds; the frame index over the rate
    /// when there is no timestamp).
    pub time_s: f64,
    pixels: Pixels,
}

enum Pixels {
    Bgr(BgrFrame),
    /// 8-bit 4:2:0 planes, unrotated (only read when the stream has no rotation).
    Planes(Yuv420),
}

impl VideoFrame {
    /// The frame as the analysis reads it: the planes when it was kept as planes, else BGR.
    pub fn raw(&self) -> Result<RawFrame<'_>> {
        Ok(match &self.pixels {
            Pixels::Bgr(b) => RawFrame::Bgr(b),
            Pixels::Planes(p) => RawFrame::Yuv(p.planes()?),
        })
    }

    /// Width and height of the frame as the analysis sees it.
    pub fn size(&self) -> (i32, i32) {
        match &self.pixels {
            Pixels::Bgr(b) => (b.width(), b.height()),
            Pixels::Planes(p) => (p.width(), p.height()),
        }
    }

    /// The same frame with its pixels as BGR (converted here when it was kept as planes).
    pub fn converted(self) -> Result<VideoFrame> {
        let (pts, time_s) = (self.pts, self.time_s);
        Ok(VideoFrame {
            pts,
            time_s,
            pixels: Pixels::Bgr(self.into_bgr()?),
        })
    }

    /// A BGR copy of the frame (converted when it was kept as planes).
    pub fn to_bgr(&self) -> Result<BgrFrame> {
        match &self.pixels {
            Pixels::Bgr(b) => Ok(b.clone()),
            Pixels::Planes(p) => p.to_bgr(),
        }
    }

    /// The frame as BGR (converted here when it was kept as planes).
    pub fn into_bgr(self) -> Result<BgrFrame> {
        match self.pixels {
            Pixels::Bgr(b) => Ok(b),
            Pixels::Planes(p) => p.to_bgr(),
        }
    }
}

/// An opened input video.
pub struct VideoSource {
    input: ffmpeg::format::context::Input,
    decoder: ffmpeg::decoder::Video,
    stream: usize,
    path: PathBuf,
    /// The codec's short name (`h264`, `hevc`, ...), for messages.
    pub codec_name: String,
    /// Frame size as shown (after rotation).
    pub width: i32,
    pub height: i32,
    pub fps: f64,
    /// Frame count the container announces (or its duration times the rate; 0 when unknown).
    pub announced_frames: i64,
    /// The stream's time base (numerator, denominator): `VideoFrame::pts` counts in it.
    pub time_base: (i32, i32),
    /// The rotation applied to every frame (from the container's display matrix).
    pub rotation: Rotation,
    /// The video stream's bit rate (else the container's), bits per second; 0 when unknown.
    pub bit_rate: i64,
    /// The shape of a pixel as shown (width, height; `(1, 1)`: square, also when unknown),
    /// after rotation: an anamorphic picture (720x576 shown at 16:9 is 64:45) is stored
    /// narrower than it is shown.
    pub sample_aspect: (i32, i32),
    /// Presentation time of the stream's first frame, in `time_base` (0 when unknown).
    start_pts: i64,
    /// Frames `read` may still return (see `limit`).
    remaining: usize,
    /// A frame decoded ahead (by `seek`, or to learn the size), returned next.
    pushback: Option<ffmpeg::frame::Video>,
    /// Frames kept since `record` was called, for `rewind`.
    recording: Option<Recording>,
    /// Frames `rewind` put back, returned before any new one is decoded.
    replay: std::collections::VecDeque<ffmpeg::frame::Video>,
    /// 0-based index of the frame `decode_next` returns next (for frames without a timestamp).
    next_index: usize,
    eof_sent: bool,
    /// Frames decoded so far.
    decoded: usize,
    /// Packets taken, errors met, and whether the container was read to its end.
    health: std::sync::Arc<super::health::StreamHealth>,
    last_error: Option<String>,
    /// Frames of another size than the first scaled to it (`resize`).
    size_keeper: SizeKeeper,
}

/// Errors in a row after which a stream counts as undecodable.
const MAX_ERRORS_IN_A_ROW: usize = 64;

fn is_again(e: &ffmpeg::Error) -> bool {
    matches!(e, ffmpeg::Error::Other { errno } if *errno == ffmpeg::error::EAGAIN)
}

impl VideoSource {
    /// Open a video (any container and codec this FFmpeg build reads), decoded on
    /// `decoder_threads()` threads (its frames do not depend on the count: the decoders are
    /// bit-exact).
    pub fn open(path: &Path) -> Result<Self> {
        let threads = decoder_threads();
        init();
        if !path.exists() {
            return Err(Error::NotFound {
                path: path.to_path_buf(),
            });
        }
        if path.is_dir() {
            return Err(Error::Video {
                path: path.to_path_buf(),
                message: "is a directory, not a video".into(),
            });
        }
        let not_video = |why: &str| Error::Video {
            path: path.to_path_buf(),
            message: format!("cannot open as a video ({why})"),
        };
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            return Err(not_video("an empty file, 0 bytes"));
        }
        let input = ffmpeg::format::input(&path).map_err(|e| {
            not_video(&super::files::missing_index(path).unwrap_or(e.to_string().to_lowercase()))
        })?;
        // A still whatever its name (a JPEG saved as .mp4): FFmpeg reads it as one frame.
        if let Some(kind) = super::files::still_format(input.format().name()) {
            return Err(Error::Video {
                path: path.to_path_buf(),
                message: format!("a still image ({kind}), not a video, whatever its name: `lanes image` processes stills"),
            });
        }
        let stream = input
            .streams()
            .best(ffmpeg::media::Type::Video)
            .ok_or_else(|| not_video("no video stream"))?;
        let index = stream.index();
        let params = stream.parameters();
        let codec_id = params.id();
        let codec_name = codec_short_name(codec_id);
        // SAFETY: a plain field of the stream's parameters, alive with `input`.
        let stream_rate = unsafe { (*params.as_ptr()).bit_rate };
        let bit_rate = Some(stream_rate)
            .filter(|b| *b > 0)
            .unwrap_or(input.bit_rate());
        let tb = stream.time_base();
        let (rate, announced) = super::probe::header_rate_and_frames(&input, &stream);
        // SAFETY: a plain field of the open input's context.
        let container_start_us = Some(unsafe { (*input.as_ptr()).start_time })
            .filter(|&t| t != ffi::AV_NOPTS_VALUE)
            .unwrap_or(0);
        let container_duration_us = input.duration().max(0);
        let rotation = display_rotation(&stream);
        let sample_aspect = stream_pixel_shape(&input, &stream, rotation);
        let start = stream.start_time();
        let start_pts = if start == ffi::AV_NOPTS_VALUE {
            0
        } else {
            start
        };
        let mut ctx =
            ffmpeg::codec::context::Context::from_parameters(params).map_err(|e| Error::Video {
                path: path.to_path_buf(),
                message: format!("cannot read the {codec_name} video stream's parameters ({e})"),
            })?;
        let threads = threads.max(1);
        // SAFETY: the context is ours and not yet opened; these are plain fields that
        // avcodec_open2 reads.
        unsafe {
            let c = ctx.as_mut_ptr();
            (*c).thread_count = threads as i32;
            (*c).thread_type = ffi::FF_THREAD_FRAME | ffi::FF_THREAD_SLICE;
            (*c).pkt_timebase = tb.into();
        }
        let decoder = ctx
            .decoder()
            .video()
            .map_err(|e| Self::unsupported(path, &codec_name, e))?;
        let mut src = Self {
            input,
            decoder,
            stream: index,
            path: path.to_path_buf(),
            codec_name,
            width: 0,
            height: 0,
            fps: rate,
            announced_frames: announced.max(0),
            time_base: (tb.numerator(), tb.denominator().max(1)),
            rotation,
            bit_rate,
            sample_aspect,
            start_pts,
            remaining: usize::MAX,
            pushback: None,
            recording: None,
            replay: std::collections::VecDeque::new(),
            next_index: 0,
            eof_sent: false,
            decoded: 0,
            health: std::sync::Arc::new(super::health::StreamHealth::with_span(
                container_start_us,
                container_duration_us,
                rate,
            )),
            last_error: None,
            size_keeper: SizeKeeper::new((0, 0)),
        };
        let (mut w, mut h) = (src.decoder.width() as i32, src.decoder.height() as i32);
        if w <= 0 || h <= 0 {
            // Some containers leave the size to the stream itself: decode the first frame.
            match src.decode_fresh()? {
                Some(f) => {
                    (w, h) = (f.width() as i32, f.height() as i32);
                    src.pushback = Some(f);
                }
                None => return Err(src.undecodable()),
            }
        }
        if w <= 0 || h <= 0 {
            return Err(not_video("no frame size"));
        }
        src.size_keeper = SizeKeeper::new((w as u32, h as u32));
        (src.width, src.height) = if rotation.swaps_sides() {
            (h, w)
        } else {
            (w, h)
        };
        Ok(src)
    }

    fn unsupported(path: &Path, codec: &str, e: ffmpeg::Error) -> Error {
        Error::Video {
            path: path.to_path_buf(),
            message: format!("unsupported video codec {codec} ({e})"),
        }
    }

    /// What decoding met so far, shared (the decoder runs on a thread of its own).
    pub fn health(&self) -> std::sync::Arc<super::health::StreamHealth> {
        self.health.clone()
    }

    /// The error for a stream that gave no frame at all.
    fn undecodable(&self) -> Error {
        Error::Video {
            path: self.path.clone(),
            message: format!(
                "corrupt or unsupported {} video stream: no frame could be decoded{}",
                self.codec_name,
                self.last_error
                    .as_ref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            ),
        }
    }

    /// Bytes one decoded frame holds (its planes at the decoder's pixel format, rows aligned
    /// to 64 bytes), as a recording counts them; 0 when the format is not known yet.
    pub fn frame_bytes(&self) -> usize {
        let fmt: ffi::AVPixelFormat = self.decoder.format().into();
        let (w, h) = (self.decoder.width() as i32, self.decoder.height() as i32);
        if fmt == ffi::AVPixelFormat::AV_PIX_FMT_NONE || w <= 0 || h <= 0 {
            return 0;
        }
        // SAFETY: a pure size computation on plain values.
        let n = unsafe { ffi::av_image_get_buffer_size(fmt, w, h, 64) };
        n.max(0) as usize
    }

    /// The file this source reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Return at most `n` more frames from `read`.
    pub fn limit(&mut self, n: usize) {
        self.remaining = n;
    }

    /// Skip the in-loop deblocking filter (H.264, HEVC): for analysis-only runs, where the
    /// filter's smoothing of block edges does not help find a lane marking. Takes effect from
    /// the next packet.
    pub fn set_skip_loop_filter(&mut self, skip: bool) {
        let d = if skip {
            ffmpeg::codec::discard::Discard::All
        } else {
            ffmpeg::codec::discard::Discard::Default
        };
        // SAFETY: a plain field of our own decoder context, read by the decoder per packet
        // (and copied to its frame threads with each packet).
        unsafe {
            (*self.decoder.as_mut_ptr()).skip_loop_filter = d.into();
        }
    }

    /// Keep every frame decoded from now on (references, up to `max_bytes`), so that
    /// `rewind` can hand them out again: a pass over the opening frames (self-calibration)
    /// and the run that follows share one decoding.
    pub fn record(&mut self, max_bytes: usize) {
        self.recording = Some(Recording::new(max_bytes, self.next_index));
    }

    /// Hand out the frames kept since `record` again, from the first, then go on decoding
    /// where the recording stopped. False (nothing changed but the recording dropped) when
    /// they did not fit the budget: the caller opens the file again.
    pub fn rewind(&mut self) -> bool {
        let Some((first, kept)) = self.recording.take().and_then(Recording::into_frames) else {
            return false;
        };
        let mut frames: std::collections::VecDeque<_> = kept.into();
        frames.extend(self.pushback.take());
        frames.extend(self.replay.drain(..));
        self.replay = frames;
        self.next_index = first;
        self.remaining = usize::MAX;
        true
    }

    /// Frames `rewind` put back that have not been read again yet.
    pub fn replayed(&self) -> usize {
        self.replay.len()
    }

    /// Decode the next frame as it comes from the decoder; `Ok(None)` at the end or where
    /// decoding stops (a truncated or corrupt file); an error when nothing at all decodes.
    fn decode_next(&mut self) -> Result<Option<ffmpeg::frame::Video>> {
        let next = match self.pushback.take().or_else(|| self.replay.pop_front()) {
            Some(f) => Some(f),
            None => self.decode_fresh()?,
        };
        let Some(f) = next else {
            return Ok(None);
        };
        self.next_index += 1;
        if let Some(rec) = self.recording.as_mut() {
            rec.keep(&f);
        }
        Ok(Some(f))
    }

    /// The next frame out of the decoder itself.
    fn decode_fresh(&mut self) -> Result<Option<ffmpeg::frame::Video>> {
        let mut frame = ffmpeg::frame::Video::empty();
        let mut in_a_row = 0usize;
        loop {
            match self.decoder.receive_frame(&mut frame) {
                Ok(()) => {
                    self.decoded += 1;
                    return Ok(Some(frame));
                }
                Err(ffmpeg::Error::Eof) => return self.end(),
                Err(e) if is_again(&e) => {}
                Err(e) => {
                    self.health.error();
                    in_a_row += 1;
                    self.last_error = Some(e.to_string());
                }
            }
            if self.eof_sent {
                return self.end();
            }
            if in_a_row > MAX_ERRORS_IN_A_ROW {
                self.send_eof();
                continue;
            }
            in_a_row += self.feed();
        }
    }

    /// The end of the stream: an error when packets went in and not one frame came out (the
    /// stream is corrupt, or coded in a way this decoder does not support).
    fn end(&self) -> Result<Option<ffmpeg::frame::Video>> {
        if self.decoded == 0 && (self.health.errors() > 0 || self.health.packets() > 0) {
            return Err(self.undecodable());
        }
        Ok(None)
    }

    /// Where a packet of any stream ends (its start plus its duration), microseconds.
    fn packet_end_us(&self, packet: &ffmpeg::Packet) -> Option<i64> {
        let tb = self.input.stream(packet.stream())?.time_base();
        let start = packet.pts().or(packet.dts())?;
        let end = start.saturating_add(packet.duration().max(0));
        let us = end as f64 * f64::from(tb) * 1e6;
        us.is_finite().then_some(us as i64)
    }

    fn send_eof(&mut self) {
        let _ = self.decoder.send_eof();
        self.eof_sent = true;
    }

    /// Send the next packet of the video stream to the decoder (or the end of the stream);
    /// returns the packets it refused on the way.
    fn feed(&mut self) -> usize {
        let mut packet = ffmpeg::Packet::empty();
        let mut refused = 0;
        loop {
            match packet.read(&mut self.input) {
                Ok(()) => {
                    if let Some(end) = self.packet_end_us(&packet) {
                        self.health.packet_ends_at(end);
                    }
                    if packet.stream() != self.stream {
                        continue;
                    }
                    self.health.packets.fetch_add(1, Ordering::Relaxed);
                    match self.decoder.send_packet(&packet) {
                        Ok(()) => return refused,
                        Err(e) => {
                            self.health.error();
                            refused += 1;
                            self.last_error = Some(e.to_string());
                            if refused > MAX_ERRORS_IN_A_ROW {
                                self.send_eof();
                                return refused;
                            }
                        }
                    }
                }
                Err(ffmpeg::Error::Eof) => {
                    self.send_eof();
                    return refused;
                }
                Err(e) => {
                    // A read error mid-file (truncated or corrupt container): decoding stops
                    // here, the frames before it count.
                    self.health.read_failed.store(true, Ordering::Relaxed);
                    self.last_error = Some(e.to_string());
                    self.send_eof();
                    return refused;
                }
            }
        }
    }

    /// Read the next frame as BGR; `Ok(None)` at the end, where decoding stops, or past the
    /// limit.
    pub fn read(&mut self) -> Result<Option<BgrFrame>> {
        self.read_frame()?.map(VideoFrame::into_bgr).transpose()
    }

    /// Read the next frame with its presentation time: video-range 8-bit 4:2:0 frames of a
    /// stream without rotation as the decoder's planes (not converted), others as BGR.
    pub fn read_frame(&mut self) -> Result<Option<VideoFrame>> {
        Ok(self.read_frame_with(false)?.map(|(f, _)| f))
    }

    /// `read_frame`, with the luma grid of the decoder's Y plane (`skip_sampled`).
    pub fn read_frame_sampled(&mut self) -> Result<Option<(VideoFrame, Option<LumaSample>)>> {
        self.read_frame_with(true)
    }

    fn read_frame_with(
        &mut self,
        sampled: bool,
    ) -> Result<Option<(VideoFrame, Option<LumaSample>)>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        let Some(f) = self.decode_next()? else {
            return Ok(None);
        };
        let f = self.size_keeper.keep(f).map_err(|message| Error::Video {
            path: self.path.clone(),
            message: format!("{} frame: {message}", self.codec_name),
        })?;
        self.remaining -= 1;
        let sample = if sampled { y_plane_sample(&f) } else { None };
        let pts = f.timestamp().or(f.pts());
        let time_s = match pts {
            Some(p) => {
                (p - self.start_pts) as f64 * self.time_base.0 as f64 / self.time_base.1 as f64
            }
            None => (self.next_index.saturating_sub(1)) as f64 / self.fps,
        };
        let planes = if self.rotation == Rotation::None {
            Yuv420::from_frame(f)
        } else {
            Err(f)
        };
        let pixels = match planes {
            Ok(p) => Pixels::Planes(p),
            Err(f) => Pixels::Bgr(self.to_bgr(&f)?),
        };
        Ok(Some((
            VideoFrame {
                pts,
                time_s,
                pixels,
            },
            sample,
        )))
    }

    /// A decoded frame as upright BGR.
    fn to_bgr(&self, f: &ffmpeg::frame::Video) -> Result<BgrFrame> {
        let m = crate::video::yuv::bgr_mat_from_frame(f).map_err(|message| Error::Video {
            path: self.path.clone(),
            message: format!("{} frame: {message}", self.codec_name),
        })?;
        let m = match self.rotation {
            Rotation::None => m,
            r => {
                let code = match r {
                    Rotation::Cw90 => core::ROTATE_90_CLOCKWISE,
                    Rotation::R180 => core::ROTATE_180,
                    _ => core::ROTATE_90_COUNTERCLOCKWISE,
                };
                let mut out = Mat::default();
                core::rotate(&m, &mut out, code)?;
                out
            }
        };
        BgrFrame::new(m)
    }

    /// Skip a frame without converting it; false at the end.
    pub fn skip(&mut self) -> Result<bool> {
        if self.remaining == 0 {
            return Ok(false);
        }
        Ok(self.decode_next()?.is_some())
    }

    /// Skip a frame as `skip` does, with the luma grid (`lane::shot`) of the decoder's Y plane
    /// as stored (unrotated, unconverted), when the frame is 8-bit planar YUV (`Ok(Some(None))`
    /// for other formats). `Ok(None)` at the end.
    pub fn skip_sampled(&mut self) -> Result<Option<Option<LumaSample>>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        Ok(self.decode_next()?.map(|f| y_plane_sample(&f)))
    }

    /// Seek so that the next `read` returns frame `n` (0-based, counted at the stream's rate
    /// from its first frame): from the keyframe before it, decoding up to it. A container
    /// without an index (MPEG-TS) is sought by bytes and can land past the frame, on the next
    /// keyframe: the seek is then tried again from further back (1 s, doubling, up to 64 s)
    /// rather than handing out a later frame as frame `n`. False when it cannot be reached
    /// (the position is then unknown).
    pub fn seek(&mut self, n: usize) -> Result<bool> {
        let (num, den) = (self.time_base.0 as f64, self.time_base.1 as f64);
        if num <= 0.0 {
            return Ok(false);
        }
        let per_frame = den / num / self.fps;
        let target = self.start_pts + (n as f64 * per_frame).round() as i64;
        let second = (den / num).round() as i64;
        let half = (per_frame / 2.0).floor() as i64;
        for back in std::iter::once(0).chain((0..7).map(|k| second << k)) {
            let to = target - back;
            // SAFETY: our own input context and a stream index inside it.
            let r = unsafe {
                ffi::avformat_seek_file(
                    self.input.as_mut_ptr(),
                    self.stream as i32,
                    i64::MIN,
                    to,
                    to,
                    0,
                )
            };
            if r < 0 {
                return Ok(false);
            }
            self.decoder.flush();
            self.pushback = None;
            self.replay.clear();
            self.recording = None;
            self.eof_sent = false;
            let mut first = true;
            loop {
                let Some(f) = self.decode_fresh()? else {
                    return Ok(false);
                };
                match f.timestamp().or(f.pts()) {
                    // Landed past the frame: from further back.
                    Some(t) if first && t > target + half => break,
                    Some(t) if t + half < target => first = false,
                    Some(_) => {
                        self.pushback = Some(f);
                        self.next_index = n;
                        return Ok(true);
                    }
                    None => return Ok(false),
                }
            }
        }
        Ok(false)
    }
}
