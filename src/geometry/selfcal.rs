//! Road geometry found in a video itself: frames sampled over its opening seconds, each frame's
//! ego-lane lines and vanishing point (`autoperspective`), combined into the perspective quad,
//! the hood's edge and metres per pixel, with how sure the estimate is.
//!
//! Why it works on any dashcam: the vanishing point of the lane's two lines gives the horizon
//! and the camera's yaw; the lines' positions at the bottom row give the lane's width in pixels,
//! and with the lane-width prior the camera height; the along-road scale then follows from the
//! focal length (the camera file's, or an assumed field of view), cross-checked with dashes.
//! Frames are combined by medians, one vote per view (the frames of a stop are one), so a few
//! frames with a wrong line (a car ahead, a bend, a lane change) do not move the result.

use crate::base::camera::Camera;
use crate::base::config::Config;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::geometry::autoperspective::{self as ap, Estimate, FrameOutcome, LaneLines, Options};
use crate::geometry::sample::{
    midpoints, read_frames_at, record_budget_shared, recordable_window_s, window_samples,
    ShotWatch, RECORD_BUDGET_BYTES,
};
use crate::geometry::work_scale::WorkScale;
use crate::lane::undistort::Undistorter;
use crate::video::VideoSource;

/// Options of the search. `Default` gives the values documented on each field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfCalOptions {
    /// The estimate's options (lane width, field of view, quad rows, straightness limit).
    /// Default: [`Options::default`], with `max_angle_deg` 3 and `fit_from` 0.45: lines are
    /// fitted on the near range, where a bend is still nearly straight (so frames on a long bend
    /// count), and the median over frames absorbs the slight bends that 3 degrees lets in.
    pub estimate: Options,
    /// Frames sampled. Default 24: a median over many frames withstands a third of them wrong,
    /// at tens of milliseconds each.
    pub samples: usize,
    /// The opening seconds the frames are sampled from. Default 30 s: long enough to see past
    /// a winding stretch or a truck ahead, short enough that the camera has not moved and that
    /// decoding it in order stays cheap. Shortened, down to 5 s
    /// ([`crate::geometry::sample::MIN_WINDOW_S`]), where the frames of 30 s would not fit the
    /// memory kept for the run ([`recordable_window_s`]: 1080p).
    pub window_s: f64,
    /// Fewest usable frames for a geometry. Default 3: one frame can be wrong in a way the
    /// checks do not see; with three the median needs two wrong ones.
    pub min_frames: usize,
    /// Largest spread of the frames' horizon rows (median absolute deviation), as a share of
    /// the frame's height. Default 0.04: a camera fixed to a car has one horizon, moved by the
    /// body's pitch (a degree or so: 1-2% of the height at dashcam focal lengths); frames that
    /// disagree by more found their lines in noise, not on the road (the shared clips: 0.3-1.3%).
    pub max_horizon_spread: f64,
    /// Searches running at the same time in this process (`lanes batch --jobs`), which share
    /// the memory for kept frames ([`record_budget_shared`]). Default 1.
    pub searches_at_once: usize,
    /// Rows frames are analysed at: taller frames are shrunk (an area average), shorter ones
    /// enlarged (bilinear), and the geometry found is scaled back. Default 480: the geometry is
    /// a median over frames of lines fitted through hundreds of marking pixels, so a pixel of
    /// 0.2% of the height is finer than the frames' own horizon spread (0.3-1.3% on the shared
    /// clips), while the cost grows with the pixel count (a 1080p frame has 5x the pixels).
    /// Shorter frames are enlarged because the search's sizes in pixels (the ridge detector's
    /// 2-px floor, the Hough segments' floors) were chosen at this height: at 360 rows far
    /// markings fall under them. The LA clip scaled to 640x360 (crf 26) found its lines at
    /// the bottom row 32% too far apart and both lines on 41% of its frames; enlarged, 61%.
    pub work_rows: i32,
    /// `tracking.cut_ratio` when cuts are followed (`tracking.restart_at_cuts`): the opening
    /// search then keeps to the opening shot of an edited video (`opening_geometry`).
    /// Default `None`: every sample counts.
    pub cut_ratio: Option<f64>,
}

