//! The road geometry a video runs with: the configuration's, fixed, or the one found in the
//! video (`resolve`); and for an edited video, each shot's own (`shot_search`). A compilation
//! joins clips of other cameras, and a replay cut into a clip is zoomed or cropped: the
//! geometry found in the video's opening (`selfcal`) is wrong for them. At each cut the frame
//! loop reads the new shot ahead and asks for its geometry (`video::ShotSearch`); this module
//! answers, with the same search as the opening's on a sample of the shot's frames.

use crate::base::camera::Camera;
use crate::base::config::{Config, PerspectiveConfig};
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::base::stats::{evenly_spaced, median};
use crate::geometry::autoperspective::{FrameOutcome, LaneLines};
use crate::geometry::sample::SampledFrame;
use crate::geometry::selfcal::{
    find_on, FoundGeometry, FrameAnalysis, SelfCalOptions, ENOUGH_FRAMES, SAMPLE_CHUNK,
};
use crate::geometry::work_scale::WorkScale;
use crate::video::{ShotFound, ShotSearch, VideoFrame, VideoSource};
use std::path::Path;
use std::sync::Arc;

/// What a shot's samples showed (`find_in_shot`).
#[derive(Debug, Clone)]
pub enum ShotGeometry {
    /// The shot's own geometry, found as the opening's is.
    Own(Box<FoundGeometry>),
    /// The run's geometry holds: the first samples agree with it
    /// (`FoundGeometry::agrees_with`); the line says how closely.
    Holds(String),
}

/// Samples analysed first to see whether the run's geometry holds in a shot: 4, spread over
/// it (a truck ahead in one stretch does not hide all of them), analysed two at a time on two
/// cores.
const PROBE_SAMPLES: usize = 4;

/// The geometry of a shot from its sampled frames as decoded (`samples`, in order, each with
/// its time in the video, seconds). Each frame analysed is made a working frame (undistorted
/// with `camera` when given, brought to the working size: `FrameAnalysis`). With the run's geometry `run`,
/// `PROBE_SAMPLES` spread over the shot are analysed first; when the frames analysed agree with
/// it (`FoundGeometry::agrees_with`, checked after each chunk), it holds: where a shot agrees,
/// the run's geometry, found from more frames, is kept (a search of the shot would find the
/// same within its own spread). Otherwise the samples are analysed in order, in chunks as the
/// opening's are (`SAMPLE_CHUNK` at a time, in parallel), until `ENOUGH_FRAMES` are usable (a
/// clean shot is calibrated from its first samples, and the rest are never converted) or the
/// rest could not bring the frames a shot's geometry needs (`out_of_reach`); then combined
/// (`geometry_from`) and scaled back to the video.
pub fn find_in_shot(
    samples: &[(&VideoFrame, f64)],
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
    run: Option<&FoundGeometry>,
) -> Result<std::result::Result<ShotGeometry, String>> {
    let t0 = std::time::Instant::now();
    let Some((first, _)) = samples.first() else {
        return Ok(Err("no frames".into()));
    };
    let size = first.size();
    let fa = FrameAnalysis::new(size, camera, opts.work_rows)?;
    let analyse = |which: &[usize]| -> Result<Vec<FrameOutcome>> {
        let frames = which
            .iter()
            .map(|&i| {
                let (f, at_s) = samples[i];
                if f.size() != size {
                    let (w, h) = f.size();
                    return Err(Error::Invalid(format!(
                        "frames of {w}x{h} and {}x{} mixed",
                        size.0, size.1
                    )));
                }
                Ok((f.to_bgr()?, Some(at_s)))
            })
            .collect::<Result<Vec<_>>>()?;
        fa.analyse(frames, opts)
    };
    // With a run's geometry, the probe first, then the rest in order; after each chunk the
    // frames analysed so far are checked against the run's geometry.
    let probe = match run {
        Some(_) => evenly_spaced(samples.len(), PROBE_SAMPLES),
        None => Vec::new(),
    };
    let rest: Vec<usize> = (0..samples.len()).filter(|i| !probe.contains(i)).collect();
    let chunks = std::iter::once(probe.as_slice())
        .filter(|p| !p.is_empty())
        .chain(rest.chunks(SAMPLE_CHUNK));
    let mut outcomes = Vec::new();
    for chunk in chunks {
        let usable = outcomes
            .iter()
            .filter(|o: &&FrameOutcome| o.usable())
            .count();
        if usable >= ENOUGH_FRAMES || out_of_reach(usable, outcomes.len(), samples.len()) {
            break;
        }
        outcomes.extend(analyse(chunk)?);
        let holds = run.and_then(|r| agreement(r, &outcomes, &fa.work, opts.min_frames));
        if let Some(how) = holds {
            return Ok(Ok(ShotGeometry::Holds(format!(
                "the run's geometry holds: {how} ({:.2} s)",
                t0.elapsed().as_secs_f64()
            ))));
        }
    }
    Ok(fa
        .combine(&outcomes, opts, t0)?
        .map(|g| ShotGeometry::Own(Box::new(g))))
}

