//! The road geometry of stills of one camera when no `[perspective]` is given (`lanes image`,
//! `lanes tune`, `lanes eval`): found in up to `STILLS_SAMPLED` of them as a video's is
//! (`resolve::find_in_stills`), the built-in geometry kept for the Udacity camera's own stills.

use crate::base::config::Config;
use crate::base::frame::BgrFrame;
use std::path::{Path, PathBuf};

/// The frame size the built-in geometry (the Udacity camera's quad) was made for.
pub const BUILT_IN_SIZE: (i32, i32) = (1280, 720);

/// Stills read to find the geometry of stills of one size: up to 24 of the inputs, spread over
/// them (the number of frames a video's search samples).
pub const STILLS_SAMPLED: usize = 24;

/// Whether stills of `size`, among `count` inputs, are worth searching for their geometry
/// (`stills_config`): stills of another size always (the built-in geometry was not made for
/// them); at the built-in size, only as many as a geometry needs (`SelfCalOptions::min_frames`),
/// to tell another camera's from the Udacity camera's. `lanes image` builds the built-in
/// pipeline while the pixels decode when they are not.
pub fn worth_searching(size: (i32, i32), count: usize) -> bool {
    size != BUILT_IN_SIZE || count >= crate::geometry::selfcal::SelfCalOptions::default().min_frames
}

