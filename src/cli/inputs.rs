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
    // A pipe: the geometry search seeks in the video and may open it again, which a stream
    // on standard input cannot give.
    if input.as_os_str() == "-" && !input.exists() {
        anyhow::bail!(
            "-: a video on standard input is not read (the road geometry is searched by seeking in the file): write the stream to a file first, e.g. `... | ffmpeg -i - -c copy drive.mkv`, then `lanes video drive.mkv`"
        );
    }
    // A camera's stream or a web address: read by seeking too, so recorded first.
    let text = input.to_string_lossy();
    if let Some((scheme, _)) = text.split_once("://").filter(|_| !input.exists()) {
        anyhow::bail!(
            "{text}: a stream address ({scheme}://) is not opened (`lanes video` reads a file, seeking in it to find the road geometry): record or download it first, e.g. `ffmpeg -i {text} -c copy drive.mkv`, then `lanes video drive.mkv`"
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
            (_, s) => {
                // Frames of a drive (a dataset's sequence): tracked once made a video.
                let ext = files
                    .iter()
                    .filter(|f| lanes::base::still::is_still_path(f))
                    .filter_map(|f| f.extension().and_then(|e| e.to_str()))
                    .next()
                    .unwrap_or("jpg");
                let dir = input.to_string_lossy();
                let dir = dir.trim_end_matches('/');
                format!(
                    "`lanes image {d} -o DIR` processes the stills in it ({s} here), each on its own; to track the lane over them as frames of a drive, make them a video first: ffmpeg -framerate 25 -pattern_type glob -i '{dir}/*.{ext}' -pix_fmt yuv420p {dir}.mp4"
                )
            }
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

/// The stills geometry lives in the library (`lanes eval` uses it too); `lanes image` and
/// `lanes tune` print its notes.
pub use lanes::geometry::stills::worth_searching;

/// `lanes::geometry::stills::stills_config` with its notes printed.
pub fn stills_geometry(
    images: &[PathBuf],
    first: Option<(&Path, &BgrFrame)>,
    cfg: &Config,
    camera: Option<&lanes::base::camera::Camera>,
) -> Config {
    let (c, notes) = lanes::geometry::stills::stills_config(images, first, cfg, camera);
    for n in notes {
        eprintln!("lanes: {n}");
    }
    c
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
