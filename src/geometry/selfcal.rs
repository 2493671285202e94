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
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::geometry::autoperspective::{self as ap, FrameOutcome, LaneLines};
pub use crate::geometry::found::{FoundGeometry, SelfCalOptions, SAME_CAMERA};
use crate::geometry::sample::{
    evenly_spaced, midpoints, read_frames_at, record_budget_shared, recordable_window_s,
    window_samples, ShotWatch, RECORD_BUDGET_BYTES,
};
use crate::geometry::work_scale::WorkScale;
use crate::lane::undistort::Undistorter;
use crate::video::VideoSource;

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
    // A dashcam's info bar at the bottom, a hood: the quad ends above them.
    let end = ap::bars::road_end(
        eopts.bottom,
        outcomes.iter().map(|o| o.bottom_bar),
        || usable.iter().map(|f| f.marking_rows()),
        h,
    );
    let (bar, hood) = (end.bar, end.hood);
    eopts.bottom = end.bottom;
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
    // The camera height and pitch as on square pixels (an anamorphic video's pixel shape).
    let mut opts = *opts;
    opts.estimate.pixel_aspect = crate::video::pixel_aspect(src.sample_aspect);
    let opts = &opts;
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
                 seek: bool,
                 mut watch: Option<&mut ShotWatch>| {
        for chunk in wanted.chunks(SAMPLE_CHUNK) {
            let got = read_frames_at(src, *pos, chunk, seek, watch.as_deref_mut())?;
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
            // (The frames the watch has not judged yet are judged with those seen so far.)
            let cut_seen = watch.as_deref().is_some_and(|w| {
                let mut seen = w.clone();
                seen.finish();
                !seen.blind && !seen.cuts.is_empty()
            });
            if views(outcomes) >= enough || (cut_seen && views(outcomes) >= opts.min_frames) {
                break;
            }
        }
        Ok(false)
    };
    // In chunks of consecutive samples, decoded in order; enough agreeing frames end the
    // search early (a clean clip is calibrated from its first seconds). A window that shows
    // too few (a drive that opens in a car park, at a red light behind a truck) is followed by
    // the next, up to `SEARCH_WINDOWS` of the default length (2 minutes), then the rest of a
    // longer video.
    let mut pos = 0usize;
    let mut windows = 0;
    let mut first = Vec::new();
    let mut ended = false;
    for k in 0..search_windows {
        let wanted = window_samples(k, src.announced_frames, src.fps, window_s, opts.samples);
        if wanted.is_empty() {
            break;
        }
        windows = k + 1;
        if k == 0 {
            first.clone_from(&wanted);
        }
        ended = round(
            src,
            &mut pos,
            &wanted,
            ENOUGH_FRAMES,
            &mut outcomes,
            &mut indices,
            false,
            watch.as_mut(),
        )?;
        if ended || views(&outcomes) >= opts.min_frames {
            break;
        }
    }
    // A long drive whose first windows show too few usable frames (minutes in town, a garage,
    // a traffic jam behind a truck) is sampled over the rest of it, each sample reached by
    // seeking: a geometry found there holds for the whole drive (one camera), and a video is
    // refused only when none of it shows the lane. Cuts are not watched past a seek.
    let searched = windows * (window_s * src.fps).round().max(1.0) as usize;
    let announced = src.announced_frames.max(0) as usize;
    let rest_sampled = !ended
        && windows == search_windows
        && views(&outcomes) < opts.min_frames
        && announced > searched;
    if rest_sampled {
        let rest: Vec<usize> = evenly_spaced(announced - searched, opts.samples)
            .into_iter()
            .map(|i| i + searched)
            .collect();
        round(
            src,
            &mut pos,
            &rest,
            ENOUGH_FRAMES,
            &mut outcomes,
            &mut indices,
            true,
            None,
        )?;
    }
    let first_cut = watch
        .map(|mut w| {
            w.finish();
            w
        })
        .filter(|w| !w.blind)
        .and_then(|w| w.cuts.first().copied());
    let geometry_of = |outcomes: &[FrameOutcome], indices: &[usize]| {
        opening_geometry(
            outcomes,
            indices,
            first_cut,
            fa.k.as_ref(),
            fa.work.size,
            opts,
        )
    };
    // A geometry the first window's samples give from fewer than `ENOUGH_FRAMES` distinct
    // views (of medium or low confidence) rests on a few votes, and a median of a few frames
    // moves by a frame's own pitch (a hard clip re-encoded found its horizon 1.5% of the
    // height away, and lost a tenth of its frames with both lines): it is firmed up with a
    // second round of samples between the first's, and the frames of both rounds combined.
    // Where they give none, the first round's holds (the second round only adds votes: a
    // video that the first refused is not given more chances for its clutter to pass). Not
    // where a cut was seen: an edited video's opening shot has its own rules (`opening_geometry`).
    let few = views(&outcomes);
    let first_round = if windows == 1
        && first_cut.is_none()
        && !first.is_empty()
        && (opts.min_frames..ENOUGH_FRAMES).contains(&few)
    {
        Some(geometry_of(&outcomes, &indices)?)
    } else {
        None
    };
    let firm_up = matches!(first_round, Some(Ok(_)));
    // A video that ends inside the first window with too few usable frames (a short clip seen
    // in glimpses: a truck ahead, a lane change, wipers) gets a second round of samples between
    // the first's before it is refused; its frames are read again from the recording.
    if windows == 1 && (few < opts.min_frames || firm_up) && !first.is_empty() {
        // Firming up stays within the first window (no midpoint after its last sample: a long
        // video is not decoded further).
        let end = if firm_up {
            0
        } else {
            pos.max(src.announced_frames.max(0) as usize)
        };
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
            false,
            None,
        )?;
    }
    if !src.rewind() {
        *src = VideoSource::open(&path)?;
    }
    // The first round's result stands where no second round ran, and where both rounds
    // together give none.
    let mut r = match first_round {
        Some(Ok(g)) => Ok(geometry_of(&outcomes, &indices)?.unwrap_or(g)),
        Some(Err(why)) => Err(why),
        None => geometry_of(&outcomes, &indices)?,
    }
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
        g.past_opening_s = if rest_sampled {
            Some(windows as f64 * window_s)
        } else {
            (windows > 1).then(|| (windows - 1) as f64 * window_s)
        };
        g.first_cut = first_cut;
    }
    // A stream that announces no length (a raw H.264 file) cannot be sampled past the windows
    // searched in order: say so, with the remux that gives it one.
    if let Err(why) = &mut r {
        if !ended && windows == search_windows && announced == 0 {
            why.push_str(&format!(
                "; only its first {:.0} s were searched: the stream announces no length (remux it, e.g. `ffmpeg -i {} -c copy drive.mp4`, to have all of it searched)",
                windows as f64 * window_s,
                path.display()
            ));
        }
    }
    Ok(r)
}

