//! The per-frame lane stages (undistort, warp, threshold, fit, confidence, measure), the tracker, the pipeline composing them, and rendering of its result. Imports `base`.

pub mod confidence;
pub mod denoise;
pub mod fit;
pub mod horizon;
pub mod judge;
pub mod measure;
pub mod occlusion;
pub mod pipeline;
pub mod present;
pub mod render;
pub mod shot;
pub mod threshold;
pub mod track;
pub mod undistort;
pub mod warp;
