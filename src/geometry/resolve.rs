//! The road geometry a video runs with: the configuration's, fixed, or the one found in the
//! video (`resolve`); and for an edited video, each shot's own (`shot_search`). A compilation
//! joins clips of other cameras, and a replay cut into a clip is zoomed or cropped: the
//! geometry found in the video's opening (`selfcal`) is wrong for them. At each cut the frame
//! loop reads the new shot ahead and asks for its geometry (`video::ShotSearch`); this module
//! answers, with the same search as the opening's on a sample of the shot's frames.

use crate::base::camera::Camera;
use crate::base::config::Config;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::geometry::selfcal::{
    find_in_frames, find_on, working_frame, FoundGeometry, SelfCalOptions,
};
use crate::geometry::work_scale::WorkScale;
use crate::lane::undistort::Undistorter;
use crate::video::{ShotSearch, VideoSource};
use std::path::Path;
use std::sync::Arc;

/// The geometry of a shot from its frames as decoded, each with its time in the video
/// (seconds): each made a working frame (undistorted with `camera` when given, brought to the
/// working size), then analysed and combined as the opening's are (`find_in_frames`), and
/// scaled back to the video.
pub fn find_in_shot(
    frames: Vec<(BgrFrame, f64)>,
    camera: Option<&Camera>,
    opts: &SelfCalOptions,
) -> Result<std::result::Result<FoundGeometry, String>> {
    let t0 = std::time::Instant::now();
    let Some((first, _)) = frames.first() else {
        return Ok(Err("no frames".into()));
    };
    let work = WorkScale::for_size((first.width(), first.height()), opts.work_rows);
    let undistorter = camera.map(Undistorter::new).transpose()?;
    let small = frames
        .into_iter()
        .map(|(f, at_s)| Ok((working_frame(f, undistorter.as_ref(), &work)?, Some(at_s))))
        .collect::<Result<Vec<_>>>()?;
    let k = camera.map(|c| work.camera_matrix(&c.k));
    let mut r = find_in_frames(&small, k.as_ref(), opts)?.map(|g| g.scaled_back(&work));
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
    Arc::new(move |frames: Vec<(BgrFrame, f64)>| {
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
            if let Some(c) = cfg.perspective.corner_outside(src.width, src.height) {
                return Err(Error::Video {
                    path: path.to_path_buf(),
                    message: format!(
                        "the config's perspective.src corner [{}, {}] lies outside the video's {}x{} frames: the quad was made for another camera or frame size (leave [perspective] out of the config to have it found in the video, or make one with `lanes perspective {}`)",
                        c[0],
                        c[1],
                        src.width,
                        src.height,
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
            Err(reason) => Err(Error::Video {
                path: path.to_path_buf(),
                message: format!(
                    "{reason}; no lanes drawn from a guess (give --config with a [perspective] made by `lanes perspective` on frames where the road is straight)"
                ),
            }),
        },
    }
}
