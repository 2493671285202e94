//! Tools around the pipeline: evaluation on labelled sets, the threshold tuner, synthetic scenes, speed floors. Imports the layers below.

pub mod eval;
pub mod floors;
pub mod synth;
pub mod tune;
