//! Which files are videos: the extensions `lanes batch` searches directories for, and that
//! `lanes tune`, `lanes perspective` and `lanes calibrate` sample frames from.

use std::path::Path;

/// File extensions taken as videos (any case): the containers dashcams, phones and camcorders
/// write (MP4, QuickTime, AVI, Matroska, WebM, MPEG-PS/TS, AVCHD's `.mts`/`.m2ts`, 3GP, WMV,
/// FLV) and raw H.264/HEVC streams as some dashcams store them.
pub const VIDEO_EXTENSIONS: &[&str] = &[
    "mp4", "m4v", "mov", "avi", "mkv", "webm", "mpg", "mpeg", "ts", "mts", "m2ts", "3gp", "wmv",
    "flv", "h264", "264", "h265", "265", "hevc",
];

/// Whether `path`'s extension is one of [`VIDEO_EXTENSIONS`].
pub fn is_video_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| VIDEO_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn videos_are_told_by_their_extension_in_any_case() {
        for p in [
            "a/B.MP4", "c.mts", "d.M2TS", "e.3gp", "f.h264", "g.hevc", "h.webm",
        ] {
            assert!(is_video_path(Path::new(p)), "{p}");
        }
        for p in ["a.jpg", "b.png", "c", "d.txt", "e.mp4.json"] {
            assert!(!is_video_path(Path::new(p)), "{p}");
        }
    }
}
