//! The camera file: intrinsics and distortion in OpenCV FileStorage YAML (the field names of
//! OpenCV's own calibration sample), readable by `cv2.FileStorage` and `cv::FileStorage`.

use crate::error::{Error, Result};
use opencv::core::{self, FileStorage, Mat, Vector};
use opencv::prelude::*;
use std::path::{Path, PathBuf};

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
        let x = (u - self.cx()) / self.fx();
        let y = (v - self.cy()) / self.fy();
        let (xd, yd) = self.distort_normalized(x, y);
        (self.fx() * xd + self.cx(), self.fy() * yd + self.cy())
    }

    /// OpenCV's distortion model on normalized coordinates (k1, k2, p1, p2, k3).
    pub fn distort_normalized(&self, x: f64, y: f64) -> (f64, f64) {
        let g = |i: usize| self.dist.get(i).copied().unwrap_or(0.0);
        let (k1, k2, p1, p2, k3) = (g(0), g(1), g(2), g(3), g(4));
        let r2 = x * x + y * y;
        let radial = 1.0 + k1 * r2 + k2 * r2 * r2 + k3 * r2 * r2 * r2;
        let xd = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x);
        let yd = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y;
        (xd, yd)
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

    /// Read a camera file; a missing or malformed field is an error naming it.
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
        let fs = FileStorage::new_def(path, core::FileStorage_Mode::READ as i32).map_err(|e| {
            Error::Io {
                path: pb.clone(),
                message: format!("not an OpenCV FileStorage file ({})", e.message),
            }
        })?;
        if !fs.is_opened()? {
            return Err(Error::Io {
                path: pb.clone(),
                message: "not an OpenCV FileStorage file".into(),
            });
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
        if !(cam.fx() > 0.0 && cam.fy() > 0.0) || cam.k.iter().flatten().any(|v| !v.is_finite()) {
            return Err(field_err(
                "camera_matrix",
                "not a valid camera matrix (fx, fy must be > 0)",
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