impl Default for SelfCalOptions {
    fn default() -> Self {
        Self {
            estimate: Options {
                max_angle_deg: 3.0,
                fit_from: 0.45,
                ..Options::default()
            },
            samples: 24,
            window_s: 30.0,
            min_frames: 3,
            max_horizon_spread: 0.04,
            searches_at_once: 1,
            work_rows: 480,
            cut_ratio: None,
        }
    }
}

/// The geometry found, and how it was found.
#[derive(Debug, Clone)]
pub struct FoundGeometry {
    pub estimate: Estimate,
    pub frames_sampled: usize,
    pub frames_used: usize,
    /// Median absolute deviation of the frames' horizon rows, pixels.
    pub horizon_spread_px: f64,
    /// The quad's bottom row, pixels (above the hood when one was seen).
    pub bottom_row: f64,
    /// Whether the markings end above the frame's bottom (a hood, a dashboard).
    pub hood: bool,
    /// Rows of the black bar at the bottom of every sampled frame (a dashcam's info bar), or 0.
    pub bar_rows: u32,
    /// Warnings about the scale (sources that disagree).
    pub warnings: Vec<String>,
    /// Frame size the geometry is for.
    pub size: (i32, i32),
    /// Time spent, seconds.
    pub seconds: f64,
    /// The video's first frame among those the geometry was found in (0 for frames given as
    /// such): a video that opens off the road (a car park) shows no lane before it.
    pub first_frame_used: usize,
    /// `Some(window_s)` when the opening window showed too few usable frames and the search
    /// went on into later ones.
    pub past_opening_s: Option<f64>,
    /// The first cut among the frames the search decoded (an edited video; `None` when there
    /// is none, or cuts were not watched for): where the opening shot ends.
    pub first_cut: Option<usize>,
}

impl FoundGeometry {
    /// `base` with this geometry's perspective quad and units (the base's bird's-eye scales kept).
    pub fn apply(&self, base: &Config) -> Config {
        let mut c = base.clone();
        c.perspective = crate::base::config::PerspectiveConfig {
            birdseye_scale_x: base.perspective.birdseye_scale_x,
            birdseye_scale_y: base.perspective.birdseye_scale_y,
            ..self.estimate.perspective
        };
        c.units = self.estimate.units;
        c
    }

    /// This geometry, found at a working size, in the video's pixels. The bird's-eye view and
    /// the units do not depend on the frame size; the quad, the lines and the rows do.
    pub fn scaled_back(mut self, work: &WorkScale) -> Self {
        if work.is_identity() {
            return self;
        }
        let e = &mut self.estimate;
        for c in &mut e.perspective.src {
            let (x, y) = work.point_back((c[0], c[1]));
            *c = [x, y];
        }
        e.lines.vp = work.point_back(e.lines.vp);
        e.picture_width = e
            .picture_width
            .map(|pw| work.point_back((pw, 0.0)).0 - work.point_back((0.0, 0.0)).0);
        e.lines.left = work.line_back(e.lines.left);
        e.lines.right = work.line_back(e.lines.right);
        self.bottom_row = work.point_back((0.0, self.bottom_row)).1;
        self.horizon_spread_px = work.point_back((0.0, self.horizon_spread_px)).1;
        let bar = work.point_back((0.0, self.bar_rows as f64)).1;
        self.bar_rows = bar.round() as u32;
        self.size = work.video_size(self.size);
        self
    }

    /// How far a view of the road lies from this geometry, when it agrees within
    /// [`SAME_CAMERA`]: the view's vanishing point `vp` and its lane's width in pixels at this
    /// geometry's bottom row (video pixels); the horizon's distance as a share of the height,
    /// the vanishing point's column's as a share of the width, and the width's as a share of
    /// this geometry's.
    pub fn agrees_with(&self, vp: (f64, f64), width: f64) -> Option<(f64, f64, f64)> {
        let (w, h) = (self.size.0 as f64, self.size.1 as f64);
        let lines = &self.estimate.lines;
        let own = lines.right.x_at(self.bottom_row) - lines.left.x_at(self.bottom_row);
        let d = (
            (vp.1 - lines.vp.1).abs() / h,
            (vp.0 - lines.vp.0).abs() / w,
            (width / own - 1.0).abs(),
        );
        let (th, tx, tw) = SAME_CAMERA;
        (d.0 <= th && d.1 <= tx && d.2 <= tw).then_some(d)
    }