/// Usable frames a shot's geometry needs to be used (`shot_search`): 5, the fewest of a
/// "medium" confidence (`FoundGeometry::confidence`).
const SHOT_MIN_USABLE: usize = 5;

/// Whether a shot's search, with `usable` of the `done` samples analysed usable, cannot be
/// expected to reach `SHOT_MIN_USABLE` in its `total`: the rest, at the rate seen so far (at
/// least one in `done`), would bring fewer. A replay or a lane change that shows the lane's two
/// lines in none of its first 12 samples then ends there instead of analysing 24 (the LA
/// clip's two shots after its cuts: 0 and 1 usable of 24).
fn out_of_reach(usable: usize, done: usize, total: usize) -> bool {
    if done == 0 {
        return false;
    }
    let rate = usable.max(1) as f64 / done as f64;
    (usable as f64 + rate * total.saturating_sub(done) as f64) < SHOT_MIN_USABLE as f64
}

/// How the usable frames of `outcomes` (analysed at the working size `work`) agree with the
/// run's geometry `run`, when at least `min_frames` are usable and their medians agree
/// (`FoundGeometry::agrees_with`); `None` otherwise.
fn agreement(
    run: &FoundGeometry,
    outcomes: &[FrameOutcome],
    work: &WorkScale,
    min_frames: usize,
) -> Option<String> {
    let lines: Vec<_> = outcomes
        .iter()
        .filter(|o| o.usable())
        .filter_map(|o| o.lines.as_ref())
        .collect();
    if lines.len() < min_frames {
        return None;
    }
    let med = |f: &dyn Fn(&LaneLines) -> f64| {
        median(&lines.iter().map(|l| f(l)).collect::<Vec<_>>()).unwrap_or(f64::NAN)
    };
    let horizon = med(&|l| work.point_back(l.vp).1);
    let vp_x = med(&|l| work.point_back(l.vp).0);
    let row = run.bottom_row;
    let width =
        med(&|l| work.line_back(l.right.line).x_at(row) - work.line_back(l.left.line).x_at(row));
    let (dh, dx, dw) = run.agrees_with((vp_x, horizon), width)?;
    Some(format!(
        "{} of {} sampled frames agree with it (horizon {:.1}% of the height, vanishing point {:.1}% of the width, lane width {:.1}% off)",
        lines.len(),
        outcomes.len(),
        100.0 * dh,
        100.0 * dx,
        100.0 * dw
    ))
}

/// The search the frame loop runs at each cut: when the shot agrees with the run's geometry
/// (`run`, the opening's) that geometry is kept; else the shot's own applied to `base` (the
/// run's configuration before the opening geometry was put in), when found with at least
/// medium confidence (5 usable frames whose horizons agree within 2% of the height). A
/// low-confidence one is not used: a shot with a lane change or traffic throughout gives a
/// few frames whose median can be off, and the opening geometry is then the better guess.
pub fn shot_search(
    base: Config,
    camera: Option<Camera>,
    opts: SelfCalOptions,
    run: Option<FoundGeometry>,
) -> Arc<ShotSearch> {
    Arc::new(move |samples: &[(&VideoFrame, f64)]| {
        Ok(
            match find_in_shot(samples, camera.as_ref(), &opts, run.as_ref())? {
                Ok(ShotGeometry::Holds(how)) => Ok((ShotFound::Run, how)),
                Ok(ShotGeometry::Own(g)) if g.confidence() != "low" => {
                    Ok((ShotFound::Own(Box::new(g.apply(&base))), g.describe()))
                }
                Ok(ShotGeometry::Own(g)) => Err(format!(
                    "only a low-confidence geometry ({} of {} sampled frames usable)",
                    g.frames_used, g.frames_sampled
                )),
                // Its first clause: the reasons of each sampled frame follow in brackets.
                Err(reason) => Err(reason.split(" (need").next().unwrap_or(&reason).to_string()),
            },
        )
    })
}

