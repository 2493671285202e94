//! The tracker, the one stateful stage: the lane over frames (`lane`: the Kalman tracker and
//! the choice of method; `average`: the reference's; `output`: what they decide), the camera's
//! pitch relative to the road (`pitch`) and the cuts of an edited video (`shot`), where the
//! other two start again.

mod average;
mod lane;
mod output;
mod pitch;
mod shot;

pub use average::{AverageTracker, LineTrack};
pub use lane::*;
pub use output::{TrackOutput, Verdict};
pub use pitch::PitchTracker;
pub use shot::{ShotTracker, CONFIRM_FRAMES};
