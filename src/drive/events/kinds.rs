//! The events: kinds, sides, details, and the JSON file they are written to.

use crate::base::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Left or right: the direction of a lane change or a bend, the side of a departure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Left,
    Right,
}

impl Side {
    pub fn as_str(&self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }
}

/// What happened, with the numbers that triggered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Detail {
    LaneLost {
        frames: usize,
    },
    LaneChange {
        direction: Side,
        /// Offsets of the last frame in the old lane and the first in the new one.
        offset_before_m: f64,
        offset_after_m: f64,
        lane_width_m: f64,
    },
    LaneDeparture {
        side: Side,
        /// Largest distance of the car's edge past the line during the run.
        max_excess_m: f64,
        offset_m: f64,
        lane_width_m: f64,
        lateral_speed_mps: Option<f64>,
        tlc_s: Option<f64>,
    },
    TightBend {
        direction: Side,
        min_radius_m: f64,
    },
}

/// One event: what, when (frames and seconds), and the triggering numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    #[serde(flatten)]
    pub detail: Detail,
    pub start_frame: usize,
    pub end_frame: usize,
    pub start_s: f64,
    pub end_s: f64,
    pub duration_s: f64,
}

/// The event kinds, in report order.
pub const KINDS: [&str; 4] = ["lane_lost", "lane_change", "lane_departure", "tight_bend"];

impl Event {
    /// `lane_lost`, `lane_change`, `lane_departure` or `tight_bend`.
    pub fn kind(&self) -> &'static str {
        match self.detail {
            Detail::LaneLost { .. } => KINDS[0],
            Detail::LaneChange { .. } => KINDS[1],
            Detail::LaneDeparture { .. } => KINDS[2],
            Detail::TightBend { .. } => KINDS[3],
        }
    }

    /// The middle of the event, s.
    pub fn mid_s(&self) -> f64 {
        (self.start_s + self.end_s) / 2.0
    }

    /// Left/right of a change, departure or bend.
    pub fn side(&self) -> Option<Side> {
        match self.detail {
            Detail::LaneLost { .. } => None,
            Detail::LaneChange { direction, .. } | Detail::TightBend { direction, .. } => {
                Some(direction)
            }
            Detail::LaneDeparture { side, .. } => Some(side),
        }
    }

    /// One line for people: `12.40-13.04 s  lane_departure right: ...`.
    pub fn describe(&self) -> String {
        let what = match &self.detail {
            Detail::LaneLost { frames } => format!("{frames} frames without a lane"),
            Detail::LaneChange {
                direction,
                offset_before_m,
                offset_after_m,
                lane_width_m,
            } => format!(
                "{}: offset {offset_before_m:+.2} -> {offset_after_m:+.2} m (lane {lane_width_m:.2} m)",
                direction.as_str()
            ),
            Detail::LaneDeparture {
                side,
                max_excess_m,
                lateral_speed_mps,
                tlc_s,
                ..
            } => format!(
                "{}: car edge up to {:.2} m over the line, lateral speed {}, TLC {}",
                side.as_str(),
                max_excess_m,
                lateral_speed_mps
                    .map(|v| format!("{v:.2} m/s"))
                    .unwrap_or_else(|| "-".into()),
                tlc_s
                    .map(|v| format!("{v:.2} s"))
                    .unwrap_or_else(|| "-".into())
            ),
            Detail::TightBend {
                direction,
                min_radius_m,
            } => format!("{}: radius down to {min_radius_m:.0} m", direction.as_str()),
        };
        format!(
            "{:8.2}-{:8.2} s  frames {}-{}  {:<14} {what}",
            self.start_s,
            self.end_s,
            self.start_frame,
            self.end_frame,
            self.kind()
        )
    }
}

/// Events by kind, in `KINDS` order.
pub fn count_by_kind(events: &[Event]) -> Vec<(&'static str, usize)> {
    KINDS
        .iter()
        .map(|k| (*k, events.iter().filter(|e| e.kind() == *k).count()))
        .collect()
}

/// Events as pretty JSON (an array), written atomically.
pub fn write_json(path: &Path, events: &[Event]) -> Result<()> {
    let text = serde_json::to_string_pretty(events).map_err(|e| Error::Invalid(e.to_string()))?;
    crate::base::atomic::write_atomic(path, (text + "\n").as_bytes())
}
