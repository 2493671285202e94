//! Video output on FFmpeg's own libraries: `VideoSink` converts BGR frames to yuv420p
//! (libswscale), encodes them (libx264 by default, or MPEG-4 Part 2) with the input's
//! timestamps, copies the input's audio stream and subtitle tracks (`copy`), and muxes the
//! container the output's name asks for (`container_for`: an MP4 with its index at the front,
//! `+faststart`, for `.mp4`), written under a hidden partial name and renamed when complete.

use super::copy::StreamCopy;
use super::job::Codec;
use super::libav::init;
use crate::base::cancel::AbortCleanup;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::video::yuv::BgrToYuv420p;
use ffmpeg::ffi;
use ffmpeg::Rational;
use ffmpeg_next as ffmpeg;
use opencv::core::{self, Mat};
use std::path::{Path, PathBuf};

/// What a sink writes besides its frames.
#[derive(Debug, Clone)]
pub struct SinkSpec {
    pub fps: f64,
    pub width: i32,
    pub height: i32,
    pub codec: Codec,
    /// Time base of the timestamps given to `write_at` (numerator, denominator); `None`:
    /// frames are numbered at `fps`.
    pub time_base: Option<(i32, i32)>,
    /// Copy the audio stream and the subtitle tracks of this file (the input), cut to the
    /// frames written.
    pub copy_from: Option<PathBuf>,
    /// The shape of a pixel as shown (width, height): the input's, so that an anamorphic
    /// video's overlay plays at the input's shape; `(1, 1)` for square pixels.
    pub sample_aspect: (i32, i32),
}

/// The container an output video is written in, chosen by its file name's extension as FFmpeg's
/// own tool chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Container {
    /// FFmpeg's muxer: `mp4`, `mov`, `matroska`, `avi`, `mpegts`.
    pub muxer: &'static str,
    /// The `moov` index at the front (`+faststart`): MP4 and QuickTime, so that a browser
    /// starts playing before the whole file has arrived.
    pub faststart: bool,
}

impl Container {
    /// The container has no timestamps, only a frame rate (AVI): the frames are written one
    /// period of the video's (average) rate apart, so that the stream announces that rate.
    /// Given the input's fine time base instead, an AVI announced 600 fps and 1200 frames
    /// for 50 (OpenCV and lanes itself read those back).
    pub fn constant_rate(&self) -> bool {
        self.muxer == "avi"
    }
}

/// The container for an output named `path`: `.mp4`/`.m4v` MP4 (the one browsers play),
/// `.mov` QuickTime, `.mkv` Matroska, `.avi`, `.ts`/`.m2ts`/`.mts` MPEG-TS. Any other name is
/// refused before anything is decoded, naming the extension: a `.webm` holds only VP8, VP9 or
/// AV1 video (lanes writes H.264 or MPEG-4), and a `.gif`, `.txt` or bare name would hold an
/// MP4 that nothing expects there.
pub fn container_for(path: &Path) -> Result<Container> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let c = |muxer, faststart| Ok(Container { muxer, faststart });
    let refuse = |why: String| {
        Err(Error::Io {
            path: path.to_path_buf(),
            message: format!(
                "{why}: name the output .mp4 (browsers play it), .mov, .m4v, .mkv, .avi or .ts"
            ),
        })
    };
    match ext.as_deref() {
        Some("mp4" | "m4v") => c("mp4", true),
        Some("mov") => c("mov", true),
        Some("mkv") => c("matroska", false),
        Some("avi") => c("avi", false),
        Some("ts" | "m2ts" | "mts") => c("mpegts", false),
        Some("webm") => refuse(
            "a .webm file holds VP8, VP9 or AV1 video, not the H.264 or MPEG-4 lanes writes".into(),
        ),
        Some(e) => refuse(format!("'.{e}' is not a video container lanes writes")),
        None => refuse("the output has no file extension to choose its container by".into()),
    }
}

