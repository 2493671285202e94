//! Shot boundaries of an edited video: a frame's luma on a coarse grid (`LumaSample`), how
//! much two consecutive frames differ (`mean_abs_diff`) and whether a difference is a cut
//! (`is_cut`), so that the tracker can tell a cut (a compilation's next clip, a zoomed replay)
//! from the road moving past.
//!
//! The measure is the mean absolute luma difference of consecutive frames (0..1 of full scale;
//! the quantity FFmpeg's scene score starts from). A cut is a difference that stands out from
//! the shot's own: several times the median of the last second's differences, and by a margin
//! that compression noise and flicker do not reach. Relative to the shot's own differences,
//! because how much consecutive frames differ depends on the camera (a low 30 fps camera on a
//! forest road changes twice as much per frame as a 25 fps view of a motorway), while a cut
//! changes the whole picture at once. Every 8th pixel of every 8th row is read (a 720p frame:
//! 14 400 pixels, microseconds): a cut changes the whole picture, which the grid sees as well
//! as every pixel.

use crate::base::error::Result;
use crate::base::planes::RawFrame;

/// The grid's step, pixels, both ways.
pub const SAMPLE_STEP: usize = 8;

/// A frame's luma (0..255) at every `SAMPLE_STEP`-th pixel of every `SAMPLE_STEP`-th row.
#[derive(Debug, Clone, PartialEq)]
pub struct LumaSample {
    /// The frame's size, pixels: samples of frames of different sizes are not compared.
    pub size: (i32, i32),
    pub values: Vec<u8>,
}

/// The luma grid of a frame: the decoder's Y plane, or BT.601 luma of BGR pixels.
pub fn luma_sample(raw: &RawFrame) -> Result<LumaSample> {
    let f = match raw {
        RawFrame::Yuv(p) => return Ok(plane_sample((p.width, p.height), p.y, p.y_stride)),
        RawFrame::Bgr(f) => f,
    };
    let (w, h) = (f.width().max(0) as usize, f.height().max(0) as usize);
    let bytes = f.bytes()?;
    let mut values = Vec::with_capacity(w.div_ceil(SAMPLE_STEP) * h.div_ceil(SAMPLE_STEP));
    for row in bytes.chunks_exact((w * 3).max(1)).step_by(SAMPLE_STEP) {
        values.extend(row.chunks_exact(3).step_by(SAMPLE_STEP).map(|px| {
            // BT.601 weights in 1/256 (29 + 150 + 77 = 256).
            ((29 * px[0] as u32 + 150 * px[1] as u32 + 77 * px[2] as u32 + 128) >> 8) as u8
        }));
    }
    Ok(LumaSample {
        size: (f.width(), f.height()),
        values,
    })
}

/// The luma grid of an 8-bit luma plane of `width` x `height` pixels, rows `stride` bytes
/// apart (a decoder's Y plane); rows the plane does not hold are left out.
pub fn plane_sample((width, height): (i32, i32), plane: &[u8], stride: usize) -> LumaSample {
    let (w, h) = (width.max(0) as usize, height.max(0) as usize);
    let mut values = Vec::with_capacity(w.div_ceil(SAMPLE_STEP) * h.div_ceil(SAMPLE_STEP));
    for y in (0..h).step_by(SAMPLE_STEP) {
        if let Some(row) = plane.get(y * stride..y * stride + w) {
            values.extend(row.iter().step_by(SAMPLE_STEP));
        }
    }
    LumaSample {
        size: (width, height),
        values,
    }
}

/// The mean absolute difference of two frames' luma grids, as a share of full scale (0..1);
/// `None` when the frames differ in size.
pub fn mean_abs_diff(a: &LumaSample, b: &LumaSample) -> Option<f64> {
    if a.size != b.size || a.values.len() != b.values.len() || a.values.is_empty() {
        return None;
    }
    let sum: u64 = a
        .values
        .iter()
        .zip(&b.values)
        .map(|(x, y)| x.abs_diff(*y) as u64)
        .sum();
    Some(sum as f64 / a.values.len() as f64 / 256.0)
}

/// The least a cut's difference exceeds the shot's usual one by, share of full scale: 0.03
/// (8 grey levels on average over the whole picture). Compression noise, flicker and the
/// shared clips' frame-to-frame motion stay under 0.027 above their median, while a cut
/// between two views of similar roads measured 0.043 (the same drive 2 s later) to 0.26.
pub const MIN_CUT_EXCESS: f64 = 0.03;

/// A frame differing from the one before by less than this, share of full scale, repeats it:
/// 1/256, one grey level on average (a duplicated frame decodes the same picture, or within
/// the coder's noise; a drive's moving frames differ by 0.005-0.03).
pub const REPEAT_DIFF: f64 = 1.0 / 256.0;

/// The shot's usual difference is the median of the differences before (at most
/// `RECENT_DIFFS`: a second of frames), once there are `MIN_RECENT_DIFFS` of them.
pub const RECENT_DIFFS: usize = 25;
pub const MIN_RECENT_DIFFS: usize = 5;