/// The geometry of stills of one camera (`frames`, all of one size), found as a video's is
/// (`FrameAnalysis`, `geometry_from`), each still a view of its own: what `lanes image` uses
/// for stills the built-in geometry was not made for. A geometry needs `opts.min_frames` usable
/// stills, as a video's does: lines found in one still of noise can pass every check of a
/// frame, and only other views show that their horizons disagree. Frames of another size than
/// the first are an error.
pub fn find_in_stills(
    frames: Vec<BgrFrame>,
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
) -> Result<std::result::Result<FoundGeometry, String>> {
    let t0 = std::time::Instant::now();
    let Some(first) = frames.first() else {
        return Ok(Err("no stills".into()));
    };
    let size = (first.width(), first.height());
    if let Some(f) = frames.iter().find(|f| (f.width(), f.height()) != size) {
        return Err(Error::Invalid(format!(
            "stills of {}x{} and {}x{} mixed",
            f.width(),
            f.height(),
            size.0,
            size.1
        )));
    }
    let frames = frames.into_iter().map(|f| (f, None)).collect();
    find_in_frames(frames, size, camera, opts, t0)
}

/// The geometry of `frames` of one `size` (each with its time in the video, when known):
/// analysed (`FrameAnalysis`) and combined (`geometry_from`) as the opening's samples are.
fn find_in_frames(
    frames: Vec<(BgrFrame, Option<f64>)>,
    size: (i32, i32),
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
    t0: std::time::Instant,
) -> Result<std::result::Result<FoundGeometry, String>> {
    let fa = FrameAnalysis::new(size, camera, opts.work_rows)?;
    let outcomes = fa.analyse(frames, opts)?;
    fa.combine(&outcomes, opts, t0)
}

/// How closely a geometry found in frames agrees with a configuration's quad `p` for frames of
/// the found geometry's size, when it agrees within `selfcal::SAME_CAMERA`
/// (`FoundGeometry::agrees_with`): the quad's two sides as the lane's lines, their meeting
/// point and their distance apart at the found geometry's bottom row. `None` when they do not
/// agree, or the quad's sides are parallel or level.
pub fn agrees_with_quad(g: &FoundGeometry, p: &PerspectiveConfig) -> Option<(f64, f64, f64)> {
    use crate::geometry::autoperspective::lines::ImageLine;
    let [tl, tr, bl, br] = p.src;
    let left = ImageLine::through((tl[0], tl[1]), (bl[0], bl[1]))?;
    let right = ImageLine::through((tr[0], tr[1]), (br[0], br[1]))?;
    let width = right.x_at(g.bottom_row) - left.x_at(g.bottom_row);
    g.agrees_with(left.intersect(&right)?, width)
}

/// Frames sampled to see why a video's geometry was not found (`refusal_hint`).
const HINT_SAMPLES: usize = 12;

/// Why the video at `path`, whose geometry was not found, shows no road, when its frames tell:
/// `HINT_SAMPLES` frames spread over it, decoded once, are searched turned 180 degrees
/// (`upside_down`), then, for frames of two pictures' shape, half by half (`two_pictures`).
/// What a user is told, with the fix and `lanes {command}` on what it makes; `None` when
/// neither shows the road, or the video cannot be sampled again (the search's reason stands
/// alone then).
pub fn refusal_hint(
    path: &Path,
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
    command: &str,
) -> Option<String> {
    let frames = crate::geometry::sample::sample_video_frames(path, HINT_SAMPLES).ok()?;
    let first = frames.first()?;
    let size = (first.frame.width(), first.frame.height());
    // The turn the file's rotation flag already asks for (a display matrix): the frames above
    // are shown with it.
    let flagged = crate::video::VideoSource::open(path)
        .map(|s| s.rotation.degrees())
        .unwrap_or(0);
    let hint = || -> Result<Option<String>> {
        if let Some(h) = upside_down(&frames, size, flagged, path, camera, opts, command)? {
            return Ok(Some(h));
        }
        match camera {
            // A camera file is made for one picture.
            Some(_) => Ok(None),
            None => two_pictures(&frames, size, path, opts, command),
        }
    };
    hint().ok().flatten()
}