    /// How sure: "high" with at least 8 frames agreeing on the horizon within 1% of the
    /// height, "medium" with 5 within 2%, else "low".
    pub fn confidence(&self) -> &'static str {
        let h = self.size.1 as f64;
        if self.frames_used >= 8 && self.horizon_spread_px <= 0.01 * h {
            "high"
        } else if self.frames_used >= 5 && self.horizon_spread_px <= 0.02 * h {
            "medium"
        } else {
            "low"
        }
    }

    /// `describe` with the warnings after it: what a batch note and a report show.
    pub fn note(&self) -> String {
        std::iter::once(self.describe())
            .chain(self.warnings.iter().map(|w| format!("warning: {w}")))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// One line for the user: what was found and how sure.
    pub fn describe(&self) -> String {
        let e = &self.estimate;
        let (w, h) = self.size;
        let g = e
            .ground
            .map(|g| {
                format!(
                    ", camera {:.2} m high, pitch {:.1} deg, yaw {:.1} deg",
                    g.camera_height_m, g.pitch_deg, g.yaw_deg
                )
            })
            .unwrap_or_default();
        let past = self
            .past_opening_s
            .map(|s| {
                format!(
                    "; too few usable frames in the opening {s:.0} s, found from frame {} on",
                    self.first_frame_used
                )
            })
            .unwrap_or_default();
        // Frames of one view (a stop) were one vote.
        let views = match e.lines.views.len() {
            n if n >= self.frames_used => String::new(),
            1 => ", all one view".to_string(),
            n => format!(", {n} distinct views"),
        };
        format!(
            "geometry found in {} of {} sampled frames ({w}x{h}{views}, {} confidence, {:.2} s{past}): horizon at row {:.1} (spread {:.1} px), vanishing point x {:.1}, road up to row {:.0}{}{g}; {:.4} m/px across, {:.4} m/px along ({}{})",
            self.frames_used,
            self.frames_sampled,
            self.confidence(),
            self.seconds,
            e.lines.vp.1,
            self.horizon_spread_px,
            e.lines.vp.0,
            self.bottom_row,
            match self.bar_rows {
                0 if self.hood => " (hood below)".to_string(),
                0 => String::new(),
                b => format!(" (a {b}-row black bar below)"),
            },
            e.units.xm_per_px,
            e.units.ym_per_px,
            e.ym_from,
            e.focal_note().map(|n| format!(", {n}")).unwrap_or_default()
        )
    }
}

/// How the search analyses a video's frames, set up once per video: the camera's undistortion
/// when a camera file was given, the working size (`WorkScale`) and the camera matrix at it.
pub struct FrameAnalysis {
    undistorter: Option<Undistorter>,
    pub work: WorkScale,
    /// The camera matrix at the working size, when a camera file was given.
    pub k: Option<[[f64; 3]; 3]>,
}

impl FrameAnalysis {
    /// For frames of `size` (the camera's, when one is given), analysed at `work_rows` rows.
    pub fn new(size: (i32, i32), camera: Option<&Camera>, work_rows: i32) -> Result<Self> {
        let work = WorkScale::for_size(size, work_rows);
        Ok(Self {
            undistorter: camera.map(Undistorter::new).transpose()?,
            k: camera.map(|c| work.camera_matrix(&c.k)),
            work,
        })
    }

    /// Each decoded frame's lines and checks, frames in parallel (each is independent): each
    /// undistorted when there is a camera, brought to the working size (`WorkScale::resize`)
    /// and analysed; frames with their time in the video (seconds).
    pub fn analyse(
        &self,
        frames: Vec<(BgrFrame, Option<f64>)>,
        opts: &SelfCalOptions,
    ) -> Result<Vec<FrameOutcome>> {
        use rayon::prelude::*;
        frames
            .into_par_iter()
            .map(|(f, at_s)| {
                let f = match &self.undistorter {
                    Some(u) => u.undistort(&f)?,
                    None => f,
                };
                let f = self.work.resize(f)?;
                ap::analyze_frame(&f, at_s, self.k.as_ref(), &opts.estimate)
            })
            .collect()
    }

