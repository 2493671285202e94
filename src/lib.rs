//! `lanes`: lane detection for dashcam video on OpenCV.
//!
//! # Conventions
//! - Colour images are BGR, 8 bits per channel (OpenCV's order).
//! - Pixel origin is the top-left corner; x grows to the right, y grows down.
//! - Lane-line polynomials are `x = a*y^2 + b*y + c` in bird's-eye pixels
//!   (`[a, b, c]` in every API and file).
//! - Curvature radius is in metres; offset is in metres, positive when the vehicle
//!   (the image centre) is right of the lane centre.
//! - Geometry is computed in `f64`.
//!
//! # Stages
//! A frame flows `undistort -> warp -> threshold -> fit -> confidence -> measure -> render`,
//! with `track` as the only stateful stage between frames. See ARCHITECTURE.md.
//! Confidences are 0..1; a frame's `status` is one of `both`, `left_only`, `right_only`,
//! `none` and (video only) `predicted`.

pub mod atomic;
pub mod autoperspective;
pub mod batch;
pub mod batch_index;
pub mod calibrate;
pub mod camera;
pub mod cancel;
pub mod confidence;
pub mod config;
pub mod error;
pub mod eval;
pub mod events;
pub mod fit;
pub mod floors;
pub mod frame;
pub mod manifest;
pub mod measure;
pub mod pipeline;
pub mod poly;
pub mod present;
pub mod queue;
pub mod render;
pub mod report;
pub mod same_file;
pub mod sample;
pub mod selfcal;
pub mod stats;
pub mod still;
pub mod summary;
pub mod synth;
pub mod telemetry;
pub mod threshold;
pub mod track;
pub mod tune;
pub mod undistort;
pub mod video;
pub mod warp;
pub mod yuv;

pub use error::{Error, Result};
