//! Video in and out, and the per-frame loop over a dashcam video: decode, analyse, track,
//! render, encode, telemetry. Decoding and rendering+encoding run on their own threads joined
//! by bounded channels; analysis and the tracker stay on the calling thread, in frame order.

use crate::camera::Camera;
use crate::cancel::{AbortCleanup, Cancel};
use crate::confidence::LaneStatus;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::fit::Poly2;
use crate::frame::BgrFrame;
use crate::measure::LaneMeasure;
use crate::pipeline::Pipeline;
use crate::present;
use crate::render::{self, DiagInfo};
use crate::telemetry::{FrameRecord, TelemetryWriter};
use crate::track::LaneTracker;
use opencv::core::{self, Mat};
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture, VideoWriter};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::Instant;

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
}

impl VideoSummary {
    pub fn fps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.frames_read as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// What the analysis thread hands to the renderer for one frame.
struct RenderItem {
    raw: BgrFrame,
    lane: Option<(Poly2, Poly2)>,
    measure: Option<LaneMeasure>,
    status: LaneStatus,
    diag: Option<Box<DiagInfo>>,
}

/// Callback for progress: frames done so far.
pub type Progress<'a> = &'a (dyn Fn(usize) + Sync);

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn render_item(
    pipe: &Pipeline,
    item: RenderItem,
    mode: RenderMode,
) -> Result<(BgrFrame, RenderTimes)> {
    let mut times = RenderTimes::default();
    let t = Instant::now();
    // The diagnostic's bird's-eye panel is taken from the raw frame before the overlay is
    // drawn on it (counted as composite time).
    let panel = match (mode, &item.diag) {
        (RenderMode::Diagnostic, Some(_)) => Some(pipe.birdseye_panel(&item.raw)?),
        _ => None,
    };
    let panel_ms = ms_since(t);
    let t = Instant::now();
    let lane = item.lane.as_ref().map(|(l, r)| (l, r));
    let overlay = match pipe.cfg.render.geometry {
        crate::config::Geometry::Undistorted => {
            let undist = pipe.undistort(&item.raw)?;
            times.undistort = ms_since(t);
            let t = Instant::now();
            let o = present::overlay_undistorted(
                pipe,
                undist,
                lane,
                item.measure.as_ref(),
                item.status,
            )?;
            times.overlay = ms_since(t);
            o
        }
        crate::config::Geometry::Original => {
            let o = present::overlay_raw(pipe, item.raw, lane, item.measure.as_ref(), item.status)?;
            times.overlay = ms_since(t);
            o
        }
    };
    let t = Instant::now();
    let frame = match (panel, item.diag) {
        (Some(panel), Some(d)) => render::diagnostic(
            &overlay,
            panel,
            &d,
            item.lane.as_ref(),
            item.measure.as_ref(),
            pipe.cfg.tracking.max_coeff_diff,
            &pipe.cfg.render,
        )?,
        _ => overlay,
    };
    times.composite = ms_since(t) + panel_ms;
    Ok((frame, times))
}

/// Write one frame to the sink (if any); returns the milliseconds it took.
fn encode(sink: Option<&mut VideoSink>, frame: &BgrFrame) -> Result<f64> {
    let t = Instant::now();
    if let Some(s) = sink {
        s.write(frame)?;
    }
    Ok(ms_since(t))
}

/// Lower the calling thread's scheduling priority (nice +5, Linux) for the analysis loop of a
/// threaded run. On two cores, decoding alone keeps them about 1.5 cores busy and stalls when its
/// own threads wait behind the analysis; at a lower priority the analysis runs in the time
/// decoding leaves, and the bounded channel between them keeps the two in step (`lanes bench`:
/// the `--no-render` rate went from about 0.75x to about 0.85x of the decode-only rate). Only this
/// thread changes; a refusal changes nothing and is harmless.
fn yield_to_decoding() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on this thread's own id only changes its scheduling weight.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 5);
    }
}

/// Run a whole video job. `progress` is called after each analysed frame.
pub fn run(
    job: &VideoJob,
    cfg: &Config,
    camera: Option<&Camera>,
    on_record: &mut (dyn FnMut(&FrameRecord) + Send),
    progress: Progress,
) -> Result<VideoSummary> {
    let src = VideoSource::open(&job.input)?;
    if let Some(cam) = camera {
        crate::frame::check_size(&job.input, (cam.width, cam.height), (src.width, src.height))?;
    }
    let pipe = Pipeline::new(cfg.clone(), camera, src.width, src.height)?;
    run_with(&pipe, src, job, None, on_record, progress)
}

