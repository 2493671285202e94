//! Many videos in one process: inputs resolved to (path, relative name) items, one output folder
//! per video written atomically and skipped when already done for the same inputs, set-ups
//! shared per frame size, videos run on `jobs` threads, and the batch's `batch.json`/`batch.csv`.
//! `lanes queue work` runs the same per-video function (`process`) on jobs taken from Redis.

use crate::base::atomic::{partial_path as partial, write_atomic};
use crate::base::camera::Camera;
use crate::base::cancel::Cancel;
use crate::base::config::{Config, Preset};
use crate::base::error::{Error, Result};
use crate::base::summary::{DriveMedians, DriveStats};
use crate::lane::pipeline::Pipeline;
use crate::video::{self, Codec, RenderMode, VideoJob, VideoSource};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, UNIX_EPOCH};

/// The version written into every `summary.json`: a newer `lanes` redoes older results.
pub const LANES_VERSION: &str = env!("CARGO_PKG_VERSION");

/// File extensions taken as videos when a directory is searched.
pub const VIDEO_EXTENSIONS: &[&str] = &[
    "mp4", "m4v", "mov", "avi", "mkv", "webm", "mpg", "mpeg", "ts", "wmv", "flv",
];

/// One video to process: where to read it and its name relative to its input root (the name
/// of its output folder under OUTDIR, `/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub path: PathBuf,
    pub rel: String,
}

/// 64-bit FNV-1a: a stable hash (the same on every machine and run, unlike std's hasher), for
/// shards and content fingerprints.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `/`-joined normal components of a path (no root, `.` or `..`), for output folder names.
pub fn rel_name(p: &Path) -> String {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn is_video(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .map(|e| VIDEO_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        .unwrap_or(false)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::Io {
        path: dir.to_path_buf(),
        message: format!("cannot read directory: {e}"),
    })?;
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out)?;
        } else if is_video(&p) {
            out.push(p);
        }
    }
    Ok(())
}

/// Resolve inputs: a video file (named by its file name), a directory (searched recursively
/// for video files, each named by its path inside the directory) or `@list.txt` (one path a
/// line, relative to the list's folder; each named by the line as written; `#` comments). Two
/// inputs with the same name are an error, since they would share an output folder.
pub fn collect_inputs(inputs: &[PathBuf]) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    for input in inputs {
        let s = input.to_string_lossy();
        if let Some(list) = s.strip_prefix('@') {
            let list = PathBuf::from(list);
            let text = std::fs::read_to_string(&list).map_err(|e| Error::Io {
                path: list.clone(),
                message: format!("cannot read input list: {e}"),
            })?;
            let base = list.parent().unwrap_or(Path::new("")).to_path_buf();
            for line in text.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let p = PathBuf::from(line);
                let path = if p.is_absolute() {
                    p.clone()
                } else {
                    base.join(&p)
                };
                items.push(Item {
                    path,
                    rel: rel_name(&p),
                });
            }
        } else if input.is_dir() {
            let mut found = Vec::new();
            walk(input, &mut found)?;
            if found.is_empty() {
                return Err(Error::Io {
                    path: input.clone(),
                    message: format!(
                        "no video files ({}) in directory",
                        VIDEO_EXTENSIONS.join(", ")
                    ),
                });
            }
            for p in found {
                let rel = rel_name(p.strip_prefix(input).unwrap_or(&p));
                items.push(Item { path: p, rel });
            }
        } else {
            // A missing file is kept: it fails alone, as a per-video failure.
            let rel = input
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| rel_name(input));
            items.push(Item {
                path: input.clone(),
                rel,
            });
        }
    }
    if items.is_empty() {
        return Err(Error::Invalid("no input videos given".into()));
    }
    check_names(&items)?;
    Ok(items)
}

/// Every item has a name, and no two share one (they would share an output folder).
pub fn check_names(items: &[Item]) -> Result<()> {
    let mut seen: HashMap<&str, &Path> = HashMap::new();
    for it in items {
        if it.rel.is_empty() {
            return Err(Error::Io {
                path: it.path.clone(),
                message: "input has no file name to name its output folder".into(),
            });
        }
        if let Some(other) = seen.insert(&it.rel, &it.path) {
            return Err(Error::Io {
                path: it.path.clone(),
                message: format!(
                    "output folder {} is also the one of {}; give the inputs as a directory or list so their relative paths differ",
                    it.rel,
                    other.display()
                ),
            });
        }
    }
    Ok(())
}

