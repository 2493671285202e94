//! The frame loop of `lanes video`, as four stages joined by bounded channels:
//!
//! ```text
//! decode_stage ──frames──> Analyser::analysis_loop ──RenderItem──> render_stage ──frames──> encode_stage
//!  (thread)                 (analyse + track, telemetry;            (thread)                  (thread)
//!                            thread of its own, lower priority)
//! ```
//!
//! `run_single` calls the same stages in order on one thread (`--single-thread`); the results
//! are identical. `open_outputs` and `finalise` put the outputs in place: written under hidden
//! names, renamed when complete, removed on every error path.

use super::analyser::{Analyser, Progress, RenderItem};
use super::decode::{VideoFrame, VideoSource};
use super::encode::{SinkSpec, VideoSink};
use super::job::{Codec, RenderMode, RenderTimes, StageSeries, VideoJob, VideoSummary};
use crate::base::camera::Camera;
use crate::base::cancel::{AbortCleanup, Cancel};
use crate::base::config::Config;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::base::telemetry::{FrameRecord, TelemetryWriter};
use crate::lane::pipeline::Pipeline;
use crate::lane::present;
use crate::lane::render;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::Instant;

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn render_item(
    run_pipe: &Pipeline,
    item: RenderItem,
    mode: RenderMode,
) -> Result<(Encodable, RenderTimes)> {
    // The frame's shot may have a geometry of its own (an edited video).
    let shot_pipe = item.shot_pipe.clone();
    let pipe = shot_pipe.as_deref().unwrap_or(run_pipe);
    let pts = item.pts;
    let mut times = RenderTimes::default();
    // The decoder's planes to BGR: part of drawing the frame (counted as overlay time).
    let t = Instant::now();
    let raw = item.raw.into_bgr()?;
    let convert_ms = ms_since(t);
    let t = Instant::now();
    // The diagnostic's bird's-eye panel is taken from the raw frame before the overlay is
    // drawn on it (counted as composite time).
    let panel = match (mode, &item.diag) {
        (RenderMode::Diagnostic, Some(_)) => Some(pipe.birdseye_panel(&raw)?),
        _ => None,
    };
    let panel_ms = ms_since(t);
    let t = Instant::now();
    let lane = item.lane.as_ref().map(|(l, r)| (l, r));
    // A video draws the tracked lane over the whole view: the vehicle-ahead range is a
    // whole-view search's (a still's), and a tracked frame does not measure it.
    let seen_from = 0.0;
    let undistorted = match pipe.cfg.render.geometry {
        crate::base::config::Geometry::Undistorted => {
            let u = pipe.undistort(&raw)?;
            times.undistort = ms_since(t);
            Some(u)
        }
        crate::base::config::Geometry::Original => None,
    };
    let t = Instant::now();
    let (m, status) = (item.measure.as_ref(), item.status);
    let overlay = match undistorted {
        Some(u) => present::overlay_undistorted(pipe, u, lane, seen_from, m, status)?,
        None => present::overlay_raw(pipe, raw, lane, seen_from, m, status)?,
    };
    times.overlay = ms_since(t) + convert_ms;
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
    Ok(((frame, pts), times))
}

/// A rendered frame and its timestamp in the input's time base.
type Encodable = (BgrFrame, Option<i64>);

