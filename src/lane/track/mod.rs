//! The tracker, the one stateful stage: the lane over frames (`lane`) and the camera's pitch
//! relative to the road (`pitch`).

mod lane;
mod pitch;

pub use lane::*;
pub use pitch::PitchTracker;
