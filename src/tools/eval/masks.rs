//! Scoring against lane masks (the lanenet TuSimple examples: a binary mask of all lane pixels
//! and an instance mask giving each lane its own grey level): the share of predicted line points
//! within 20 px (scaled by `width / 1280`) of a lane pixel, and the reverse, the share of the
//! ego-lane lines' mask pixels within 20 px of a predicted line.

use super::{ego_pair, resample, Polyline};
use crate::base::error::{Error, Result};
use opencv::core::{self, Mat, Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// Distance threshold at 1280 px width.
pub const PIXEL_THRESH: f64 = 20.0;

/// Counts of one image (sum over images, then divide).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MaskCounts {
    /// Predicted line points inside the image, and how many are within the threshold of a lane pixel.
    pub pred_points: usize,
    pub pred_near: usize,
    /// Ego-lane mask pixels, and how many are within the threshold of a predicted line.
    pub mask_pixels: usize,
    pub mask_near: usize,
}

impl MaskCounts {
    pub fn add(&mut self, o: MaskCounts) {
        self.pred_points += o.pred_points;
        self.pred_near += o.pred_near;
        self.mask_pixels += o.mask_pixels;
        self.mask_near += o.mask_near;
    }
    /// Share of predicted points near a lane pixel (0 without predictions).
    pub fn pred_near_mask(&self) -> f64 {
        if self.pred_points == 0 {
            0.0
        } else {
            self.pred_near as f64 / self.pred_points as f64
        }
    }
    /// Share of ego-lane pixels near a predicted line.
    pub fn mask_near_pred(&self) -> f64 {
        if self.mask_pixels == 0 {
            0.0
        } else {
            self.mask_near as f64 / self.mask_pixels as f64
        }
    }
}

fn check_u8(m: &Mat, what: &'static str) -> Result<()> {
    if m.typ() != core::CV_8UC1 || m.empty() {
        return Err(Error::BadMat {
            what,
            expected: "8-bit single channel".into(),
            got: format!("type {}", m.typ()),
        });
    }
    Ok(())
}

/// Distance of every pixel to the nearest non-zero pixel of `mask` (CV_32F).
fn distance_to(mask: &Mat) -> Result<Mat> {
    let mut inv = Mat::default();
    core::compare(mask, &Scalar::all(0.0), &mut inv, core::CMP_EQ)?;
    let mut dist = Mat::default();
    imgproc::distance_transform(
        &inv,
        &mut dist,
        imgproc::DIST_L2,
        imgproc::DIST_MASK_PRECISE,
        core::CV_32F,
    )?;
    Ok(dist)
}

/// The ego-lane pixels: from the instance mask, the two lanes nearest the image centre at the
/// bottom; without an instance mask, every lane pixel of the binary mask.
pub fn ego_mask(binary: &Mat, instance: Option<&Mat>) -> Result<Mat> {
    check_u8(binary, "binary lane mask")?;
    let Some(inst) = instance else {
        let mut m = Mat::default();
        core::compare(binary, &Scalar::all(0.0), &mut m, core::CMP_GT)?;
        return Ok(m);
    };
    check_u8(inst, "instance lane mask")?;
    let (w, h) = (inst.cols(), inst.rows());
    let d = inst.data_bytes()?;
    // Per grey level: per row, sum of x and count.
    let mut rows: BTreeMap<u8, BTreeMap<i32, (f64, f64)>> = BTreeMap::new();
    for y in 0..h {
        for x in 0..w {
            let v = d[(y * w + x) as usize];
            if v != 0 {
                let e = rows.entry(v).or_default().entry(y).or_insert((0.0, 0.0));
                e.0 += x as f64;
                e.1 += 1.0;
            }
        }
    }
    let levels: Vec<u8> = rows.keys().copied().collect();
    let lines: Vec<Polyline> = levels
        .iter()
        .map(|v| {
            rows[v]
                .iter()
                .map(|(y, (sx, n))| (sx / n, *y as f64))
                .collect()
        })
        .collect();
    let (l, r) = ego_pair(&lines, w as f64 / 2.0, (h - 1) as f64);
    let keep: Vec<u8> = [l, r].into_iter().flatten().map(|i| levels[i]).collect();
    let mut m = Mat::zeros(h, w, core::CV_8UC1)?.to_mat()?;
    {
        let md = m.data_bytes_mut()?;
        for (i, v) in d.iter().enumerate() {
            if *v != 0 && keep.contains(v) {
                md[i] = 255;
            }
        }
    }
    Ok(m)
}

