//! A vehicle ahead in the ego lane: where the road stops being visible in the bird's-eye mask.
//!
//! Lane markings run along a lane's edges: in the bird's-eye view they are near-vertical
//! strokes at the lane's sides, and a bend moves them sideways slowly. A vehicle ahead in the
//! lane lies across its middle: its lights, bumper, plate and the edge of its shadow put
//! marking-like pixels over most of the lane's middle columns within a short run of rows.
//! Searched from the bottom of the view up, the first such band is where the visible road
//! ends. The view above it is left out of the search and of the judgement, so the near range
//! that is visible gives the lane (fitted straight: a few metres fix a line's position and
//! heading, not its curvature) instead of the search climbing onto the vehicle and the frame
//! reporting no lane.

use crate::base::config::Config;
use crate::base::error::Result;
use crate::base::frame::BinaryMask;
use opencv::prelude::*;

/// Rows of a band, in nominal bird's-eye px (scaled with the view): 0.67 m on the road at the
/// default 30 m over 720 px, shorter than a car's rear and longer than a lane line is wide.
const BAND_ROWS: f64 = 16.0;

/// The road that must stay visible below a vehicle for the rule to apply, in metres: more than
/// a dash (3 m), enough to fix a straight line's position and heading. With less, the frame is
/// judged as a whole, as without the rule.
const MIN_VISIBLE_M: f64 = 5.0;

/// What `visible_road` found.
#[derive(Debug)]
pub struct VisibleRoad {
    /// The first analysed row of road below a vehicle ahead; 0 when nothing hides the road.
    pub from: usize,
    /// The mask with the rows above `from` cleared, when `from` > 0.
    pub mask: Option<BinaryMask>,
}

