//! The camera file: intrinsics and distortion in OpenCV FileStorage YAML (the field names of
//! OpenCV's own calibration sample), readable by `cv2.FileStorage` and `cv::FileStorage`.

use crate::base::error::{Error, Result};
use opencv::core::{self, FileStorage, Mat, Vector};
use opencv::prelude::*;
use std::path::{Path, PathBuf};

/// Largest image side a camera file may declare (pixels): the undistortion maps are built at
/// this size, and no dashcam records more than 8K.
pub const MAX_SIDE: i32 = 16_384;

/// Largest magnitude of a distortion coefficient. Real lenses, even wide-angle ones under
/// OpenCV's rational model, stay within tens; beyond this the model folds the image.
pub const MAX_DISTORTION: f64 = 1_000.0;

/// A horizontal field of view of 58 degrees: the Udacity dashcam's (`2*atan(640/1156.9)`), used
/// as the focal length when no camera file is given.
pub const ASSUMED_HFOV_DEG: f64 = 58.0;

/// The camera matrix assumed without a camera file: principal point at the image centre, square
/// pixels, [`ASSUMED_HFOV_DEG`] across the frame's longer side ([`k_across_long_side`]).
pub fn assumed_k(width: i32, height: i32) -> [[f64; 3]; 3] {
    k_across_long_side(width, height, ASSUMED_HFOV_DEG)
}

/// A pinhole camera whose field of view `fov_deg` spans the frame's longer side: a lens's field
/// of view is quoted across its sensor's long side, so a phone filming upright (a portrait
/// frame) sees the road through what is its vertical field of view when it films lying down,
/// narrower across. For a landscape frame this is [`k_from_hfov`].
pub fn k_across_long_side(width: i32, height: i32, fov_deg: f64) -> [[f64; 3]; 3] {
    let mut k = k_from_hfov(width, height, fov_deg);
    if height > width && width > 0 {
        let s = height as f64 / width as f64;
        k[0][0] *= s;
        k[1][1] *= s;
    }
    k
}

/// The horizontal fields of view a pinhole geometry accepts, degrees: beyond about 160 the
/// focal length is a few pixels and the geometry meaningless (such lenses need a camera file).
pub const HFOV_RANGE_DEG: (f64, f64) = (10.0, 160.0);

/// Where the focal length of a geometry comes from: a camera file, a horizontal field of view
/// the user gave (`--fov`, `camera.hfov_deg`), or [`ASSUMED_HFOV_DEG`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Focal {
    CameraFile,
    GivenFov(f64),
    AssumedFov,
}

impl Focal {
    /// The source for a camera file (when there is one) and a given field of view.
    pub fn of(camera_file: bool, hfov_deg: Option<f64>) -> Self {
        match (camera_file, hfov_deg) {
            (true, _) => Focal::CameraFile,
            (false, Some(f)) => Focal::GivenFov(f),
            (false, None) => Focal::AssumedFov,
        }
    }

    /// The camera matrix of a `width` x `height` frame: the camera file's `k`, else a pinhole
    /// with the given or the assumed field of view.
    pub fn k(&self, k: Option<&[[f64; 3]; 3]>, width: i32, height: i32) -> [[f64; 3]; 3] {
        match (k, self) {
            (Some(k), _) => *k,
            (None, Focal::GivenFov(f)) => k_from_hfov(width, height, *f),
            (None, _) => assumed_k(width, height),
        }
    }

    /// The given field of view, degrees.
    pub fn given_hfov(&self) -> Option<f64> {
        match self {
            Focal::GivenFov(f) => Some(*f),
            _ => None,
        }
    }

    /// How the focal length was chosen, for the user ("assumed 58-deg field of view",
    /// "74.59-deg field of view given"); `None` for a camera file's.
    pub fn note(&self) -> Option<String> {
        match self {
            Focal::CameraFile => None,
            Focal::GivenFov(f) => Some(format!("{f}-deg field of view given")),
            Focal::AssumedFov => Some(format!("assumed {ASSUMED_HFOV_DEG}-deg field of view")),
        }
    }
}

