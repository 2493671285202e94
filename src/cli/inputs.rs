//! Image inputs: files and folders of stills in natural order, and stills sampled from
//! videos into a temporary folder.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Collect image files from a list of files and directories (directories: jpg/jpeg/png, sorted).
pub fn collect_images(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("{}: cannot read directory", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.extension()
                        .and_then(|e| e.to_str())
                        .map(|e| {
                            matches!(
                                e.to_ascii_lowercase().as_str(),
                                "jpg" | "jpeg" | "png" | "bmp"
                            )
                        })
                        .unwrap_or(false)
                })
                .collect();
            v.sort_by_key(|a| natural_key(a));
            if v.is_empty() {
                anyhow::bail!(
                    "{}: no images (.jpg, .jpeg, .png, .bmp) in directory",
                    p.display()
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

/// Stills from the inputs, in order: images and folders as they are; `frames` frames of each
/// video (`lanes::geometry::sample`), written as PNG into the temporary folder.
pub fn stills_of(inputs: &[PathBuf], frames: usize, tmp: &SampledStills) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if !(p.is_file() && lanes::geometry::sample::is_video_path(p)) {
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
