//! Video in and out (`VideoSource`, `VideoSink`), the job and summary types, and the per-frame
//! loop over a dashcam video in `frame_loop`: decode, analyse + track, render, encode.

mod frame_loop;

pub use frame_loop::{analyze_video, run, run_with, Progress};

use crate::cancel::{AbortCleanup, Cancel};
use crate::error::{Error, Result};
use crate::frame::BgrFrame;
use opencv::core::{self, Mat};
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture, VideoWriter};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// An opened input video.
pub struct VideoSource {
    cap: VideoCapture,
    path: PathBuf,
    pub width: i32,
    pub height: i32,
    pub fps: f64,
    /// Frame count the container announces (may be 0 when unknown).
    pub announced_frames: i64,
    /// Frames `read` may still return (see `limit`).
    remaining: usize,
}

impl VideoSource {
    /// Open a video through OpenCV's FFmpeg backend.
    pub fn open(path: &Path) -> Result<Self> {
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
        let not_video = || Error::Video {
            path: path.to_path_buf(),
            message: "cannot open as a video".into(),
        };
        let cap = VideoCapture::from_file(path, videoio::CAP_FFMPEG).map_err(|_| not_video())?;
        if !cap.is_opened().map_err(|_| not_video())? {
            return Err(not_video());
        }
        let width = cap.get(videoio::CAP_PROP_FRAME_WIDTH)? as i32;
        let height = cap.get(videoio::CAP_PROP_FRAME_HEIGHT)? as i32;
        let fps = cap.get(videoio::CAP_PROP_FPS)?;
        let announced_frames = cap.get(videoio::CAP_PROP_FRAME_COUNT)?.max(0.0) as i64;
        if width <= 0 || height <= 0 {
            return Err(not_video());
        }
        let fps = if fps.is_finite() && fps > 0.0 && fps < 1000.0 {
            fps
        } else {
            25.0
        };
        Ok(Self {
            cap,
            path: path.to_path_buf(),
            width,
            height,
            fps,
            announced_frames,
            remaining: usize::MAX,
        })
    }

    /// The file this source reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Return at most `n` more frames from `read`.
    pub fn limit(&mut self, n: usize) {
        self.remaining = n;
    }

    /// Read the next frame; `Ok(None)` at the end, where decoding stops, or past the limit.
    pub fn read(&mut self) -> Result<Option<BgrFrame>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let mut m = Mat::default();
        match self.cap.read(&mut m) {
            Ok(true) if !m.empty() => {
                if m.typ() != core::CV_8UC3 {
                    return Err(Error::Video {
                        path: self.path.clone(),
                        message: format!("frame type {} is not 8-bit BGR", m.typ()),
                    });
                }
                Ok(Some(BgrFrame::new(m)?))
            }
            _ => Ok(None),
        }
    }

    /// Skip a frame without converting it; false at the end.
    pub fn skip(&mut self) -> Result<bool> {
        Ok(self.cap.grab().unwrap_or(false))
    }

    /// Seek so that the next `read` returns frame `n` (0-based). False when the backend
    /// does not report that position afterwards (the position is then unknown).
    pub fn seek(&mut self, n: usize) -> Result<bool> {
        let set = self
            .cap
            .set(videoio::CAP_PROP_POS_FRAMES, n as f64)
            .unwrap_or(false);
        let at = self.cap.get(videoio::CAP_PROP_POS_FRAMES).unwrap_or(-1.0);
        Ok(set && (at - n as f64).abs() < 0.5)
    }
}

/// Which encoder a sink uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Codec {
    /// H.264 (fourcc avc1).
    H264,
    /// MPEG-4 Part 2 (fourcc mp4v).
    Mp4v,
}

impl Codec {
    pub fn name(&self) -> &'static str {
        match self {
            Codec::H264 => "H.264 (avc1)",
            Codec::Mp4v => "MPEG-4 Part 2 (mp4v)",
        }
    }
}

/// An output MP4 written to the hidden `.<name>.partial.mp4` beside it and renamed on `finish`.
/// Dropped without `finish` (an error, `abandon`), it closes and deletes the partial file; a
/// second SIGINT/SIGTERM deletes it too (`AbortCleanup`).
pub struct VideoSink {
    writer: VideoWriter,
    partial: PathBuf,
    path: PathBuf,
    pub codec: Codec,
    pub frames: usize,
    /// Set once the partial file was renamed (or removed): nothing left for `Drop`.
    done: bool,
    _cleanup: AbortCleanup,
}

/// Preferred codec from the environment (`LANES_CODEC=mp4v|h264`), default mp4v.
pub fn preferred_codec() -> Codec {
    match std::env::var("LANES_CODEC").ok().as_deref() {
        Some("h264") | Some("avc1") => Codec::H264,
        _ => Codec::Mp4v,
    }
}

impl VideoSink {
    /// Create the output (its directory must exist). Tries the preferred codec, then mp4v.
    pub fn create(path: &Path, fps: f64, width: i32, height: i32, codec: Codec) -> Result<Self> {
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
        let partial = parent.join(format!(".{stem}.partial.mp4"));
        let cleanup = AbortCleanup::register(&partial);
        let size = core::Size::new(width, height);
        let order: &[Codec] = match codec {
            Codec::H264 => &[Codec::H264, Codec::Mp4v],
            Codec::Mp4v => &[Codec::Mp4v],
        };
        for c in order {
            let fourcc = match c {
                Codec::H264 => VideoWriter::fourcc('a', 'v', 'c', '1')?,
                Codec::Mp4v => VideoWriter::fourcc('m', 'p', '4', 'v')?,
            };
            if let Ok(w) = VideoWriter::new_with_backend(
                &partial,
                videoio::CAP_FFMPEG,
                fourcc,
                fps,
                size,
                true,
            ) {
                if w.is_opened().unwrap_or(false) {
                    return Ok(Self {
                        writer: w,
                        partial,
                        path: path.to_path_buf(),
                        codec: *c,
                        frames: 0,
                        done: false,
                        _cleanup: cleanup,
                    });
                }
            }
        }
        let _ = std::fs::remove_file(&partial);
        Err(Error::Io {
            path: path.to_path_buf(),
            message: format!(
                "cannot open a video encoder (mp4v) for writing {} (is the directory writable?)",
                partial.display()
            ),
        })
    }

