//! Planning: inputs resolved to (path, relative name) items, names checked, shards.

use crate::base::error::{Error, Result};
use crate::video::{is_video_path, VIDEO_EXTENSIONS};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// The version written into every `summary.json`: a newer `lanes` redoes older results.
pub const LANES_VERSION: &str = env!("CARGO_PKG_VERSION");

/// One video to process: where to read it and its name relative to its input root (the name
/// of its output folder under OUTDIR, `/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub path: PathBuf,
    pub rel: String,
}

/// 64-bit FNV-1a: a stable hash (the same on every machine and run, unlike std's hasher), for
/// shards and content fingerprints.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `/`-joined normal components of a path (no root, `.` or `..`), for output folder names.
pub fn rel_name(p: &Path) -> String {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

pub(super) fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::Io {
        path: dir.to_path_buf(),
        message: format!("cannot read directory: {e}"),
    })?;
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out)?;
        } else if is_video_path(&p) {
            out.push(p);
        }
    }
    Ok(())
}

/// Resolve inputs: a video file (named by its file name), a directory (searched recursively
/// for video files, each named by its path inside the directory) or `@list.txt` (one path a
/// line, relative to the list's folder; each named by the line as written; `#` comments). Two
/// inputs with the same name are an error, since they would share an output folder.
pub fn collect_inputs(inputs: &[PathBuf]) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    for input in inputs {
        let s = input.to_string_lossy();
        if let Some(list) = s.strip_prefix('@') {
            let list = PathBuf::from(list);
            let text = std::fs::read_to_string(&list).map_err(|e| Error::Io {
                path: list.clone(),
                message: format!("cannot read input list: {e}"),
            })?;
            let base = list.parent().unwrap_or(Path::new("")).to_path_buf();
            for line in text.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let p = PathBuf::from(line);
                let path = if p.is_absolute() {
                    p.clone()
                } else {
                    base.join(&p)
                };
                items.push(Item {
                    path,
                    rel: rel_name(&p),
                });
            }
        } else if input.is_dir() {
            let mut found = Vec::new();
            walk(input, &mut found)?;
            if found.is_empty() {
                return Err(Error::Io {
                    path: input.clone(),
                    message: format!(
                        "no video files ({}) in directory",
                        VIDEO_EXTENSIONS.join(", ")
                    ),
                });
            }
            for p in found {
                let rel = rel_name(p.strip_prefix(input).unwrap_or(&p));
                items.push(Item { path: p, rel });
            }
        } else {
            // A missing file is kept: it fails alone, as a per-video failure.
            let rel = input
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| rel_name(input));
            items.push(Item {
                path: input.clone(),
                rel,
            });
        }
    }
    if items.is_empty() {
        return Err(Error::Invalid("no input videos given".into()));
    }
    check_names(&items)?;
    Ok(items)
}

/// Every item has a name, and no two share one (they would share an output folder).
pub fn check_names(items: &[Item]) -> Result<()> {
    let mut seen: HashMap<&str, &Path> = HashMap::new();
    for it in items {
        if it.rel.is_empty() {
            return Err(Error::Io {
                path: it.path.clone(),
                message: "input has no file name to name its output folder".into(),
            });
        }
        if let Some(other) = seen.insert(&it.rel, &it.path) {
            if other == it.path {
                return Err(Error::Io {
                    path: it.path.clone(),
                    message:
                        "listed twice among the inputs (or manifest rows): give each video once"
                            .into(),
                });
            }
            return Err(Error::Io {
                path: it.path.clone(),
                message: format!(
                    "output folder {} is also the one of {}; give the inputs as a directory or list so their relative paths differ",
                    it.rel,
                    other.display()
                ),
            });
        }
    }
    Ok(())
}

/// `--shard I/N`: the inputs whose FNV-1a hash of the relative name is `I-1` modulo `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parse `I/N` with 1 <= I <= N.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || Error::Invalid(format!("--shard {s} (expected I/N with 1 <= I <= N)"));
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }

    /// Whether this shard owns the input named `rel`.
    pub fn owns(&self, rel: &str) -> bool {
        fnv1a64(rel.as_bytes()) % self.count == self.index - 1
    }
}
