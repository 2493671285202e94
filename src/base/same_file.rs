//! Outputs that would destroy an input. Every command that writes files calls `check` with its
//! inputs and outputs before it writes anything: an output that is the same file as an input
//! (the same path once links are resolved, or the same device and inode: a hard link), or two
//! outputs that name one file, is refused with one line naming both paths.

use crate::base::error::{Error, Result};
use std::path::{Path, PathBuf};

/// A file a command reads or writes, with the flag or role that named it (`-o`,
/// `--telemetry`, `--camera`, `input video`), so the message says which argument to change.
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    pub role: &'a str,
    pub path: &'a Path,
}

impl<'a> Named<'a> {
    pub fn new(role: &'a str, path: &'a Path) -> Self {
        Self { role, path }
    }
}

/// Device and inode of an existing file (links followed).
fn file_id(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// The path with links resolved: the file itself when it exists, else its nearest existing
/// ancestor resolved with the rest appended (files and folders about to be created).
pub fn resolved(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(d) => d.join(p),
            Err(_) => return p.to_path_buf(),
        }
    };
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    while let Some(parent) = cur.parent() {
        if let Some(name) = cur.file_name() {
            rest.push(name.to_os_string());
        }
        if let Ok(c) = parent.canonicalize() {
            let mut out = c;
            for n in rest.iter().rev() {
                out.push(n);
            }
            return out;
        }
        cur = parent;
    }
    abs
}

/// Whether `a` and `b` are one file: same resolved path, or same device and inode.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if resolved(a) == resolved(b) {
        return true;
    }
    matches!((file_id(a), file_id(b)), (Some(x), Some(y)) if x == y)
}

/// Refuse when an output is the same file as an input, or two outputs are one file. Call it
/// before writing anything. Each path is resolved and stat'ed once (linear in the number of
/// files, so a folder of thousands of stills costs little).
pub fn check(inputs: &[Named], outputs: &[Named]) -> Result<()> {
    use std::collections::HashMap;
    let mut by_path: HashMap<PathBuf, &Named> = HashMap::new();
    let mut by_id: HashMap<(u64, u64), &Named> = HashMap::new();
    for inp in inputs {
        by_path.entry(resolved(inp.path)).or_insert(inp);
        if let Some(id) = file_id(inp.path) {
            by_id.entry(id).or_insert(inp);
        }
    }
    let mut out_paths: HashMap<PathBuf, &Named> = HashMap::new();
    for o in outputs {
        let r = resolved(o.path);
        let id = file_id(o.path);
        if let Some(inp) = by_path.get(&r).or_else(|| id.and_then(|id| by_id.get(&id))) {
            return Err(Error::OutputIsInput {
                output: o.path.to_path_buf(),
                output_role: o.role.to_string(),
                input: inp.path.to_path_buf(),
                input_role: inp.role.to_string(),
            });
        }
        if let Some(other) = out_paths.get(&r) {
            return Err(Error::Invalid(format!(
                "{}: {} and {} are the same file {}; give each output its own path",
                o.path.display(),
                other.role,
                o.role,
                other.path.display()
            )));
        }
        out_paths.insert(r, o);
    }
    Ok(())
}

/// Refuse an output directory that is an input directory or lies inside one: its outputs
/// would be read as inputs by the next run (and a folder named after an input video would be
/// that video's own path).
pub fn check_out_dir(input_dirs: &[&Path], out_dir: &Path, role: &str) -> Result<()> {
    let out = resolved(out_dir);
    for d in input_dirs {
        if !d.is_dir() {
            continue;
        }
        let d_res = resolved(d);
        if out.starts_with(&d_res) {
            return Err(Error::Invalid(format!(
                "{}: {role} is {} input directory {}; its outputs would be read as inputs next time: choose a directory outside it",
                out_dir.display(),
                if out == d_res { "the" } else { "inside the" },
                d.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_path_symlink_and_hard_link_are_the_same_file() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.mp4");
        std::fs::write(&a, b"x").unwrap();
        let sym = d.path().join("s.mp4");
        std::os::unix::fs::symlink(&a, &sym).unwrap();
        let hard = d.path().join("h.mp4");
        std::fs::hard_link(&a, &hard).unwrap();
        let dotted = d.path().join(".").join("a.mp4");
        let other = d.path().join("b.mp4");
        std::fs::write(&other, b"x").unwrap();
        for p in [&a, &sym, &hard, &dotted] {
            assert!(same_file(&a, p), "{}", p.display());
        }
        assert!(!same_file(&a, &other));
        assert!(!same_file(&a, &d.path().join("new.mp4")));
        let err = check(&[Named::new("input video", &a)], &[Named::new("-o", &hard)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("h.mp4") && err.contains("a.mp4"), "{err}");
        assert!(err.contains("-o") && err.contains("input video"), "{err}");
        assert!(!err.contains('\n'));
        // Two outputs that do not exist yet but name one file.
        let t = d.path().join("t.jsonl");
        let err = check(&[], &[Named::new("-o", &t), Named::new("--telemetry", &t)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("-o and --telemetry are the same file"),
            "{err}"
        );
        assert!(check(
            &[Named::new("input video", &a)],
            &[Named::new("-o", &other)]
        )
        .is_ok());
    }

    #[test]
    fn an_output_directory_inside_an_input_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert!(check_out_dir(&[d.path()], d.path(), "-o").is_err());
        assert!(check_out_dir(&[d.path()], &sub, "-o").is_err());
        assert!(check_out_dir(&[d.path()], &sub.join("new"), "-o").is_err());
        assert!(check_out_dir(&[&sub], d.path(), "-o").is_ok());
    }
}
