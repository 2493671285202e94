//! Video in and out on FFmpeg's libraries (`decode`: `VideoSource`; `encode`: `VideoSink`),
//! the job and summary types, and the per-frame loop over a dashcam video in `frame_loop`:
//! decode, analyse + track (`analyser`), render, encode.

mod analyser;
mod audio;
mod copy;
mod decode;
mod encode;
mod files;
mod frame_loop;
mod health;
mod job;
mod libav;
mod probe;
mod recording;
mod resize;
mod rotation;
mod subtitle;
pub mod yuv;

pub use analyser::Progress;
pub use decode::{decoder_threads, set_decoder_threads, VideoFrame, VideoSource};
pub use encode::{container_for, Container, SinkSpec, VideoSink};
pub use files::{is_video_path, VIDEO_EXTENSIONS};
pub use frame_loop::{analyze_video, run, run_with};
pub use job::*;
pub use probe::{check_start, other_streams_note, work_estimate};
pub use rotation::{pixel_aspect, Rotation};