/// Score predicted lines (image pixels) against the lane mask `binary` and the ego-lane mask `ego`.
pub fn score(pred: &[Polyline], binary: &Mat, ego: &Mat) -> Result<MaskCounts> {
    check_u8(binary, "binary lane mask")?;
    check_u8(ego, "ego lane mask")?;
    let (w, h) = (binary.cols(), binary.rows());
    if ego.cols() != w || ego.rows() != h {
        return Err(Error::Invalid(format!(
            "lane masks differ in size: {}x{} and {}x{}",
            w,
            h,
            ego.cols(),
            ego.rows()
        )));
    }
    let thresh = PIXEL_THRESH * w as f64 / 1280.0;
    let mut c = MaskCounts::default();
    // Predicted points near a lane pixel.
    let to_lane = distance_to(binary)?;
    let lane_px = core::count_non_zero(binary)?;
    let mut raster = Mat::zeros(h, w, core::CV_8UC1)?.to_mat()?;
    for line in pred {
        let pts: Vec<(f64, f64)> = resample(line, 2.0)
            .into_iter()
            .filter(|(x, y)| *x >= 0.0 && *y >= 0.0 && *x <= (w - 1) as f64 && *y <= (h - 1) as f64)
            .collect();
        for (x, y) in &pts {
            c.pred_points += 1;
            let dd = *to_lane.at_2d::<f32>(y.round() as i32, x.round() as i32)? as f64;
            if lane_px > 0 && dd <= thresh {
                c.pred_near += 1;
            }
        }
        let v: Vector<Point> = line
            .iter()
            .map(|(x, y)| {
                Point::new(
                    x.clamp(-1e5, 1e5).round() as i32,
                    y.clamp(-1e5, 1e5).round() as i32,
                )
            })
            .collect();
        if v.len() >= 2 {
            let vv: Vector<Vector<Point>> = std::iter::once(v).collect();
            imgproc::polylines(
                &mut raster,
                &vv,
                false,
                Scalar::all(255.0),
                1,
                imgproc::LINE_8,
                0,
            )?;
        }
    }
    // Ego-lane pixels near a predicted line.
    let any_pred = core::count_non_zero(&raster)? > 0;
    let to_pred = distance_to(&raster)?;
    let ed = ego.data_bytes()?;
    let pd: &[f32] = to_pred.data_typed()?;
    for (i, v) in ed.iter().enumerate() {
        if *v != 0 {
            c.mask_pixels += 1;
            if any_pred && (pd[i] as f64) <= thresh {
                c.mask_near += 1;
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask_with_lines(xs: &[(f64, u8)]) -> (Mat, Mat) {
        let mut bin = Mat::zeros(720, 1280, core::CV_8UC1)
            .unwrap()
            .to_mat()
            .unwrap();
        let mut inst = bin.clone();
        for &(x, level) in xs {
            let p = line(x);
            let v: Vector<Point> = p
                .iter()
                .map(|(x, y)| Point::new(*x as i32, *y as i32))
                .collect();
            let vv: Vector<Vector<Point>> = std::iter::once(v).collect();
            imgproc::polylines(
                &mut bin,
                &vv,
                false,
                Scalar::all(255.0),
                5,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
            imgproc::polylines(
                &mut inst,
                &vv,
                false,
                Scalar::all(level as f64),
                5,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
        }
        (bin, inst)
    }

    fn line(x0: f64) -> Polyline {
        vec![(x0, 719.0), (x0, 300.0)]
    }

    #[test]
    fn perfect_shifted_and_missing() {
        let (bin, inst) = mask_with_lines(&[(100.0, 20), (400.0, 70), (900.0, 120), (1200.0, 170)]);
        let ego = ego_mask(&bin, Some(&inst)).unwrap();
        let ego_px = core::count_non_zero(&ego).unwrap() as usize;
        assert!(ego_px > 0 && ego_px < core::count_non_zero(&bin).unwrap() as usize);
        let perfect = score(&[line(400.0), line(900.0)], &bin, &ego).unwrap();
        assert_eq!(perfect.pred_near_mask(), 1.0);
        assert_eq!(perfect.mask_near_pred(), 1.0);
        // 25 px off: the 5 px wide mask's nearest pixel is 23 px away: nothing is near.
        let shifted = score(&[line(425.0), line(925.0)], &bin, &ego).unwrap();
        assert_eq!(shifted.pred_near_mask(), 0.0);
        assert_eq!(shifted.mask_near_pred(), 0.0);
        let missing = score(&[line(400.0)], &bin, &ego).unwrap();
        assert_eq!(missing.pred_near_mask(), 1.0);
        assert!((missing.mask_near_pred() - 0.5).abs() < 0.01, "{missing:?}");
    }
}
