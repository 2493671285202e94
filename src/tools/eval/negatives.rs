//! Negatives: images with no lane in them, and the share where the pipeline reports a lane.
//!
//! An image counts as a false report when either line is reported
//! (`Analysis::reported_lines`). Running the pipeline is the caller's job (see `lanes eval
//! --negatives`); this module finds the images and sums the results.

use crate::base::error::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// File extensions searched for (case-insensitive).
pub const IMAGE_EXTENSIONS: [&str; 4] = ["jpg", "jpeg", "png", "bmp"];

/// Whether a path names an image by its extension.
pub fn is_image(p: &Path) -> bool {
    p.extension()
        .map(|e| {
            let e = e.to_string_lossy().to_ascii_lowercase();
            IMAGE_EXTENSIONS.contains(&e.as_str())
        })
        .unwrap_or(false)
}

/// Every image under `dir`, searched recursively, in sorted order.
pub fn find_images(dir: &Path) -> Result<Vec<PathBuf>> {
    let io = |e: std::io::Error| Error::Io {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    if !dir.is_dir() {
        return Err(Error::Io {
            path: dir.to_path_buf(),
            message: "not a directory".into(),
        });
    }
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(find_images(&p)?);
        } else if is_image(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// What the pipeline reported on one negative image.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NegativeImage {
    pub file: String,
    pub left: bool,
    pub right: bool,
}

impl NegativeImage {
    /// A lane (either line) was reported.
    pub fn reported(&self) -> bool {
        self.left || self.right
    }
}

/// The share of images of a set with a reported lane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NegativesSummary {
    pub dir: String,
    pub images: usize,
    /// Images with a reported lane (either line).
    pub reported: usize,
    /// `reported / images` (0 with no image).
    pub share: f64,
}

/// Sum the images of one set (`dir` names it in the report).
pub fn summarize(dir: &str, images: &[NegativeImage]) -> NegativesSummary {
    let reported = images.iter().filter(|i| i.reported()).count();
    NegativesSummary {
        dir: dir.to_string(),
        images: images.len(),
        reported,
        share: if images.is_empty() {
            0.0
        } else {
            reported as f64 / images.len() as f64
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_found_recursively_by_extension() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a/b")).unwrap();
        for f in ["x.PNG", "a/y.jpeg", "a/b/z.bmp", "a/notes.txt", "a/b/w.jpg"] {
            std::fs::write(d.path().join(f), b"").unwrap();
        }
        let found = find_images(d.path()).unwrap();
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(d.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, vec!["a/b/w.jpg", "a/b/z.bmp", "a/y.jpeg", "x.PNG"]);
        assert!(find_images(&d.path().join("missing")).is_err());
    }

    #[test]
    fn share_counts_either_line() {
        let i = |l, r| NegativeImage {
            file: "f".into(),
            left: l,
            right: r,
        };
        let s = summarize(
            "d",
            &[
                i(false, false),
                i(true, false),
                i(false, true),
                i(false, false),
            ],
        );
        assert_eq!((s.images, s.reported), (4, 2));
        assert_eq!(s.share, 0.5);
        assert_eq!(summarize("e", &[]).share, 0.0);
    }
}
