//! One video into its folder: what is done already, the run, its `summary.json`, stale outputs
//! and partial files removed.

use super::plan::{fnv1a64, Item, LANES_VERSION};
use super::setup::Setup;
use crate::base::atomic::{partial_path as partial, write_atomic};
use crate::base::cancel::Cancel;
use crate::base::error::{Error, Result};
use crate::base::summary::{DriveMedians, DriveStats};
use crate::lane::pipeline::Pipeline;
use crate::video::{self, Codec, RenderMode, VideoJob, VideoSource};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, UNIX_EPOCH};

/// What to write for each video.
#[derive(Debug, Clone)]
pub struct Options {
    pub out_dir: PathBuf,
    pub render: RenderMode,
    pub codec: Codec,
    /// At most this many frames per video.
    pub frames: Option<usize>,
    /// Redo videos already done.
    pub force: bool,
    /// Videos processed at the same time in this process: their geometry searches share the
    /// memory for kept frames. `run_batch` sets it to the videos it runs at once (callers give 1).
    pub videos_at_once: usize,
}

/// How a video's processing ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Done,
    Failed,
    Interrupted,
}

impl Status {
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        }
    }
}

/// The input file as it was when processed: a changed size, modification time or content
/// fingerprint redoes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputStamp {
    pub path: PathBuf,
    pub size: u64,
    pub mtime_ns: u128,
    /// `content_fingerprint` of the file (absent in summaries written before it existed,
    /// which are then compared by size and time alone).
    #[serde(default)]
    pub content: Option<String>,
}

/// Bytes read from each end of an input for its fingerprint.
pub(super) const FINGERPRINT_SPAN: u64 = 1 << 20;

/// FNV-1a of the size and the first and last MiB of a file (the whole file when it is at most
/// 2 MiB): notices an input rewritten in place with the same size and modification time (a
/// copy tool that keeps times, a re-encode of the same length) for 2 MiB of reading.
pub fn content_fingerprint(path: &Path) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    let mut bytes = size.to_le_bytes().to_vec();
    if size <= 2 * FINGERPRINT_SPAN {
        f.read_to_end(&mut bytes)?;
    } else {
        (&mut f).take(FINGERPRINT_SPAN).read_to_end(&mut bytes)?;
        f.seek(SeekFrom::End(-(FINGERPRINT_SPAN as i64)))?;
        f.read_to_end(&mut bytes)?;
    }
    Ok(format!("{:016x}", fnv1a64(&bytes)))
}

impl InputStamp {
    fn of(path: &Path) -> Self {
        let meta = std::fs::metadata(path).ok();
        Self {
            path: path.to_path_buf(),
            size: meta.as_ref().map(|m| m.len()).unwrap_or(0),
            mtime_ns: meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .unwrap_or(0),
            content: content_fingerprint(path).ok(),
        }
    }
}

/// A video's `summary.json`, written last (its presence with status `done` marks the video done).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VideoReport {
    pub rel: String,
    pub status: Status,
    /// The one-line error of a failed or interrupted video.
    pub error: Option<String>,
    pub input: InputStamp,
    pub camera_hash: String,
    pub config_hash: String,
    pub lanes_version: String,
    pub render: String,
    pub codec: String,
    pub frames_limit: Option<usize>,
    pub frames: usize,
    pub seconds: f64,
    pub fps: f64,
    /// Decoding stopped here, before the announced frame count (the video is then `failed`).
    pub truncated_at: Option<usize>,
    pub stats: DriveStats,
    /// Output files in the video's folder.
    pub outputs: Vec<String>,
    /// A note on the run (`Pipeline::quad_note`: the perspective quad reaches outside the
    /// frames; `VideoSummary::noise_note`: frames smoothed for sensor noise). Absent in reports
    /// written before it existed.
    #[serde(default)]
    pub note: Option<String>,
    /// Medians of radius, offset and lane width over the frames with a lane (absent, all
    /// `None`, in reports written before they existed).
    #[serde(default)]
    pub medians: DriveMedians,
    /// The camera and config files the video ran with (`None`: no camera; the preset).
    #[serde(default)]
    pub camera: Option<String>,
    #[serde(default)]
    pub config: Option<String>,
}