    /// The frames' `outcomes` (analysed by `analyse`) combined into a geometry (`geometry_from`
    /// at the working size), scaled back to the video's pixels, with the time since `t0`.
    pub fn combine(
        &self,
        outcomes: &[FrameOutcome],
        opts: &SelfCalOptions,
        t0: std::time::Instant,
    ) -> Result<std::result::Result<FoundGeometry, String>> {
        let mut r = geometry_from(outcomes, self.k.as_ref(), self.work.size, opts)?
            .map(|g| g.scaled_back(&self.work));
        if let Ok(g) = &mut r {
            g.seconds = t0.elapsed().as_secs_f64();
        }
        Ok(r)
    }
}

/// Combine the frames' outcomes into the geometry of a `size` frame.
pub fn geometry_from(
    outcomes: &[FrameOutcome],
    k: Option<&[[f64; 3]; 3]>,
    (w, h): (i32, i32),
    opts: &SelfCalOptions,
) -> Result<std::result::Result<FoundGeometry, String>> {
    let usable: Vec<&LaneLines> = outcomes
        .iter()
        .filter(|o| o.usable())
        .filter_map(|o| o.lines.as_ref())
        .collect();
    if usable.len() < opts.min_frames {
        let reasons =
            ap::report::problem_counts(outcomes.iter().filter_map(|o| o.problem.as_deref()));
        return Ok(Err(format!(
            "no road geometry found: {} of {} sampled frames show the ego lane's two lines ahead (need {}{reasons})",
            usable.len(),
            outcomes.len(),
            opts.min_frames,
        )));
    }
    // The hood: markings that end above the bottom of the frame.
    let mut eopts = opts.estimate;
    // A pillarboxed video: the field of view spans the picture between its black side bars.
    eopts.picture_width = ap::picture_width(outcomes.iter().map(|o| o.side_bars), w);
    // A dashcam's info bar at the bottom: the picture ends above it.
    let bar = ap::bottom_bar_rows(outcomes.iter().map(|o| o.bottom_bar), h);
    let bottom = (h - bar as i32) as f64;
    let rows = usable.iter().map(|f| {
        let (l, r) = (&f.left.pixels, &f.right.pixels);
        l.iter().chain(r).map(|p| p.1)
    });
    let low = ap::bars::marking_bottom(rows, bottom).unwrap_or(bottom);
    let hood = low < 0.93 * bottom;
    if hood || bar > 0 {
        eopts.bottom = ap::bars::quad_bottom(eopts.bottom, low, h);
    }
    // Each frame's lines meet within `max_yaw_deg` of the camera's axis (`analyze_frame`), so
    // their medians do too.
    let est = ap::estimate(&usable, k, w, h, &eopts)?;
    // Frames that disagree with the others' medians (`ap::disagrees`) were left out.
    let used = usable.len() - est.lines.outliers.len();
    if used < opts.min_frames {
        return Ok(Err(format!(
            "no road geometry found: {used} of {} sampled frames show the ego lane's two lines ahead (need {}; {} more disagree with the others)",
            outcomes.len(),
            opts.min_frames,
            est.lines.outliers.len()
        )));
    }
    // Frames of one view (a stop, a video of a still picture, one still given thrice) are one
    // frame's evidence: a geometry needs as many distinct views as frames.
    let views = est.lines.views.len();
    if views < opts.min_frames {
        return Ok(Err(format!(
            "no road geometry found: the {used} usable of {} sampled frames show {} (need {} distinct views: frames of one stop or one picture are one frame's evidence)",
            outcomes.len(),
            if views == 1 { "one view".to_string() } else { format!("{views} distinct views") },
            opts.min_frames
        )));
    }
    if let Some(why) = ap::implausible_lines(&est, eopts.lane_width_m) {
        return Ok(Err(format!(
            "no road geometry found: in the {used} usable of {} sampled frames, {why}",
            outcomes.len()
        )));
    }
    // The spread is taken over every usable frame, outliers included: lines found in noise
    // scatter, and leaving out the worst must not make them look like one horizon.
    let rows: Vec<f64> = usable.iter().map(|f| f.vp.1).collect();
    let med = crate::base::stats::median(&rows).unwrap_or(f64::NAN);
    let dev: Vec<f64> = rows.iter().map(|r| (r - med).abs()).collect();
    let spread = crate::base::stats::median(&dev).unwrap_or(f64::NAN);
    if spread.is_nan() || spread > opts.max_horizon_spread * h as f64 {
        return Ok(Err(format!(
            "no road geometry found: the horizons of the {} usable sampled frames disagree (spread {:.1} px, over {:.0}% of the {h}-row height): lines found in noise or clutter, not on the road",
            usable.len(),
            spread,
            opts.max_horizon_spread * 100.0
        )));
    }
    let warnings = ap::scale_warnings(&est);
    let mut g = FoundGeometry {
        bottom_row: est.perspective.src[2][1],
        estimate: est,
        frames_sampled: outcomes.len(),
        frames_used: used,
        horizon_spread_px: spread,
        hood,
        bar_rows: bar,
        warnings,
        size: (w, h),
        seconds: 0.0,
        first_frame_used: 0,
        past_opening_s: None,
        first_cut: None,
    };
    if g.confidence() == "low" {
        g.warnings.push(format!(
            "the geometry is of low confidence ({} of {} sampled frames usable, their horizons {:.1}% of the height apart): check the output's first frames, or save the geometry of a clearer drive of this camera (--save-geometry) and give it with --config",
            g.frames_used,
            g.frames_sampled,
            100.0 * spread / h as f64
        ));
    }
    Ok(Ok(g))
}

