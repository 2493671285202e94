//! How decoded frames are shown: the rotation of phone videos (the container's display matrix,
//! read as the `ffmpeg` tool's autorotation reads it, and the turn that shows decoded frames
//! upright) and the shape of an anamorphic video's pixels.

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

/// The shape of a pixel of `stream` in `input` as its frames are shown (turned by `rotation`):
/// the container's sample aspect ratio, else the codec's (`pixel_shape`).
pub(super) fn stream_pixel_shape(
    input: &ffmpeg::format::context::Input,
    stream: &ffmpeg::format::stream::Stream,
    rotation: Rotation,
) -> (i32, i32) {
    // SAFETY: the format context and its stream are alive with `input`; a null frame asks for
    // the container's or the codec's value, which is only read.
    let sar = unsafe {
        ffi::av_guess_sample_aspect_ratio(
            input.as_ptr() as *mut _,
            stream.as_ptr() as *mut _,
            std::ptr::null_mut(),
        )
    };
    pixel_shape((sar.num, sar.den), rotation)
}

/// A stream's sample aspect ratio (`num`, `den`) as the shown frames have it: reduced, square
/// when unknown or implausible (0, negative, beyond 1:4..4:1), its terms swapped when the frames
/// are turned a quarter.
fn pixel_shape((num, den): (i32, i32), rotation: Rotation) -> (i32, i32) {
    if num <= 0 || den <= 0 || num > 4 * den || den > 4 * num {
        return (1, 1);
    }
    let r = ffmpeg::Rational::new(num, den).reduce();
    let (n, d) = (r.numerator(), r.denominator());
    match rotation {
        Rotation::Cw90 | Rotation::Ccw90 => (d, n),
        _ => (n, d),
    }
}

/// A pixel's width over its height for a pixel shape (width, height) such as
/// `VideoSource::sample_aspect`: 64:45 is 1.42; 1 for square pixels or an unknown shape.
pub fn pixel_aspect((w, h): (i32, i32)) -> f64 {
    if w > 0 && h > 0 {
        w as f64 / h as f64
    } else {
        1.0
    }
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

    #[test]
    fn a_pixel_s_shape_is_reduced_turned_with_the_frame_and_square_when_unknown() {
        // The PAL 16:9 shape, and 4:3 pixels given unreduced.
        assert_eq!(pixel_shape((64, 45), Rotation::None), (64, 45));
        assert_eq!(pixel_shape((8, 6), Rotation::R180), (4, 3));
        // A phone's frames turned a quarter: the shape turns with them.
        assert_eq!(pixel_shape((4, 3), Rotation::Cw90), (3, 4));
        assert_eq!(pixel_shape((4, 3), Rotation::Ccw90), (3, 4));
        // Unknown (0/1), negative or implausible: square.
        assert_eq!(pixel_shape((0, 1), Rotation::None), (1, 1));
        assert_eq!(pixel_shape((-4, 3), Rotation::None), (1, 1));
        assert_eq!(pixel_shape((9, 1), Rotation::None), (1, 1));
    }
}