/// `run` on an opened source with a `Pipeline` built for its frame size (shared by the jobs of
/// `lanes batch` and `lanes queue work`). With `cancel`, a requested stop ends the frame loop
/// between frames with `Error::Interrupted`; the outputs are then abandoned as on any error.
pub fn run_with(
    pipe: &Pipeline,
    mut src: VideoSource,
    job: &VideoJob,
    cancel: Option<&crate::cancel::Cancel>,
    on_record: &mut (dyn FnMut(&FrameRecord) + Send),
    progress: Progress,
) -> Result<VideoSummary> {
    crate::frame::check_size(
        &job.input,
        (pipe.width, pipe.height),
        (src.width, src.height),
    )?;
    let cfg = &pipe.cfg;
    let mut telemetry = job
        .telemetry
        .as_deref()
        .map(TelemetryWriter::create)
        .transpose()?;
    // A second signal deletes the telemetry too: an aborted run leaves no partial file.
    let _telemetry_cleanup = telemetry.as_ref().map(|t| AbortCleanup::register(t.path()));
    let abandon_telemetry = |t: Option<TelemetryWriter>| {
        if let Some(t) = t {
            t.abandon();
        }
    };
    // From here every error path drops the sink (which deletes its partial file) and
    // abandons the telemetry.
    let mut sink = match (job.render, &job.output) {
        (RenderMode::None, _) | (_, None) => None,
        (_, Some(out)) => match VideoSink::create(out, src.fps, src.width, src.height, job.codec) {
            Ok(s) => Some(s),
            Err(e) => {
                abandon_telemetry(telemetry);
                return Err(e);
            }
        },
    };
    let codec = sink.as_ref().map(|s| s.codec);
    for i in 0..job.start {
        if !src.skip().unwrap_or(false) {
            drop(sink);
            abandon_telemetry(telemetry);
            return Err(Error::Video {
                path: job.input.clone(),
                message: format!("--start {} is past the end ({} frames)", job.start, i),
            });
        }
    }
    let fps = src.fps;
    let announced = src.announced_frames;
    let max_frames = job.max_frames.unwrap_or(usize::MAX);
    src.limit(max_frames);
    let started = Instant::now();
    let mut tracker = LaneTracker::new(
        cfg.tracking,
        pipe.persp.height,
        fps,
        pipe.default_lane_width_px(),
    );
    let mut summary = VideoSummary {
        frames_read: 0,
        frames_drawn: 0,
        search_failed: 0,
        rejected: 0,
        seconds: 0.0,
        output: None,
        codec,
        truncated_at: None,
        announced_frames: announced,
        interrupted_at: None,
        stages: StageSeries::default(),
    };
    let mode = if sink.is_some() {
        job.render
    } else {
        RenderMode::None
    };

    let result: Result<()> = std::thread::scope(|scope| {
        // Decoder thread.
        let (ftx, frx): (SyncSender<Result<Option<BgrFrame>>>, Receiver<_>) = sync_channel(4);
        let decode = |src: &mut VideoSource, tx: &SyncSender<Result<Option<BgrFrame>>>| loop {
            let r = src.read();
            let end = !matches!(r, Ok(Some(_)));
            if tx.send(r).is_err() || end {
                break;
            }
        };
        let mut src_opt = Some(src);
        let mut frx_opt = None;
        if job.threaded {
            let mut s = src_opt
                .take()
                .ok_or_else(|| Error::Invalid("source".into()))?;
            scope.spawn(move || decode(&mut s, &ftx));
            frx_opt = Some(frx);
        }
        // Renderer + encoder thread.
        let (rtx, rrx) = sync_channel::<RenderItem>(4);
        let pipe_ref = &pipe;
        let mut sink_opt = sink.take();
        let render_handle = if job.threaded && mode != RenderMode::None {
            let mut s = sink_opt.take();
            Some(
                scope.spawn(move || -> (Result<()>, StageSeries, Option<VideoSink>) {
                    // Rendering here, encoding on one more thread, joined by a bounded channel.
                    std::thread::scope(|inner| {
                        let (etx, erx) = sync_channel::<BgrFrame>(4);
                        let encoder =
                            inner.spawn(move || -> (Result<()>, Vec<f64>, Option<VideoSink>) {
                                let mut times = Vec::new();
                                for f in erx.iter() {
                                    match encode(s.as_mut(), &f) {
                                        Ok(ms) => times.push(ms),
                                        Err(e) => return (Err(e), times, s),
                                    }
                                }
                                (Ok(()), times, s)
                            });
                        let mut series = StageSeries::default();
                        let mut result = Ok(());
                        for item in rrx.iter() {
                            match render_item(pipe_ref, item, mode) {
                                Ok((frame, t)) => {
                                    series.push_render(t, mode);
                                    if etx.send(frame).is_err() {
                                        break; // the encoder stopped with an error: reported below
                                    }
                                }
                                Err(e) => {
                                    result = Err(e);
                                    break;
                                }
                            }
                        }
                        drop(etx);
                        let (enc_result, enc_times, sink) = match encoder.join() {
                            Ok(v) => v,
                            Err(_) => (
                                Err(Error::Invalid("encoder thread panicked".into())),
                                Vec::new(),
                                None,
                            ),
                        };
                        series.encode = enc_times;
                        if result.is_ok() {
                            result = enc_result;
                        }
                        (result, series, sink)
                    })
                }),
            )
        } else {
            drop(rrx);
            None
        };

        // The analysis loop: on the calling thread, or (threaded) on a thread of its own that
        // yields to the decoder's (see `yield_to_decoding`).
        let threaded_render = render_handle.is_some();
        let mut analyse = || -> Result<()> {
            let mut frame_idx = 0usize;
            let mut loop_result: Result<()> = Ok(());
            loop {
                if job.cancel.requested() {
                    summary.interrupted_at = Some(job.start + frame_idx);
                    break;
                }
                let next = match (frx_opt.as_mut(), src_opt.as_mut()) {
                    (Some(rx), _) => rx.recv().unwrap_or(Ok(None)),
                    (None, Some(s)) => s.read(),
                    (None, None) => Ok(None),
                };
                if cancel.is_some_and(|c| c.requested()) {
                    loop_result = Err(Error::Interrupted {
                        path: job.input.clone(),
                    });
                    break;
                }
                let raw = match next {
                    Ok(Some(f)) => f,
                    Ok(None) => break,
                    Err(e) => {
                        loop_result = Err(e);
                        break;
                    }
                };
                if let Err(e) = crate::frame::check_size(
                    &job.input,
                    (pipe.width, pipe.height),
                    (raw.width(), raw.height()),
                ) {
                    loop_result = Err(e);
                    break;
                }
                let (_, prior) = tracker.next_search();
                let analysis = match pipe.analyze(&raw, prior) {
                    Ok(a) => a,
                    Err(e) => {
                        loop_result = Err(e);
                        break;
                    }
                };
                let t_track = Instant::now();
                let out = tracker.update(&analysis.detection, pipe.persp.height);
                let track_ms = t_track.elapsed().as_secs_f64() * 1e3;
                summary.stages.warp.push(analysis.times.warp_ms);
                summary.stages.threshold.push(analysis.times.threshold_ms);
                summary.stages.search_fit.push(analysis.times.search_fit_ms);
                summary.stages.track.push(track_ms);
                if analysis.detection.left.is_none() || analysis.detection.right.is_none() {
                    summary.search_failed += 1;
                } else if !out.detected {
                    summary.rejected += 1;
                }
                let lane = match (out.left, out.right) {
                    (Some(l), Some(r)) => Some((l, r)),
                    _ => None,
                };
                let measure = lane.map(|(l, r)| pipe.measure(&l, &r));
                if lane.is_some() {
                    summary.frames_drawn += 1;
                }
                let rec_status = out.status;
                let rec = FrameRecord {
                    frame: job.start + frame_idx,
                    time_s: (job.start + frame_idx) as f64 / fps,
                    search: analysis.search.mode.as_str().to_string(),
                    detected: out.detected,
                    status: out.status.as_str().to_string(),
                    left_confidence: round3(analysis.detection.left_confidence),
                    right_confidence: round3(analysis.detection.right_confidence),
                    confidence: round3(out.confidence),
                    left_fit: lane.map(|l| l.0),
                    right_fit: lane.map(|l| l.1),
                    radius_m: measure.map(|m| m.radius_m),
                    offset_m: measure.map(|m| m.offset_m),
                    lane_width_m: measure.map(|m| m.lane_width_m),
                    left_pixels: analysis.fit.left_pixels,
                    right_pixels: analysis.fit.right_pixels,
                };
                on_record(&rec);
                if let Some(t) = telemetry.as_mut() {
                    if let Err(e) = t.write(&rec) {
                        loop_result = Err(e);
                        break;
                    }
                }
                frame_idx += 1;
                summary.frames_read = frame_idx;
                if mode != RenderMode::None {
                    let diag = if mode == RenderMode::Diagnostic {
                        let (kept_left, kept_right) = tracker.kept();
                        Some(Box::new(DiagInfo {
                            kept_left,
                            kept_right,
                            analysis,
                            track: out,
                            frame: rec.frame,
                        }))
                    } else {
                        None
                    };
                    let item = RenderItem {
                        raw,
                        lane,
                        measure,
                        status: rec_status,
                        diag,
                    };
                    if threaded_render {
                        if rtx.send(item).is_err() {
                            break; // the renderer stopped with an error: reported below
                        }
                    } else {
                        match render_item(pipe, item, mode).and_then(|(frame, mut t)| {
                            t.encode = encode(sink_opt.as_mut(), &frame)?;
                            Ok(t)
                        }) {
                            Ok(t) => summary.stages.push_render(t, mode),
                            Err(e) => {
                                loop_result = Err(e);
                                break;
                            }
                        }
                    }
                }
                progress(frame_idx);
            }
            loop_result
        };
        let mut loop_result = if job.threaded {
            std::thread::scope(|inner| {
                match inner
                    .spawn(|| {
                        yield_to_decoding();
                        analyse()
                    })
                    .join()
                {
                    Ok(r) => r,
                    Err(_) => Err(Error::Invalid("analysis thread panicked".into())),
                }
            })
        } else {
            analyse()
        };
        drop(rtx);
        drop(frx_opt);
        if let Some(h) = render_handle {
            match h.join() {
                Ok((r, series, s)) => {
                    summary.stages.undistort = series.undistort;
                    summary.stages.overlay = series.overlay;
                    summary.stages.composite = series.composite;
                    summary.stages.encode = series.encode;
                    sink_opt = s;
                    if loop_result.is_ok() {
                        loop_result = r;
                    }
                }
                Err(_) => {
                    if loop_result.is_ok() {
                        loop_result = Err(Error::Invalid("render thread panicked".into()));
                    }
                }
            }
        }
        sink = sink_opt;
        loop_result
    });
    summary.seconds = started.elapsed().as_secs_f64();
    let result = result.and_then(|()| {
        if summary.frames_read == 0 && summary.interrupted_at.is_none() {
            return Err(Error::Video {
                path: job.input.clone(),
                message: "no frames could be decoded".into(),
            });
        }
        Ok(())
    });
    if let Err(e) = result {
        drop(sink);
        abandon_telemetry(telemetry);
        return Err(e);
    }
    if summary.frames_read == 0 {
        // Interrupted before the first frame: there is nothing to keep.
        drop(sink);
        abandon_telemetry(telemetry);
        return Ok(summary);
    }
    let telemetry_path = telemetry.as_ref().map(|t| t.path().to_path_buf());
    let remove_telemetry = || {
        if let Some(p) = &telemetry_path {
            let _ = std::fs::remove_file(p);
        }
    };
    if let Some(t) = telemetry {
        if let Err(e) = t.finish() {
            drop(sink);
            remove_telemetry();
            return Err(e);
        }
    }
    // Complete now: a second signal from here on must not delete it.
    drop(_telemetry_cleanup);
    if let Some(s) = sink {
        match s.finish() {
            Ok(p) => summary.output = Some(p),
            Err(e) => {
                remove_telemetry();
                return Err(e);
            }
        }
    }
    if summary.interrupted_at.is_some() {
        return Ok(summary);
    }
    let expected = (announced - job.start as i64).max(0) as usize;
    let wanted = expected.min(max_frames);
    // Containers often announce a frame count estimated from the duration (off by a frame or
    // two); only a shortfall beyond that counts as truncation.
    let slack = 3usize.max(wanted / 50);
    if announced > 0 && summary.frames_read + slack < wanted {
        summary.truncated_at = Some(job.start + summary.frames_read);
    }
    Ok(summary)
}

/// Analyse a video with no rendering and return its telemetry records (for scoring).
pub fn analyze_video(
    path: &Path,
    cfg: &Config,
    camera: Option<&Camera>,
    start: usize,
    frames: Option<usize>,
) -> Result<Vec<FrameRecord>> {
    let job = VideoJob {
        input: path.to_path_buf(),
        output: None,
        render: RenderMode::None,
        telemetry: None,
        start,
        max_frames: frames,
        codec: Codec::Mp4v,
        threaded: true,
        cancel: Cancel::default(),
    };
    let mut out = Vec::new();
    run(&job, cfg, camera, &mut |r| out.push(r.clone()), &|_| {})?;
    Ok(out)
}

/// A confidence rounded to 3 decimals for telemetry.
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}