/// An output video written to the hidden `.<name>.partial.<ext>` beside it and renamed on
/// `finish`.
/// Dropped without `finish` (an error, `abandon`), it closes and deletes the partial file; a
/// second SIGINT/SIGTERM deletes it too (`AbortCleanup`).
pub struct VideoSink {
    out: Option<ffmpeg::format::context::Output>,
    encoder: ffmpeg::encoder::Video,
    yuv: ffmpeg::frame::Video,
    to_yuv: BgrToYuv420p,
    partial: PathBuf,
    path: PathBuf,
    container: Container,
    pub codec: Codec,
    pub frames: usize,
    /// What was written, for the summary: `H.264 (libx264, veryfast, crf 23), audio aac copied`
    /// (and `subtitles mov_text copied`).
    pub description: String,
    /// Time base of the timestamps given to `write_at`, and of the encoder.
    src_tb: Rational,
    enc_tb: Rational,
    ost_tb: Rational,
    /// One frame at the nominal rate, in `src_tb`.
    frame_ticks: i64,
    first_pts: Option<i64>,
    last_pts: Option<i64>,
    /// The last timestamp given to the encoder, in `enc_tb` (a coarser time base than the
    /// input's can round two frames onto one tick).
    last_enc_pts: Option<i64>,
    /// The encoded size (even for 4:2:0) and the frames' own size.
    enc_size: (i32, i32),
    size: (i32, i32),
    /// The input's audio and subtitle streams, copied beside the frames.
    copies: Vec<StreamCopy>,
    /// Set once the partial file was renamed (or removed): nothing left for `Drop`.
    done: bool,
    _cleanup: AbortCleanup,
}

/// `1 / fps` as a rational (exact for integer and NTSC rates).
fn frame_period(fps: f64) -> Rational {
    let fps = if fps.is_finite() && fps > 0.0 {
        fps
    } else {
        25.0
    };
    let r = Rational::from(fps);
    let r = if r.numerator() > 0 && r.denominator() > 0 {
        r
    } else {
        Rational::new(25, 1)
    };
    r.invert()
}

/// The video frames a finished file at `path` holds: the count in an MP4's or a QuickTime
/// file's index, else (Matroska, AVI and MPEG-TS keep no reliable count) its video packets,
/// read without decoding. `None` when the file cannot be opened or has no video stream.
fn frames_held(path: &Path, container: Container) -> Option<usize> {
    let mut input = ffmpeg::format::input(&path).ok()?;
    let stream = input.streams().best(ffmpeg::media::Type::Video)?;
    if container.faststart {
        return Some(stream.frames().max(0) as usize);
    }
    let index = stream.index();
    Some(input.packets().filter(|(s, _)| s.index() == index).count())
}

impl VideoSink {
    /// Create the output (its directory must exist) for frames numbered at `fps`.
    pub fn create(path: &Path, fps: f64, width: i32, height: i32, codec: Codec) -> Result<Self> {
        Self::create_with(
            path,
            &SinkSpec {
                fps,
                width,
                height,
                codec,
                time_base: None,
                copy_from: None,
                sample_aspect: (1, 1),
            },
        )
    }

