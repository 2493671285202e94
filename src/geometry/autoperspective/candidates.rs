//! Lane-marking candidate pixels: narrow bright ridges in HLS L (white) or LAB B (yellow) whose
//! expected width grows with the distance below the horizon.
//!
//! A pixel is a candidate when it is brighter than the road at `d` pixels on *both* sides by a
//! margin (`min(v(x) - v(x-d), v(x) - v(x+d)) > contrast`). Unlike a global threshold this keeps
//! markings on dark asphalt and on light concrete alike, and drops wide bright areas (sky, cars,
//! concrete barriers), which are bright on at least one side.

use crate::base::error::Result;
use crate::base::frame::{BgrFrame, BinaryMask, GrayImage};
use crate::lane::threshold;
use opencv::core::{self, Mat};
use opencv::prelude::*;

/// The B the ridge detector reads: the yellow cue (red tail lights and cars neutral), for every
/// mask of the geometry search; `threshold::prepare(RIDGE_CUE)` makes its table.
pub const RIDGE_CUE: threshold::Cue = threshold::Cue::Yellow;

/// Where and how to look for ridges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RidgeParams {
    /// Rows searched, `[first, last)`; rows outside are left empty.
    pub rows: (i32, i32),
    /// Image row of the horizon (or a guess of it); the ridge half-width grows from there.
    pub horizon_y: f64,
    /// Ridge half-width `d` per row below the horizon, px/px. Default 0.12: a lane marking is about
    /// 1/25 of a lane wide, a lane about 2.5x the camera height, so the marking spans about
    /// 0.06 px per row below the horizon; `d` is twice that so both sides fall on the road.
    pub width_per_row: f64,
    /// Smallest half-width, px. Default 2.
    pub min_half_width: i32,
    /// Largest half-width, px (caps the near field). Default 80.
    pub max_half_width: i32,
    /// Required contrast in L on both sides, 0..255. Default 18.
    pub l_contrast: u8,
    /// Required contrast in LAB B on both sides (yellow), 0..255. Default 10.
    pub b_contrast: u8,
}

impl Default for RidgeParams {
    fn default() -> Self {
        Self {
            rows: (0, i32::MAX),
            horizon_y: 0.0,
            width_per_row: 0.12,
            min_half_width: 2,
            max_half_width: 80,
            l_contrast: 18,
            b_contrast: 10,
        }
    }
}

impl RidgeParams {
    /// Ridge half-width at row `y`.
    pub fn half_width(&self, y: i32) -> i32 {
        let d = (self.width_per_row * (y as f64 - self.horizon_y)).round() as i32;
        d.clamp(self.min_half_width, self.max_half_width)
    }
}

/// Ridge response of one row: `min(v[x] - v[x-d], v[x] - v[x+d])`, 0 when either is not positive.
#[inline]
fn ridge(row: &[u8], x: usize, d: usize) -> i32 {
    let v = row[x] as i32;
    let a = v - row[x - d] as i32;
    let b = v - row[x + d] as i32;
    a.min(b)
}

/// Candidate lane-marking pixels of a (undistorted) frame, 0 or 255.
pub fn ridge_mask(frame: &BgrFrame, p: &RidgeParams) -> Result<BinaryMask> {
    let (l, b) = threshold::channels(frame, RIDGE_CUE)?;
    ridge_mask_of(&l, &b, p)
}

/// `ridge_mask` from the frame's L and B channels (`threshold::channels`), computed once for
/// several masks of one frame.
pub fn ridge_mask_of(l: &GrayImage, b: &GrayImage, p: &RidgeParams) -> Result<BinaryMask> {
    let (w, h) = (l.width(), l.height());
    let mut mask = Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, core::Scalar::all(0.0))?;
    let y0 = p.rows.0.max(0);
    let y1 = p.rows.1.min(h);
    {
        let ld = l.bytes()?;
        let bd = b.bytes()?;
        let md = mask.data_bytes_mut()?;
        let wu = w as usize;
        for y in y0..y1 {
            let d = p.half_width(y) as usize;
            if 2 * d + 1 >= wu {
                continue;
            }
            let off = y as usize * wu;
            let lrow = &ld[off..off + wu];
            let brow = &bd[off..off + wu];
            let mrow = &mut md[off..off + wu];
            for (x, m) in mrow.iter_mut().enumerate().take(wu - d).skip(d) {
                if ridge(lrow, x, d) > p.l_contrast as i32
                    || ridge(brow, x, d) > p.b_contrast as i32
                {
                    *m = 255;
                }
            }
        }
    }
    BinaryMask::new(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_with(w: i32, h: i32, bg: [u8; 3], stripes: &[(i32, i32, [u8; 3])]) -> BgrFrame {
        let mut f = BgrFrame::new(
            Mat::new_rows_cols_with_default(
                h,
                w,
                core::CV_8UC3,
                core::Scalar::new(bg[0] as f64, bg[1] as f64, bg[2] as f64, 0.0),
            )
            .unwrap(),
        )
        .unwrap();
        let d = f.mat_mut().data_bytes_mut().unwrap();
        for y in 0..h {
            for &(x0, x1, c) in stripes {
                for x in x0..x1 {
                    let i = ((y * w + x) * 3) as usize;
                    d[i..i + 3].copy_from_slice(&c);
                }
            }
        }
        f
    }

    #[test]
    fn narrow_white_and_yellow_stripes_are_ridges_wide_bright_areas_are_not() {
        // Asphalt 80, a white stripe 6 px wide, a yellow stripe 6 px wide, a bright block 60 px wide.
        let f = frame_with(
            200,
            10,
            [80, 80, 80],
            &[
                (20, 26, [230, 230, 230]),
                (60, 66, [40, 200, 220]),
                (120, 180, [230, 230, 230]),
            ],
        );
        let p = RidgeParams {
            rows: (0, 10),
            horizon_y: -100.0,
            width_per_row: 0.0,
            min_half_width: 10,
            ..Default::default()
        };
        let m = ridge_mask(&f, &p).unwrap();
        let row: Vec<u8> = m.bytes().unwrap()[5 * 200..6 * 200].to_vec();
        assert!(row[20..26].iter().all(|&v| v == 255), "white stripe");
        assert!(row[60..66].iter().all(|&v| v == 255), "yellow stripe");
        assert!(
            row[120..180].iter().all(|&v| v == 0),
            "wide block is not a ridge"
        );
        assert_eq!(row.iter().filter(|&&v| v == 255).count(), 12);
    }

    #[test]
    fn rows_outside_the_band_stay_empty() {
        let f = frame_with(100, 20, [80, 80, 80], &[(40, 44, [240, 240, 240])]);
        let p = RidgeParams {
            rows: (5, 15),
            min_half_width: 6,
            width_per_row: 0.0,
            ..Default::default()
        };
        let m = ridge_mask(&f, &p).unwrap();
        assert_eq!(m.count().unwrap(), 10 * 4);
    }
}
