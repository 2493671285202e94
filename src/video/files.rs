//! Which files are videos: the extensions `lanes batch` searches directories for, and that
//! `lanes tune`, `lanes perspective` and `lanes calibrate` sample frames from; and why an MP4
//! that FFmpeg cannot open is unreadable, when its boxes tell.

use std::io::{Read, Seek, SeekFrom};
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

/// Why an MP4 or QuickTime file that FFmpeg cannot open is unreadable, when its top-level boxes
/// tell: media data (`mdat`) and no index (`moov`), which a recorder writes when it finishes
/// the file. A dashcam that loses power mid-recording, or a copy cut short, leaves such a file.
/// `None` for a file that is not a sequence of boxes, or has its index.
pub fn missing_index(path: &Path) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let (mut pos, mut media, mut index) = (0u64, 0u64, false);
    while pos + 8 <= len {
        f.seek(SeekFrom::Start(pos)).ok()?;
        let mut h = [0u8; 16];
        let n = f.read(&mut h).ok()?;
        let kind = &h[4..8];
        if n < 8 || !kind.iter().all(u8::is_ascii_alphanumeric) {
            return None;
        }
        let size = match u32::from_be_bytes([h[0], h[1], h[2], h[3]]) {
            0 => len - pos,
            1 if n == 16 => {
                u64::from_be_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]])
            }
            s if s >= 8 => s as u64,
            _ => return None,
        };
        if kind == b"mdat" {
            media += size.min(len - pos);
        }
        index |= kind == b"moov";
        pos = pos.saturating_add(size);
    }
    (media > 0 && !index).then(|| {
        format!(
            "{:.1} MB of media data but no moov box, the index a recorder writes when it finishes: the recording was cut off before it was finished, as when a dashcam loses power; FFmpeg cannot read such a file, a repair tool (untrunc) can rebuild its index from a good recording of the same camera",
            media as f64 / 1e6
        )
    })
}

/// The picture format of an FFmpeg demuxer that reads single images (`jpeg_pipe`, `png_pipe`,
/// `image2`), or `None` for a video container.
pub(super) fn still_format(demuxer: &str) -> Option<&str> {
    match demuxer {
        "image2" => Some("image"),
        d => d.strip_suffix("_pipe"),
    }
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

    #[test]
    fn an_mp4_without_its_index_is_named_cut_off() {
        let d = tempfile::tempdir().unwrap();
        let boxed = |boxes: &[(&[u8; 4], usize)]| {
            let mut v = Vec::new();
            for (kind, size) in boxes {
                v.extend_from_slice(&(*size as u32).to_be_bytes());
                v.extend_from_slice(*kind);
                v.resize(v.len() + size - 8, 0);
            }
            v
        };
        let cut = d.path().join("cut.mp4");
        // The mdat's size says 4 MB; the file ends after 300 kB of it.
        let mut bytes = boxed(&[(b"ftyp", 28), (b"wide", 8)]);
        bytes.extend_from_slice(&4_071_771u32.to_be_bytes());
        bytes.extend_from_slice(b"mdat");
        bytes.resize(300_000, 0);
        std::fs::write(&cut, &bytes).unwrap();
        let why = missing_index(&cut).unwrap();
        assert!(
            why.starts_with("0.3 MB of media data but no moov box"),
            "{why}"
        );
        let whole = d.path().join("whole.mp4");
        std::fs::write(
            &whole,
            boxed(&[(b"ftyp", 28), (b"mdat", 1000), (b"moov", 100)]),
        )
        .unwrap();
        assert_eq!(missing_index(&whole), None);
        let text = d.path().join("notes.mp4");
        std::fs::write(&text, b"not a video, just some text in a file").unwrap();
        assert_eq!(missing_index(&text), None);
    }
}
