//! The tracker, the one stateful stage: the lane over frames (`lane`: the Kalman tracker and
//! the choice of method; `average`: the reference's; `output`: what they decide) and the camera's pitch relative to the
//! road (`pitch`).

mod average;
mod lane;
mod output;
mod pitch;

pub use average::{AverageTracker, LineTrack};
pub use lane::*;
pub use output::{TrackOutput, Verdict};
pub use pitch::PitchTracker;