/// Find a vehicle ahead in the lane in a whole view's `mask` (analysed view, scale from
/// `cfg.perspective`): the lane's middle half is the middle half of the perspective's
/// destination rectangle (where the ego lane's lines lie), and a band of `BAND_ROWS` whose
/// pixels cover `cfg.search.occluder_share` of those columns is a vehicle.
pub fn visible_road(mask: &BinaryMask, cfg: &Config) -> Result<VisibleRoad> {
    let none = VisibleRoad {
        from: 0,
        mask: None,
    };
    let share = cfg.search.occluder_share;
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    if share <= 0.0 || w == 0 || h == 0 {
        return Ok(none);
    }
    let s = cfg.perspective.scale();
    let dst = &cfg.perspective.dst;
    let left = dst.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min);
    let right = dst.iter().map(|p| p[0]).fold(f64::NEG_INFINITY, f64::max);
    let quarter = (right - left) / 4.0;
    let x0 = ((left + quarter) * s.x).round().max(0.0) as usize;
    let x1 = (((right - quarter) * s.x).round().max(0.0) as usize).min(w);
    let band = ((BAND_ROWS * s.y).round() as usize).clamp(1, h);
    if x1 <= x0 || band >= h {
        return Ok(none);
    }
    let bytes = mask.bytes()?;
    let cols = x1 - x0;
    let needed = (share * cols as f64).ceil() as usize;
    let row = |y: usize| &bytes[y * w + x0..y * w + x1];
    // A band slides up the view, from the one two rows above the bottom band (the bottom rows
    // hold the view's edge); kept per middle column: how many of the band's rows hold a pixel,
    // and how many columns have any.
    let mut count = vec![0u32; cols];
    let mut covered = 0usize;
    let add = |y: usize, d: i32, count: &mut [u32], covered: &mut usize| {
        for (c, _) in row(y).iter().enumerate().filter(|(_, &v)| v > 0) {
            let before = count[c];
            count[c] = (before as i32 + d) as u32;
            match (before, count[c]) {
                (0, _) => *covered += 1,
                (_, 0) => *covered -= 1,
                _ => {}
            }
        }
    };
    let Some(first) = h.checked_sub(band + 2) else {
        return Ok(none);
    };
    for y in first..first + band {
        add(y, 1, &mut count, &mut covered);
    }
    let mut top = None;
    for y0 in (0..=first).rev() {
        if y0 < first {
            add(y0, 1, &mut count, &mut covered);
            add(y0 + band, -1, &mut count, &mut covered);
        }
        if covered >= needed {
            top = Some(y0);
            break;
        }
    }
    // The road is visible below the band's lowest row with a pixel in the middle.
    let from = match top {
        Some(y0) => {
            (y0..y0 + band)
                .rev()
                .find(|&y| row(y).iter().any(|&v| v > 0))
                .unwrap_or(y0)
                + 1
        }
        None => return Ok(none),
    };
    let min_rows = MIN_VISIBLE_M / cfg.units.ym_per_px * s.y;
    if ((h - from) as f64) < min_rows {
        return Ok(none);
    }
    let mut m = mask.mat().try_clone()?;
    for y in 0..from {
        m.at_row_mut::<u8>(y as i32)?.fill(0);
    }
    Ok(VisibleRoad {
        from,
        mask: Some(BinaryMask::new(m)?),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use opencv::core::{self, Mat, Rect, Scalar};

    /// A default-size analysed view (1280x360) with the lane's two lines (x 450 and 830) drawn
    /// over the rows from `lines_from`, and a block (a vehicle) across the lane's middle over
    /// rows `block`.
    pub(crate) fn view(lines_from: i32, block: Option<(i32, i32)>) -> BinaryMask {
        let mut m =
            Mat::new_rows_cols_with_default(360, 1280, core::CV_8UC1, Scalar::all(0.0)).unwrap();
        for x in [445, 825] {
            let r = Rect::new(x, lines_from, 10, 360 - lines_from);
            Mat::roi_mut(&mut m, r)
                .unwrap()
                .set_to_def(&Scalar::all(255.0))
                .unwrap();
        }
        if let Some((y0, y1)) = block {
            // Rear lights and a bumper: two blobs and a bar.
            for r in [
                Rect::new(500, y0, 60, y1 - y0),
                Rect::new(720, y0, 60, y1 - y0),
                Rect::new(540, y1 - 3, 200, 3),
            ] {
                Mat::roi_mut(&mut m, r)
                    .unwrap()
                    .set_to_def(&Scalar::all(255.0))
                    .unwrap();
            }
        }
        BinaryMask::new(m).unwrap()
    }

    #[test]
    fn a_vehicle_across_the_lane_ends_the_visible_road_below_it() {
        let cfg = Config::default();
        let v = visible_road(&view(0, Some((150, 170))), &cfg).unwrap();
        // The road is visible from the row below the vehicle's lowest.
        assert_eq!(v.from, 170, "{v:?}");
        let m = v.mask.unwrap();
        let b = m.bytes().unwrap();
        assert!(b[..170 * 1280].iter().all(|&p| p == 0));
        assert_eq!(b[200 * 1280 + 450], 255, "the lines below stay");
    }

    #[test]
    fn lines_alone_a_bend_or_a_vehicle_too_near_change_nothing() {
        let cfg = Config::default();
        assert_eq!(visible_road(&view(0, None), &cfg).unwrap().from, 0);
        // Less than 5 m of road left below it (60 analysed rows at the default scale).
        assert_eq!(
            visible_road(&view(0, Some((280, 310))), &cfg).unwrap().from,
            0
        );
        // A line crossing the middle columns diagonally (a bend) covers few of them per band.
        let mut m =
            Mat::new_rows_cols_with_default(360, 1280, core::CV_8UC1, Scalar::all(0.0)).unwrap();
        for y in 0..360 {
            let x = 830 - (360 - y) * 3 / 4;
            Mat::roi_mut(&mut m, Rect::new(x, y, 12, 1))
                .unwrap()
                .set_to_def(&Scalar::all(255.0))
                .unwrap();
        }
        let bend = BinaryMask::new(m).unwrap();
        assert_eq!(visible_road(&bend, &cfg).unwrap().from, 0);
        // Off in the reference preset.
        let v = visible_road(&view(0, Some((150, 170))), &Config::reference()).unwrap();
        assert_eq!(v.from, 0);
    }
}
