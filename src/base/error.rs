//! The library's error type: one enum whose variants carry the offending data.

use std::path::PathBuf;

/// Everything that can go wrong in the library. Variants name the file or the value.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: file not found")]
    NotFound { path: PathBuf },
    #[error("{path}: cannot read as an image{}", video_hint(.path))]
    UnreadableImage { path: PathBuf },
    #[error("{path}: corrupt image ({detail})")]
    CorruptImage { path: PathBuf, detail: String },
    #[error("{path}: an image of a kind not supported ({detail}); save it as PNG or JPEG")]
    UnsupportedImage { path: PathBuf, detail: String },
    #[error("{path}: image is {width}x{height}, {problem}")]
    ImageSize {
        path: PathBuf,
        width: u32,
        height: u32,
        problem: String,
    },
    #[error("{path}: cannot write image")]
    WriteImage { path: PathBuf },
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    /// Standard output closed by its reader (`--telemetry - | head`): it has what it wanted.
    #[error("standard output closed by its reader")]
    StdoutClosed,
    /// A bad row of a `lanes batch --manifest` file.
    #[error("{path}: line {line}: {message}")]
    Manifest {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: no {cols}x{rows} chessboard (or sub-grid) found")]
    ChessboardNotFound { path: PathBuf, cols: i32, rows: i32 },
    #[error("no chessboard found in any of {count} images: {tried}")]
    NoBoards { count: usize, tried: String },
    #[error("{path}: image is {got_w}x{got_h}, expected {expected_w}x{expected_h}")]
    SizeMismatch {
        path: PathBuf,
        expected_w: i32,
        expected_h: i32,
        got_w: i32,
        got_h: i32,
    },
    #[error("{path}: frames are {got_w}x{got_h} but the camera file {camera_file} is for {cam_w}x{cam_h}: calibrate this camera at {got_w}x{got_h} (`lanes calibrate` on its board photos) or leave out --camera")]
    CameraSize {
        path: PathBuf,
        camera_file: String,
        cam_w: i32,
        cam_h: i32,
        got_w: i32,
        got_h: i32,
    },
    #[error("{path}: camera file field `{field}` is {problem}")]
    CameraField {
        path: PathBuf,
        field: String,
        problem: String,
    },
    #[error("config {key} = {value} ({expected})")]
    ConfigValue {
        key: String,
        value: String,
        expected: String,
    },
    #[error("{path}: {message}")]
    ConfigParse { path: PathBuf, message: String },
    #[error("perspective quad is degenerate: {0}")]
    SingularPerspective(String),
    #[error("{what}: expected {expected}, got {got}")]
    BadMat {
        what: &'static str,
        expected: String,
        got: String,
    },
    #[error("{path}: {message}")]
    Video { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
    #[error("plot {plot}: {message}")]
    Plot { plot: String, message: String },
    #[error("{url}: {message}")]
    Redis { url: String, message: String },
    #[error("{path}: interrupted")]
    Interrupted { path: PathBuf },
    #[error("{output}: {output_role} is the same file as the {input_role} {input}; writing it would destroy the input: choose another {output_role}")]
    OutputIsInput {
        output: PathBuf,
        output_role: String,
        input: PathBuf,
        input_role: String,
    },
    #[error("opencv: {0}")]
    OpenCv(#[from] opencv::Error),
}

impl Error {
    /// An I/O error on `path`: `NotFound` for a missing file, else `Io` with the message.
    pub fn io(path: &std::path::Path, e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound {
                path: path.to_path_buf(),
            },
            _ => Error::Io {
                path: path.to_path_buf(),
                message: e.to_string(),
            },
        }
    }
}

/// The fix when a video was given where a still is read.
fn video_hint(path: &std::path::Path) -> &'static str {
    let video = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| {
            matches!(
                e.to_ascii_lowercase().as_str(),
                "mp4" | "m4v" | "mov" | "avi" | "mkv" | "webm" | "mpg" | "mpeg" | "ts" | "wmv"
            )
        })
        .unwrap_or(false);
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        " (an empty file, 0 bytes)"
    } else if video {
        " (named like a video: `lanes video` processes videos; `lanes tune` samples frames from them)"
    } else {
        ""
    }
}

/// Result alias for the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;