/// The camera matrix of a pinhole camera with a horizontal field of view of `hfov_deg`:
/// principal point at the image centre, square pixels.
pub fn k_from_hfov(width: i32, height: i32, hfov_deg: f64) -> [[f64; 3]; 3] {
    let f = (width as f64 / 2.0) / (hfov_deg.to_radians() / 2.0).tan();
    [
        [f, 0.0, width as f64 / 2.0],
        [0.0, f, height as f64 / 2.0],
        [0.0, 0.0, 1.0],
    ]
}

/// A pinhole camera with lens distortion (OpenCV's model: k1, k2, p1, p2, k3).
#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    /// Image size the intrinsics belong to.
    pub width: i32,
    pub height: i32,
    /// 3x3 camera matrix, row-major: [[fx, 0, cx], [0, fy, cy], [0, 0, 1]].
    pub k: [[f64; 3]; 3],
    /// Distortion coefficients (k1, k2, p1, p2, k3[, ...]).
    pub dist: Vec<f64>,
}

/// A camera's lens model (`Camera::distortion`): focal lengths, principal point and the
/// coefficients k1, k2, p1, p2, k3 (OpenCV's model), read once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distortion {
    pub fx: f64,
    pub fy: f64,
    pub cx: f64,
    pub cy: f64,
    pub k: [f64; 5],
}

impl Distortion {
    /// Apply the lens distortion to ideal (undistorted) pixel coordinates.
    #[inline]
    pub fn pixel(&self, u: f64, v: f64) -> (f64, f64) {
        let x = (u - self.cx) / self.fx;
        let y = (v - self.cy) / self.fy;
        let (xd, yd) = self.normalized(x, y);
        (self.fx * xd + self.cx, self.fy * yd + self.cy)
    }

    /// OpenCV's distortion model on normalized coordinates.
    #[inline]
    pub fn normalized(&self, x: f64, y: f64) -> (f64, f64) {
        let [k1, k2, p1, p2, k3] = self.k;
        let r2 = x * x + y * y;
        let radial = 1.0 + k1 * r2 + k2 * r2 * r2 + k3 * r2 * r2 * r2;
        let xd = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x);
        let yd = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y;
        (xd, yd)
    }
}

/// What a calibration run adds to the camera file besides the camera itself.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CalibrationInfo {
    pub board_width: i32,
    pub board_height: i32,
    pub square_size: f64,
    pub avg_reprojection_error: f64,
    pub per_view_reprojection_errors: Vec<f64>,
    pub images: Vec<String>,
}

impl Camera {
    pub fn fx(&self) -> f64 {
        self.k[0][0]
    }
    pub fn fy(&self) -> f64 {
        self.k[1][1]
    }
    pub fn cx(&self) -> f64 {
        self.k[0][2]
    }
    pub fn cy(&self) -> f64 {
        self.k[1][2]
    }

    /// The camera matrix as a 3x3 CV_64F `Mat`.
    pub fn k_mat(&self) -> Result<Mat> {
        Ok(Mat::from_slice_2d(&self.k)?)
    }

    /// The distortion coefficients as a 1xN CV_64F `Mat`.
    pub fn dist_mat(&self) -> Result<Mat> {
        Ok(Mat::from_slice(&self.dist)?.try_clone()?)
    }

