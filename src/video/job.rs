//! What a video run is asked to do and what it reports: codecs, render modes, the job, the
//! per-stage timings and the summary.

use crate::base::cancel::Cancel;
use crate::base::config::Config;
use crate::base::error::Result;
use crate::video::decode::VideoFrame;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// Which encoder a sink uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Codec {
    /// H.264 through libx264, yuv420p: what browsers play (the default).
    H264 {
        /// libx264's speed preset.
        preset: X264Preset,
        /// Constant rate factor, 0..=51 (lower is better and larger; 23 is libx264's own).
        crf: u8,
    },
    /// MPEG-4 Part 2 (fourcc mp4v), as OpenCV writes by default; browsers do not play it.
    Mp4v,
}

impl Default for Codec {
    /// H.264, `veryfast`, crf 23: browser-playable, and about as fast to encode as MPEG-4
    /// Part 2 was, at a fraction of its size.
    fn default() -> Self {
        Codec::H264 {
            preset: X264Preset::Veryfast,
            crf: 23,
        }
    }
}

impl Codec {
    /// For the summary line.
    pub fn name(&self) -> String {
        match self {
            Codec::H264 { preset, crf } => {
                format!("H.264 (libx264, {}, crf {crf})", preset.name())
            }
            Codec::Mp4v => "MPEG-4 Part 2 (mp4v)".into(),
        }
    }

    /// FFmpeg's encoder for it.
    pub fn encoder_name(&self) -> &'static str {
        match self {
            Codec::H264 { .. } => "libx264",
            Codec::Mp4v => "mpeg4",
        }
    }
}

/// libx264's speed presets, fastest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum X264Preset {
    Ultrafast,
    Superfast,
    Veryfast,
    Faster,
    Fast,
    Medium,
    Slow,
    Slower,
    Veryslow,
    Placebo,
}

impl X264Preset {
    /// The name libx264 knows it by.
    pub fn name(&self) -> &'static str {
        match self {
            X264Preset::Ultrafast => "ultrafast",
            X264Preset::Superfast => "superfast",
            X264Preset::Veryfast => "veryfast",
            X264Preset::Faster => "faster",
            X264Preset::Fast => "fast",
            X264Preset::Medium => "medium",
            X264Preset::Slow => "slow",
            X264Preset::Slower => "slower",
            X264Preset::Veryslow => "veryslow",
            X264Preset::Placebo => "placebo",
        }
    }
}

/// Preferred codec from the environment (`LANES_CODEC=mpeg4|mp4v|h264`), default H.264.
pub fn preferred_codec() -> Codec {
    match std::env::var("LANES_CODEC").ok().as_deref() {
        Some("mp4v") | Some("mpeg4") => Codec::Mp4v,
        _ => Codec::default(),
    }
}

/// Bits per pixel (bit rate over pixels per second) from which an analysis-only run skips the
/// decoder's in-loop deblocking filter: 0.15. The filter smooths the edges of the codec's
/// blocks by an amount that grows with the quantiser; a dashcam's own recording (1080p30 at
/// 12-20 Mb/s: 0.2-0.3) is quantised finely and the filter changes little, while a clip
/// re-encoded for the web (0.02-0.1) leans on it. Measured (`LANES_LOOP_FILTER=skip` against
/// the default, `--no-render`): the Udacity clips (0.18-0.21), P1 solidWhiteRight (0.18), the
/// P1 challenge (0.30) and the 1000-frame joined clip keep the status of every frame, offsets
/// within 1.3 cm; the forest road (0.074) keeps it on 96.5% of its frames (both lines
/// 1231 -> 1188) and the Autobahn (0.023) on 99.5% (385 -> 383), so below the line the filter
/// runs. Saves about 15% of decoding (the 1000-frame clip with its geometry given: 2.31-2.52 s
/// -> 1.99-2.03 s; ffmpeg decodes it in 2.08-2.13 s).
pub const SKIP_LOOP_FILTER_BPP: f64 = 0.15;