    /// Create the output as `spec` says (its directory must exist).
    pub fn create_with(path: &Path, spec: &SinkSpec) -> Result<Self> {
        init();
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(Error::Io {
                path: path.to_path_buf(),
                message: format!("output directory {} does not exist", parent.display()),
            });
        }
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "out".into());
        if path.is_dir() {
            return Err(Error::Io {
                path: path.to_path_buf(),
                message: "output is a directory, not a file".into(),
            });
        }
        if spec.width <= 0 || spec.height <= 0 {
            return Err(Error::Io {
                path: path.to_path_buf(),
                message: format!("cannot encode frames of {}x{}", spec.width, spec.height),
            });
        }
        let container = container_for(path)?;
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_string())
            .unwrap_or_default();
        let partial = parent.join(format!(".{stem}.partial.{ext}"));
        let cleanup = AbortCleanup::register(&partial);
        let fail = |what: String| {
            let _ = std::fs::remove_file(&partial);
            Error::Io {
                path: path.to_path_buf(),
                message: what,
            }
        };
        let mut out = ffmpeg::format::output_as(&partial, container.muxer).map_err(|e| {
            fail(format!(
                "cannot open a video encoder ({}) for writing {}: {e} (is the directory writable?)",
                spec.codec.encoder_name(),
                partial.display()
            ))
        })?;
        let period = frame_period(spec.fps);
        let src_tb = match spec.time_base {
            Some((n, d)) if n > 0 && d > 0 => Rational::new(n, d),
            _ => period,
        };
        // MPEG-4 Part 2 stores at most 16 bits of time resolution.
        let enc_tb = if container.constant_rate() {
            period
        } else if spec.codec == Codec::Mp4v && src_tb.denominator() > 65535 {
            Rational::new(1, 1000)
        } else {
            src_tb
        };
        let (codec, size) = match spec.codec {
            Codec::H264 { .. } => (
                ffmpeg::encoder::find_by_name("libx264"),
                // 4:2:0 needs even sides: odd ones get the last row or column repeated.
                ((spec.width + 1) & !1, (spec.height + 1) & !1),
            ),
            Codec::Mp4v => (
                ffmpeg::encoder::find(ffmpeg::codec::Id::MPEG4),
                ((spec.width + 1) & !1, (spec.height + 1) & !1),
            ),
        };
        let codec = codec.ok_or_else(|| {
            fail(format!(
                "this FFmpeg build has no {} encoder",
                spec.codec.encoder_name()
            ))
        })?;
        let global_header = out
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);
        let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .map_err(|e| fail(format!("cannot set up the encoder: {e}")))?;
        enc.set_width(size.0 as u32);
        enc.set_height(size.1 as u32);
        enc.set_format(ffmpeg::format::Pixel::YUV420P);
        enc.set_time_base(enc_tb);
        enc.set_frame_rate(Some(period.invert()));
        let sar = Rational::new(spec.sample_aspect.0.max(1), spec.sample_aspect.1.max(1));
        enc.set_aspect_ratio(sar);
        enc.set_colorspace(ffmpeg::color::Space::BT470BG);
        enc.set_color_range(ffmpeg::color::Range::MPEG);
        if global_header {
            crate::video::libav::add_global_header(&mut enc);
        }
        let mut opts = ffmpeg::Dictionary::new();
        match spec.codec {
            Codec::H264 { preset, crf } => {
                opts.set("preset", preset.name());
                opts.set("crf", &crf.to_string());
            }
            Codec::Mp4v => {
                // OpenCV's writer's settings: a bit rate of 1.5 bits per pixel and frame (so
                // generous that the quantiser stays near its floor) and an intra frame every
                // 12. The synthetic suites' clips were written this way, and their numbers
                // depend on it: with a fixed quantiser the online-pitch drive's median
                // curvature error was 0.247 /km instead of 0.192.
                let rate = (1.5 * spec.fps * spec.width as f64 * spec.height as f64)
                    .clamp(1.0, i32::MAX as f64) as usize;
                enc.set_bit_rate(rate);
                enc.set_gop(12);
                // SAFETY: a plain field of the encoder context, before it is opened.
                unsafe {
                    (*enc.as_mut_ptr()).bit_rate_tolerance = rate as i32;
                }
            }
        }
        let encoder = enc.open_with(opts).map_err(|e| {
            fail(format!(
                "cannot open a video encoder ({}) for {}x{}: {e}",
                spec.codec.encoder_name(),
                size.0,
                size.1
            ))
        })?;
        {
            let mut ost = out
                .add_stream(codec)
                .map_err(|e| fail(format!("cannot add the video stream: {e}")))?;
            ost.set_parameters(&encoder);
            ost.set_time_base(enc_tb);
            ost.set_avg_frame_rate(period.invert());
            // SAFETY: a plain field of the stream just added, before the header is written.
            unsafe {
                (*ost.as_mut_ptr()).sample_aspect_ratio = sar.into();
            }
        }
        let mut description = spec.codec.name();
        if (size.0, size.1) != (spec.width, spec.height) {
            description += &format!(
                ", {}x{} padded to {}x{}",
                spec.width, spec.height, size.0, size.1
            );
        }
        let mut copies = Vec::new();
        if let Some(p) = &spec.copy_from {
            match StreamCopy::audio(p, &mut out) {
                Ok(a) => {
                    description += &format!(", {}", a.described());
                    copies.push(a);
                }
                Err(why) if why == "no audio stream" => {}
                Err(why) => description += &format!(", no audio ({why})"),
            }
            let (subs, left) = StreamCopy::subtitles(p, &mut out);
            if !subs.is_empty() {
                let each: Vec<String> = subs.iter().map(|c| c.subtitle_described()).collect();
                description += &format!(", subtitles {}", each.join(", "));
            }
            if !left.is_empty() {
                // What keeps them: an MP4 or MOV holds `mov_text`, Matroska the others (text
                // ones are converted where the container has a text format of its own; these
                // are bitmaps, or the container has none).
                let (keeps, extract) = if left.iter().all(|c| c == "mov_text") {
                    ("an output named .mp4 keeps them", "gps.srt")
                } else {
                    ("an output named .mkv keeps them", "-c copy subtitles.mkv")
                };
                description += &format!(
                    ", subtitles {} not copied ({} cannot hold them; {keeps}, or `ffmpeg -i {} -map 0:s:0 {extract}` extracts the first)",
                    left.join(", "),
                    out.format().name(),
                    p.display()
                );
            }
            copies.extend(subs);
        }
        let mut header = ffmpeg::Dictionary::new();
        if container.faststart {
            header.set("movflags", "+faststart");
        }
        out.write_header_with(header).map_err(|e| {
            fail(format!(
                "write failed: cannot write the {} header: {e}",
                container.muxer
            ))
        })?;
        let ost_tb = out.stream(0).map(|s| s.time_base()).unwrap_or(enc_tb);
        for c in copies.iter_mut() {
            c.header_written(&out);
        }
        let frame_ticks = {
            let p = f64::from(period) / f64::from(src_tb);
            (p.round() as i64).max(1)
        };
        Ok(Self {
            out: Some(out),
            encoder,
            yuv: ffmpeg::frame::Video::new(
                ffmpeg::format::Pixel::YUV420P,
                size.0 as u32,
                size.1 as u32,
            ),
            to_yuv: BgrToYuv420p::new(),
            partial,
            container,
            path: path.to_path_buf(),
            codec: spec.codec,
            frames: 0,
            description,
            src_tb,
            enc_tb,
            ost_tb,
            frame_ticks,
            first_pts: None,
            last_pts: None,
            last_enc_pts: None,
            enc_size: size,
            size: (spec.width, spec.height),
            copies,
            done: false,
            _cleanup: cleanup,
        })
    }

    fn write_failed(&self, e: impl std::fmt::Display) -> Error {
        Error::Io {
            path: self.path.clone(),
            message: format!("write failed: {e}"),
        }
    }

    /// Append one frame, timed one frame period after the previous one.
    pub fn write(&mut self, frame: &BgrFrame) -> Result<()> {
        let pts = self.last_pts.map(|p| p + self.frame_ticks);
        self.write_at(frame, pts)
    }

    /// Append one frame with its timestamp in the spec's time base (the input's: a variable
    /// frame rate stays as it was). The first frame written is time 0 of the output; a
    /// timestamp that does not advance is moved one tick past the previous one.
    pub fn write_at(&mut self, frame: &BgrFrame, pts: Option<i64>) -> Result<()> {
        if (frame.width(), frame.height()) != self.size {
            return Err(Error::Io {
                path: self.path.clone(),
                message: format!(
                    "frame of {}x{} given to a {}x{} video",
                    frame.width(),
                    frame.height(),
                    self.size.0,
                    self.size.1
                ),
            });
        }
        let first = *self.first_pts.get_or_insert(pts.unwrap_or(0));
        for c in self.copies.iter_mut() {
            c.start_at(first as f64 * f64::from(self.src_tb));
        }
        let rel = match (pts, self.last_pts) {
            (Some(p), Some(last)) if p - first <= last => last + 1,
            (Some(p), _) => p - first,
            (None, Some(last)) => last + self.frame_ticks,
            (None, None) => 0,
        };
        self.last_pts = Some(rel);
        self.fill_yuv(frame)?;
        // An AVI's frames are one period apart: frame n at n periods of the average rate,
        // so that a variable-rate input keeps its length (and its audio's) in the AVI.
        let at = if self.container.constant_rate() {
            self.frames as i64
        } else {
            rescale(rel, self.src_tb, self.enc_tb)
        };
        let enc_pts = match (at, self.last_enc_pts) {
            (p, Some(last)) if p <= last => last + 1,
            (p, _) => p,
        };
        self.last_enc_pts = Some(enc_pts);
        self.yuv.set_pts(Some(enc_pts));
        self.encoder
            .send_frame(&self.yuv)
            .map_err(|e| self.write_failed(format!("encoder refused a frame: {e}")))?;
        self.drain()?;
        self.frames += 1;
        Ok(())
    }

    /// Convert a BGR frame into the encoder's yuv420p frame (padding odd sides).
    fn fill_yuv(&mut self, frame: &BgrFrame) -> Result<()> {
        let (w, h) = self.enc_size;
        let padded;
        let src: &Mat = if (frame.width(), frame.height()) != (w, h) {
            let mut m = Mat::default();
            core::copy_make_border(
                frame.mat(),
                &mut m,
                0,
                h - frame.height(),
                0,
                w - frame.width(),
                core::BORDER_REPLICATE,
                core::Scalar::default(),
            )?;
            padded = m;
            &padded
        } else {
            frame.mat()
        };
        // SAFETY: our own yuv420p frame of w x h, its planes and strides from FFmpeg.
        unsafe {
            let p = self.yuv.as_mut_ptr();
            let d = (*p).data;
            let ls = (*p).linesize;
            self.to_yuv
                .convert(src, &[d[0], d[1], d[2]], &[ls[0], ls[1], ls[2]])
                .map_err(|e| self.write_failed(e))?;
        }
        Ok(())
    }

    /// Write the packets the encoder has ready, with the copied streams' packets that come
    /// before them.
    fn drain(&mut self) -> Result<()> {
        let mut packet = ffmpeg::Packet::empty();
        while self.encoder.receive_packet(&mut packet).is_ok() {
            let Some(out) = self.out.as_mut() else {
                break;
            };
            packet.set_stream(0);
            packet.rescale_ts(self.enc_tb, self.ost_tb);
            let t = packet.dts().or(packet.pts()).unwrap_or(0) as f64 * f64::from(self.ost_tb);
            for c in self.copies.iter_mut() {
                if let Err(e) = c.write_until(t, out) {
                    let what = format!("copying the input's {} stream: {e}", c.codec);
                    return Err(self.write_failed(what));
                }
            }
            if let Err(e) = packet.write_interleaved(out) {
                return Err(self.write_failed(e));
            }
        }
        Ok(())
    }

    /// Finalise the file (the encoder's last packets, the copied streams up to the end of the
    /// last frame, the index moved to the front), check that the container holds every frame
    /// written, and move it to its name. On any failure the partial file is deleted (by
    /// `Drop`).
    pub fn finish(mut self) -> Result<PathBuf> {
        self.encoder
            .send_eof()
            .map_err(|e| self.write_failed(format!("encoder: {e}")))?;
        self.drain()?;
        let end_s = self
            .last_pts
            .map(|p| (p + self.frame_ticks) as f64 * f64::from(self.src_tb))
            .unwrap_or(0.0);
        let mut out = self.out.take().ok_or_else(|| self.write_failed("closed"))?;
        for i in 0..self.copies.len() {
            let copy = &mut self.copies[i];
            if let Err(e) = copy
                .write_until(end_s, &mut out)
                .and_then(|()| copy.finish(end_s, &mut out))
            {
                let what = format!("copying the input's {} stream: {e}", copy.codec);
                self.out = Some(out);
                return Err(self.write_failed(what));
            }
        }
        let trailer = out.write_trailer();
        // SAFETY: the output's own I/O context, flushed before it is closed on drop, so that
        // a failed write (a full disk, `ulimit -f`) is seen here.
        let io_error = unsafe {
            let pb = (*out.as_mut_ptr()).pb;
            if pb.is_null() {
                0
            } else {
                ffi::avio_flush(pb);
                (*pb).error
            }
        };
        drop(out);
        if let Err(e) = trailer {
            return Err(self.write_failed(e));
        }
        if io_error < 0 {
            return Err(self.write_failed(ffmpeg::Error::from(io_error)));
        }
        if self.frames > 0 {
            let held = frames_held(&self.partial, self.container);
            if held != Some(self.frames) {
                let size = std::fs::metadata(&self.partial)
                    .map(|m| m.len())
                    .unwrap_or(0);
                return Err(self.write_failed(format!(
                    "the finished file ({size} bytes) holds {} of the {} frames written (disk full or file size limit?)",
                    held.map(|n| n.to_string()).unwrap_or_else(|| "none".into()),
                    self.frames
                )));
            }
        }
        std::fs::rename(&self.partial, &self.path).map_err(|e| Error::Io {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        self.done = true;
        Ok(self.path.clone())
    }

    /// Abandon the output: close and delete the partial file.
    pub fn abandon(self) {
        drop(self);
    }
}

/// `v` in time base `from` expressed in time base `to` (rounded to nearest).
fn rescale(v: i64, from: Rational, to: Rational) -> i64 {
    // SAFETY: pure arithmetic.
    unsafe { ffi::av_rescale_q(v, from.into(), to.into()) }
}

impl Drop for VideoSink {
    fn drop(&mut self) {
        if !self.done {
            drop(self.out.take());
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}