    /// Build from OpenCV matrices (camera matrix 3x3, distortion 1xN or Nx1, CV_64F).
    pub fn from_mats(width: i32, height: i32, k: &Mat, dist: &Mat) -> Result<Self> {
        let mut km = [[0.0; 3]; 3];
        for (r, row) in km.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                *v = *k.at_2d::<f64>(r as i32, c as i32)?;
            }
        }
        let n = dist.total();
        let mut d = Vec::with_capacity(n);
        for i in 0..n {
            d.push(*dist.at::<f64>(i as i32)?);
        }
        Ok(Self {
            width,
            height,
            k: km,
            dist: d,
        })
    }

    /// Apply the lens distortion to ideal (undistorted) pixel coordinates.
    pub fn distort_pixel(&self, u: f64, v: f64) -> (f64, f64) {
        self.distortion().pixel(u, v)
    }

    /// OpenCV's distortion model on normalized coordinates (k1, k2, p1, p2, k3).
    pub fn distort_normalized(&self, x: f64, y: f64) -> (f64, f64) {
        self.distortion().normalized(x, y)
    }

    /// The lens model's numbers read once, for a loop over many pixels (`distort_pixel` on
    /// each reads them from the camera again).
    pub fn distortion(&self) -> Distortion {
        let g = |i: usize| self.dist.get(i).copied().unwrap_or(0.0);
        Distortion {
            fx: self.fx(),
            fy: self.fy(),
            cx: self.cx(),
            cy: self.cy(),
            k: [g(0), g(1), g(2), g(3), g(4)],
        }
    }

    /// Write the camera (and calibration info) as OpenCV FileStorage YAML.
    pub fn save(&self, path: &Path, info: Option<&CalibrationInfo>) -> Result<()> {
        let io = |e: opencv::Error| Error::Io {
            path: path.to_path_buf(),
            message: e.message,
        };
        let mut fs =
            FileStorage::new_def(path, core::FileStorage_Mode::WRITE as i32).map_err(io)?;
        if !fs.is_opened().map_err(io)? {
            return Err(Error::Io {
                path: path.to_path_buf(),
                message: "cannot open for writing".into(),
            });
        }
        if let Some(info) = info {
            fs.write_i32("nframes", info.images.len() as i32)
                .map_err(io)?;
        }
        fs.write_i32("image_width", self.width).map_err(io)?;
        fs.write_i32("image_height", self.height).map_err(io)?;
        if let Some(info) = info {
            fs.write_i32("board_width", info.board_width).map_err(io)?;
            fs.write_i32("board_height", info.board_height)
                .map_err(io)?;
            fs.write_f64("square_size", info.square_size).map_err(io)?;
        }
        fs.write_mat("camera_matrix", &self.k_mat()?).map_err(io)?;
        // Column vectors, as OpenCV's sample writes them (5x1 distortion, Nx1 per-view errors).
        let dist_col = self
            .dist_mat()?
            .reshape(1, self.dist.len() as i32)?
            .try_clone()?;
        fs.write_mat("distortion_coefficients", &dist_col)
            .map_err(io)?;
        if let Some(info) = info {
            fs.write_f64("avg_reprojection_error", info.avg_reprojection_error)
                .map_err(io)?;
            if !info.per_view_reprojection_errors.is_empty() {
                let errs = Mat::from_slice(&info.per_view_reprojection_errors)?
                    .reshape(1, info.per_view_reprojection_errors.len() as i32)?
                    .try_clone()?;
                fs.write_mat("per_view_reprojection_errors", &errs)
                    .map_err(io)?;
            }
            let names: Vector<String> = info.images.iter().map(|s| s.as_str()).collect();
            fs.write_str_vec("images", &names).map_err(io)?;
        }
        fs.release().map_err(io)?;
        Ok(())
    }

    /// Read a camera file; a missing, malformed or impossible field (fx <= 0, NaN, inf, a
    /// distortion coefficient beyond `MAX_DISTORTION`, a size over `MAX_SIDE`) is an error
    /// naming it.
    pub fn load(path: &Path) -> Result<Self> {
        Ok(Self::load_with_info(path)?.0)
    }

    /// Read a camera file and whatever calibration info it holds.
    pub fn load_with_info(path: &Path) -> Result<(Self, CalibrationInfo)> {
        if !path.exists() {
            return Err(Error::NotFound {
                path: path.to_path_buf(),
            });
        }
        let pb: PathBuf = path.to_path_buf();
        let field_err = |field: &str, problem: &str| Error::CameraField {
            path: pb.clone(),
            field: field.to_string(),
            problem: problem.to_string(),
        };
        // What the file is instead, for the message: a lanes config (TOML) is the usual mix-up.
        let not_camera = |detail: &str| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let is_toml = text.parse::<toml::Table>().is_ok() && !text.trim().is_empty();
            Error::Io {
                path: pb.clone(),
                message: if is_toml {
                    "a TOML file (a lanes config?), not an OpenCV camera file (YAML from `lanes calibrate`): pass a config with --config".into()
                } else {
                    format!("not an OpenCV camera file (YAML from `lanes calibrate`){detail}")
                },
            }
        };
        if path.is_dir() || crate::base::still::is_still_path(path) {
            let what = if path.is_dir() {
                "a folder"
            } else {
                "a still image"
            };
            return Err(Error::Io {
                path: pb,
                message: format!("{what}, not an OpenCV camera file (YAML from `lanes calibrate BOARD_PHOTOS -o cam.yml`)"),
            });
        }
        let fs = FileStorage::new_def(path, core::FileStorage_Mode::READ as i32).map_err(|e| {
            // OpenCV's message spans lines and names its own source file: keep its reason.
            let reason = e
                .message
                .lines()
                .next()
                .and_then(|l| l.split("error: ").nth(1))
                .map(|r| format!(": {}", r.trim()))
                .unwrap_or_default();
            not_camera(&reason)
        })?;
        if !fs.is_opened()? {
            return Err(not_camera(""));
        }
        let int_field = |name: &str| -> Result<i32> {
            let node = fs.get(name)?;
            if node.empty()? || node.is_none()? {
                return Err(field_err(name, "missing"));
            }
            if !node.is_int()? {
                return Err(field_err(name, "not an integer"));
            }
            Ok(node.to_i32()?)
        };
        let width = int_field("image_width")?;
        let height = int_field("image_height")?;
        if width <= 0 || height <= 0 {
            return Err(field_err(
                "image_width",
                &format!("{width}x{height}, not a positive size"),
            ));
        }
        if width > MAX_SIDE || height > MAX_SIDE {
            return Err(field_err(
                "image_width",
                &format!("{width}x{height}, over the limit of {MAX_SIDE} pixels a side"),
            ));
        }
        let mat_field = |name: &str| -> Result<Mat> {
            let node = fs.get(name)?;
            if node.empty()? || node.is_none()? {
                return Err(field_err(name, "missing"));
            }
            let m = node.mat().map_err(|_| field_err(name, "not a matrix"))?;
            if m.empty() {
                return Err(field_err(name, "not a matrix"));
            }
            let mut d = Mat::default();
            m.convert_to_def(&mut d, core::CV_64F)?;
            Ok(d)
        };
        let k = mat_field("camera_matrix")?;
        if k.rows() != 3 || k.cols() != 3 {
            return Err(field_err(
                "camera_matrix",
                &format!("{}x{}, expected 3x3", k.rows(), k.cols()),
            ));
        }
        let dist = mat_field("distortion_coefficients")?;
        let n = dist.total();
        if !(n == 4 || n == 5 || n == 8 || n == 12 || n == 14) {
            return Err(field_err(
                "distortion_coefficients",
                &format!("{n} values, expected 4, 5, 8, 12 or 14"),
            ));
        }
        let cam = Camera::from_mats(width, height, &k, &dist)?;
        if let Some(v) = cam.k.iter().flatten().find(|v| !v.is_finite()) {
            return Err(field_err(
                "camera_matrix",
                &format!("{v}: every entry must be a finite number"),
            ));
        }
        if !(cam.fx() > 0.0 && cam.fy() > 0.0) {
            return Err(field_err(
                "camera_matrix",
                &format!(
                    "not a valid camera matrix: fx = {}, fy = {} (both must be > 0)",
                    cam.fx(),
                    cam.fy()
                ),
            ));
        }
        if let Some((i, v)) = cam
            .dist
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && v.abs() <= MAX_DISTORTION))
        {
            return Err(field_err(
                &format!("distortion_coefficients[{i}]"),
                &format!("{v} (expected a finite number within +-{MAX_DISTORTION})"),
            ));
        }
        let mut info = CalibrationInfo::default();
        let opt_int = |name: &str| -> i32 { fs.get(name).and_then(|n| n.to_i32()).unwrap_or(0) };
        info.board_width = opt_int("board_width");
        info.board_height = opt_int("board_height");
        info.square_size = fs
            .get("square_size")
            .and_then(|n| n.to_f64())
            .unwrap_or(0.0);
        info.avg_reprojection_error = fs
            .get("avg_reprojection_error")
            .and_then(|n| n.to_f64())
            .unwrap_or(0.0);
        if let Ok(node) = fs.get("per_view_reprojection_errors") {
            if let Ok(m) = node.mat() {
                let mut d = Mat::default();
                if !m.empty() && m.convert_to_def(&mut d, core::CV_64F).is_ok() {
                    for i in 0..d.total() {
                        if let Ok(v) = d.at::<f64>(i as i32) {
                            info.per_view_reprojection_errors.push(*v);
                        }
                    }
                }
            }
        }
        if let Ok(node) = fs.get("images") {
            if node.is_seq().unwrap_or(false) {
                for i in 0..node.size().unwrap_or(0) {
                    if let Ok(s) = node.at(i as i32).and_then(|n| n.to_string()) {
                        info.images.push(s);
                    }
                }
            }
        }
        Ok((cam, info))
    }

    /// Check that frames of `got` (width, height) read from `path` have this camera's size. The
    /// error names the camera file (`camera_file`, or "(--camera)" when not known) and the fix.
    pub fn check_frame_size(
        &self,
        path: &Path,
        camera_file: Option<&Path>,
        got: (i32, i32),
    ) -> Result<()> {
        if (self.width, self.height) == got {
            return Ok(());
        }
        Err(Error::CameraSize {
            path: path.to_path_buf(),
            camera_file: camera_file
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "(--camera)".into()),
            cam_w: self.width,
            cam_h: self.height,
            got_w: got.0,
            got_h: got.1,
        })
    }

    /// This camera with its intrinsics scaled to another image size (same aspect assumed per axis).
    pub fn scaled_to(&self, width: i32, height: i32) -> Camera {
        let sx = width as f64 / self.width as f64;
        let sy = height as f64 / self.height as f64;
        let mut k = self.k;
        k[0][0] *= sx;
        k[0][2] *= sx;
        k[1][1] *= sy;
        k[1][2] *= sy;
        Camera {
            width,
            height,
            k,
            dist: self.dist.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Udacity camera file with `from` replaced by `to`, loaded.
    fn load_with(from: &str, to: &str) -> Result<Camera> {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/calibration/udacity.yml"
        ))
        .unwrap();
        assert!(text.contains(from), "{from}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cam.yml");
        std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
        Camera::load(&p)
    }

    #[test]
    fn the_assumed_field_of_view_spans_the_frame_s_longer_side() {
        // Landscape: across the width, as `k_from_hfov`.
        assert_eq!(
            assumed_k(1280, 720),
            k_from_hfov(1280, 720, ASSUMED_HFOV_DEG)
        );
        // Portrait (a phone filming upright): across the height, the principal point centred.
        let k = assumed_k(304, 540);
        let f = 270.0 / (ASSUMED_HFOV_DEG.to_radians() / 2.0).tan();
        assert!(
            (k[0][0] - f).abs() < 1e-9 && (k[1][1] - f).abs() < 1e-9,
            "{k:?}"
        );
        assert_eq!((k[0][2], k[1][2]), (152.0, 270.0));
        // 35 degrees across its width.
        let across = 2.0 * (152.0 / k[0][0]).atan().to_degrees();
        assert!((across - 34.6).abs() < 0.1, "{across}");
    }

    #[test]
    fn hostile_numbers_in_a_camera_file_are_errors_naming_the_field() {
        assert!(load_with("image_width: 1280", "image_width: 1280").is_ok());
        let fx = "1.1616233573862326e+03";
        let k1 = "-2.7097061946110645e-01";
        let cases = [
            (
                fx,
                "0.",
                "field `camera_matrix` is not a valid camera matrix: fx = 0",
            ),
            (
                fx,
                "-5.",
                "field `camera_matrix` is not a valid camera matrix: fx = -5",
            ),
            (
                fx,
                ".nan",
                "field `camera_matrix` is NaN: every entry must be a finite number",
            ),
            (
                fx,
                ".inf",
                "field `camera_matrix` is inf: every entry must be a finite number",
            ),
            (
                k1,
                ".nan",
                "field `distortion_coefficients[0]` is NaN (expected a finite number",
            ),
            (
                k1,
                "-.inf",
                "field `distortion_coefficients[0]` is -inf (expected",
            ),
            (
                k1,
                "1.e+12",
                "field `distortion_coefficients[0]` is 1000000000000 (expected",
            ),
            (
                "image_width: 1280",
                "image_width: 0",
                "field `image_width` is 0x720, not a positive size",
            ),
            (
                "image_width: 1280",
                "image_width: 2000000000",
                "over the limit of 16384 pixels a side",
            ),
        ];
        for (from, to, want) in cases {
            let err = load_with(from, to).unwrap_err().to_string();
            assert!(err.contains("cam.yml: camera file "), "{to}: {err}");
            assert!(err.contains(want), "{to}: {err}");
        }
    }
}
