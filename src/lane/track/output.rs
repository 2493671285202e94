//! What the lane trackers decide for a frame: the lane to draw, its status, and why each line
//! of the frame was or was not used.

use crate::lane::confidence::LaneStatus;
use crate::lane::fit::Poly2;

/// Why a line's fit of this frame was rejected (or `Accepted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    NotFound,
    LaneWidth,
    TooDifferent,
}

impl Verdict {
    /// The verdict as the diagnostic panel prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::NotFound => "not found",
            Verdict::LaneWidth => "lane width",
            Verdict::TooDifferent => "too different",
        }
    }
}

/// What the tracker decided for one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackOutput {
    pub left: Option<Poly2>,
    pub right: Option<Poly2>,
    pub left_verdict: Verdict,
    pub right_verdict: Verdict,
    /// Coefficient differences of this frame's fits from the smoothed fits before this frame.
    pub left_diff: Option<[f64; 3]>,
    pub right_diff: Option<[f64; 3]>,
    /// Both of this frame's fits were accepted.
    pub detected: bool,
    /// What is drawn: both lines seen, one seen (the other from the lane model), a prediction
    /// through a short gap, or nothing.
    pub status: LaneStatus,
    /// Confidence of the drawn lane, 0..1: the accepted lines' confidences (a line not seen
    /// counts 0), decaying over a predicted gap.
    pub confidence: f64,
}
