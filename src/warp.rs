//! Perspective warp to the bird's-eye view and back: a `Perspective` holds M and its inverse,
//! and a `BirdseyeRemap` composes undistortion and warp into one remap from the raw frame.

use crate::camera::Camera;
use crate::config::PerspectiveConfig;
use crate::error::{Error, Result};
use crate::frame::BgrFrame;
use nalgebra::{Matrix3, Vector3};
use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;

/// A planar homography from the undistorted frame to the bird's-eye view, and its inverse.
#[derive(Debug, Clone, PartialEq)]
pub struct Perspective {
    m: Matrix3<f64>,
    minv: Matrix3<f64>,
    /// Size of the bird's-eye view, pixels.
    pub width: i32,
    pub height: i32,
}

fn mat3_from_cv(m: &Mat) -> Result<Matrix3<f64>> {
    let mut out = Matrix3::zeros();
    for r in 0..3 {
        for c in 0..3 {
            out[(r, c)] = *m.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    Ok(out)
}

fn mat3_to_cv(m: &Matrix3<f64>) -> Result<Mat> {
    let rows: [[f64; 3]; 3] = [
        [m[(0, 0)], m[(0, 1)], m[(0, 2)]],
        [m[(1, 0)], m[(1, 1)], m[(1, 2)]],
        [m[(2, 0)], m[(2, 1)], m[(2, 2)]],
    ];
    Ok(Mat::from_slice_2d(&rows)?)
}

/// Twice the signed area of a quad given in (tl, tr, bl, br) order.
fn quad_area(q: &[[f64; 2]; 4]) -> f64 {
    // polygon order tl, tr, br, bl
    let poly = [q[0], q[1], q[3], q[2]];
    let mut a = 0.0;
    for i in 0..4 {
        let p = poly[i];
        let n = poly[(i + 1) % 4];
        a += p[0] * n[1] - n[0] * p[1];
    }
    a
}

impl Perspective {
    /// Build from a source quad and destination quad (tl, tr, bl, br); the bird's-eye view has
    /// size `width` x `height`. Refuses degenerate quads.
    pub fn new(src: &[[f64; 2]; 4], dst: &[[f64; 2]; 4], width: i32, height: i32) -> Result<Self> {
        for (name, q) in [("src", src), ("dst", dst)] {
            if quad_area(q).abs() < 1.0 {
                return Err(Error::SingularPerspective(format!(
                    "{name} quad {q:?} has no area"
                )));
            }
        }
        let to_vec = |q: &[[f64; 2]; 4]| -> core::Vector<core::Point2f> {
            q.iter()
                .map(|p| core::Point2f::new(p[0] as f32, p[1] as f32))
                .collect()
        };
        let m = imgproc::get_perspective_transform_def(&to_vec(src), &to_vec(dst))?;
        let m = mat3_from_cv(&m)?;
        let minv = m
            .try_inverse()
            .ok_or_else(|| Error::SingularPerspective(format!("src {src:?} -> dst {dst:?}")))?;
        if !m.iter().all(|v| v.is_finite()) || m.determinant().abs() < 1e-12 {
            return Err(Error::SingularPerspective(format!(
                "src {src:?} -> dst {dst:?}"
            )));
        }
        Ok(Self {
            m,
            minv,
            width,
            height,
        })
    }

    /// From the config section; the bird's-eye view has the given size.
    pub fn from_config(cfg: &PerspectiveConfig, width: i32, height: i32) -> Result<Self> {
        Self::new(&cfg.src, &cfg.dst, width, height)
    }

    /// The forward matrix (undistorted frame -> bird's-eye).
    pub fn matrix(&self) -> &Matrix3<f64> {
        &self.m
    }
    /// The inverse matrix (bird's-eye -> undistorted frame).
    pub fn inverse(&self) -> &Matrix3<f64> {
        &self.minv
    }

    fn apply(m: &Matrix3<f64>, x: f64, y: f64) -> (f64, f64) {
        let v = m * Vector3::new(x, y, 1.0);
        (v[0] / v[2], v[1] / v[2])
    }

    /// Map a point of the undistorted frame into the bird's-eye view.
    pub fn to_birdseye(&self, x: f64, y: f64) -> (f64, f64) {
        Self::apply(&self.m, x, y)
    }
    /// Map a bird's-eye point back into the undistorted frame.
    pub fn from_birdseye(&self, x: f64, y: f64) -> (f64, f64) {
        Self::apply(&self.minv, x, y)
    }

    /// Warp a whole undistorted frame to the bird's-eye view (bilinear).
    pub fn warp(&self, frame: &BgrFrame) -> Result<BgrFrame> {
        let mut out = Mat::default();
        imgproc::warp_perspective(
            frame.mat(),
            &mut out,
            &mat3_to_cv(&self.m)?,
            core::Size::new(self.width, self.height),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        BgrFrame::new(out)
    }

    /// Warp a bird's-eye image back to a frame of the given size (bilinear).
    pub fn unwarp(&self, img: &Mat, width: i32, height: i32) -> Result<Mat> {
        let mut out = Mat::default();
        imgproc::warp_perspective(
            img,
            &mut out,
            &mat3_to_cv(&self.minv)?,
            core::Size::new(width, height),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        Ok(out)
    }
}

/// One remap from the raw (distorted) frame straight to the bird's-eye view: for every
/// bird's-eye pixel, its source in the raw frame is `distort(M^-1 * p)`. Computed once.
pub struct BirdseyeRemap {
    map1: Mat,
    map2: Mat,
    pub width: i32,
    pub height: i32,
}

impl BirdseyeRemap {
    /// Compose `camera`'s distortion (none when `None`) with the perspective's inverse; the
    /// output is the bird's-eye view scaled by `scale` (1 = the perspective's own size).
    pub fn new(
        persp: &Perspective,
        camera: Option<&Camera>,
        scale: crate::fit::Scale,
    ) -> Result<Self> {
        let w = ((persp.width as f64 * scale.x).round() as i32).max(1);
        let h = ((persp.height as f64 * scale.y).round() as i32).max(1);
        let mut map =
            Mat::new_rows_cols_with_default(h, w, core::CV_32FC2, core::Scalar::all(-1.0))?;
        {
            let data: &mut [core::Vec2f] = map.data_typed_mut()?;
            let minv = persp.inverse();
            for v in 0..h {
                for u in 0..w {
                    // Scaled pixel u samples nominal coordinate u / scale, so that a curve fitted
                    // in the scaled view maps back exactly with `Poly2::from_scaled`.
                    let un = u as f64 / scale.x;
                    let vn = v as f64 / scale.y;
                    let (x, y) = Perspective::apply(minv, un, vn);
                    let (sx, sy) = match camera {
                        Some(cam) => cam.distort_pixel(x, y),
                        None => (x, y),
                    };
                    let (sx, sy) =
                        if sx.is_finite() && sy.is_finite() && sx.abs() < 1e6 && sy.abs() < 1e6 {
                            (sx as f32, sy as f32)
                        } else {
                            (-1.0e5, -1.0e5)
                        };
                    data[(v * w + u) as usize] = core::Vec2f::from([sx, sy]);
                }
            }
        }
        let mut m1 = Mat::default();
        let mut m2 = Mat::default();
        imgproc::convert_maps(
            &map,
            &Mat::default(),
            &mut m1,
            &mut m2,
            core::CV_16SC2,
            false,
        )?;
        Ok(Self {
            map1: m1,
            map2: m2,
            width: w,
            height: h,
        })
    }

    /// The bird's-eye view of a raw frame computed only on `bands` (which index into this
    /// view), packed: row `r` of the result holds the runs of packed row `r` side by side. Each
    /// computed pixel is exactly the pixel `apply` gives at the same place (the same fixed-point
    /// map entries); columns outside the view are black.
    pub fn apply_bands(&self, raw: &BgrFrame, bands: &ColumnBands) -> Result<BgrFrame> {
        if bands.width != self.width || bands.height != self.height {
            return Err(Error::Invalid(format!(
                "column bands for a {}x{} view used on a {}x{} bird's-eye remap",
                bands.width, bands.height, self.width, self.height
            )));
        }
        let pw = bands.packed_width();
        let rows = bands.rows();
        // SAFETY: `new_rows_cols` leaves the elements uninitialised; every element of both maps
        // is written below before OpenCV reads them (the spans and the gaps cover the packed
        // image exactly).
        let mut m1 = unsafe { Mat::new_rows_cols(rows as i32, pw as i32, core::CV_16SC2) }?;
        let mut m2 = unsafe { Mat::new_rows_cols(rows as i32, pw as i32, core::CV_16UC1) }?;
        {
            // Out of the view: a source point far outside the frame, so the border (black).
            const OUTSIDE: core::Vec2s = core::Vec2s::from_array([-30000, -30000]);
            let src1: &[core::Vec2s] = self.map1.data_typed()?;
            let src2: &[u16] = self.map2.data_typed()?;
            let d1: &mut [core::Vec2s] = m1.data_typed_mut()?;
            let d2: &mut [u16] = m2.data_typed_mut()?;
            for sp in bands.spans() {
                let (a, b, n) = (sp.view, sp.packed, sp.len);
                d1[b..b + n].copy_from_slice(&src1[a..a + n]);
                d2[b..b + n].copy_from_slice(&src2[a..a + n]);
            }
            for g in bands.gaps() {
                d1[g.clone()].fill(OUTSIDE);
                d2[g].fill(0);
            }
        }
        let mut out = Mat::default();
        imgproc::remap(
            raw.mat(),
            &mut out,
            &m1,
            &m2,
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        BgrFrame::new(out)
    }

    /// Produce the bird's-eye view of a raw frame (bilinear).
    pub fn apply(&self, raw: &BgrFrame) -> Result<BgrFrame> {
        let mut out = Mat::default();
        imgproc::remap(
            raw.mat(),
            &mut out,
            &self.map1,
            &self.map2,
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            core::Scalar::default(),
        )?;
        BgrFrame::new(out)
    }
}

/// Runs of columns to compute on every `row_step`-th row of a bird's-eye view: `bands` runs of
/// `cols` columns per computed row, run `k` of packed row `r` (view row `r * row_step`) starting
/// at column `x0[r * bands + k]`. Columns outside the view are part of a run's layout but are
/// empty (never computed, never reported).
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnBands {
    /// Columns per run.
    pub cols: usize,
    /// Runs per row.
    pub bands: usize,
    /// View rows per computed row (1 = every row).
    pub row_step: usize,
    /// First column of each run, row-major over the computed rows.
    pub x0: Vec<i32>,
    /// Size of the full bird's-eye view the runs index into.
    pub width: i32,
    pub height: i32,
}

impl ColumnBands {
    /// The runs covering every column strictly within `margin` px of each curve (the prior
    /// search's band) on every `row_step`-th row of a `width` x `height` view. A row where a
    /// curve is not finite gets an empty run.
    pub fn around(
        curves: &[crate::fit::Poly2],
        margin: u32,
        width: i32,
        height: i32,
        row_step: usize,
    ) -> Self {
        let m = margin as f64;
        let cols = 2 * margin as usize + 2;
        let row_step = row_step.max(1);
        let mut x0 = Vec::with_capacity(curves.len() * height.max(0) as usize);
        for y in (0..height.max(0)).step_by(row_step) {
            for c in curves {
                let lo = c.eval(y as f64) - m;
                let start = if lo.is_finite() && lo.abs() < 1e8 {
                    lo.floor() as i32
                } else {
                    i32::MIN / 2
                };
                x0.push(start);
            }
        }
        Self {
            cols,
            bands: curves.len(),
            row_step,
            x0,
            width,
            height,
        }
    }

    /// Number of computed rows (rows of the packed band image).
    pub fn rows(&self) -> usize {
        (self.height.max(0) as usize).div_ceil(self.row_step)
    }

    /// The view row of packed row `r`.
    #[inline]
    pub fn view_row(&self, r: usize) -> usize {
        r * self.row_step
    }

    /// Width of the packed band image (all runs of a row side by side).
    pub fn packed_width(&self) -> usize {
        self.cols * self.bands
    }

    /// The valid packed range of run `k` on packed row `r` and the view column of its first
    /// entry.
    #[inline]
    pub fn run(&self, r: usize, k: usize) -> Option<(std::ops::Range<usize>, usize)> {
        let x0 = self.x0[r * self.bands + k] as i64;
        let a = x0.max(0);
        let b = (x0 + self.cols as i64).min(self.width as i64);
        if a >= b {
            return None;
        }
        let j0 = k * self.cols + (a - x0) as usize;
        Some((j0..j0 + (b - a) as usize, a as usize))
    }

    /// Every non-empty run, in packed order, with its places in the packed band image and in
    /// the whole view (both row-major).
    pub fn spans(&self) -> impl Iterator<Item = Span> + '_ {
        let (pw, w) = (self.packed_width(), self.width as usize);
        (0..self.rows()).flat_map(move |r| {
            (0..self.bands).filter_map(move |k| {
                self.run(r, k).map(|(rg, x)| Span {
                    packed: r * pw + rg.start,
                    view: self.view_row(r) * w + x,
                    len: rg.len(),
                })
            })
        })
    }

    /// The packed indices (row-major) that no run covers: in each run's slot, the columns
    /// outside the view, and whole slots of empty runs. With `spans`, they cover the packed
    /// band image exactly once.
    pub fn gaps(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let pw = self.packed_width();
        (0..self.rows()).flat_map(move |r| {
            (0..self.bands).flat_map(move |k| {
                let slot = r * pw + k * self.cols;
                let (lo, hi) = match self.run(r, k) {
                    Some((rg, _)) => (r * pw + rg.start, r * pw + rg.end),
                    None => (slot, slot),
                };
                [slot..lo, hi..slot + self.cols]
                    .into_iter()
                    .filter(|g| !g.is_empty())
            })
        })
    }
}

/// One computed run of `ColumnBands`: `len` pixels starting at index `packed` of the packed
/// band image and at index `view` of the whole view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub packed: usize,
    pub view: usize,
    pub len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PerspectiveConfig;

    #[test]
    fn default_quad_maps_src_corners_to_dst_corners() {
        let c = PerspectiveConfig::default();
        let p = Perspective::from_config(&c, 1280, 720).unwrap();
        for i in 0..4 {
            let (x, y) = p.to_birdseye(c.src[i][0], c.src[i][1]);
            assert!(
                (x - c.dst[i][0]).abs() < 1e-3 && (y - c.dst[i][1]).abs() < 1e-3,
                "{i}: {x},{y}"
            );
        }
    }

    #[test]
    fn warp_then_unwarp_is_identity_within_a_pixel() {
        let c = PerspectiveConfig::default();
        let p = Perspective::from_config(&c, 1280, 720).unwrap();
        for &(x, y) in &[
            (300.0, 700.0),
            (640.0, 500.0),
            (1000.0, 650.0),
            (600.0, 470.0),
        ] {
            let (bx, by) = p.to_birdseye(x, y);
            let (rx, ry) = p.from_birdseye(bx, by);
            assert!((rx - x).abs() < 1.0 && (ry - y).abs() < 1.0);
        }
    }

    #[test]
    fn degenerate_quad_is_refused() {
        let src = [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]];
        let dst = PerspectiveConfig::default().dst;
        assert!(matches!(
            Perspective::new(&src, &dst, 1280, 720),
            Err(Error::SingularPerspective(_))
        ));
    }

    #[test]
    fn spans_and_gaps_cover_the_packed_image_exactly_once() {
        // Curves inside, across the left and right edges, entirely outside, and not finite.
        let curves = [
            crate::fit::Poly2::new(0.0, 0.0, 300.0),
            crate::fit::Poly2::new(0.0, 2.0, -100.0),
            crate::fit::Poly2::new(0.0, -1.5, 1000.0),
            crate::fit::Poly2::new(0.0, 0.0, 5000.0),
            crate::fit::Poly2::new(f64::NAN, 0.0, 0.0),
        ];
        for step in [1, 3] {
            let bands = ColumnBands::around(&curves, 40, 640, 360, step);
            let mut seen = vec![0u8; bands.rows() * bands.packed_width()];
            let (mut in_spans, mut in_gaps) = (0, 0);
            for sp in bands.spans() {
                seen[sp.packed..sp.packed + sp.len]
                    .iter_mut()
                    .for_each(|v| *v += 1);
                in_spans += sp.len;
            }
            for g in bands.gaps() {
                in_gaps += g.len();
                seen[g].iter_mut().for_each(|v| *v += 1);
            }
            assert!(seen.iter().all(|v| *v == 1), "row step {step}");
            assert!(in_spans > 0 && in_gaps > 0, "{in_spans} {in_gaps}");
        }
    }

    #[test]
    fn band_pixels_equal_opencv_remap_everywhere() {
        // Every column of the view (the band spans it all), on a noise frame, through the
        // Udacity lens: inside, at the frame's edges (taps partly outside) and outside it.
        let cam = Camera::load(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("calibration/udacity.yml"),
        )
        .unwrap();
        let p = Perspective::from_config(&PerspectiveConfig::default(), 1280, 720).unwrap();
        let remap =
            BirdseyeRemap::new(&p, Some(&cam), crate::fit::Scale { x: 1.0, y: 0.5 }).unwrap();
        let mut raw =
            Mat::new_rows_cols_with_default(720, 1280, core::CV_8UC3, core::Scalar::all(0.0))
                .unwrap();
        let mut state = 12345u64;
        for v in raw.data_bytes_mut().unwrap() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *v = (state >> 56) as u8;
        }
        let raw = BgrFrame::new(raw).unwrap();
        let whole = remap.apply(&raw).unwrap();
        let centre = crate::fit::Poly2::new(0.0, 0.0, 640.0);
        let bands = ColumnBands::around(&[centre], 641, remap.width, remap.height, 1);
        let packed = remap.apply_bands(&raw, &bands).unwrap();
        let (wd, pd) = (whole.bytes().unwrap(), packed.bytes().unwrap());
        let (w, pw) = (remap.width as usize, bands.packed_width());
        let (mut n, mut black) = (0, 0);
        for r in 0..bands.rows() {
            let (rg, x) = bands.run(r, 0).unwrap();
            assert_eq!(rg.len(), w);
            for i in 0..rg.len() {
                let a = (r * w + x + i) * 3;
                let b = (r * pw + rg.start + i) * 3;
                assert_eq!(&wd[a..a + 3], &pd[b..b + 3], "row {r} column {}", x + i);
                n += 1;
                black += (wd[a..a + 3] == [0, 0, 0]) as usize;
            }
        }
        assert_eq!(n, 1280 * 360);
        assert!(
            black > 1000,
            "the view reaches outside the frame ({black} black pixels)"
        );
    }
}