/// Whether sampled `frames` (of `size`, shown with the file's rotation flag `flagged`, degrees
/// clockwise) show a road when turned 180 degrees, searched as the opening's samples are
/// (`find_in_frames`). When they do, what a user is told: what they showed, and the command that
/// marks the file turned without re-encoding (its flag set to `flagged` + 180). A dashcam hung
/// from the mirror records upside down when its flip setting is off; a file's flag can also be
/// wrong. The search, which looks for the road below the horizon, then finds nothing.
fn upside_down(
    frames: &[SampledFrame],
    size: (i32, i32),
    flagged: u32,
    path: &Path,
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
    command: &str,
) -> Result<Option<String>> {
    if camera.is_some_and(|c| (c.width, c.height) != size) {
        return Ok(None);
    }
    let turned = frames
        .iter()
        .map(|f| {
            let mut m = opencv::core::Mat::default();
            opencv::core::flip(f.frame.mat(), &mut m, -1)?;
            Ok((BgrFrame::new(m)?, f.at_s))
        })
        .collect::<Result<Vec<_>>>()?;
    let n = turned.len();
    Ok(find_in_frames(turned, size, camera, opts, std::time::Instant::now())?
        .ok()
        .map(|g| {
            let why = if flagged == 0 {
                "the camera records upside down (a dashcam hung from the mirror with its flip setting off)".to_string()
            } else {
                format!("the file's rotation flag ({flagged} degrees) shows the road upside down")
            };
            format!(
                "turned 180 degrees, {} of {n} sampled frames show the ego lane's two lines: {why}. Mark it turned, without re-encoding: `ffmpeg -i {p} -c copy -metadata:s:v:0 rotate={turn} turned.mp4`, then `lanes {command} turned.mp4`",
                g.frames_used,
                // FFmpeg's `rotate` tag is the display matrix's counter-clockwise angle
                // (`ffprobe` shows the tag 90 as "rotation: 90"), and `flagged` the clockwise
                // turn that shows the frames: the tag that turns them 180 more.
                turn = (360 - flagged % 360 + 180) % 360,
                p = path.display()
            )
        }))
}

/// Frames at least this many times as wide as tall hold two pictures side by side: no single
/// camera's picture is wider than 21:9 (2.33).
const SIDE_BY_SIDE_ASPECT: f64 = 2.6;

/// Frames this many times as tall as wide hold two pictures one above the other: two 16:9
/// pictures stacked are 1.125 times as tall as wide, two 4:3 ones 1.5; a landscape camera's
/// picture is 0.75 at most, a phone's portrait one 1.78.
const STACKED_ASPECT: (f64, f64) = (0.85, 1.6);