impl VideoReport {
    /// Whether this report is a finished result for the same input, set-up and options.
    fn same_job(&self, other: &VideoReport) -> bool {
        self.input.size == other.input.size
            && self.input.mtime_ns == other.input.mtime_ns
            && (self.input.content.is_none() || self.input.content == other.input.content)
            && self.camera_hash == other.camera_hash
            && self.config_hash == other.config_hash
            && self.lanes_version == other.lanes_version
            && self.render == other.render
            && self.codec == other.codec
            && self.frames_limit == other.frames_limit
    }
}

/// One processed (or skipped) video.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub item: Item,
    pub report: VideoReport,
    /// Already done by an earlier run: nothing was redone.
    pub skipped: bool,
    /// Outputs of an earlier run with another `--render` removed from the video's folder when
    /// it was redone (`STALE_OUTPUTS`).
    pub removed: Vec<String>,
}

/// The file that marks a video done, written last.
pub const SUMMARY: &str = "summary.json";

/// Files that describe one run of a video and that another run may not write: the videos of
/// each `--render` mode and the drive report `lanes report` writes beside the telemetry. A
/// video that is redone removes those it does not write itself, so its folder never mixes the
/// outputs of two runs (an `overlay.mp4` of last week beside today's telemetry).
pub const STALE_OUTPUTS: &[&str] = &["overlay.mp4", "diagnostic.mp4", "report.html"];

/// Remove the `STALE_OUTPUTS` in `dir` that are not among `keep`, never a file that is the
/// input video itself (an input given from inside an output folder); returns their names.
pub fn remove_stale_outputs(dir: &Path, keep: &[String], input: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    for name in STALE_OUTPUTS {
        let p = dir.join(name);
        if keep.iter().any(|k| k == name)
            || !p.is_file()
            || crate::base::same_file::same_file(&p, input)
        {
            continue;
        }
        if std::fs::remove_file(&p).is_ok() {
            removed.push(name.to_string());
        }
    }
    removed
}
pub(super) const TELEMETRY: &str = "telemetry.jsonl";

pub(super) fn render_name(r: RenderMode) -> &'static str {
    match r {
        RenderMode::None => "none",
        RenderMode::Overlay => "overlay",
        RenderMode::Diagnostic => "diagnostic",
    }
}

pub(super) fn codec_name(c: Codec) -> String {
    match c {
        Codec::H264 { preset, crf } => format!("h264 {} crf {crf}", preset.name()),
        Codec::Mp4v => "mp4v".into(),
    }
}

