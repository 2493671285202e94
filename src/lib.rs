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

// The layers, from the bottom (ARCHITECTURE.md has the table): a folder imports only itself and
// the folders listed before it.
pub mod base;
pub mod drive;
pub mod fleet;
pub mod geometry;
pub mod lane;
pub mod tools;
pub mod video;

pub use base::error::{Error, Result};
