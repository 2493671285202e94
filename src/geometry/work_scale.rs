//! The size frames are analysed at for self-calibration: every frame is brought to one working
//! height (taller frames shrunk by an area average, shorter ones enlarged bilinearly), and what
//! is found on them is mapped back to the video's pixels.

use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::geometry::autoperspective::lines::ImageLine;

/// A working size and the way back to the video's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkScale {
    /// Working size over the video's, across and down.
    pub sx: f64,
    pub sy: f64,
    /// The working frame size.
    pub size: (i32, i32),
}

impl WorkScale {
    /// Frames of `size` brought to `rows` rows: shrunk when taller, enlarged when shorter.
    pub fn for_size((w, h): (i32, i32), rows: i32) -> Self {
        if rows <= 0 || h == rows || h <= 0 {
            return Self {
                sx: 1.0,
                sy: 1.0,
                size: (w, h),
            };
        }
        let s = rows as f64 / h as f64;
        let size = (((w as f64) * s).round().max(1.0) as i32, rows);
        Self {
            sx: size.0 as f64 / w as f64,
            sy: size.1 as f64 / h as f64,
            size,
        }
    }

    /// Frames are analysed at their own size.
    pub fn is_identity(&self) -> bool {
        self.sx == 1.0 && self.sy == 1.0
    }

    /// A frame at the working size (shrunk, or enlarged when shorter).
    pub fn resize(&self, f: BgrFrame) -> Result<BgrFrame> {
        if self.is_identity() {
            return Ok(f);
        }
        let mut small = opencv::core::Mat::default();
        opencv::imgproc::resize(
            f.mat(),
            &mut small,
            opencv::core::Size::new(self.size.0, self.size.1),
            0.0,
            0.0,
            if self.sy < 1.0 {
                opencv::imgproc::INTER_AREA
            } else {
                opencv::imgproc::INTER_LINEAR
            },
        )?;
        BgrFrame::new(small)
    }

    /// A camera matrix for the working size.
    pub fn camera_matrix(&self, k: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
        let mut out = *k;
        for v in &mut out[0] {
            *v *= self.sx;
        }
        for v in &mut out[1] {
            *v *= self.sy;
        }
        out
    }

    /// A point of the working frame in the video's pixels.
    pub fn point_back(&self, p: (f64, f64)) -> (f64, f64) {
        (p.0 / self.sx, p.1 / self.sy)
    }

    /// A line `x = m*y + c` of the working frame in the video's pixels.
    pub fn line_back(&self, l: ImageLine) -> ImageLine {
        ImageLine {
            m: l.m * self.sy / self.sx,
            c: l.c / self.sx,
        }
    }

    /// The video's frame size from the working one.
    pub fn video_size(&self, (w, h): (i32, i32)) -> (i32, i32) {
        (
            (w as f64 / self.sx).round() as i32,
            (h as f64 / self.sy).round() as i32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_working_size_keeps_the_aspect_and_maps_back_to_the_video() {
        // Frames of 480 rows are analysed as they are; shorter ones enlarged.
        let s = WorkScale::for_size((854, 480), 480);
        assert_eq!((s.sx, s.sy, s.size), (1.0, 1.0, (854, 480)));
        let s = WorkScale::for_size((640, 360), 480);
        assert_eq!(s.size, (853, 480));
        assert_eq!(s.video_size(s.size), (640, 360));
        let big = s.resize(BgrFrame::zeros(640, 360).unwrap()).unwrap();
        assert_eq!((big.width(), big.height()), (853, 480));
        let s = WorkScale::for_size((1920, 1080), 480);
        assert_eq!(s.size, (853, 480));
        assert_eq!(s.video_size(s.size), (1920, 1080));
        let k = [[1157.0, 0.0, 667.0], [0.0, 1152.0, 386.0], [0.0, 0.0, 1.0]];
        let s = WorkScale::for_size((1280, 720), 480);
        let kw = s.camera_matrix(&k);
        assert!((kw[0][0] - 1157.0 * s.sx).abs() < 1e-9 && (kw[1][2] - 386.0 * s.sy).abs() < 1e-9);
        assert_eq!(kw[2], [0.0, 0.0, 1.0]);
        // A point on a line of the working frame is on the line mapped back.
        let line = ImageLine { m: -1.3, c: 700.0 };
        let (x, y) = s.point_back((line.x_at(300.0), 300.0));
        assert!((s.line_back(line).x_at(y) - x).abs() < 1e-9);
        let f = BgrFrame::zeros(1280, 720).unwrap();
        let small = s.resize(f).unwrap();
        assert_eq!((small.width(), small.height()), (853, 480));
    }
}