/// Sample the opening seconds of a video just opened and find its geometry. Frames are
/// undistorted with the camera when one is given (its size must match the video's). `src` is
/// left at its first frame: the frames the search decoded are kept (up to [`record_budget_shared`])
/// and handed out again, so the run that follows does not decode them twice; past the budget
/// (a long window of large frames) the file is opened again.
pub fn find_on(
    src: &mut VideoSource,
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
) -> Result<std::result::Result<FoundGeometry, String>> {
    let t0 = std::time::Instant::now();
    let path = src.path().to_path_buf();
    let (w, h) = (src.width, src.height);
    if let Some(c) = camera {
        crate::base::frame::check_size(&path, (c.width, c.height), (w, h))?;
    }
    let fa = FrameAnalysis::new((w, h), camera, opts.work_rows)?;
    let budget = record_budget_shared(opts.searches_at_once);
    // Sized by the full budget, not this machine's share of it, so that the frames sampled and
    // the geometry found depend on the video alone (a smaller share only costs a second decoding).
    let window_s = recordable_window_s(
        opts.window_s,
        RECORD_BUDGET_BYTES,
        src.frame_bytes(),
        src.fps,
    );
    let search_windows =
        ((SEARCH_WINDOWS as f64 * opts.window_s / window_s).ceil() as usize).max(1);
    // The frames' B channel from the ridge cue's table (made once, filled with the colours
    // the frames show; the run's band frames read the yellow cue's too): a lookup per pixel in
    // place of the Lab formula, the same values.
    crate::lane::threshold::prepare(ap::RIDGE_CUE)?;
    src.record(budget);
    // Frames at `wanted` (ascending, from `pos` on) read, undistorted, resized and analysed in
    // chunks; stops after a chunk that brings the usable frames' distinct views to `enough`
    // (frames of a car waiting at a light are one view). Whether the video ended before the last.
    let views = ap::usable_views;
    let mut outcomes = Vec::new();
    let mut indices = Vec::new();
    let mut watch = opts.cut_ratio.map(ShotWatch::new);
    let round = |src: &mut VideoSource,
                 pos: &mut usize,
                 wanted: &[usize],
                 enough: usize,
                 outcomes: &mut Vec<FrameOutcome>,
                 indices: &mut Vec<usize>,
                 mut watch: Option<&mut ShotWatch>| {
        for chunk in wanted.chunks(SAMPLE_CHUNK) {
            let got = read_frames_at(src, *pos, chunk, false, watch.as_deref_mut())?;
            let n = got.len();
            if let Some(last) = got.last() {
                *pos = last.index + 1;
            }
            indices.extend(got.iter().map(|s| s.index));
            let frames = got.into_iter().map(|s| (s.frame, s.at_s)).collect();
            outcomes.extend(fa.analyse(frames, opts)?);
            if n < chunk.len() {
                return Ok::<bool, Error>(true);
            }
            // Past a cut the samples show other shots: the frame loop searches the opening
            // shot on its own frames (`opening_geometry`), so enough for a run's geometry ends
            // the search there.
            let cut_seen = watch
                .as_deref()
                .is_some_and(|w| !w.blind && !w.cuts.is_empty());
            if views(outcomes) >= enough || (cut_seen && views(outcomes) >= opts.min_frames) {
                break;
            }
        }
        Ok(false)
    };
    // In chunks of consecutive samples, decoded in order; enough agreeing frames end the
    // search early (a clean clip is calibrated from its first seconds). A window that shows
    // too few (a drive that opens in a car park, at a red light behind a truck) is followed by
    // the next, up to `SEARCH_WINDOWS` of the default length (2 minutes).
    let mut pos = 0usize;
    let mut windows = 0;
    let mut first = Vec::new();
    for k in 0..search_windows {
        let wanted = window_samples(k, src.announced_frames, src.fps, window_s, opts.samples);
        if wanted.is_empty() {
            break;
        }
        windows = k + 1;
        if k == 0 {
            first.clone_from(&wanted);
        }
        let ended = round(
            src,
            &mut pos,
            &wanted,
            ENOUGH_FRAMES,
            &mut outcomes,
            &mut indices,
            watch.as_mut(),
        )?;
        if ended || views(&outcomes) >= opts.min_frames {
            break;
        }
    }
    // A video that ends inside the first window with too few usable frames (a short clip seen
    // in glimpses: a truck ahead, a lane change, wipers) gets a second round of samples between
    // the first's before it is refused; its frames are read again from the recording.
    if windows == 1 && views(&outcomes) < opts.min_frames && !first.is_empty() {
        let end = pos.max(src.announced_frames.max(0) as usize);
        let mut between = midpoints(&first, end);
        between.retain(|i| !first.contains(i));
        if !src.rewind() {
            *src = VideoSource::open(&path)?;
        }
        src.record(budget);
        let mut from = 0;
        // The first pass watched these frames already.
        round(
            src,
            &mut from,
            &between,
            usize::MAX,
            &mut outcomes,
            &mut indices,
            None,
        )?;
    }
    if !src.rewind() {
        *src = VideoSource::open(&path)?;
    }
    let first_cut = watch
        .filter(|w| !w.blind)
        .and_then(|w| w.cuts.first().copied());
    let mut r = opening_geometry(
        &outcomes,
        &indices,
        first_cut,
        fa.k.as_ref(),
        fa.work.size,
        opts,
    )?
    .map(|g| g.scaled_back(&fa.work));
    if let Ok(g) = &mut r {
        g.seconds = t0.elapsed().as_secs_f64();
        g.first_frame_used = outcomes
            .iter()
            .zip(&indices)
            .filter(|(o, _)| o.usable())
            .map(|(_, i)| *i)
            .min()
            .unwrap_or(0);
        g.past_opening_s = (windows > 1).then_some(window_s);
        g.first_cut = first_cut;
    }
    Ok(r)
}

