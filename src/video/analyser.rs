//! The frame loop's analysis side: one frame's analysis, the tracker (lane and pitch), its
//! measurements and telemetry record, and what the renderer gets.

use super::decode::VideoFrame;
use super::job::{
    RenderMode, ShotFound, ShotNote, ShotSearch, StageSeries, Stall, VideoJob, VideoSummary,
};
use crate::base::error::{Error, Result};
use crate::base::planes::RawFrame;
use crate::base::telemetry::{FrameRecord, TelemetryWriter};
use crate::lane::confidence::LaneStatus;
use crate::lane::fit::Poly2;
use crate::lane::horizon::ViewMap;
use crate::lane::measure::LaneMeasure;
use crate::lane::pipeline::Pipeline;
use crate::lane::render::DiagInfo;
use crate::lane::shot::luma_sample;
use crate::lane::track::{LaneTracker, PitchTracker, ShotTracker, TrackOutput, TrackScene};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// What the analysis thread hands to the renderer for one frame.
pub(super) struct RenderItem {
    /// The decoded frame (converted to BGR by the renderer).
    pub(super) raw: VideoFrame,
    /// The frame's timestamp in the input's time base (the output keeps it).
    pub(super) pts: Option<i64>,
    pub(super) lane: Option<(Poly2, Poly2)>,
    pub(super) measure: Option<LaneMeasure>,
    pub(super) status: LaneStatus,
    pub(super) diag: Option<Box<DiagInfo>>,
    /// The pipeline of this frame's shot when it has a geometry of its own (an edited video),
    /// else the run's.
    pub(super) shot_pipe: Option<Arc<Pipeline>>,
}

/// Callback for progress: frames done so far.
pub type Progress<'a> = &'a (dyn Fn(usize) + Sync);

/// The frame loop's analysis side: the pipeline, the tracker (the one stateful stage), the
/// counters, the telemetry and the caller's callbacks.
pub(super) struct Analyser<'a> {
    pub(super) pipe: &'a Pipeline,
    job: &'a VideoJob,
    pub(super) mode: RenderMode,
    tracker: LaneTracker,
    /// The pitch filter, when `tracking.online_pitch` is on and the quad has a horizon.
    pitch: Option<PitchTracker>,
    /// The cut detector, when `tracking.restart_at_cuts` is on.
    shots: Option<ShotTracker>,
    /// The video's frame rate, for trackers made again at a cut.
    fps: f64,
    /// The pipeline of the current shot when its geometry was found in it (after a cut, with
    /// `VideoJob::shot_search`); `None`: the run's.
    shot_pipe: Option<Arc<Pipeline>>,
    /// Frames read ahead to find a shot's geometry, analysed next; and an error or the end of
    /// the input met while reading them, reported once they are done.
    pending: VecDeque<VideoFrame>,
    deferred: Option<Error>,
    ended: bool,
    /// The timestamp of the frame analysed last (seconds), to tell frames missing before a cut.
    last_time_s: Option<f64>,
    pub(super) summary: VideoSummary,
    telemetry: Option<TelemetryWriter>,
    on_record: &'a mut (dyn FnMut(&FrameRecord) + Send),
    progress: Progress<'a>,
}