/// Whether a frame whose difference to the one before is `diff` begins a new shot, given the
/// differences of the frames before it in its shot (`recent`, oldest first): at least `ratio`
/// times their median and `MIN_CUT_EXCESS` above it. `None` while `recent` is too short to
/// tell (the first frames of a video or of a shot).
pub fn is_cut(diff: f64, recent: &[f64], ratio: f64) -> Option<bool> {
    if recent.len() < MIN_RECENT_DIFFS {
        return None;
    }
    // A repeated frame says nothing of how the shot moves: a drive whose frames are each shown
    // twice (30 fps made 60 by a frame-rate conversion, a dashcam writing duplicates) has half
    // its differences near 0, and their median would make each moving frame look like a cut.
    // Its usual difference is that of the frames that move, when there are enough of them (all
    // of them, without repeats); a still shot's (all repeats) is taken as it is.
    let moving: Vec<f64> = recent
        .iter()
        .copied()
        .filter(|d| *d >= REPEAT_DIFF)
        .collect();
    let usual = if moving.len() >= MIN_RECENT_DIFFS {
        crate::base::stats::median(&moving)?
    } else {
        crate::base::stats::median(recent)?
    };
    // The floor of one repeat's difference: a still picture's differences (0) make no ratio.
    Some(diff >= ratio * usual.max(REPEAT_DIFF) && diff - usual >= MIN_CUT_EXCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::frame::BgrFrame;
    use crate::base::planes::Yuv420Planes;
    use opencv::core::{Mat, Scalar, CV_8UC3};

    fn bgr(w: i32, h: i32, colour: [f64; 3]) -> BgrFrame {
        let m = Mat::new_rows_cols_with_default(
            h,
            w,
            CV_8UC3,
            Scalar::new(colour[0], colour[1], colour[2], 0.0),
        )
        .unwrap();
        BgrFrame::new(m).unwrap()
    }

    #[test]
    fn the_grid_reads_every_eighth_pixel_of_the_y_plane() {
        let (w, h) = (32usize, 16usize);
        let stride = 40;
        let y: Vec<u8> = (0..stride * h).map(|i| (i % 251) as u8).collect();
        let c = vec![128u8; 20 * 8];
        let p = Yuv420Planes::new((32, 16), (&y, stride), (&c, 20), (&c, 20)).unwrap();
        let s = luma_sample(&RawFrame::Yuv(p)).unwrap();
        assert_eq!(s.size, (32, 16));
        let want: Vec<u8> = [0usize, 8]
            .iter()
            .flat_map(|r| {
                (0..w)
                    .step_by(8)
                    .map(move |x| ((r * stride + x) % 251) as u8)
            })
            .collect();
        assert_eq!(s.values, want);
    }

    #[test]
    fn bgr_luma_is_bt601_and_the_difference_is_a_share_of_full_scale() {
        // Pure green: 150/256 of 255 -> 149; grey 100 stays 100.
        let g = luma_sample(&RawFrame::Bgr(&bgr(64, 24, [0.0, 255.0, 0.0]))).unwrap();
        assert!(g.values.iter().all(|v| *v == 149), "{:?}", &g.values[..4]);
        assert_eq!(g.values.len(), 8 * 3);
        let grey = luma_sample(&RawFrame::Bgr(&bgr(64, 24, [100.0; 3]))).unwrap();
        assert!(grey.values.iter().all(|v| *v == 100));
        let d = mean_abs_diff(&g, &grey).unwrap();
        assert!((d - 49.0 / 256.0).abs() < 1e-12, "{d}");
        // Frames of another size are not compared.
        let small = luma_sample(&RawFrame::Bgr(&bgr(32, 24, [100.0; 3]))).unwrap();
        assert_eq!(mean_abs_diff(&g, &small), None);
    }

    #[test]
    fn a_cut_stands_out_from_the_shots_own_differences() {
        let road = [0.010, 0.012, 0.009, 0.011, 0.010, 0.013];
        // Too few differences to tell.
        assert_eq!(is_cut(0.3, &road[..4], 4.0), None);
        // The LA clip's cut: 0.23 against a usual 0.01.
        assert_eq!(is_cut(0.23, &road, 4.0), Some(true));
        // Over four times the usual (0.0105) and 0.0345 above it.
        assert_eq!(is_cut(0.045, &road, 4.0), Some(true));
        // 3.3 times: the road moving faster for a frame (a pothole, a bump).
        assert_eq!(is_cut(0.035, &road, 4.0), Some(false));
        // A still or dim picture: tiny differences many times the usual are noise.
        let still = [0.001, 0.0008, 0.0012, 0.001, 0.0009];
        assert_eq!(is_cut(0.02, &still, 4.0), Some(false));
        // A fast, shaky camera (0.06 per frame): a jump to 0.2 is a cut, to 0.1 not.
        let shaky = [0.06, 0.05, 0.07, 0.06, 0.065];
        assert_eq!(is_cut(0.25, &shaky, 4.0), Some(true));
        assert_eq!(is_cut(0.1, &shaky, 4.0), Some(false));
    }

    /// Every frame shown twice (a 30 fps drive converted to 60 fps): half the differences are
    /// repeats (near 0). The usual difference is the moving frames' (0.02), so a frame that
    /// moves a little more (0.05, under a bridge) is no cut, while a real one (0.2) still is;
    /// before, the median of all (0.01) made 0.05 a cut: the Autobahn clip at 60 fps had 12.
    #[test]
    fn repeated_frames_do_not_make_moving_frames_cuts() {
        let doubled: Vec<f64> = (0..24)
            .map(|i| if i % 2 == 0 { 0.0005 } else { 0.02 })
            .collect();
        assert_eq!(is_cut(0.05, &doubled, 4.0), Some(false));
        assert_eq!(is_cut(0.2, &doubled, 4.0), Some(true));
        // A still shot, all repeats (a parked car): its usual difference stays the floor, and a
        // cut to another picture is found.
        let parked = [0.0005, 0.0004, 0.0006, 0.0005, 0.0005];
        assert_eq!(is_cut(0.05, &parked, 4.0), Some(true));
    }
}