/// `--shard I/N`: the inputs whose FNV-1a hash of the relative name is `I-1` modulo `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parse `I/N` with 1 <= I <= N.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || Error::Invalid(format!("--shard {s} (expected I/N with 1 <= I <= N)"));
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }

    /// Whether this shard owns the input named `rel`.
    pub fn owns(&self, rel: &str) -> bool {
        fnv1a64(rel.as_bytes()) % self.count == self.index - 1
    }
}

/// Process-wide set-up shared by every video: the config, the camera, their fingerprints and
/// one `Pipeline` per frame size (remap maps built once; the B table is process-wide anyway).
pub struct Setup {
    pub cfg: Config,
    pub camera: Option<Camera>,
    /// FNV-1a of the camera file's bytes ("none" without a camera).
    pub camera_hash: String,
    /// FNV-1a of the resolved configuration (preset and file merged) as JSON.
    pub config_hash: String,
    pipelines: Mutex<HashMap<(i32, i32), Arc<Pipeline>>>,
    /// Find each video's road geometry in the video itself (the config names no
    /// `[perspective]`), as `lanes video` does; else every video uses the config's.
    pub find_geometry: bool,
    /// The camera and config files this set-up was loaded from (shown in the index).
    pub camera_file: Option<PathBuf>,
    pub config_file: Option<PathBuf>,
}

impl Setup {
    /// A set-up from a validated config and an optional camera with the file it came from.
    pub fn new(cfg: Config, camera: Option<(Camera, &Path)>) -> Result<Self> {
        let camera_file = camera.as_ref().map(|(_, p)| p.to_path_buf());
        let camera_hash = match &camera {
            Some((_, p)) => {
                let bytes = std::fs::read(p).map_err(|e| Error::Io {
                    path: p.to_path_buf(),
                    message: e.to_string(),
                })?;
                format!("{:016x}", fnv1a64(&bytes))
            }
            None => "none".to_string(),
        };
        let json = serde_json::to_string(&cfg).map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Self {
            config_hash: format!("{:016x}", fnv1a64(json.as_bytes())),
            cfg,
            camera: camera.map(|(c, _)| c),
            camera_hash,
            pipelines: Mutex::new(HashMap::new()),
            find_geometry: false,
            camera_file,
            config_file: None,
        })
    }

    /// Load the camera and config files (config keys over `preset`), as the CLI does.
    pub fn load(camera: Option<&Path>, config: Option<&Path>, preset: Preset) -> Result<Self> {
        let cfg = Config::load_over(config, preset)?;
        let cam = camera
            .map(|p| Camera::load(p).map(|c| (c, p)))
            .transpose()?;
        Self::new(cfg, cam)?.geometry_from(config)
    }

    /// Find each video's geometry unless the config file names `[perspective]`.
    pub fn geometry_from(mut self, config: Option<&Path>) -> Result<Self> {
        self.config_file = config.map(Path::to_path_buf);
        self.find_geometry = match config {
            Some(p) => !Config::file_names_section(p, "perspective")?,
            None => true,
        };
        Ok(self)
    }

    /// The pipeline for frames of this size, built on first use.
    pub fn pipeline(&self, width: i32, height: i32) -> Result<Arc<Pipeline>> {
        let mut map = self
            .pipelines
            .lock()
            .map_err(|_| Error::Invalid("pipeline cache poisoned".into()))?;
        if let Some(p) = map.get(&(width, height)) {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(Pipeline::new(
            self.cfg.clone(),
            self.camera.as_ref(),
            width,
            height,
        )?);
        map.insert((width, height), Arc::clone(&p));
        Ok(p)
    }
}

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
const FINGERPRINT_SPAN: u64 = 1 << 20;

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
    /// frames). Absent in reports written before it existed.
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
const TELEMETRY: &str = "telemetry.jsonl";

fn render_name(r: RenderMode) -> &'static str {
    match r {
        RenderMode::None => "none",
        RenderMode::Overlay => "overlay",
        RenderMode::Diagnostic => "diagnostic",
    }
}