/// Windows of `window_s` searched in order (2 minutes at the default 30 s), decoding every
/// frame (kept for the run): a drive may open with a minute in a car park. A longer video whose
/// windows show too few usable frames is then sampled over the rest of it by seeking (minutes
/// in town before the road) before it is refused.
const SEARCH_WINDOWS: usize = 4;

/// Samples analysed at a time (in parallel), between checks for enough agreeing frames.
pub(crate) const SAMPLE_CHUNK: usize = 8;

/// Usable frames after which no further round is sampled: eight frames that agree make a
/// "high" confidence estimate.
pub(crate) const ENOUGH_FRAMES: usize = 8;

/// The opening geometry from the opening search's frames (`outcomes` of frames `indices`,
/// analysed at `size`). With a cut at `first_cut` (an edited video), the samples after it are
/// other shots, perhaps of other cameras: the geometry is the opening shot's, from the samples
/// before the cut, when they give one (pooled with the later samples that agree with it when
/// it is unsure: `pooled_when_one_camera`). When they do not (a short opening shot: the frame loop
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
        let pooled = pooled_when_one_camera(g, part(true), part(false), k, size, opts)?;
        return Ok(Ok(pooled));
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

/// The opening shot's geometry `opening`, or, when it is of low confidence (a short opening
/// shot gives few samples), the geometry of the opening shot's samples (`before`) together
/// with the usable samples of later shots (`after`) that each agree with it
/// ([`FoundGeometry::agrees_with`]), when that one is surer: those are views of the same
/// camera (an edit of one drive, a clip joined to itself), and evidence too.
fn pooled_when_one_camera(
    opening: FoundGeometry,
    before: Vec<FrameOutcome>,
    after: Vec<FrameOutcome>,
    k: Option<&[[f64; 3]; 3]>,
    size: (i32, i32),
    opts: &SelfCalOptions,
) -> Result<FoundGeometry> {
    if opening.confidence() != "low" {
        return Ok(opening);
    }
    let row = opening.bottom_row;
    let same_camera = |o: &FrameOutcome| {
        o.usable()
            && o.lines.as_ref().is_some_and(|l| {
                let width = l.right.line.x_at(row) - l.left.line.x_at(row);
                opening.agrees_with(l.vp, width).is_some()
            })
    };
    let sampled = before.len() + after.len();
    let mut pooled = before;
    let own = pooled.len();
    pooled.extend(after.into_iter().filter(same_camera));
    if pooled.len() == own {
        return Ok(opening);
    }
    Ok(match geometry_from(&pooled, k, size, opts)? {
        Ok(g) if g.confidence() != "low" => FoundGeometry {
            frames_sampled: sampled,
            ..g
        },
        _ => opening,
    })
}