/// How closely two views of a road must agree to be taken as one camera's
/// ([`FoundGeometry::agrees_with`]: a shot's first samples and the run's geometry,
/// `geometry::resolve`):
/// - horizon within 1.5% of the height: a camera's frames lie within 0.3-1.3% of their median
///   (the shared clips), a zoomed replay or another mount moves it further;
/// - vanishing point within 3% of the width: the camera's yaw, moved a degree or two by the
///   car's own heading;
/// - lane width at the quad's bottom row within 10%: lanes differ by up to 7% between roads
///   (3.5-3.75 m), a zoom or another camera changes it more.
pub const SAME_CAMERA: (f64, f64, f64) = (0.015, 0.03, 0.10);

/// Windows of `window_s` searched at most (2 minutes at the default 30 s) before a video is
/// refused: a drive may open with a minute in a car park, but a clip that shows no lane in
/// two minutes is not a road drive the search can use.
const SEARCH_WINDOWS: usize = 4;

/// Samples analysed at a time (in parallel), between checks for enough agreeing frames.
pub(crate) const SAMPLE_CHUNK: usize = 8;

/// Usable frames after which no further round is sampled: eight frames that agree make a
/// "high" confidence estimate.
pub(crate) const ENOUGH_FRAMES: usize = 8;

/// The opening geometry from the opening search's frames (`outcomes` of frames `indices`,
/// analysed at `size`). With a cut at `first_cut` (an edited video), the samples after it are
/// other shots, perhaps of other cameras: the geometry is the opening shot's, from the samples
/// before the cut, when they give one. When they do not (a short opening shot: the frame loop
/// then searches it on its own frames), all samples are combined, and when they give none
/// (two cameras whose horizons disagree), the samples after the cut. Without a cut: all
/// samples, as always.
pub fn opening_geometry(
    outcomes: &[FrameOutcome],
    indices: &[usize],
    first_cut: Option<usize>,
    k: Option<&[[f64; 3]; 3]>,
    size: (i32, i32),
    opts: &SelfCalOptions,
) -> Result<std::result::Result<FoundGeometry, String>> {
    let Some(cut) = first_cut else {
        return geometry_from(outcomes, k, size, opts);
    };
    let part = |before: bool| -> Vec<FrameOutcome> {
        outcomes
            .iter()
            .zip(indices)
            .filter(|(_, i)| (**i < cut) == before)
            .map(|(o, _)| o.clone())
            .collect()
    };
    if let Ok(g) = geometry_from(&part(true), k, size, opts)? {
        return Ok(Ok(g));
    }
    let all = geometry_from(outcomes, k, size, opts)?;
    if all.is_ok() {
        return Ok(all);
    }
    match geometry_from(&part(false), k, size, opts)? {
        Ok(g) => Ok(Ok(g)),
        Err(_) => Ok(all),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_geometry_found_at_the_working_size_is_scaled_back_to_the_video() {
        let s = WorkScale::for_size((1280, 720), 480);
        let line = ap::lines::ImageLine { m: -1.3, c: 700.0 };
        let (y, x) = (300.0, line.x_at(300.0));
        let mut g = found_for_test(line);
        g.estimate.perspective.src[2] = [x, y];
        g.bottom_row = y;
        let r = g.scaled_back(&s);
        let (xv, yv) = (x / s.sx, y / s.sy);
        assert!((r.estimate.lines.left.x_at(yv) - xv).abs() < 1e-9);
        assert!((r.estimate.perspective.src[2][0] - xv).abs() < 1e-9);
        assert!((r.estimate.perspective.src[2][1] - yv).abs() < 1e-9);
        assert!((r.bottom_row - yv).abs() < 1e-9);
        assert!((r.estimate.lines.vp.1 - 200.0 / s.sy).abs() < 1e-9);
        assert!((r.horizon_spread_px - 2.0 / s.sy).abs() < 1e-9);
        assert_eq!(r.size, (1280, 720));
    }

    /// A found geometry at the 853x480 working size of a 1280x720 video, both lines `line`.
    fn found_for_test(line: ap::lines::ImageLine) -> FoundGeometry {
        let vp = (line.x_at(200.0), 200.0);
        let estimate = Estimate {
            perspective: crate::base::config::PerspectiveConfig::default(),
            units: crate::base::config::UnitsConfig::default(),
            lines: ap::CombinedLines {
                vp,
                left: line,
                right: line,
                views: (0..8).map(|i| vec![i]).collect(),
                outliers: Vec::new(),
            },
            lane_width_px: 700.0,
            ground: None,
            focal: crate::base::camera::Focal::AssumedFov,
            picture_width: None,
            dashes: None,
            ym_from: "geometry",
        };
        FoundGeometry {
            estimate,
            frames_sampled: 8,
            frames_used: 8,
            horizon_spread_px: 2.0,
            bottom_row: 470.0,
            hood: false,
            bar_rows: 0,
            warnings: Vec::new(),
            size: (853, 480),
            seconds: 0.0,
            first_frame_used: 0,
            past_opening_s: None,
            first_cut: None,
        }
    }
}