/// Whether sampled `frames` of `size` are two cameras' pictures side by side (frames
/// `SIDE_BY_SIDE_ASPECT` times as wide as tall) or one above the other (`STACKED_ASPECT`), as a
/// two-camera dashcam merges its front and rear views, and one of them shows the road: each
/// half searched as the opening's samples are (`find_in_frames`). When one does, what a user is
/// told: which half, and the ffmpeg command that cuts it out. The lines of the whole frame meet
/// far to the side of its centre (or above it), so the search of the whole finds nothing;
/// `None` for frames of other shapes, or when neither half shows the road.
fn two_pictures(
    frames: &[SampledFrame],
    (w, h): (i32, i32),
    path: &Path,
    opts: &SelfCalOptions,
    command: &str,
) -> Result<Option<String>> {
    let (arrangement, halves) = if w as f64 >= SIDE_BY_SIDE_ASPECT * h as f64 {
        (
            "side by side",
            [
                ("left", (0, 0, w / 2, h), "iw/2:ih:0:0"),
                ("right", (w - w / 2, 0, w / 2, h), "iw/2:ih:iw/2:0"),
            ],
        )
    } else if (STACKED_ASPECT.0..=STACKED_ASPECT.1).contains(&(h as f64 / w as f64)) {
        (
            "one above the other",
            [
                ("upper", (0, 0, w, h / 2), "iw:ih/2:0:0"),
                ("lower", (0, h - h / 2, w, h / 2), "iw:ih/2:0:ih/2"),
            ],
        )
    } else {
        return Ok(None);
    };
    let n = frames.len();
    for (name, (x, y, pw, ph), crop) in halves {
        let cut = frames
            .iter()
            .map(|f| {
                use opencv::prelude::*;
                let roi =
                    opencv::core::Mat::roi(f.frame.mat(), opencv::core::Rect::new(x, y, pw, ph))?;
                let mut half = BgrFrame::zeros(pw, ph)?;
                roi.copy_to(half.mat_mut())?;
                Ok((half, f.at_s))
            })
            .collect::<Result<Vec<_>>>()?;
        if let Ok(g) = find_in_frames(cut, (pw, ph), None, opts, std::time::Instant::now())? {
            return Ok(Some(format!(
                "its {w}x{h} frames hold two pictures {arrangement} (a two-camera dashcam's merged file), and the {name} one shows the ego lane's two lines in {} of {n} sampled frames. Cut it out: `ffmpeg -i {p} -vf crop={crop} -c:a copy {name}.mp4`, then `lanes {command} {name}.mp4`",
                g.frames_used,
                p = path.display()
            )));
        }
    }
    Ok(None)
}

/// Where a run's road geometry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeometryChoice {
    /// The configuration's perspective and units, as given (a `--config` that names them).
    Fixed,
    /// Found in the video itself.
    Find,
}

/// What a video runs with: its configuration, the geometry found (when it was searched for)
/// and the source opened to check or find it, at its first frame, for the run to read on.
pub struct Resolved {
    pub cfg: Config,
    pub found: Option<FoundGeometry>,
    pub source: VideoSource,
}

/// The configuration a video runs with: `cfg` as it is when its geometry is fixed (refused
/// before any frame is processed when its quad does not fit the video's frames), or with the
/// geometry found in the video. A video whose geometry cannot be found is an error naming the
/// file and why, rather than lanes drawn from a guess.
pub fn resolve(
    path: &Path,
    cfg: &Config,
    choice: GeometryChoice,
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
) -> Result<Resolved> {
    let mut src = VideoSource::open(path)?;
    match choice {
        GeometryChoice::Fixed => {
            if let Some(why) = cfg.perspective.misfit(src.width, src.height, "the video's") {
                return Err(Error::Video {
                    path: path.to_path_buf(),
                    message: format!(
                        "the config's {why} (leave [perspective] out of the config to have it found in the video, or make one with `lanes perspective {}`)",
                        path.display()
                    ),
                });
            }
            Ok(Resolved {
                cfg: cfg.clone(),
                found: None,
                source: src,
            })
        }
        GeometryChoice::Find => match find_on(&mut src, camera, opts)? {
            Ok(g) => Ok(Resolved {
                cfg: g.apply(cfg),
                found: Some(g),
                source: src,
            }),
            Err(reason) => {
                // Not a reason to fail of its own: a video that cannot be sampled again
                // keeps the search's reason.
                let fix = match refusal_hint(path, camera, opts, "video") {
                    Some(hint) => format!("; {hint}"),
                    None => " (give --config with a [perspective] made by `lanes perspective` on frames where the road is straight)".to_string(),
                };
                Err(Error::Video {
                    path: path.to_path_buf(),
                    message: format!("{reason}; no lanes drawn from a guess{fix}"),
                })
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shot_search_ends_when_its_samples_cannot_reach_a_usable_geometry() {
        // 24 samples: after the probe of 4, none usable, the rest at one in 4 could bring 5.
        assert!(!out_of_reach(0, 4, 24));
        // After 12, none or one usable: at that rate 12 more bring 1 (2 in all).
        assert!(out_of_reach(0, 12, 24));
        assert!(out_of_reach(1, 12, 24));
        // Two usable in 12 would bring 4 in all; three, 6.
        assert!(out_of_reach(2, 12, 24));
        assert!(!out_of_reach(3, 12, 24));
        // Nothing analysed yet, or a short shot whose samples are all analysed.
        assert!(!out_of_reach(0, 0, 24));
        assert!(out_of_reach(4, 8, 8));
    }
}