/// The temporary name of an output: `.NAME.partial` beside it.
pub(super) fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Remove temporary files (`.*.partial*`) left in a folder by a killed run.
pub fn remove_partials(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') && name.contains(".partial") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Read a video's `summary.json` if there is a readable one.
pub fn read_report(dir: &Path) -> Option<VideoReport> {
    let text = std::fs::read_to_string(dir.join(SUMMARY)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The output folder of an item.
pub fn video_dir(out_dir: &Path, item: &Item) -> PathBuf {
    out_dir.join(&item.rel)
}

/// The report of a video about to be processed (status `failed` until it is done).
pub(super) fn fresh_report(setup: &Setup, item: &Item, opts: &Options) -> VideoReport {
    VideoReport {
        rel: item.rel.clone(),
        status: Status::Failed,
        error: None,
        input: InputStamp::of(&item.path),
        camera_hash: setup.camera_hash.clone(),
        config_hash: setup.config_hash.clone(),
        lanes_version: LANES_VERSION.to_string(),
        render: render_name(opts.render).to_string(),
        codec: codec_name(opts.codec),
        frames_limit: opts.frames,
        frames: 0,
        seconds: 0.0,
        fps: 0.0,
        truncated_at: None,
        stats: DriveStats::default(),
        outputs: Vec::new(),
        note: None,
        medians: DriveMedians::default(),
        camera: setup.camera_file.as_ref().map(|p| p.display().to_string()),
        config: setup.config_file.as_ref().map(|p| p.display().to_string()),
    }
}

/// The folder's `summary.json` when it is a complete result for the same job as `report`.
pub(super) fn finished(dir: &Path, report: &VideoReport) -> Option<VideoReport> {
    let prev = read_report(dir)?;
    let complete = prev.outputs.iter().all(|o| dir.join(o).is_file());
    (prev.status == Status::Done && complete && prev.same_job(report)).then_some(prev)
}

/// An item's finished result in `opts.out_dir` (what `process` skips), or `None` when the video
/// must be (re)done. `lanes queue work` checks this before it processes into its staging folder.
pub fn finished_report(setup: &Setup, item: &Item, opts: &Options) -> Option<VideoReport> {
    finished(
        &video_dir(&opts.out_dir, item),
        &fresh_report(setup, item, opts),
    )
}

/// Process one video into its folder (or skip it when it is already done for the same inputs).
/// Never returns an error: a failure is recorded in the outcome (and in `summary.json` when the
/// folder is writable). `progress` gets the frames done so far.
pub fn process(
    setup: &Setup,
    item: &Item,
    opts: &Options,
    cancel: &Cancel,
    progress: video::Progress,
) -> Outcome {
    let dir = video_dir(&opts.out_dir, item);
    let video_name = match opts.render {
        RenderMode::None => None,
        r => Some(format!("{}.mp4", render_name(r))),
    };
    let mut report = fresh_report(setup, item, opts);
    remove_partials(&dir);
    if !opts.force {
        if let Some(prev) = finished(&dir, &report) {
            return Outcome {
                item: item.clone(),
                report: prev,
                skipped: true,
                removed: Vec::new(),
            };
        }
    }
    let started = Instant::now();
    let result = run_one(
        setup,
        item,
        opts,
        cancel,
        progress,
        &dir,
        video_name.as_deref(),
    );
    report.seconds = started.elapsed().as_secs_f64();
    let mut removed = Vec::new();
    match result {
        Ok((summary, stats)) => {
            report.frames = summary.frames_read;
            report.fps = summary.fps();
            report.seconds = summary.seconds;
            report.stats = stats;
            report.truncated_at = summary.truncated_at;
            let undecodable = (summary.undecodable > 0).then(|| {
                format!(
                    "{} frames could not be decoded (corrupt data in the file)",
                    summary.undecodable
                )
            });
            report.note = [summary.quad_note.clone(), summary.noise_note(), undecodable]
                .into_iter()
                .flatten()
                .reduce(|a, b| format!("{a}; {b}"));
            report.medians = summary.measures.medians();
            report.outputs.push(TELEMETRY.to_string());
            report.outputs.extend(video_name);
            removed = remove_stale_outputs(&dir, &report.outputs, &item.path);
            match summary.truncated_at {
                Some(n) => {
                    report.status = Status::Failed;
                    report.error = Some(format!(
                        "{}: decoding stopped at frame {n} of {} (truncated or corrupt input)",
                        item.path.display(),
                        summary.announced_frames
                    ));
                }
                None => report.status = Status::Done,
            }
        }
        Err(e) => {
            report.status = match e {
                Error::Interrupted { .. } => Status::Interrupted,
                _ => Status::Failed,
            };
            report.error = Some(e.to_string());
        }
    }
    if let Err(e) = write_report(&dir, &report) {
        report.status = Status::Failed;
        report.error = Some(e.to_string());
    }
    Outcome {
        item: item.clone(),
        report,
        skipped: false,
        removed,
    }
}

pub(super) fn write_report(dir: &Path, report: &VideoReport) -> Result<()> {
    let json = serde_json::to_string_pretty(report).map_err(|e| Error::Invalid(e.to_string()))?;
    write_atomic(&dir.join(SUMMARY), format!("{json}\n").as_bytes())
}

/// Run `lanes video`'s frame loop on one item with outputs under temporary names, renamed when
/// complete; on an error every temporary file is removed.
pub(super) fn run_one(
    setup: &Setup,
    item: &Item,
    opts: &Options,
    cancel: &Cancel,
    progress: video::Progress,
    dir: &Path,
    video_name: Option<&str>,
) -> Result<(video::VideoSummary, DriveStats)> {
    std::fs::create_dir_all(dir)
        .map_err(|e| io_err(dir, format!("cannot create output folder: {e}")))?;
    // From here on the video counts as not done until its new summary is written.
    match std::fs::remove_file(dir.join(SUMMARY)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(&dir.join(SUMMARY), e)),
    }
    let mut src = VideoSource::open(&item.path)?;
    if let Some(cam) = &setup.camera {
        cam.check_frame_size(&item.path, None, (src.width, src.height))?;
    }
    let (pipe, geometry_note, shot_search, opening_cut) = if setup.find_geometry {
        let mut sc = crate::geometry::selfcal::SelfCalOptions::default();
        sc.estimate.hfov_deg = setup.cfg.camera.hfov_deg;
        sc.searches_at_once = opts.videos_at_once;
        sc.cut_ratio = setup.cfg.tracking.cuts();
        // Each shot's geometry, as the opening's (`find_on`), on the video's pixel shape.
        sc.estimate.pixel_aspect = crate::video::pixel_aspect(src.sample_aspect);
        let g = crate::geometry::selfcal::find_on(&mut src, setup.camera.as_ref(), &sc)?.map_err(
            |reason| Error::Video {
                path: item.path.clone(),
                message: reason,
            },
        )?;
        let cfg = g.apply(&setup.cfg);
        let pipe = Pipeline::new(cfg, setup.camera.as_ref(), src.width, src.height)?
            .with_pixel_aspect(sc.estimate.pixel_aspect);
        // Each shot after a cut of an edited video gets its own.
        let shots = crate::geometry::resolve::shot_search(
            setup.cfg.clone(),
            setup.camera.clone(),
            sc,
            Some(g.clone()),
        );
        (Arc::new(pipe), Some(g.note()), Some(shots), g.first_cut)
    } else {
        let aspect = crate::video::pixel_aspect(src.sample_aspect);
        (
            setup.pipeline(src.width, src.height, aspect)?,
            None,
            None,
            None,
        )
    };
    let telemetry = dir.join(TELEMETRY);
    let telemetry_tmp = partial(&telemetry);
    let job = VideoJob {
        input: item.path.clone(),
        output: video_name.map(|n| dir.join(n)),
        render: opts.render,
        telemetry: Some(telemetry_tmp.clone()),
        start: 0,
        max_frames: opts.frames,
        codec: opts.codec,
        threaded: true,
        cancel: cancel.clone(),
        shot_search,
        opening_cut,
    };
    let mut stats = DriveStats::default();
    let result = video::run_with(&pipe, src, &job, &mut |r| stats.add(r), progress);
    let summary = match result {
        Ok(mut s) if s.interrupted_at.is_none() => {
            if s.quad_note.is_none() {
                s.quad_note = geometry_note;
            }
            let streams = video::other_streams_note(&item.path);
            for c in [s.shots_note(), streams].into_iter().flatten() {
                s.quad_note = Some(match s.quad_note.take() {
                    Some(n) => format!("{n}; {c}"),
                    None => c,
                });
            }
            s
        }
        other => {
            // A failed or interrupted video leaves nothing behind: not the video an interrupted
            // run finalised, not a temporary file.
            if let Some(out) = other.as_ref().ok().and_then(|s| s.output.as_ref()) {
                let _ = std::fs::remove_file(out);
            }
            let _ = std::fs::remove_file(&telemetry_tmp);
            remove_partials(dir);
            return Err(other.err().unwrap_or_else(|| Error::Interrupted {
                path: item.path.clone(),
            }));
        }
    };
    std::fs::rename(&telemetry_tmp, &telemetry).map_err(|e| {
        let _ = std::fs::remove_file(&telemetry_tmp);
        io_err(&telemetry, e)
    })?;
    Ok((summary, stats))
}
