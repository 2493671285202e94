//! Image inputs: files and folders of stills in natural order, and stills sampled from
//! videos into a temporary folder.

use anyhow::{Context, Result};
use lanes::base::config::Config;
use lanes::base::frame::BgrFrame;
use std::path::{Path, PathBuf};

/// Collect image files from a list of files and directories (directories: the files named as
/// stills, `still::STILL_EXTENSIONS`, in natural order).
pub fn collect_images(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("{}: cannot read directory", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| lanes::base::still::is_still_path(f))
                .collect();
            v.sort_by_key(|a| natural_key(a));
            if v.is_empty() {
                anyhow::bail!(
                    "{}: no images (.{}) in directory",
                    p.display(),
                    lanes::base::still::STILL_EXTENSIONS.join(", .")
                );
            }
            out.extend(v);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            anyhow::bail!("{}: file not found", p.display());
        }
    }
    if out.is_empty() {
        anyhow::bail!("no input images given");
    }
    Ok(out)
}

/// The folder of frames sampled from video inputs by `lanes tune` and `lanes calibrate`
/// (removed when dropped), and the command's name for what it prints.
pub struct SampledStills(PathBuf, &'static str);

impl SampledStills {
    /// For the command `lanes <command>`.
    pub fn new(command: &'static str) -> Self {
        Self(
            std::env::temp_dir().join(format!("lanes-{command}-{}", std::process::id())),
            command,
        )
    }
}

impl Drop for SampledStills {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Refuse what `lanes video` cannot take as its one input, naming the command that can: several
/// files (a shell's `*.mp4`), or a folder (of videos, or of stills such as a dataset's frames).
pub fn one_video(input: &Path, more: &[PathBuf]) -> Result<()> {
    if !more.is_empty() {
        let all: Vec<String> = std::iter::once(input)
            .chain(more.iter().map(PathBuf::as_path))
            .map(|p| p.display().to_string())
            .collect();
        let shown = if all.len() > 3 {
            format!("{}, ...", all[..3].join(", "))
        } else {
            all.join(", ")
        };
        anyhow::bail!(
            "`lanes video` takes one video and {} were given ({shown}): `lanes batch VIDEO... -o DIR` processes several, each with its own geometry",
            all.len()
        );
    }
    if input.is_dir() {
        let files: Vec<PathBuf> = std::fs::read_dir(input)
            .with_context(|| format!("{}: cannot read directory", input.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        let videos = files
            .iter()
            .filter(|f| lanes::video::is_video_path(f))
            .count();
        let stills = files
            .iter()
            .filter(|f| lanes::base::still::is_still_path(f))
            .count();
        let d = input.display();
        let hint = match (videos, stills) {
            (0, 0) => "it holds no videos or stills".to_string(),
            (v, s) if v >= s => format!(
                "`lanes batch {d} -o DIR` processes the videos in it ({v} here, and those in its sub-folders)"
            ),
            (_, s) => format!("`lanes image {d} -o DIR` processes the stills in it ({s} here)"),
        };
        anyhow::bail!("{d}: a folder, not a video: {hint}");
    }
    Ok(())
}

/// Stills from the inputs, in order: images and folders as they are; `frames` frames of each
/// video (`lanes::geometry::sample`), written as PNG into the temporary folder.
pub fn stills_of(inputs: &[PathBuf], frames: usize, tmp: &SampledStills) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if !(p.is_file() && lanes::video::is_video_path(p)) {
            out.extend(collect_images(std::slice::from_ref(p))?);
            continue;
        }
        std::fs::create_dir_all(&tmp.0)
            .with_context(|| format!("{}: cannot create", tmp.0.display()))?;
        let stem =
            lanes::base::still::stem_of(&p.file_name().unwrap_or_default().to_string_lossy());
        let got = lanes::geometry::sample::sample_video_frames(p, frames)?;
        eprintln!(
            "lanes {}: {}: {} frames sampled ({})",
            tmp.1,
            p.display(),
            got.len(),
            got.iter()
                .map(|f| f.index.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for f in got {
            let still = tmp.0.join(format!("{stem}_frame{:06}.png", f.index));
            f.frame.write(&still)?;
            out.push(still);
        }
    }
    Ok(out)
}

/// The frame size the built-in geometry (the Udacity camera's quad) was made for.
pub const BUILT_IN_SIZE: (i32, i32) = (1280, 720);

/// Stills read to find the geometry of stills of one size: up to 24 of the inputs, spread over
/// them (the number of frames a video's search samples).
pub const STILLS_SAMPLED: usize = 24;

/// Whether stills of `size`, among `count` inputs, are worth searching for their geometry
/// (`stills_geometry`): stills of another size always (the built-in geometry was not made for
/// them); at the built-in size, only as many as a geometry needs (`SelfCalOptions::min_frames`),
/// to tell another camera's from the Udacity camera's. `lanes image` builds the built-in
/// pipeline while the pixels decode when they are not.
pub fn worth_searching(size: (i32, i32), count: usize) -> bool {
    size != BUILT_IN_SIZE || count >= lanes::geometry::selfcal::SelfCalOptions::default().min_frames
}

/// The configuration for stills of one size, `lanes image`'s and `lanes tune`'s when no
/// `[perspective]` is given: `cfg` with the geometry found in up to `STILLS_SAMPLED` of
/// `images` of that size (`first`, already read, among them; else the first image's size),
/// printed; `cfg` itself, with the reason printed, when none is found. Stills of the built-in
/// geometry's size keep it where the geometry found agrees with it (`agrees_with_quad`: the
/// Udacity camera's own stills) and, quietly, where none is found or there are too few to
/// search; another camera's stills of that size get their own.
pub fn stills_geometry(
    images: &[PathBuf],
    first: Option<(&Path, &BgrFrame)>,
    cfg: &Config,
    camera: Option<&lanes::base::camera::Camera>,
) -> Config {
    use lanes::geometry::selfcal::SelfCalOptions;
    let mut frames: Vec<BgrFrame> = first.map(|(_, f)| f.clone()).into_iter().collect();
    let mut size = frames.first().map(|f| (f.width(), f.height()));
    for i in lanes::base::stats::evenly_spaced(images.len(), STILLS_SAMPLED) {
        let p = &images[i];
        if frames.len() >= STILLS_SAMPLED || first.is_some_and(|(f, _)| f == p) {
            continue;
        }
        if let Ok(f) = BgrFrame::read(p) {
            let s = *size.get_or_insert((f.width(), f.height()));
            if (f.width(), f.height()) == s {
                frames.push(f);
            }
        }
    }
    let Some(size) = size else {
        return cfg.clone();
    };
    let n = frames.len();
    let stills = if n == 1 { "still" } else { "stills" };
    let mut opts = SelfCalOptions::default();
    opts.estimate.hfov_deg = cfg.camera.hfov_deg;
    let (w, h) = size;
    let built_in = size == BUILT_IN_SIZE;
    if !worth_searching(size, n) {
        return cfg.clone();
    }
    if n < opts.min_frames {
        // Too few to find a geometry in: not searched (a single still stays as quick as before).
        eprintln!(
            "lanes: note: {n} {stills} of {w}x{h}: a geometry is found in {} or more stills of one camera that show the ego lane's two lines ahead; analysed with the built-in geometry, made for {}x{} frames (`lanes perspective` makes one from this camera's frames)",
            opts.min_frames, BUILT_IN_SIZE.0, BUILT_IN_SIZE.1
        );
        return cfg.clone();
    }
    match lanes::geometry::resolve::find_in_stills(frames, camera, &opts) {
        Ok(Ok(g)) => {
            let agrees = built_in
                .then(|| lanes::geometry::resolve::agrees_with_quad(&g, &cfg.perspective))
                .flatten();
            if let Some((dh, dx, dw)) = agrees {
                eprintln!(
                    "lanes: {n} {stills} of {w}x{h}: the built-in geometry holds (the geometry found in them agrees with it: horizon {:.1}% of the height, vanishing point {:.1}% of the width, lane width {:.1}% off)",
                    100.0 * dh,
                    100.0 * dx,
                    100.0 * dw
                );
                return cfg.clone();
            }
            let other = if built_in {
                "another camera than the built-in geometry's: "
            } else {
                ""
            };
            eprintln!("lanes: {n} {stills} of {w}x{h}: {other}{}", g.describe());
            // The low-confidence warning's advice is a video's; for stills: more of them.
            for warning in g.warnings.iter().filter(|w| !w.contains("low confidence")) {
                eprintln!("lanes: warning: stills of {w}x{h}: {warning}");
            }
            if g.confidence() == "low" {
                eprintln!(
                    "lanes: warning: stills of {w}x{h}: the geometry is of low confidence ({} of {n} stills usable): more stills of this camera make it surer, or give --config from `lanes perspective` on frames where the road is straight",
                    g.frames_used
                );
            }
            g.apply(cfg)
        }
        // The built-in size: the built-in geometry, quietly, as before the search.
        _ if built_in => cfg.clone(),
        Ok(Err(why)) => {
            eprintln!(
                "lanes: note: {n} {stills} of {w}x{h}: {why}; analysed with the built-in geometry, made for {}x{} frames (`lanes perspective` makes one from this camera's frames)",
                BUILT_IN_SIZE.0, BUILT_IN_SIZE.1
            );
            cfg.clone()
        }
        Err(e) => {
            eprintln!(
                "lanes: note: {n} {stills} of {w}x{h}: no road geometry found ({e}); analysed with the built-in geometry"
            );
            cfg.clone()
        }
    }
}

/// Sort key that orders `calibration2` before `calibration10`.
fn natural_key(p: &Path) -> (String, u64, String) {
    let name = p
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let stem: String = name.chars().take_while(|c| !c.is_ascii_digit()).collect();
    let digits: String = name[stem.len()..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    (stem, digits.parse().unwrap_or(0), name)
}