/// Whether an analysis-only run of a stream of `bit_rate` bits per second, `size` and `fps`
/// skips the decoder's in-loop deblocking filter: from `SKIP_LOOP_FILTER_BPP` bits per pixel,
/// never when the bit rate is unknown. `LANES_LOOP_FILTER=skip` or `keep` decides instead.
pub fn skip_loop_filter(bit_rate: i64, (w, h): (i32, i32), fps: f64) -> bool {
    match std::env::var("LANES_LOOP_FILTER").ok().as_deref() {
        Some("skip") => true,
        Some("keep") => false,
        _ => {
            let pixels_per_s = w.max(0) as f64 * h.max(0) as f64 * fps;
            bit_rate > 0
                && pixels_per_s > 0.0
                && bit_rate as f64 / pixels_per_s >= SKIP_LOOP_FILTER_BPP
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

/// What a shot's search found (`ShotSearch`).
#[derive(Debug, Clone)]
pub enum ShotFound {
    /// The shot's own geometry: the configuration to analyse it with.
    Own(Box<Config>),
    /// The run's geometry holds in this shot: its frames agree with it (one camera, cut).
    Run,
}

/// Finds the road geometry of a shot that begins at a cut, from a sample of its frames as
/// decoded (in order, each with its time in the video, seconds; a search converts only the
/// frames it analyses): what to analyse the shot with and a line saying what was found, or why
/// nothing was. Made by the layer that found the video's opening geometry (self-calibration,
/// `geometry::resolve`), which the frame loop cannot import.
pub type ShotSearch = dyn Fn(&[(&VideoFrame, f64)]) -> Result<std::result::Result<(ShotFound, String), String>>
    + Send
    + Sync;

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
    /// With the geometry found in the video: each shot after a cut gets its own, found in its
    /// frames (`ShotSearch`). `None` keeps one geometry for the whole video (a `--config`).
    pub shot_search: Option<Arc<ShotSearch>>,
    /// The first cut the opening search saw (`FoundGeometry::first_cut`): when it comes soon
    /// after the start, the opening shot is searched on its own frames too.
    pub opening_cut: Option<usize>,
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
pub(super) struct RenderTimes {
    pub(super) undistort: f64,
    pub(super) overlay: f64,
    pub(super) composite: f64,
    pub(super) encode: f64,
}

impl StageSeries {
    pub(super) fn push_render(&mut self, t: RenderTimes, mode: RenderMode) {
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
    /// What the output holds, for the summary line (codec, settings, audio).
    pub encoder: Option<String>,
    /// Decoding stopped before the announced frame count (truncated or corrupt input).
    pub truncated_at: Option<usize>,
    /// Frames short of the announced count that the decoder refused, the file read to its
    /// end (corrupt data in the middle); 0 when none.
    pub undecodable: usize,
    pub announced_frames: i64,
    /// The run was interrupted (`VideoJob::cancel`) before this frame; the outputs hold the
    /// frames before it, finalised.
    pub interrupted_at: Option<usize>,
    pub stages: StageSeries,
    /// `Pipeline::quad_note`: the perspective quad reaches outside the frames.
    pub quad_note: Option<String>,
    /// Radius, offset and lane width of the frames with a lane (their medians: `medians()`).
    pub measures: crate::base::summary::MeasureSeries,
    /// Frames that begin a new shot of an edited video (`tracking.restart_at_cuts`): the
    /// trackers started again there.
    pub cuts: Vec<usize>,
    /// The cuts where the picture changed after it had stood still or frames were missing (a
    /// recording that froze, skipped or went blank, or a car that waited: not told as an
    /// edit), with what came before them.
    pub stalls: Vec<Stall>,
    /// What the search for each such shot's geometry found (`VideoJob::shot_search`), by
    /// frame.
    pub shot_geometry: Vec<(usize, std::result::Result<ShotNote, String>)>,
    /// The sensor noise (grey levels) of each frame smoothed before its analysis
    /// (`lane::denoise`).
    pub smoothed_noise: Vec<f64>,
}

/// A cut after an unchanging picture or a gap in the timestamps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stall {
    /// The frame the picture jumped at.
    pub at: usize,
    /// Frames before it that each repeated the frame before them.
    pub frozen_frames: usize,
    /// Seconds missing before it (its timestamp's step beyond one frame), when frames were.
    pub skipped_s: Option<f64>,
}

impl Stall {
    /// How long a picture stands still before a cut for the cut to be a stall: a quarter of a
    /// second, and at least 3 frames. A moving drive never repeats a frame, and a video
    /// converted to a higher rate repeats each frame once (30 to 60 fps) or thrice (25 to
    /// 100 fps); a card that stalls freezes the picture for half a second or more.
    pub const MIN_FROZEN_S: f64 = 0.25;
    pub const MIN_FROZEN_FRAMES: usize = 3;
    /// A timestamp step of more than this many frames' time before a cut: frames missing.
    pub const MIN_GAP_FRAMES: f64 = 2.5;

    /// The stall at cut frame `at`, if the picture stood still for `frozen_frames` before it
    /// or its timestamp stepped `step_s` from the frame before (at `fps`).
    pub fn at_cut(at: usize, frozen_frames: usize, step_s: Option<f64>, fps: f64) -> Option<Self> {
        let period = 1.0 / fps.max(1e-3);
        let skipped_s = step_s
            .filter(|s| *s > Self::MIN_GAP_FRAMES * period)
            .map(|s| s - period);
        let frozen = frozen_frames >= Self::MIN_FROZEN_FRAMES
            && frozen_frames as f64 >= Self::MIN_FROZEN_S * fps;
        (frozen || skipped_s.is_some()).then_some(Self {
            at,
            frozen_frames,
            skipped_s,
        })
    }

    fn describe(&self) -> String {
        match self.skipped_s {
            Some(s) => format!("frame {} after {s:.1} s missing", self.at),
            None => format!(
                "frame {} after {} frames of an unchanging picture",
                self.at, self.frozen_frames
            ),
        }
    }
}

/// What a shot's search found, as the summary says it.
#[derive(Debug, Clone)]
pub struct ShotNote {
    /// A geometry of the shot's own (`ShotFound::Own`), not the run's kept.
    pub own: bool,
    pub text: String,
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
            encoder: None,
            truncated_at: None,
            undecodable: 0,
            announced_frames,
            interrupted_at: None,
            stages: StageSeries::default(),
            quad_note: None,
            measures: Default::default(),
            cuts: Vec::new(),
            stalls: Vec::new(),
            shot_geometry: Vec::new(),
            smoothed_noise: Vec::new(),
        }
    }

    /// What the summary says of frames smoothed for sensor noise, if any.
    pub fn noise_note(&self) -> Option<String> {
        let level = crate::base::stats::median(&self.smoothed_noise)?;
        Some(format!(
            "{} of {} frames were smoothed before the analysis: their sensor noise (median {level:.1} grey levels) would pass for markings or break faint ones into speckle (threshold.smooth_noise)",
            self.smoothed_noise.len(),
            self.frames_read
        ))
    }

    /// What the summary says of the cuts found, if any: how many and the first frames; the
    /// jumps after a frozen picture or missing frames (`stalls`) are told apart from edits.
    pub fn cuts_note(&self) -> Option<String> {
        const LISTED: usize = 5;
        let listed = |items: Vec<String>| {
            let n = items.len();
            let mut shown: Vec<String> = items.into_iter().take(LISTED).collect();
            if n > LISTED {
                shown.push("...".into());
            }
            shown.join(", ")
        };
        let edits: Vec<String> = self
            .cuts
            .iter()
            .filter(|c| !self.stalls.iter().any(|s| s.at == **c))
            .map(|f| f.to_string())
            .collect();
        let mut parts = Vec::new();
        if !edits.is_empty() {
            parts.push(format!(
                "an edited video: {} at frame{} {}",
                if edits.len() == 1 {
                    "1 cut".to_string()
                } else {
                    format!("{} cuts", edits.len())
                },
                if edits.len() == 1 { "" } else { "s" },
                listed(edits)
            ));
        }
        if !self.stalls.is_empty() {
            parts.push(format!(
                "the picture changed at once at {}",
                listed(self.stalls.iter().map(Stall::describe).collect())
            ));
        }
        if parts.is_empty() {
            return None;
        }
        Some(format!(
            "{}; the lane tracking started again there (telemetry: \"cut\": true)",
            parts.join("; ")
        ))
    }

    /// `cuts_note` with how many of the shots searched (`shot_geometry`) found their own
    /// geometry: one line for a batch's note.
    pub fn shots_note(&self) -> Option<String> {
        let cuts = self.cuts_note()?;
        if self.shot_geometry.is_empty() {
            return Some(cuts);
        }
        let own = |o: bool| {
            self.shot_geometry
                .iter()
                .filter(|(_, g)| g.as_ref().is_ok_and(|n| n.own == o))
                .count()
        };
        let kept = match own(false) {
            0 => String::new(),
            n => format!(", {n} agree with the run's"),
        };
        Some(format!(
            "{cuts}; {} of {} shots searched found a geometry of their own{kept}",
            own(true),
            self.shot_geometry.len()
        ))
    }

    pub fn fps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.frames_read as f64 / self.seconds
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jump_after_a_frozen_picture_or_missing_frames_is_told_from_an_edit() {
        // A quarter of a second of repeated frames makes a stall (at 25 fps 7 frames, not 6;
        // never fewer than 3); a 100 fps video made of 25 fps frames repeats each thrice: no
        // stall. At 25 fps a timestamp step over 2.5 frames (0.1 s) means frames missing.
        assert_eq!(Stall::at_cut(125, 2, Some(0.04), 25.0), None);
        assert_eq!(Stall::at_cut(125, 6, Some(0.04), 25.0), None);
        assert!(Stall::at_cut(125, 7, Some(0.04), 25.0).is_some());
        assert_eq!(Stall::at_cut(125, 3, Some(0.01), 100.0), None);
        assert!(Stall::at_cut(125, 3, Some(0.2), 10.0).is_some());
        assert_eq!(
            Stall::at_cut(125, 24, Some(0.04), 25.0).map(|s| s.frozen_frames),
            Some(24)
        );
        let gap = Stall::at_cut(300, 0, Some(1.0), 25.0).unwrap();
        assert!((gap.skipped_s.unwrap() - 0.96).abs() < 1e-9, "{gap:?}");
        assert_eq!(Stall::at_cut(300, 0, Some(0.09), 25.0), None);
        // The note lists the edits as cuts and the stalls apart.
        let mut s = VideoSummary::new(None, 400);
        s.cuts = vec![100, 125, 300];
        assert_eq!(
            s.cuts_note().unwrap(),
            "an edited video: 3 cuts at frames 100, 125, 300; the lane tracking started again there (telemetry: \"cut\": true)"
        );
        s.stalls = vec![Stall::at_cut(125, 24, Some(0.04), 25.0).unwrap(), gap];
        assert_eq!(
            s.cuts_note().unwrap(),
            "an edited video: 1 cut at frame 100; the picture changed at once at frame 125 after 24 frames of an unchanging picture, frame 300 after 1.0 s missing; the lane tracking started again there (telemetry: \"cut\": true)"
        );
        s.cuts = vec![125];
        s.stalls.truncate(1);
        let note = s.cuts_note().unwrap();
        assert!(!note.contains("edited"), "{note}");
    }

    #[test]
    fn the_loop_filter_is_skipped_only_on_finely_quantised_streams() {
        if std::env::var_os("LANES_LOOP_FILTER").is_some() {
            return;
        }
        // The Udacity project clip (4.07 Mb/s, 1280x720 at 25 fps: 0.177 bits per pixel).
        assert!(skip_loop_filter(4_070_000, (1280, 720), 25.0));
        // The Autobahn phone clip (362 kb/s, 960x540 at 30 fps: 0.023) and the forest road
        // (510 kb/s, 640x360 at 30 fps: 0.074).
        assert!(!skip_loop_filter(362_000, (960, 540), 30.0));
        assert!(!skip_loop_filter(510_000, (640, 360), 30.0));
        // At the line, and an unknown bit rate.
        assert!(skip_loop_filter(3_456_000, (1280, 720), 25.0));
        assert!(!skip_loop_filter(3_455_000, (1280, 720), 25.0));
        assert!(!skip_loop_filter(0, (1280, 720), 25.0));
    }
}