impl<'a> Analyser<'a> {
    /// The analysis side of a run of `job` on a video of `fps` frames per second.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        pipe: &'a Pipeline,
        job: &'a VideoJob,
        mode: RenderMode,
        fps: f64,
        summary: VideoSummary,
        telemetry: Option<TelemetryWriter>,
        on_record: &'a mut (dyn FnMut(&FrameRecord) + Send),
        progress: Progress<'a>,
    ) -> Self {
        Self {
            tracker: lane_tracker(pipe, fps),
            pitch: pitch_tracker(pipe, fps),
            shots: pipe.cfg.tracking.cuts().map(ShotTracker::new),
            fps,
            shot_pipe: None,
            pending: VecDeque::new(),
            deferred: None,
            ended: false,
            last_time_s: None,
            summary,
            pipe,
            job,
            mode,
            telemetry,
            on_record,
            progress,
        }
    }

    /// The run's summary and telemetry writer, after the loop.
    pub(super) fn finish(self) -> (VideoSummary, Option<TelemetryWriter>) {
        (self.summary, self.telemetry)
    }

    /// Analyse frames from `next_frame` until it ends, a stop is asked for or a stage fails;
    /// each frame's render item goes to `deliver` (which returns false when the renderer has
    /// stopped with an error of its own, reported when it is joined).
    pub(super) fn analysis_loop(
        &mut self,
        next_frame: &mut dyn FnMut() -> Result<Option<VideoFrame>>,
        deliver: &mut dyn FnMut(RenderItem, &mut StageSeries) -> Result<bool>,
    ) -> Result<()> {
        let mut frame_idx = 0usize;
        loop {
            if self.job.cancel.requested() {
                self.summary.interrupted_at = Some(self.job.start + frame_idx);
                return Ok(());
            }
            // Frames read ahead first; then what reading them met (an error, the end).
            let raw = match self.pending.pop_front() {
                Some(f) => f,
                None => {
                    if let Some(e) = self.deferred.take() {
                        return Err(e);
                    }
                    if self.ended {
                        return Ok(());
                    }
                    match next_frame()? {
                        Some(f) => f,
                        None => return Ok(()),
                    }
                }
            };
            let cut = self.new_shot(&raw, frame_idx, next_frame)?;
            self.last_time_s = Some(raw.time_s);
            let (rec, item) = self.analyse_frame(raw, frame_idx, cut)?;
            (self.on_record)(&rec);
            self.summary.measures.add(&rec);
            if let Some(t) = self.telemetry.as_mut() {
                t.write(&rec)?;
            }
            frame_idx += 1;
            self.summary.frames_read = frame_idx;
            if let Some(item) = item {
                if !deliver(item, &mut self.summary.stages)? {
                    return Ok(());
                }
            }
            (self.progress)(frame_idx);
        }
    }

    /// Whether `frame` begins a new shot (`tracking.restart_at_cuts`). At a cut the shot's
    /// geometry is searched for in its frames, read ahead (`VideoJob::shot_search`), and the
    /// lane and pitch trackers start again, as at the start of the video: the lane and pitch of
    /// the shot before are not in this picture.
    fn new_shot(
        &mut self,
        frame: &VideoFrame,
        frame_idx: usize,
        next_frame: &mut dyn FnMut() -> Result<Option<VideoFrame>>,
    ) -> Result<bool> {
        crate::base::frame::check_size(
            &self.job.input,
            (self.pipe.width, self.pipe.height),
            frame.size(),
        )?;
        let cut = match self.shots.take() {
            Some(mut shots) => {
                let cut = luma_sample(&frame.raw()?)
                    .and_then(|sample| self.judge_cut(&mut shots, sample, 0, next_frame));
                self.shots = Some(shots);
                cut?
            }
            None => false,
        };
        let at = self.job.start + frame_idx;
        let search = self
            .job
            .shot_search
            .clone()
            .filter(|_| self.shots.is_some());
        if frame_idx == 0 {
            // The opening shot of an edited video: when it ends within the stretch read ahead,
            // the opening search's samples reach into the shots after it, and the geometry it
            // found may be theirs; the opening shot then gets its own search like any other.
            // Read ahead only when the opening search saw such a cut (reading ahead holds
            // frames in memory and keeps the analysis waiting for the decoder).
            // (The opening search reads from the video's first frame: not with `--start`.)
            let soon = |c: usize| (c as f64) < SHOT_LOOKAHEAD_S * self.fps;
            let short = self.job.start == 0 && self.job.opening_cut.is_some_and(soon);
            if let Some(search) = search.filter(|_| short) {
                self.find_shot_geometry(frame, at, next_frame, search.as_ref(), true)?;
            }
            if self.shot_pipe.is_some() {
                self.restart_trackers();
            }
            return Ok(false);
        }
        if !cut {
            return Ok(false);
        }
        self.summary.cuts.push(at);
        let frozen = self
            .shots
            .as_ref()
            .map_or(0, ShotTracker::frozen_before_cut);
        let step = self.last_time_s.map(|t| frame.time_s - t);
        self.summary
            .stalls
            .extend(Stall::at_cut(at, frozen, step, self.fps));
        if let Some(search) = search {
            self.find_shot_geometry(frame, at, next_frame, search.as_ref(), false)?;
        }
        self.restart_trackers();
        Ok(true)
    }

    /// Whether `shots` takes a frame (its luma grid `sample`) for a cut, the frames after it
    /// being `pending[from..]` (a would-be cut is checked against them, read ahead as needed).
    fn judge_cut(
        &mut self,
        shots: &mut ShotTracker,
        sample: crate::lane::shot::LumaSample,
        from: usize,
        next_frame: &mut dyn FnMut() -> Result<Option<VideoFrame>>,
    ) -> Result<bool> {
        let mut failed = None;
        let cut = shots.update(sample, &mut |k| {
            self.sample_ahead(from + k, next_frame).unwrap_or_else(|e| {
                failed = Some(e);
                None
            })
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(cut),
        }
    }

    /// The luma grid of the `k`-th frame after the one being analysed (`pending[k]`), reading
    /// frames ahead into `pending` as needed; `None` past the end, or where reading failed (the
    /// error is reported once the frames before it are analysed).
    fn sample_ahead(
        &mut self,
        k: usize,
        next_frame: &mut dyn FnMut() -> Result<Option<VideoFrame>>,
    ) -> Result<Option<crate::lane::shot::LumaSample>> {
        while self.pending.len() <= k && self.deferred.is_none() && !self.ended {
            match next_frame() {
                Ok(Some(f)) => self.pending.push_back(f),
                Ok(None) => self.ended = true,
                Err(e) => self.deferred = Some(e),
            }
        }
        match self.pending.get(k) {
            Some(f) => Ok(Some(luma_sample(&f.raw()?)?)),
            None => Ok(None),
        }
    }

    /// The lane and pitch trackers as at the start of a video, for the current shot's geometry.
    fn restart_trackers(&mut self) {
        let shot_pipe = self.shot_pipe.clone();
        let pipe: &Pipeline = shot_pipe.as_deref().unwrap_or(self.pipe);
        self.tracker = lane_tracker(pipe, self.fps);
        self.pitch = pitch_tracker(pipe, self.fps);
    }

    /// Read the frames of the shot that begins with `first` (to the next cut, at most
    /// `SHOT_LOOKAHEAD_S`) into `pending`, and search a sample of them for the shot's
    /// geometry: the shot is analysed with the geometry found in it, or, where none is, with
    /// the run's (its lone lines then wait for a pair, `ShotTracker`). With `only_if_short`
    /// (the opening shot) nothing is searched unless the shot ends at a cut within the stretch.
    fn find_shot_geometry(
        &mut self,
        first: &VideoFrame,
        at: usize,
        next_frame: &mut dyn FnMut() -> Result<Option<VideoFrame>>,
        search: &ShotSearch,
        only_if_short: bool,
    ) -> Result<()> {
        let Some(mut probe) = self.shots.clone() else {
            return Ok(());
        };
        let (w, h) = first.size();
        let pixels = w.max(0) as usize * h.max(0) as usize;
        let frame_bytes = match first.raw()? {
            RawFrame::Yuv(_) => pixels * 3 / 2,
            RawFrame::Bgr(_) => pixels * 3,
        }
        .max(1);
        let most = ((SHOT_LOOKAHEAD_S * self.fps).ceil() as usize)
            .min(SHOT_LOOKAHEAD_BYTES / frame_bytes)
            .max(1);
        // The shot's frames after `first`: those read ahead already, then new ones.
        // Each frame is checked against the frames after it, as the frame loop checks them.
        let mut len = 0;
        let mut ends_at_cut = false;
        while len + 1 < most {
            let Some(sample) = self.sample_ahead(len, next_frame)? else {
                break;
            };
            ends_at_cut = self.judge_cut(&mut probe, sample, len + 1, next_frame)?;
            if ends_at_cut {
                break;
            }
            len += 1;
        }
        if only_if_short && !ends_at_cut {
            return Ok(());
        }
        let shot: Vec<&VideoFrame> = std::iter::once(first)
            .chain(self.pending.iter().take(len))
            .collect();
        // The shot's frames are consecutive from frame `at`.
        let samples: Vec<(&VideoFrame, f64)> =
            crate::base::stats::evenly_spaced(shot.len(), SHOT_SAMPLES)
                .into_iter()
                .map(|i| (shot[i], (at + i) as f64 / self.fps))
                .collect();
        let found = search(&samples)?;
        self.shot_pipe = match &found {
            Ok((ShotFound::Own(cfg), _)) => {
                let p = Pipeline::new((**cfg).clone(), self.pipe.camera(), w, h)?
                    .with_pixel_aspect(self.pipe.pixel_aspect());
                p.prepare_for_video()?;
                Some(Arc::new(p))
            }
            Ok((ShotFound::Run, _)) | Err(_) => None,
        };
        // A geometry found in the shot's own frames holds there, as the opening's does in the
        // opening, and so does the run's where the shot's frames agree with it; the run's on a
        // shot whose search found nothing is not known to.
        if let Some(shots) = self.shots.as_mut() {
            shots.set_pair_seen(found.is_ok());
        }
        self.summary.shot_geometry.push((
            at,
            found.map(|(kind, text)| ShotNote {
                own: matches!(kind, ShotFound::Own(_)),
                text,
            }),
        ));
        Ok(())
    }

    /// One frame: analysis, tracking, measurement; its telemetry record and, when rendering,
    /// what the renderer needs.
    fn analyse_frame(
        &mut self,
        decoded: VideoFrame,
        frame_idx: usize,
        cut: bool,
    ) -> Result<(FrameRecord, Option<RenderItem>)> {
        let shot_pipe = self.shot_pipe.clone();
        let pipe: &Pipeline = shot_pipe.as_deref().unwrap_or(self.pipe);
        let (pts, time_s) = (decoded.pts, decoded.time_s);
        // The tracker works in the view of the camera's pitch; the search in the fixed view.
        let before = self.pitch.as_ref().map(|t| t.pitch());
        let to_fixed = ViewMap::new(pipe.horizon(), before, true);
        let searched = self.tracker.next_search().1;
        let prior = searched.map(|lane| to_fixed.lane(lane));
        // The lane the tracker holds is, while it is searched around, that same lane: mapped
        // once.
        let expected = match self.tracker.expected() {
            Some(lane) if Some(lane) == searched => prior,
            held => held.map(|lane| to_fixed.lane(lane)),
        };
        // A frame the analysis converts whole (no band to sample) and the renderer draws on:
        // converted once, here.
        let decoded = if self.mode != RenderMode::None && !pipe.samples_bands(prior.is_some()) {
            decoded.converted()?
        } else {
            decoded
        };
        let analysis = pipe.analyze_tracked(decoded.raw()?, prior, expected)?;
        let t_track = Instant::now();
        let pitch = match (self.pitch.as_mut(), pipe.horizon()) {
            (Some(t), Some(h)) => Some(t.update(h.observe(&analysis.detection))),
            _ => None,
        };
        let mut seen = analysis.detection;
        // In a shot after a cut, a lone line waits until a frame has shown both.
        if let Some(shots) = self.shots.as_mut() {
            shots.admit(&mut seen);
        }
        let (to_pitch, back) = (
            ViewMap::new(pipe.horizon(), pitch, false),
            ViewMap::new(pipe.horizon(), pitch, true),
        );
        seen.left = seen.left.map(|l| to_pitch.line(l));
        seen.right = seen.right.map(|r| to_pitch.line(r));
        let out = self.tracker.update(&seen, pipe.persp.height);
        let track_ms = t_track.elapsed().as_secs_f64() * 1e3;
        let s = &mut self.summary;
        s.stages.warp.push(analysis.times.warp_ms);
        s.stages.threshold.push(analysis.times.threshold_ms);
        s.stages.search_fit.push(analysis.times.search_fit_ms);
        s.stages.track.push(track_ms);
        if let Some(n) = analysis.noise_smoothed {
            s.smoothed_noise.push(n);
        }
        if analysis.detection.left.is_none() || analysis.detection.right.is_none() {
            s.search_failed += 1;
        } else if !out.detected {
            s.rejected += 1;
        }
        let measure = (out.left.zip(out.right)).map(|(l, r)| pipe.measure(&l, &r));
        // What is drawn and recorded: the tracked lines in the fixed view.
        let (left, right) = (
            out.left.map(|l| back.line(l)),
            out.right.map(|r| back.line(r)),
        );
        let lane = left.zip(right);
        if lane.is_some() {
            s.frames_drawn += 1;
        }
        let frame = self.job.start + frame_idx;
        let rec = FrameRecord {
            frame,
            time_s,
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
            pitch_deg: pitch.map(|p| round3(p.to_degrees())),
            horizon_y: pitch
                .zip(pipe.horizon())
                .map(|(p, h)| (h.horizon_row(p) * 10.0).round() / 10.0),
            cut,
        };
        if self.mode == RenderMode::None {
            return Ok((rec, None));
        }
        let status = out.status;
        let out = TrackOutput { left, right, ..out };
        let diag = (self.mode == RenderMode::Diagnostic).then(|| {
            let fixed =
                |v: Vec<Poly2>| -> Vec<Poly2> { v.into_iter().map(|p| back.line(p)).collect() };
            let (kept_left, kept_right) = self.tracker.kept();
            let (kept_left, kept_right) = (fixed(kept_left), fixed(kept_right));
            Box::new(DiagInfo {
                kept_left,
                kept_right,
                analysis,
                track: out,
                frame,
            })
        });
        let item = RenderItem {
            raw: decoded,
            pts,
            lane,
            measure,
            status,
            diag,
            shot_pipe,
        };
        Ok((rec, Some(item)))
    }
}