    /// Append one frame.
    pub fn write(&mut self, frame: &BgrFrame) -> Result<()> {
        self.writer.write(frame.mat()).map_err(|e| Error::Io {
            path: self.path.clone(),
            message: e.message,
        })?;
        self.frames += 1;
        Ok(())
    }

    /// Finalise the file, check that the container holds every frame written, and move it to
    /// its name. OpenCV's writer does not report failed writes (a full disk, `ulimit -f`), so
    /// the finished file is opened again and its frame count compared; on any failure the
    /// partial file is deleted (by `Drop`).
    pub fn finish(mut self) -> Result<PathBuf> {
        self.writer.release()?;
        if self.frames > 0 {
            let held = VideoCapture::from_file(&self.partial, videoio::CAP_FFMPEG)
                .ok()
                .filter(|c| c.is_opened().unwrap_or(false))
                .and_then(|c| c.get(videoio::CAP_PROP_FRAME_COUNT).ok())
                .map(|n| n.max(0.0) as usize);
            if held != Some(self.frames) {
                let size = std::fs::metadata(&self.partial)
                    .map(|m| m.len())
                    .unwrap_or(0);
                return Err(Error::Io {
                    path: self.path.clone(),
                    message: format!(
                        "write failed: the finished file ({size} bytes) holds {} of the {} frames written (disk full or file size limit?)",
                        held.map(|n| n.to_string()).unwrap_or_else(|| "none".into()),
                        self.frames
                    ),
                });
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

impl Drop for VideoSink {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.writer.release();
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenderMode {
    /// Analysis only.
    None,
    /// The overlay video.
    Overlay,
    /// The 2x2 diagnostic composite.
    Diagnostic,
}

/// A resolved video job (built once from flags by the CLI).
pub struct VideoJob {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub render: RenderMode,
    pub telemetry: Option<PathBuf>,
    pub start: usize,
    pub max_frames: Option<usize>,
    pub codec: Codec,
    /// Run decode and render on their own threads (results are identical either way).
    pub threaded: bool,
    /// Polled between frames: when set, the run stops reading, finishes the frames in flight,
    /// finalises its outputs and reports `interrupted_at` (`Cancel::default()` never fires).
    pub cancel: Cancel,
}

/// Per-stage time series (ms per frame) collected during a run.
#[derive(Debug, Clone, Default)]
pub struct StageSeries {
    /// Raw frame to bird's-eye view (undistortion and warp composed in one remap).
    pub warp: Vec<f64>,
    pub threshold: Vec<f64>,
    pub search_fit: Vec<f64>,
    pub track: Vec<f64>,
    /// Full-frame undistortion for the overlay.
    pub undistort: Vec<f64>,
    /// Lane polygon and text drawn on the frame.
    pub overlay: Vec<f64>,
    /// The 2x2 diagnostic composite.
    pub composite: Vec<f64>,
    /// Handing the frame to the encoder.
    pub encode: Vec<f64>,
}

/// Milliseconds of the render stages of one frame.
#[derive(Debug, Clone, Copy, Default)]
struct RenderTimes {
    undistort: f64,
    overlay: f64,
    composite: f64,
    encode: f64,
}

impl StageSeries {
    fn push_render(&mut self, t: RenderTimes, mode: RenderMode) {
        self.undistort.push(t.undistort);
        self.overlay.push(t.overlay);
        if mode == RenderMode::Diagnostic {
            self.composite.push(t.composite);
        }
        if t.encode > 0.0 {
            self.encode.push(t.encode);
        }
    }
}

/// The run's summary.
#[derive(Debug, Clone)]
pub struct VideoSummary {
    pub frames_read: usize,
    pub frames_drawn: usize,
    /// Frames where the search did not find both lines.
    pub search_failed: usize,
    /// Frames whose fits the tracker rejected (lane width or coefficient jump).
    pub rejected: usize,
    pub seconds: f64,
    pub output: Option<PathBuf>,
    pub codec: Option<Codec>,
    /// Decoding stopped before the announced frame count (truncated or corrupt input).
    pub truncated_at: Option<usize>,
    pub announced_frames: i64,
    /// The run was interrupted (`VideoJob::cancel`) before this frame; the outputs hold the
    /// frames before it, finalised.
    pub interrupted_at: Option<usize>,
    pub stages: StageSeries,
    /// `Pipeline::quad_note`: the perspective quad reaches outside the frames.
    pub quad_note: Option<String>,
}

impl VideoSummary {
    /// The summary of a run that has not read a frame yet.
    pub fn new(codec: Option<Codec>, announced_frames: i64) -> Self {
        Self {
            frames_read: 0,
            frames_drawn: 0,
            search_failed: 0,
            rejected: 0,
            seconds: 0.0,
            output: None,
            codec,
            truncated_at: None,
            announced_frames,
            interrupted_at: None,
            stages: StageSeries::default(),
            quad_note: None,
        }
    }

    pub fn fps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.frames_read as f64 / self.seconds
        } else {
            0.0
        }
    }
}
