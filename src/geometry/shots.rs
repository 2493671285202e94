//! The road geometry of each shot of an edited video. A compilation joins clips of other
//! cameras, and a replay cut into a clip is zoomed or cropped: the geometry found in the
//! video's opening (`selfcal`) is wrong for them. At each cut the frame loop reads the new
//! shot ahead and asks for its geometry (`video::ShotSearch`); this module answers, with the
//! same search as the opening's on a sample of the shot's frames.

use crate::base::camera::Camera;
use crate::base::config::Config;
use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::geometry::autoperspective::FrameOutcome;
use crate::geometry::selfcal::{analyse_frames, geometry_from, FoundGeometry, SelfCalOptions};
use crate::geometry::work_scale::WorkScale;
use crate::lane::undistort::Undistorter;
use crate::video::ShotSearch;
use std::sync::Arc;

/// The geometry of a shot from its frames as decoded: undistorted with `camera` when given,
/// shrunk to the search's working size, analysed and combined as the opening's are.
pub fn find_in_shot(
    frames: &[BgrFrame],
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
) -> Result<std::result::Result<FoundGeometry, String>> {
    let t0 = std::time::Instant::now();
    let Some(first) = frames.first() else {
        return Ok(Err("no frames".into()));
    };
    let work = WorkScale::for_size((first.width(), first.height()), opts.work_rows);
    let undistorter = camera.map(Undistorter::new).transpose()?;
    let small = frames
        .iter()
        .map(|f| {
            let f = match &undistorter {
                Some(u) => u.undistort(f)?,
                None => f.clone(),
            };
            work.shrink(f)
        })
        .collect::<Result<Vec<_>>>()?;
    let k = camera.map(|c| work.camera_matrix(&c.k));
    let outcomes = analyse_frames(&small, opts)?;
    let mut r =
        geometry_from(&outcomes, k.as_ref(), work.size, opts)?.map(|g| g.scaled_back(&work));
    if let Ok(g) = &mut r {
        g.seconds = t0.elapsed().as_secs_f64();
    }
    Ok(r)
}

/// The search the frame loop runs at each cut: the shot's geometry applied to `base` (the
/// run's configuration before the opening geometry was put in), when found with at least
/// medium confidence (5 usable frames whose horizons agree within 2% of the height). A
/// low-confidence one is not used: a shot with a lane change or traffic throughout gives a
/// few frames whose median can be off, and the opening geometry is then the better guess.
pub fn shot_search(base: Config, camera: Option<Camera>, opts: SelfCalOptions) -> Arc<ShotSearch> {
    Arc::new(move |frames: &[BgrFrame]| {
        Ok(match find_in_shot(frames, camera.as_ref(), &opts)? {
            Ok(g) if g.confidence() != "low" => Ok((g.apply(&base), g.describe())),
            Ok(g) => Err(format!(
                "only a low-confidence geometry ({} of {} sampled frames usable)",
                g.frames_used, g.frames_sampled
            )),
            // Its first clause: the reasons of each sampled frame follow in brackets.
            Err(reason) => Err(reason.split(" (need").next().unwrap_or(&reason).to_string()),
        })
    })
}

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