/// The horizontal field of view of stills of `size` read from `paths`, from the 35
/// mm-equivalent focal length in their EXIF (`base::exif_focal`), to a tenth of a degree, with
/// what was found for the user; `None` when none carries one. When two give different ones (a
/// zoom: the geometry of one field of view would not hold for the others), or the one given
/// is outside `HFOV_RANGE_DEG` (a tag written wrong), the field of view is `None` and the note
/// says why the assumed one is used.
pub fn exif_fov(paths: &[&Path], (w, h): (i32, i32)) -> Option<(Option<f64>, String)> {
    use crate::base::exif_focal;
    let mut focals: Vec<u32> = paths
        .iter()
        .filter_map(|p| exif_focal::focal_35mm(p))
        .collect();
    let carried = focals.len();
    focals.sort_unstable();
    focals.dedup();
    match focals[..] {
        [] => None,
        [f] => {
            let fov = (exif_focal::hfov_deg(f as f64, w as f64, h as f64) * 10.0).round() / 10.0;
            let of = if carried == paths.len() {
                "their".to_string()
            } else {
                format!("{carried} of {} stills'", paths.len())
            };
            // A value no pinhole geometry takes (a tag written wrong) is not used.
            let (lo, hi) = crate::base::camera::HFOV_RANGE_DEG;
            if !(lo..=hi).contains(&fov) {
                return Some((
                    None,
                    format!("the 35 mm-equivalent focal length in {of} EXIF ({f} mm) gives a {fov}-deg field of view, outside {lo}-{hi}: not used, the field of view is assumed (--fov gives it)"),
                ));
            }
            Some((
                Some(fov),
                format!("{fov}-deg field of view across, from the 35 mm-equivalent focal length in {of} EXIF ({f} mm)"),
            ))
        }
        _ => Some((
            None,
            format!(
                "their EXIF give different 35 mm-equivalent focal lengths ({} mm): a zoom; the geometry assumes one field of view (--fov gives it)",
                focals.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// The configuration for stills of one size, `lanes image`'s, `lanes tune`'s and `lanes
/// eval`'s when no `[perspective]` is given: `cfg` with the geometry found in up to
/// `STILLS_SAMPLED` of `images` of that size (`first`, already read, among them; else the first
/// image's size); `cfg` itself when none is found. With the lines for the user (what was found,
/// or why not: "note: ..." and "warning: ..." lines). Stills of the built-in
/// geometry's size keep it where the geometry found agrees with it (`agrees_with_quad`: the
/// Udacity camera's own stills) and, quietly, where none is found or there are too few to
/// search; another camera's stills of that size get their own.
pub fn stills_config(
    images: &[PathBuf],
    first: Option<(&Path, &BgrFrame)>,
    cfg: &Config,
    camera: Option<&crate::base::camera::Camera>,
) -> (Config, Vec<String>) {
    use crate::geometry::selfcal::SelfCalOptions;
    let mut notes = Vec::new();
    let mut frames: Vec<BgrFrame> = first.map(|(_, f)| f.clone()).into_iter().collect();
    let mut read: Vec<&Path> = first.map(|(p, _)| p).into_iter().collect();
    let mut size = frames.first().map(|f| (f.width(), f.height()));
    for i in crate::base::stats::evenly_spaced(images.len(), STILLS_SAMPLED) {
        let p = &images[i];
        if frames.len() >= STILLS_SAMPLED || first.is_some_and(|(f, _)| f == p) {
            continue;
        }
        if let Ok(f) = BgrFrame::read(p) {
            let s = *size.get_or_insert((f.width(), f.height()));
            if (f.width(), f.height()) == s {
                frames.push(f);
                read.push(p);
            }
        }
    }
    let Some(size) = size else {
        return (cfg.clone(), notes);
    };
    let n = frames.len();
    let stills = if n == 1 { "still" } else { "stills" };
    let mut opts = SelfCalOptions::default();
    opts.estimate.hfov_deg = cfg.camera.hfov_deg;
    let (w, h) = size;
    let built_in = size == BUILT_IN_SIZE;
    if !worth_searching(size, n) {
        return (cfg.clone(), notes);
    }
    if n < opts.min_frames {
        // Too few to find a geometry in: not searched (a single still stays as quick as before).
        notes.push(format!(
            "note: {n} {stills} of {w}x{h}: a geometry is found in {} or more stills of one camera that show the ego lane's two lines ahead; analysed with the built-in geometry, made for {}x{} frames (`lanes perspective` makes one from this camera's frames)",
            opts.min_frames, BUILT_IN_SIZE.0, BUILT_IN_SIZE.1
        ));
        return (cfg.clone(), notes);
    }
    // Photos carry their field of view (EXIF), unless a camera file or --fov gives it.
    let given = camera.is_some() || cfg.camera.hfov_deg.is_some();
    let mut with_fov = cfg.clone();
    if let Some((fov, note)) = (!given).then(|| exif_fov(&read, size)).flatten() {
        opts.estimate.hfov_deg = fov;
        with_fov.camera.hfov_deg = fov;
        notes.push(format!("{n} {stills} of {w}x{h}: {note}"));
    }
    let cfg = &with_fov;
    let c = match crate::geometry::resolve::find_in_stills(frames, camera, &opts) {
        Ok(Ok(g)) => {
            let agrees = built_in
                .then(|| crate::geometry::resolve::agrees_with_quad(&g, &cfg.perspective))
                .flatten();
            if let Some((dh, dx, dw)) = agrees {
                notes.push(format!(
                    "{n} {stills} of {w}x{h}: the built-in geometry holds (the geometry found in them agrees with it: horizon {:.1}% of the height, vanishing point {:.1}% of the width, lane width {:.1}% off)",
                    100.0 * dh,
                    100.0 * dx,
                    100.0 * dw
                ));
                return (cfg.clone(), notes);
            }
            let other = if built_in {
                "another camera than the built-in geometry's: "
            } else {
                ""
            };
            notes.push(format!("{n} {stills} of {w}x{h}: {other}{}", g.describe()));
            // The low-confidence warning's advice is a video's; for stills: more of them.
            for warning in g.warnings.iter().filter(|w| !w.contains("low confidence")) {
                notes.push(format!("warning: stills of {w}x{h}: {warning}"));
            }
            if g.confidence() == "low" {
                notes.push(format!(
                    "warning: stills of {w}x{h}: the geometry is of low confidence ({} of {n} stills usable): more stills of this camera make it surer, or give --config from `lanes perspective` on frames where the road is straight",
                    g.frames_used
                ));
            }
            g.apply(cfg)
        }
        // The built-in size: the built-in geometry, quietly, as before the search.
        _ if built_in => cfg.clone(),
        Ok(Err(why)) => {
            notes.push(format!(
                "note: {n} {stills} of {w}x{h}: {why}; analysed with the built-in geometry, made for {}x{} frames (`lanes perspective` makes one from this camera's frames)",
                BUILT_IN_SIZE.0, BUILT_IN_SIZE.1
            ));
            cfg.clone()
        }
        Err(e) => {
            notes.push(format!(
                "note: {n} {stills} of {w}x{h}: no road geometry found ({e}); analysed with the built-in geometry"
            ));
            cfg.clone()
        }
    };
    (c, notes)
}
