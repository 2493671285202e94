//! The index of a `lanes batch` output folder (`batch.json`/`batch.csv`) over everything the
//! folder holds, not only this run's inputs: a rerun into the same folder with fewer or other
//! inputs keeps the rows of earlier videos whose folder still holds their `summary.json` (this
//! run's rows replace those of the same video). The earlier videos are the ones the old index
//! lists; when it is missing or cannot be read, the folders' `summary.json` files are the
//! index's source instead (and the merge line says it was rebuilt).

use crate::fleet::batch::{read_report, BatchReport, Outcome, VideoReport, SUMMARY};
use std::collections::BTreeSet;
use std::path::Path;

/// What went into the index besides this run's videos.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merge {
    /// Rows of this run.
    pub this_run: usize,
    /// Rows kept from earlier runs (their folder still holds a `summary.json`).
    pub kept: usize,
    /// Videos of the old index left out: their folder or its `summary.json` is gone.
    pub dropped: Vec<String>,
    /// Why the old index was not used (missing or unreadable), when rows were found in the
    /// folders instead.
    pub rebuilt: Option<String>,
}

impl Merge {
    /// One line for the user, or `None` when the index holds this run's videos only and
    /// nothing was rebuilt or dropped.
    pub fn describe(&self, index: &Path) -> Option<String> {
        if self.kept == 0 && self.dropped.is_empty() && self.rebuilt.is_none() {
            return None;
        }
        let videos = |n: usize| format!("{n} video{}", if n == 1 { "" } else { "s" });
        let mut line = format!(
            "index {}: {} from this run, {} kept from earlier runs",
            index.display(),
            videos(self.this_run),
            self.kept
        );
        if !self.dropped.is_empty() {
            line += &format!(
                ", {} of the old index dropped (no readable {SUMMARY} in its folder: {})",
                self.dropped.len(),
                self.dropped.join(", ")
            );
        }
        if let Some(why) = &self.rebuilt {
            line += &format!("; rebuilt from the folders' {SUMMARY} files ({why})");
        }
        Some(line)
    }
}

/// The paths the old index `<stem>.json` lists, or why it cannot be used.
fn old_index_paths(path: &Path) -> std::result::Result<Vec<String>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("no old index".into()),
        Err(e) => return Err(format!("{} unreadable: {e}", path.display())),
    };
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} unreadable: {e}", path.display()))?;
    let videos = v
        .get("videos")
        .and_then(|v| v.as_array())
        .ok_or_else(|| format!("{} unreadable: no \"videos\" list", path.display()))?;
    videos
        .iter()
        .map(|row| {
            row.get("path")
                .and_then(|p| p.as_str())
                .map(String::from)
                .ok_or_else(|| format!("{} unreadable: a row without \"path\"", path.display()))
        })
        .collect()
}

/// Every folder under `out_dir` holding a `summary.json`, as `/`-separated names relative to
/// it (hidden folders, such as the queue's `.lanes-work` staging, are left out).
pub fn folders_with_summary(out_dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut dirs: Vec<_> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        dirs.sort();
        for d in dirs {
            if d.join(SUMMARY).is_file() {
                if let Ok(rel) = d.strip_prefix(root) {
                    out.push(crate::fleet::batch::rel_name(rel));
                }
            }
            walk(root, &d, out);
        }
    }
    let mut out = Vec::new();
    walk(out_dir, out_dir, &mut out);
    out
}

/// The index of `out_dir` after this run: this run's outcomes, then the earlier videos (from
/// the old `<stem>.json`, or the folders when it is missing or unreadable) that `owns` (the
/// run's shard) and that are not among this run's, each from its folder's `summary.json`.
pub fn merged(
    out_dir: &Path,
    stem: &str,
    outcomes: &[Outcome],
    wall_seconds: f64,
    owns: &dyn Fn(&str) -> bool,
) -> (BatchReport, Merge) {
    let this: BTreeSet<&str> = outcomes.iter().map(|o| o.item.rel.as_str()).collect();
    let mut merge = Merge {
        this_run: outcomes.len(),
        ..Merge::default()
    };
    let (earlier, from_index) = match old_index_paths(&out_dir.join(format!("{stem}.json"))) {
        Ok(paths) => (paths, true),
        Err(why) => {
            merge.rebuilt = Some(why);
            (folders_with_summary(out_dir), false)
        }
    };
    let mut seen = BTreeSet::new();
    let mut kept: Vec<VideoReport> = Vec::new();
    for rel in earlier {
        if this.contains(rel.as_str()) || !owns(&rel) || !seen.insert(rel.clone()) {
            continue;
        }
        match read_report(&out_dir.join(&rel)) {
            Some(mut r) => {
                r.rel = rel;
                kept.push(r);
            }
            None => merge.dropped.push(rel),
        }
    }
    kept.sort_by(|a, b| a.rel.cmp(&b.rel));
    merge.kept = kept.len();
    if !from_index && kept.is_empty() && merge.dropped.is_empty() {
        // No old index and no other folder: a first run, nothing was rebuilt.
        merge.rebuilt = None;
    }
    (
        BatchReport::with_earlier(outcomes, &kept, wall_seconds),
        merge,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merge_line_names_what_was_kept_dropped_and_rebuilt() {
        let p = Path::new("out/batch.json");
        assert_eq!(Merge::default().describe(p), None);
        let m = Merge {
            this_run: 3,
            kept: 5,
            dropped: vec![],
            rebuilt: None,
        };
        assert_eq!(
            m.describe(p).unwrap(),
            "index out/batch.json: 3 videos from this run, 5 kept from earlier runs"
        );
        let m = Merge {
            this_run: 1,
            kept: 2,
            dropped: vec!["a.mp4".into()],
            rebuilt: Some("out/batch.json unreadable: EOF".into()),
        };
        assert_eq!(
            m.describe(p).unwrap(),
            "index out/batch.json: 1 video from this run, 2 kept from earlier runs, 1 of the old \
             index dropped (no readable summary.json in its folder: a.mp4); rebuilt from the folders' \
             summary.json files (out/batch.json unreadable: EOF)"
        );
    }

    #[test]
    fn folders_with_a_summary_are_found_below_the_out_dir_but_not_in_hidden_ones() {
        let d = tempfile::tempdir().unwrap();
        for f in ["a.mp4", "sub/b.mp4", ".lanes-work/w1/c.mp4", "sub/nothing"] {
            std::fs::create_dir_all(d.path().join(f)).unwrap();
        }
        for f in ["a.mp4", "sub/b.mp4", ".lanes-work/w1/c.mp4"] {
            std::fs::write(d.path().join(f).join(SUMMARY), "{}").unwrap();
        }
        assert_eq!(folders_with_summary(d.path()), vec!["a.mp4", "sub/b.mp4"]);
    }
}
