//! The rotation of phone videos: the container's display matrix, read as the `ffmpeg` tool's
//! autorotation reads it, and the turn that shows decoded frames upright.

use ffmpeg::ffi;
use ffmpeg_next as ffmpeg;

/// Rotation to apply to decoded frames so that they show upright (the container's display
/// matrix, as phones write it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotation {
    None,
    /// 90 degrees clockwise.
    Cw90,
    R180,
    /// 90 degrees counter-clockwise.
    Ccw90,
}

impl Rotation {
    /// From a display matrix's counter-clockwise angle (`av_display_rotation_get`), as the
    /// `ffmpeg` tool's autorotation reads it.
    pub(super) fn from_ccw_degrees(ccw: f64) -> Self {
        if !ccw.is_finite() {
            return Rotation::None;
        }
        let theta = (-ccw).rem_euclid(360.0);
        let near = |a: f64| (theta - a).abs() < 1.0;
        if near(90.0) {
            Rotation::Cw90
        } else if near(180.0) {
            Rotation::R180
        } else if near(270.0) {
            Rotation::Ccw90
        } else {
            Rotation::None
        }
    }

    /// Degrees clockwise.
    pub fn degrees(&self) -> u32 {
        match self {
            Rotation::None => 0,
            Rotation::Cw90 => 90,
            Rotation::R180 => 180,
            Rotation::Ccw90 => 270,
        }
    }

    pub(super) fn swaps_sides(&self) -> bool {
        matches!(self, Rotation::Cw90 | Rotation::Ccw90)
    }
}

/// The rotation a stream's display matrix asks for.
pub(super) fn display_rotation(stream: &ffmpeg::format::stream::Stream) -> Rotation {
    for sd in stream.side_data() {
        if sd.kind() == ffmpeg::codec::packet::side_data::Type::DisplayMatrix {
            let d = sd.data();
            if d.len() >= 36 {
                let mut m = [0i32; 9];
                for (i, v) in m.iter_mut().enumerate() {
                    *v = i32::from_ne_bytes([d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]]);
                }
                // SAFETY: a 3x3 display matrix of our own.
                let ccw = unsafe { ffi::av_display_rotation_get(m.as_ptr()) };
                return Rotation::from_ccw_degrees(ccw);
            }
        }
    }
    Rotation::None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matrix_angles_map_to_the_tool_s_autorotation() {
        // av_display_rotation_get gives counter-clockwise degrees; a phone held upright
        // writes -90 (ffmpeg's "rotate=90": turn 90 degrees clockwise to show).
        assert_eq!(Rotation::from_ccw_degrees(-90.0), Rotation::Cw90);
        assert_eq!(Rotation::from_ccw_degrees(90.0), Rotation::Ccw90);
        assert_eq!(Rotation::from_ccw_degrees(180.0), Rotation::R180);
        assert_eq!(Rotation::from_ccw_degrees(-180.0), Rotation::R180);
        assert_eq!(Rotation::from_ccw_degrees(0.0), Rotation::None);
        assert_eq!(Rotation::from_ccw_degrees(f64::NAN), Rotation::None);
        assert_eq!(Rotation::from_ccw_degrees(45.0), Rotation::None);
    }
}
