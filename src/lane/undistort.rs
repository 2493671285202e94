//! Undistortion: the remap maps are computed once into an `Undistorter`, then applied per frame.

use crate::base::camera::Camera;
use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use opencv::calib3d;
use opencv::core::{self, Mat};
use std::path::Path;

/// Holds the undistortion maps of one camera at one image size. Immutable once built.
pub struct Undistorter {
    camera: Camera,
    map1: Mat,
    map2: Mat,
}

impl Undistorter {
    /// Compute the maps (`init_undistort_rectify_map`, new camera matrix = K, as `cv2.undistort`).
    pub fn new(camera: &Camera) -> Result<Self> {
        let k = camera.k_mat()?;
        let d = camera.dist_mat()?;
        let mut m1 = Mat::default();
        let mut m2 = Mat::default();
        calib3d::init_undistort_rectify_map(
            &k,
            &d,
            &Mat::default(),
            &k,
            core::Size::new(camera.width, camera.height),
            core::CV_16SC2,
            &mut m1,
            &mut m2,
        )?;
        Ok(Self {
            camera: camera.clone(),
            map1: m1,
            map2: m2,
        })
    }

    /// The camera this undistorter was built for.
    pub fn camera(&self) -> &Camera {
        &self.camera
    }

    /// Check that a frame has the camera's size; `path` names the source in the error.
    pub fn check_size(&self, frame: &BgrFrame, path: &Path) -> Result<()> {
        crate::base::frame::check_size(
            path,
            (self.camera.width, self.camera.height),
            (frame.width(), frame.height()),
        )
    }

    /// A frame whose size is within `tolerance` px per axis of the camera's, placed at the
    /// top-left of a camera-size frame (cut or padded with black at the right and bottom): the
    /// same rule `lanes calibrate` applies to such board photos (`RunOptions::size_tolerance`).
    /// Returns the frame unchanged when it has the camera's size; `None` when it is further off.
    pub fn fit_within_tolerance(
        &self,
        frame: &BgrFrame,
        tolerance: i32,
    ) -> Result<Option<BgrFrame>> {
        frame.fitted_within((self.camera.width, self.camera.height), tolerance)
    }

    /// Undistort one frame (bilinear remap).
    pub fn undistort(&self, frame: &BgrFrame) -> Result<BgrFrame> {
        frame.remapped(&self.map1, &self.map2)
    }
}
