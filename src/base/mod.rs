//! Value types, configuration, errors and file helpers: the bottom layer; imports nothing of the crate above it.

pub mod atomic;
pub mod camera;
pub mod cancel;
pub mod config;
pub mod error;
pub mod exif_focal;
pub mod frame;
pub mod imageio;
pub mod planes;
pub mod poly;
pub mod same_file;
pub mod stats;
pub mod still;
pub mod summary;
pub mod telemetry;