fn codec_name(c: Codec) -> String {
    match c {
        Codec::H264 { preset, crf } => format!("h264 {} crf {crf}", preset.name()),
        Codec::Mp4v => "mp4v".into(),
    }
}

/// The temporary name of an output: `.NAME.partial` beside it.
fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
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
fn fresh_report(setup: &Setup, item: &Item, opts: &Options) -> VideoReport {
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
fn finished(dir: &Path, report: &VideoReport) -> Option<VideoReport> {
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
            report.note = summary.quad_note.clone();
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

fn write_report(dir: &Path, report: &VideoReport) -> Result<()> {
    let json = serde_json::to_string_pretty(report).map_err(|e| Error::Invalid(e.to_string()))?;
    write_atomic(&dir.join(SUMMARY), format!("{json}\n").as_bytes())
}

/// Run `lanes video`'s frame loop on one item with outputs under temporary names, renamed when
/// complete; on an error every temporary file is removed.
fn run_one(
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
    let src = VideoSource::open(&item.path)?;
    if let Some(cam) = &setup.camera {
        cam.check_frame_size(&item.path, None, (src.width, src.height))?;
    }
    let (pipe, geometry_note) = if setup.find_geometry {
        let opts = crate::geometry::selfcal::SelfCalOptions::default();
        let g = crate::geometry::selfcal::find(&item.path, setup.camera.as_ref(), &opts)?.map_err(
            |reason| Error::Video {
                path: item.path.clone(),
                message: reason,
            },
        )?;
        let cfg = g.apply(&setup.cfg);
        let pipe = Pipeline::new(cfg, setup.camera.as_ref(), src.width, src.height)?;
        (Arc::new(pipe), Some(g.describe()))
    } else {
        (setup.pipeline(src.width, src.height)?, None)
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
    };
    let mut stats = DriveStats::default();
    let result = video::run_with(&pipe, src, &job, &mut |r| stats.add(r), progress);
    let summary = match result {
        Ok(mut s) if s.interrupted_at.is_none() => {
            if s.quad_note.is_none() {
                s.quad_note = geometry_note;
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

/// What `run_batch` reports while it runs.
pub enum Event<'a> {
    /// More frames were analysed (a delta).
    Frames(usize),
    /// A video finished (or was skipped).
    Finished(&'a Outcome),
}

/// A video and the set-up it runs with (`lanes batch --manifest` gives each video its own
/// camera and config; set-ups are shared between the videos that name the same files).
#[derive(Clone)]
pub struct Task {
    pub item: Item,
    pub setup: Arc<Setup>,
}

/// Run `process` over the tasks on `jobs` threads; stop taking new videos once `cancel` is set.
/// Outcomes are returned in task order (videos never started are left out).
pub fn run_batch(
    tasks: &[Task],
    opts: &Options,
    jobs: usize,
    cancel: &Cancel,
    on_event: &(dyn Fn(Event) + Sync),
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; tasks.len()]);
    let running = jobs.max(1).min(tasks.len().max(1));
    if running > 1 {
        // Several videos at once: each decoder gets its share of the cores (threaded decoding
        // costs CPU in hand-offs; with the cores busy anyway, fewer threads decode more frames
        // per core).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        video::set_decoder_threads((cores / running).max(1));
    }
    std::thread::scope(|scope| {
        for _ in 0..running {
            scope.spawn(|| loop {
                if cancel.requested() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(task) = tasks.get(i) else { break };
                let last = AtomicUsize::new(0);
                let progress = |n: usize| {
                    let before = last.swap(n, Ordering::Relaxed);
                    on_event(Event::Frames(n.saturating_sub(before)));
                };
                let outcome = process(&task.setup, &task.item, opts, cancel, &progress);
                on_event(Event::Finished(&outcome));
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(outcome);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// One row of `batch.json`/`batch.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub path: String,
    pub status: String,
    pub skipped: bool,
    pub frames: usize,
    pub seconds: f64,
    pub fps: f64,
    pub lane_share: f64,
    pub search_failed_share: f64,
    pub offset_abs_mean_m: Option<f64>,
    pub offset_abs_max_m: Option<f64>,
    /// Medians over the frames with a lane (`summary::DriveMedians`; empty on the TOTAL row).
    pub radius_median_m: Option<f64>,
    pub lane_width_median_m: Option<f64>,
    pub offset_median_m: Option<f64>,
    /// Not among this run's inputs: kept from an earlier run into the same folder (its
    /// `summary.json` is still there).
    pub earlier_run: bool,
    pub camera: Option<String>,
    pub config: Option<String>,
    /// The video's note (`summary.json`: the geometry found in the video, or a quad that
    /// reaches outside the frames).
    pub note: Option<String>,
    pub error: Option<String>,
}

impl Row {
    fn total(stats: &DriveStats, frames: usize, seconds: f64, fps: f64) -> Self {
        Self {
            path: "TOTAL".into(),
            status: String::new(),
            skipped: false,
            frames,
            seconds,
            fps,
            lane_share: stats.lane_share(),
            search_failed_share: stats.search_failed_share(),
            offset_abs_mean_m: stats.offset_abs_mean_m(),
            offset_abs_max_m: (stats.offset_frames > 0).then_some(stats.offset_abs_max_m),
            radius_median_m: None,
            lane_width_median_m: None,
            offset_median_m: None,
            earlier_run: false,
            camera: None,
            config: None,
            note: None,
            error: None,
        }
    }

    /// The row of a video's report (`rel` names its folder).
    pub fn of_report(rel: &str, r: &VideoReport, skipped: bool, earlier_run: bool) -> Self {
        let s = &r.stats;
        Self {
            path: rel.to_string(),
            status: r.status.as_str().to_string(),
            skipped,
            frames: r.frames,
            seconds: r.seconds,
            fps: r.fps,
            radius_median_m: r.medians.radius_median_m,
            lane_width_median_m: r.medians.lane_width_median_m,
            offset_median_m: r.medians.offset_median_m,
            earlier_run,
            camera: r.camera.clone(),
            config: r.config.clone(),
            note: r.note.clone(),
            error: r.error.clone(),
            ..Self::total(s, 0, 0.0, 0.0)
        }
    }
}

/// The whole batch: per video rows and totals.
#[derive(Debug, Clone, Serialize)]
pub struct BatchReport {
    pub lanes_version: String,
    pub videos: Vec<Row>,
    /// Totals: frames and seconds summed over the videos, fps = frames processed by this run
    /// (skipped videos and those of earlier runs left out) / its wall-clock seconds, shares
    /// over all frames.
    pub totals: Row,
    /// Videos by status, over every row (this run's and those kept from earlier runs).
    pub done: usize,
    pub failed: usize,
    pub interrupted: usize,
    /// This run's videos that were already done.
    pub skipped: usize,
    /// Rows kept from earlier runs into the same folder (`earlier_run`).
    pub earlier_runs: usize,
    pub wall_seconds: f64,
}

impl BatchReport {
    /// The report of this run's outcomes alone.
    pub fn new(outcomes: &[Outcome], wall_seconds: f64) -> Self {
        Self::with_earlier(outcomes, &[], wall_seconds)
    }

    /// This run's outcomes, then the reports of videos kept from earlier runs (`earlier`).
    pub fn with_earlier(outcomes: &[Outcome], earlier: &[VideoReport], wall_seconds: f64) -> Self {
        let mut total = DriveStats::default();
        let mut frames = 0;
        let mut processed_frames = 0;
        let mut seconds = 0.0;
        let mut rows = Vec::new();
        let (mut done, mut failed, mut interrupted, mut skipped) = (0, 0, 0, 0);
        let this_run = outcomes
            .iter()
            .map(|o| (o.item.rel.as_str(), &o.report, o.skipped, false));
        let kept = earlier.iter().map(|r| (r.rel.as_str(), r, false, true));
        for (rel, r, was_skipped, earlier_run) in this_run.chain(kept) {
            total.merge(&r.stats);
            frames += r.frames;
            seconds += r.seconds;
            match r.status {
                Status::Done => done += 1,
                Status::Failed => failed += 1,
                Status::Interrupted => interrupted += 1,
            }
            skipped += was_skipped as usize;
            if !was_skipped && !earlier_run {
                processed_frames += r.frames;
            }
            rows.push(Row::of_report(rel, r, was_skipped, earlier_run));
        }
        let fps = if wall_seconds > 0.0 {
            processed_frames as f64 / wall_seconds
        } else {
            0.0
        };
        Self {
            lanes_version: LANES_VERSION.to_string(),
            videos: rows,
            totals: Row::total(&total, frames, seconds, fps),
            done,
            failed,
            interrupted,
            skipped,
            earlier_runs: earlier.len(),
            wall_seconds,
        }
    }

    /// The CSV form: a header, one row per video, a TOTAL row.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("path,status,skipped,frames,seconds,fps,lane_share,search_failed_share,offset_abs_mean_m,offset_abs_max_m,radius_median_m,lane_width_median_m,offset_median_m,earlier_run,camera,config,note,error\n");
        let opt = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_default();
        let text = |v: &Option<String>| csv_field(v.as_deref().unwrap_or(""));
        for r in self.videos.iter().chain(std::iter::once(&self.totals)) {
            s += &format!(
                "{},{},{},{},{:.3},{:.2},{:.4},{:.4},{},{},{},{},{},{},{},{},{},{}\n",
                csv_field(&r.path),
                r.status,
                r.skipped,
                r.frames,
                r.seconds,
                r.fps,
                r.lane_share,
                r.search_failed_share,
                opt(r.offset_abs_mean_m),
                opt(r.offset_abs_max_m),
                r.radius_median_m
                    .map(|v| format!("{v:.1}"))
                    .unwrap_or_default(),
                opt(r.lane_width_median_m),
                opt(r.offset_median_m),
                r.earlier_run,
                text(&r.camera),
                text(&r.config),
                text(&r.note),
                text(&r.error)
            );
        }
        s
    }

    /// Write `<stem>.json` and `<stem>.csv` into `dir`, each atomically.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(|e| Error::Invalid(e.to_string()))?;
        write_atomic(
            &dir.join(format!("{stem}.json")),
            format!("{json}\n").as_bytes(),
        )?;
        write_atomic(&dir.join(format!("{stem}.csv")), self.to_csv().as_bytes())
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Check that OUTDIR can be created and written (before any video starts).
pub fn prepare_out_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| io_err(dir, format!("cannot create output directory: {e}")))?;
    let probe = dir.join(format!(".lanes-write-test.{}.partial", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| io_err(dir, format!("output directory is not writable: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    remove_partials(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn shards_partition_names_and_parse_checks_range() {
        let names: Vec<String> = (0..200)
            .map(|i| format!("d{}/clip{i}.mp4", i % 7))
            .collect();
        let shards: Vec<Shard> = (1..=3)
            .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
            .collect();
        for n in &names {
            assert_eq!(shards.iter().filter(|s| s.owns(n)).count(), 1, "{n}");
        }
        for s in &shards {
            let c = names.iter().filter(|n| s.owns(n)).count();
            assert!((40..=95).contains(&c), "shard {} has {c} of 200", s.index);
        }
        for bad in ["0/3", "4/3", "1/0", "x", "1/"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn content_fingerprint_sees_both_ends_and_the_size() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("v.mp4");
        let mut bytes: Vec<u8> = (0..3 * FINGERPRINT_SPAN as usize)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&p, &bytes).unwrap();
        let base = content_fingerprint(&p).unwrap();
        // A byte in the middle MiB is not read (the price of reading 2 MiB of a large file).
        bytes[3 << 19] ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(content_fingerprint(&p).unwrap(), base);
        for at in [0, (1 << 20) - 1, 2 << 20, bytes.len() - 1] {
            let mut b = bytes.clone();
            b[at] ^= 1;
            std::fs::write(&p, &b).unwrap();
            assert_ne!(content_fingerprint(&p).unwrap(), base, "byte {at}");
        }
        std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert_ne!(content_fingerprint(&p).unwrap(), base);
    }

    #[test]
    fn rel_names_drop_roots_and_dots() {
        assert_eq!(rel_name(Path::new("/a/./b/../c.mp4")), "a/b/c.mp4");
        assert_eq!(rel_name(Path::new("x.mp4")), "x.mp4");
    }

    fn outcome(
        rel: &str,
        status: Status,
        skipped: bool,
        frames: usize,
        error: Option<&str>,
    ) -> Outcome {
        let mut stats = DriveStats::default();
        for i in 0..frames {
            stats.add(&crate::base::telemetry::FrameRecord {
                frame: i,
                time_s: i as f64 / 25.0,
                search: "prior".into(),
                detected: i % 2 == 0,
                status: if i % 4 == 3 { "none" } else { "both" }.into(),
                left_confidence: 1.0,
                right_confidence: 1.0,
                confidence: 1.0,
                left_fit: None,
                right_fit: None,
                radius_m: None,
                offset_m: (i % 4 != 3).then_some(0.1 * i as f64),
                lane_width_m: None,
                left_pixels: 0,
                right_pixels: 0,
            });
        }
        Outcome {
            item: Item {
                path: PathBuf::from(rel),
                rel: rel.into(),
            },
            report: VideoReport {
                rel: rel.into(),
                status,
                error: error.map(String::from),
                input: InputStamp::default(),
                camera_hash: "none".into(),
                config_hash: "0".into(),
                lanes_version: LANES_VERSION.into(),
                render: "none".into(),
                codec: "mp4v".into(),
                frames_limit: None,
                frames,
                seconds: frames as f64 / 100.0,
                fps: 100.0,
                truncated_at: None,
                stats,
                outputs: vec![],
                note: None,
                medians: DriveMedians::default(),
                camera: None,
                config: None,
            },
            skipped,
            removed: vec![],
        }
    }

    #[test]
    fn batch_report_totals_and_csv() {
        let outs = vec![
            outcome("a/x.mp4", Status::Done, false, 8, None),
            outcome("b.mp4", Status::Done, true, 4, None),
            outcome(
                "bad, \"one\".mp4",
                Status::Failed,
                false,
                0,
                Some("bad: cannot open, sorry"),
            ),
        ];
        let r = BatchReport::new(&outs, 2.0);
        assert_eq!((r.done, r.failed, r.skipped, r.interrupted), (2, 1, 1, 0));
        assert_eq!(r.totals.frames, 12);
        // fps counts only the frames processed by this run (the skipped video's 4 are left out).
        assert!((r.totals.fps - 4.0).abs() < 1e-12);
        // 12 frames, 3 of them `none` (i = 3, 7 and 3): lane share 0.75; search failed 6 of 12.
        assert!((r.totals.lane_share - 0.75).abs() < 1e-12);
        assert!((r.totals.search_failed_share - 0.5).abs() < 1e-12);
        assert!((r.totals.offset_abs_max_m.unwrap() - 0.6).abs() < 1e-12);
        let csv = r.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(lines[0].starts_with("path,status,skipped,frames"));
        assert!(lines[1].starts_with("a/x.mp4,done,false,8,"));
        assert!(
            lines[3].starts_with("\"bad, \"\"one\"\".mp4\",failed,false,0,")
                && lines[3].ends_with(",\"bad: cannot open, sorry\""),
            "{}",
            lines[3]
        );
        assert!(lines[4].starts_with("TOTAL,,false,12,"));
    }

    #[test]
    fn stale_outputs_go_but_never_the_input_or_another_file() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        for f in [
            "diagnostic.mp4",
            "report.html",
            "notes.txt",
            "telemetry.jsonl",
        ] {
            std::fs::write(dir.join(f), f).unwrap();
        }
        // The input video was given from inside the folder, under an output's name (a hard
        // link: the same file under two names).
        let input = d.path().join("input.mp4");
        std::fs::write(&input, b"video").unwrap();
        std::fs::hard_link(&input, dir.join("overlay.mp4")).unwrap();
        let keep = vec!["telemetry.jsonl".to_string(), "diagnostic.mp4".to_string()];
        assert_eq!(
            remove_stale_outputs(dir, &keep, &input),
            vec!["report.html"]
        );
        for f in [
            "overlay.mp4",
            "diagnostic.mp4",
            "notes.txt",
            "telemetry.jsonl",
        ] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        assert!(!dir.join("report.html").exists());
        assert_eq!(std::fs::read(&input).unwrap(), b"video");
        // Nothing left to remove: nothing happens.
        assert!(remove_stale_outputs(dir, &keep, &input).is_empty());
    }

    #[test]
    fn atomic_write_leaves_no_partial() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"{}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        std::fs::write(d.path().join(".b.json.partial"), b"x").unwrap();
        remove_partials(d.path());
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
    }
}