/// The longest stretch of a shot read ahead to find its geometry, seconds: 5 (the opening
/// search's window is 30 s, but a compilation's shots are often shorter, and every frame read
/// ahead is kept in memory, the analysis waiting, until the search is done). 24 samples over
/// 5 s are 5 m of road apart at motorway speed: a median over them is the shot's.
const SHOT_LOOKAHEAD_S: f64 = 5.0;

/// The most memory the frames read ahead may take: 256 MiB (5 s of 720p at 25 fps is 173 MB;
/// of 1080p, 82 frames, 3.3 s at 25 fps).
const SHOT_LOOKAHEAD_BYTES: usize = 256 << 20;

/// Frames of a shot searched for its geometry: 24, as at the opening.
const SHOT_SAMPLES: usize = 24;

/// The lane tracker of a run of `pipe` on a video of `fps` frames per second, as at its start.
fn lane_tracker(pipe: &Pipeline, fps: f64) -> LaneTracker {
    LaneTracker::new(
        pipe.cfg.tracking,
        &TrackScene {
            height: pipe.persp.height,
            width: pipe.persp.width,
            fps,
            default_width: pipe.default_lane_width_px(),
            units: pipe.cfg.units,
            crossing_px: pipe.cfg.confidence.crossing_distance_m() / pipe.cfg.units.xm_per_px,
        },
    )
}

/// The pitch filter, when `tracking.online_pitch` is on and the quad has a horizon, as at the
/// start of a run.
fn pitch_tracker(pipe: &Pipeline, fps: f64) -> Option<PitchTracker> {
    pipe.horizon()
        .filter(|_| pipe.cfg.tracking.online_pitch)
        .map(|h| PitchTracker::new(&pipe.cfg.tracking, h.base_pitch(), fps))
}

/// A confidence rounded to 3 decimals for telemetry.
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}