/// Write one frame to the sink (if any); returns the milliseconds it took.
fn encode(sink: Option<&mut VideoSink>, frame: &Encodable) -> Result<f64> {
    let t = Instant::now();
    if let Some(s) = sink {
        s.write_at(&frame.0, frame.1)?;
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

/// Run a whole video job, on `source` when the input is already open at its first frame (as
/// self-calibration leaves it), else on the input opened here. `progress` is called after each
/// analysed frame.
pub fn run(
    job: &VideoJob,
    cfg: &Config,
    camera: Option<&Camera>,
    source: Option<VideoSource>,
    on_record: &mut (dyn FnMut(&FrameRecord) + Send),
    progress: Progress,
) -> Result<VideoSummary> {
    let src = match source {
        Some(s) => s,
        None => VideoSource::open(&job.input)?,
    };
    if let Some(cam) = camera {
        crate::base::frame::check_size(
            &job.input,
            (cam.width, cam.height),
            (src.width, src.height),
        )?;
    }
    let pipe = Pipeline::new(cfg.clone(), camera, src.width, src.height)?
        .with_pixel_aspect(super::rotation::pixel_aspect(src.sample_aspect));
    run_with(&pipe, src, job, on_record, progress)
}

/// `run` on an opened source with a `Pipeline` built for its frame size (shared by the jobs of
/// `lanes batch` and `lanes queue work`).
pub fn run_with(
    pipe: &Pipeline,
    mut src: VideoSource,
    job: &VideoJob,
    on_record: &mut (dyn FnMut(&FrameRecord) + Send),
    progress: Progress,
) -> Result<VideoSummary> {
    crate::base::frame::check_size(
        &job.input,
        (pipe.width, pipe.height),
        (src.width, src.height),
    )?;
    let outputs = open_outputs(job, &src)?;
    // From here every error path drops the sink (which deletes its partial file) and
    // abandons the telemetry.
    if let Err(e) = skip_to_start(&mut src, job) {
        outputs.abandon();
        return Err(e);
    }
    let Outputs {
        telemetry,
        telemetry_cleanup,
        sink,
    } = outputs;
    let announced = src.announced_frames;
    let max_frames = job.max_frames.unwrap_or(usize::MAX);
    src.limit(max_frames);
    if let Err(e) = pipe.prepare_for_video() {
        Outputs {
            telemetry,
            telemetry_cleanup,
            sink,
        }
        .abandon();
        return Err(e);
    }
    let started = Instant::now();
    let mode = if sink.is_some() {
        job.render
    } else {
        RenderMode::None
    };
    // Nothing is shown: a finely quantised stream's decoder skips its deblocking filter
    // (`skip_loop_filter`).
    let skip = super::job::skip_loop_filter(src.bit_rate, (src.width, src.height), src.fps);
    src.set_skip_loop_filter(mode == RenderMode::None && skip);
    let summary = VideoSummary {
        encoder: sink.as_ref().map(|s| s.description.clone()),
        ..VideoSummary::new(sink.as_ref().map(|s| s.codec), announced)
    };
    let mut an = Analyser::new(
        pipe, job, mode, src.fps, summary, telemetry, on_record, progress,
    );
    let health = src.health();
    let (result, sink) = if job.threaded {
        run_threaded(&mut an, src, sink)
    } else {
        run_single(&mut an, src, sink)
    };
    let (mut summary, telemetry) = an.finish();
    summary.seconds = started.elapsed().as_secs_f64();
    summary.quad_note = pipe.quad_note();
    let outputs = Outputs {
        telemetry,
        telemetry_cleanup,
        sink,
    };
    finalise(
        job,
        summary,
        result,
        outputs,
        (announced, max_frames),
        &health,
    )
}

/// The outputs of a run while it is being written.
struct Outputs {
    telemetry: Option<TelemetryWriter>,
    /// A second signal deletes the telemetry too: an aborted run leaves no partial file.
    telemetry_cleanup: Option<AbortCleanup>,
    sink: Option<VideoSink>,
}

impl Outputs {
    /// Drop everything written so far (the sink deletes its partial file when dropped).
    fn abandon(self) {
        drop(self.sink);
        if let Some(t) = self.telemetry {
            t.abandon();
        }
    }
}

/// Create the telemetry file and the video sink the job asks for.
fn open_outputs(job: &VideoJob, src: &VideoSource) -> Result<Outputs> {
    let telemetry = job
        .telemetry
        .as_deref()
        .map(TelemetryWriter::create)
        .transpose()?;
    let telemetry_cleanup = telemetry
        .as_ref()
        .filter(|t| !t.to_stdout())
        .map(|t| AbortCleanup::register(t.path()));
    let sink = match (job.render, &job.output) {
        (RenderMode::None, _) | (_, None) => None,
        (_, Some(out)) => match VideoSink::create_with(
            out,
            &SinkSpec {
                fps: src.fps,
                width: src.width,
                height: src.height,
                codec: job.codec,
                time_base: Some(src.time_base),
                copy_from: Some(job.input.clone()),
                // The overlay is the input's picture; the diagnostic composite's panels are
                // views of square pixels.
                sample_aspect: if job.render == RenderMode::Overlay {
                    src.sample_aspect
                } else {
                    (1, 1)
                },
            },
        ) {
            Ok(s) => Some(s),
            Err(e) => {
                if let Some(t) = telemetry {
                    t.abandon();
                }
                return Err(e);
            }
        },
    };
    Ok(Outputs {
        telemetry,
        telemetry_cleanup,
        sink,
    })
}

/// Skip the frames before `--start`.
fn skip_to_start(src: &mut VideoSource, job: &VideoJob) -> Result<()> {
    for i in 0..job.start {
        if !src.skip().unwrap_or(false) {
            return Err(super::probe::past_the_end(&job.input, job.start, i));
        }
    }
    Ok(())
}

/// Decode frames into `tx` until the end, an error or a closed channel.
fn decode_stage(mut src: VideoSource, tx: SyncSender<Result<Option<VideoFrame>>>) {
    loop {
        let r = src.read_frame();
        let end = !matches!(r, Ok(Some(_)));
        if tx.send(r).is_err() || end {
            break;
        }
    }
}

/// Render the items from `rx` into `tx` (to the encoder); the render stages' times.
fn render_stage(
    pipe: &Pipeline,
    rx: Receiver<RenderItem>,
    tx: SyncSender<Encodable>,
    mode: RenderMode,
) -> (Result<()>, StageSeries) {
    let mut series = StageSeries::default();
    for item in rx.iter() {
        match render_item(pipe, item, mode) {
            Ok((frame, t)) => {
                series.push_render(t, mode);
                if tx.send(frame).is_err() {
                    break; // the encoder stopped with an error: reported when it is joined
                }
            }
            Err(e) => return (Err(e), series),
        }
    }
    (Ok(()), series)
}

/// Encode the frames from `rx`; the sink comes back with the encode times.
fn encode_stage(
    mut sink: Option<VideoSink>,
    rx: Receiver<Encodable>,
) -> (Result<()>, Vec<f64>, Option<VideoSink>) {
    let mut times = Vec::new();
    for f in rx.iter() {
        match encode(sink.as_mut(), &f) {
            Ok(ms) => times.push(ms),
            Err(e) => return (Err(e), times, sink),
        }
    }
    (Ok(()), times, sink)
}

/// The render and encode stages on two threads joined by a bounded channel.
fn render_and_encode(
    pipe: &Pipeline,
    rx: Receiver<RenderItem>,
    sink: Option<VideoSink>,
    mode: RenderMode,
) -> (Result<()>, StageSeries, Option<VideoSink>) {
    std::thread::scope(|inner| {
        let (etx, erx) = sync_channel::<Encodable>(4);
        let encoder = inner.spawn(move || encode_stage(sink, erx));
        let (mut result, mut series) = render_stage(pipe, rx, etx, mode);
        let (enc_result, enc_times, sink) = encoder.join().unwrap_or_else(|_| {
            (
                Err(Error::Invalid("encoder thread panicked".into())),
                Vec::new(),
                None,
            )
        });
        series.encode = enc_times;
        if result.is_ok() {
            result = enc_result;
        }
        (result, series, sink)
    })
}

/// Every stage on its own thread: decode, analysis (lower priority, see `yield_to_decoding`),
/// render and encode.
fn run_threaded(
    an: &mut Analyser,
    src: VideoSource,
    sink: Option<VideoSink>,
) -> (Result<()>, Option<VideoSink>) {
    let (pipe, mode) = (an.pipe, an.mode);
    std::thread::scope(|scope| {
        // Without rendering the analysis is the slower stage; frames replayed after
        // self-calibration fill the channel at once, so that the decoder goes on with the next
        // ones while the analysis catches up (they are in memory already). With rendering the
        // encoder sets the pace and the channel stays short.
        let ahead = if mode == RenderMode::None {
            src.replayed()
        } else {
            0
        };
        let (ftx, frx) = sync_channel::<Result<Option<VideoFrame>>>(4 + ahead);
        scope.spawn(move || decode_stage(src, ftx));
        let (rtx, rrx) = sync_channel::<RenderItem>(4);
        let mut sink = sink;
        let renderer = (mode != RenderMode::None).then(|| {
            let s = sink.take();
            scope.spawn(move || render_and_encode(pipe, rrx, s, mode))
        });
        let mut next = move || frx.recv().unwrap_or(Ok(None));
        let mut deliver = move |item, _: &mut StageSeries| Ok(rtx.send(item).is_ok());
        let mut result = std::thread::scope(|inner| {
            inner
                .spawn(|| {
                    yield_to_decoding();
                    an.analysis_loop(&mut next, &mut deliver)
                })
                .join()
                .unwrap_or_else(|_| Err(Error::Invalid("analysis thread panicked".into())))
        });
        // Closing the channels ends the decoder and the renderer.
        drop(deliver);
        drop(next);
        if let Some(h) = renderer {
            match h.join() {
                Ok((r, series, s)) => {
                    let stages = &mut an.summary.stages;
                    stages.undistort = series.undistort;
                    stages.overlay = series.overlay;
                    stages.composite = series.composite;
                    stages.encode = series.encode;
                    sink = s;
                    if result.is_ok() {
                        result = r;
                    }
                }
                Err(_) => {
                    if result.is_ok() {
                        result = Err(Error::Invalid("render thread panicked".into()));
                    }
                }
            }
        }
        (result, sink)
    })
}

/// The same stages in order on the calling thread.
fn run_single(
    an: &mut Analyser,
    mut src: VideoSource,
    mut sink: Option<VideoSink>,
) -> (Result<()>, Option<VideoSink>) {
    let (pipe, mode) = (an.pipe, an.mode);
    let mut next = || src.read_frame();
    let mut deliver = |item, stages: &mut StageSeries| -> Result<bool> {
        let (frame, mut t) = render_item(pipe, item, mode)?;
        t.encode = encode(sink.as_mut(), &frame)?;
        stages.push_render(t, mode);
        Ok(true)
    };
    let result = an.analysis_loop(&mut next, &mut deliver);
    (result, sink)
}

/// Put the outputs in place after the loop: finish the telemetry, then the video (renamed from
/// its hidden name); on an error remove both. Reports truncated input.
fn finalise(
    job: &VideoJob,
    mut summary: VideoSummary,
    result: Result<()>,
    outputs: Outputs,
    (announced, max_frames): (i64, usize),
    health: &super::health::StreamHealth,
) -> Result<VideoSummary> {
    let result = result.and_then(|()| {
        if summary.frames_read == 0 && summary.interrupted_at.is_none() {
            // Every frame before --start was there, and none after it.
            if job.start > 0 {
                return Err(super::probe::past_the_end(&job.input, job.start, job.start));
            }
            return Err(Error::Video {
                path: job.input.clone(),
                message: "no frames could be decoded".into(),
            });
        }
        Ok(())
    });
    if let Err(e) = result {
        outputs.abandon();
        return Err(e);
    }
    if summary.frames_read == 0 {
        // Interrupted before the first frame: there is nothing to keep.
        outputs.abandon();
        return Ok(summary);
    }
    let Outputs {
        telemetry,
        telemetry_cleanup,
        sink,
    } = outputs;
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
    drop(telemetry_cleanup);
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
    if announced > 0 {
        use super::health::Shortfall;
        match health.shortfall(summary.frames_read, wanted, announced as usize, slack) {
            Shortfall::Truncated => summary.truncated_at = Some(job.start + summary.frames_read),
            Shortfall::Undecodable(n) => summary.undecodable = n,
            Shortfall::None => {}
        }
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
        codec: Codec::default(),
        threaded: true,
        cancel: Cancel::default(),
        shot_search: None,
        opening_cut: None,
    };
    let mut out = Vec::new();
    run(
        &job,
        cfg,
        camera,
        None,
        &mut |r| out.push(r.clone()),
        &|_| {},
    )?;
    Ok(out)
}
