//! The stills pipeline: set-up computed once (`Pipeline::new`), then `analyze` per frame
//! (raw frame -> bird's-eye -> threshold -> search -> fit -> measure) and `overlay` to draw.

use crate::camera::Camera;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::fit::{self, LaneFit, Poly2, SearchResult};
use crate::frame::BgrFrame;
use crate::measure::{self, LaneMeasure};
use crate::render;
use crate::threshold::{self, Thresholded};
use crate::undistort::Undistorter;
use crate::warp::{BirdseyeRemap, Perspective};
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// Milliseconds spent in each analysis stage of one frame.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct StageTimes {
    /// Raw frame to bird's-eye view (undistortion and warp in one remap).
    pub warp_ms: f64,
    pub threshold_ms: f64,
    pub search_fit_ms: f64,
}

/// Everything the analysis of one frame produces.
pub struct Analysis {
    pub birdseye: BgrFrame,
    pub thresholded: Thresholded,
    pub search: SearchResult,
    pub fit: LaneFit,
    /// Measurements of this frame's own fits, when both lines were found.
    pub measure: Option<LaneMeasure>,
    pub times: StageTimes,
}

/// The built pipeline for one frame size: undistortion maps, perspective, composed remap.
pub struct Pipeline {
    pub cfg: Config,
    undistorter: Option<Undistorter>,
    pub persp: Perspective,
    birdseye: BirdseyeRemap,
    pub width: i32,
    pub height: i32,
}

impl Pipeline {
    /// Build for frames of `width` x `height`. With a camera, its size must match.
    pub fn new(cfg: Config, camera: Option<&Camera>, width: i32, height: i32) -> Result<Self> {
        cfg.validate()?;
        if let Some(cam) = camera {
            if cam.width != width || cam.height != height {
                return Err(Error::SizeMismatch {
                    path: "frame".into(),
                    expected_w: cam.width,
                    expected_h: cam.height,
                    got_w: width,
                    got_h: height,
                });
            }
        }
        let persp = Perspective::from_config(&cfg.perspective, width, height)?;
        let birdseye = BirdseyeRemap::new(&persp, camera)?;
        let undistorter = camera.map(Undistorter::new).transpose()?;
        Ok(Self { cfg, undistorter, persp, birdseye, width, height })
    }

    /// Check a frame's size against the pipeline's; `path` names the source.
    pub fn check_size(&self, frame: &BgrFrame, path: &Path) -> Result<()> {
        if frame.width() != self.width || frame.height() != self.height {
            return Err(Error::SizeMismatch {
                path: path.to_path_buf(),
                expected_w: self.width,
                expected_h: self.height,
                got_w: frame.width(),
                got_h: frame.height(),
            });
        }
        Ok(())
    }

    /// The undistorted frame (the frame itself when there is no camera).
    pub fn undistort(&self, raw: &BgrFrame) -> Result<BgrFrame> {
        match &self.undistorter {
            Some(u) => u.undistort(raw),
            None => Ok(raw.clone()),
        }
    }

    /// The bird's-eye view of a raw frame.
    pub fn birdseye(&self, raw: &BgrFrame) -> Result<BgrFrame> {
        self.birdseye.apply(raw)
    }

    /// Analyse one raw frame: with `prior` fits, search a band around them, else sliding windows.
    pub fn analyze(&self, raw: &BgrFrame, prior: Option<(Poly2, Poly2)>) -> Result<Analysis> {
        let t0 = Instant::now();
        let birdseye = self.birdseye.apply(raw)?;
        let t1 = Instant::now();
        let thresholded = threshold::threshold(&birdseye, &self.cfg.threshold)?;
        let t2 = Instant::now();
        let search = match prior {
            Some((l, r)) => fit::prior_search(&thresholded.mask, &l, &r, self.cfg.search.prior_margin)?,
            None => fit::sliding_window_search(&thresholded.mask, &self.cfg.search)?,
        };
        let fit = fit::fit_lines(&search, &self.cfg.search);
        let measure = match (&fit.left, &fit.right) {
            (Some(l), Some(r)) => Some(measure::measure(l, r, self.persp.width, self.persp.height, &self.cfg.units)),
            _ => None,
        };
        let t3 = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        Ok(Analysis {
            birdseye,
            thresholded,
            search,
            fit,
            measure,
            times: StageTimes { warp_ms: ms(t0, t1), threshold_ms: ms(t1, t2), search_fit_ms: ms(t2, t3) },
        })
    }

    /// Measure a lane given its two fits.
    pub fn measure(&self, left: &Poly2, right: &Poly2) -> LaneMeasure {
        measure::measure(left, right, self.persp.width, self.persp.height, &self.cfg.units)
    }

    /// Draw the overlay on the undistorted frame.
    pub fn overlay(&self, undistorted: &BgrFrame, lane: Option<(&Poly2, &Poly2)>, m: Option<&LaneMeasure>) -> Result<BgrFrame> {
        render::overlay(undistorted, lane, &self.persp, m, &self.cfg.render)
    }
}
