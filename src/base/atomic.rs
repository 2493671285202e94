//! Files written whole: the bytes go to a hidden temporary name beside the target
//! (`.NAME.partial`) and are renamed over it when complete, so a reader never sees half a file
//! and a failed write leaves none behind. `lanes batch` removes such names left by a killed run.

use crate::base::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The temporary name of `path` while it is being written: `.NAME.partial` beside it.
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    path.with_file_name(format!(".{name}.partial"))
}

/// The directory an output file goes into must exist: "PATH: output directory DIR does not
/// exist", the one phrasing every command uses for it.
pub fn check_parent_dir(path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            message: format!("output directory {} does not exist", parent.display()),
        });
    }
    Ok(())
}

/// Write `bytes` to `path` through its `partial_path`, renamed at the end.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    check_parent_dir(path)?;
    let tmp = partial_path(path);
    let io = |e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_files_and_leaves_no_partial() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.html");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let err = write_atomic(&d.path().join("no/r.html"), b"x").unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(names, vec!["r.html"]);
    }
}
