//! The stills pipeline: set-up computed once (`Pipeline::new`), then `analyze` per frame
//! (raw frame -> bird's-eye -> threshold -> search -> fit -> measure) and `overlay` to draw.

use crate::camera::Camera;
use crate::config::Config;
use crate::error::Result;
use crate::fit::{self, LaneFit, Poly2, Scale, SearchResult};
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
///
/// `birdseye`, `thresholded` and `search` are in the analysed (scaled) bird's-eye view;
/// `fit` and `measure` are in nominal bird's-eye pixels.
pub struct Analysis {
    /// Scale of the analysed bird's-eye view relative to the nominal one.
    pub scale: Scale,
    pub birdseye: BgrFrame,
    pub thresholded: Thresholded,
    pub search: SearchResult,
    pub fit: LaneFit,
    /// Measurements of this frame's own fits, when both lines were found.
    pub measure: Option<LaneMeasure>,
    pub times: StageTimes,
}

/// Search parameters for a bird's-eye view scaled by `s`: margins scale by `s.x`, pixel counts
/// by `s.x * s.y`; the number of windows and the minimum number of rows stay.
pub fn scaled_search(cfg: &crate::config::SearchConfig, s: Scale) -> crate::config::SearchConfig {
    crate::config::SearchConfig {
        windows: cfg.windows,
        margin: ((cfg.margin as f64 * s.x).round() as u32).max(1),
        min_pixels: (cfg.min_pixels as f64 * s.x * s.y).round() as u32,
        prior_margin: ((cfg.prior_margin as f64 * s.x).round() as u32).max(1),
        min_rows: cfg.min_rows,
    }
}

impl Analysis {
    /// The search picture (windows, line pixels, this frame's fits, histogram) in the analysed view.
    pub fn search_picture(&self) -> Result<BgrFrame> {
        let l = self.fit.left.map(|p| p.to_scaled(self.scale));
        let r = self.fit.right.map(|p| p.to_scaled(self.scale));
        render::search_picture(&self.thresholded.mask, &self.search, l.as_ref(), r.as_ref())
    }
}

/// The built pipeline for one frame size: undistortion maps, perspective, composed remap.
pub struct Pipeline {
    pub cfg: Config,
    undistorter: Option<Undistorter>,
    camera: Option<Camera>,
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
            crate::frame::check_size(Path::new("frame"), (cam.width, cam.height), (width, height))?;
        }
        let persp = Perspective::from_config(&cfg.perspective, width, height)?;
        let birdseye = BirdseyeRemap::new(&persp, camera, cfg.perspective.scale())?;
        let undistorter = camera.map(Undistorter::new).transpose()?;
        threshold::prepare()?;
        Ok(Self {
            cfg,
            undistorter,
            camera: camera.cloned(),
            persp,
            birdseye,
            width,
            height,
        })
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
        let s = self.cfg.perspective.scale();
        let search_cfg = scaled_search(&self.cfg.search, s);
        let search = match prior {
            Some((l, r)) => fit::prior_search(
                &thresholded.mask,
                &l.to_scaled(s),
                &r.to_scaled(s),
                search_cfg.prior_margin,
            )?,
            None => fit::sliding_window_search(&thresholded.mask, &search_cfg)?,
        };
        let mut fit = fit::fit_lines(&search, &search_cfg);
        fit.left = fit.left.map(|p| p.from_scaled(s));
        fit.right = fit.right.map(|p| p.from_scaled(s));
        let measure = match (&fit.left, &fit.right) {
            (Some(l), Some(r)) => Some(measure::measure(
                l,
                r,
                self.persp.width,
                self.persp.height,
                &self.cfg.units,
            )),
            _ => None,
        };
        let t3 = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        Ok(Analysis {
            scale: s,
            birdseye,
            thresholded,
            search,
            fit,
            measure,
            times: StageTimes {
                warp_ms: ms(t0, t1),
                threshold_ms: ms(t1, t2),
                search_fit_ms: ms(t2, t3),
            },
        })
    }

    /// Measure a lane given its two fits.
    pub fn measure(&self, left: &Poly2, right: &Poly2) -> LaneMeasure {
        measure::measure(
            left,
            right,
            self.persp.width,
            self.persp.height,
            &self.cfg.units,
        )
    }

    /// Draw the overlay on the undistorted frame (consumed; drawn in place).
    pub fn overlay(
        &self,
        undistorted: BgrFrame,
        lane: Option<(&Poly2, &Poly2)>,
        m: Option<&LaneMeasure>,
    ) -> Result<BgrFrame> {
        render::overlay(
            undistorted,
            lane,
            &self.persp,
            &|x, y| (x, y),
            m,
            &self.cfg.render,
        )
    }

    /// Draw the overlay on the raw frame, distorting the lane polygon to the raw geometry.
    pub fn overlay_raw(
        &self,
        raw: BgrFrame,
        lane: Option<(&Poly2, &Poly2)>,
        m: Option<&LaneMeasure>,
    ) -> Result<BgrFrame> {
        match &self.camera {
            Some(cam) => render::overlay(
                raw,
                lane,
                &self.persp,
                &|x, y| cam.distort_pixel(x, y),
                m,
                &self.cfg.render,
            ),
            None => self.overlay(raw, lane, m),
        }
    }

    /// The overlay in the configured output geometry (`render.geometry`), from the raw frame.
    pub fn render_overlay(
        &self,
        raw: BgrFrame,
        lane: Option<(&Poly2, &Poly2)>,
        m: Option<&LaneMeasure>,
    ) -> Result<BgrFrame> {
        match self.cfg.render.geometry {
            crate::config::Geometry::Original => self.overlay_raw(raw, lane, m),
            crate::config::Geometry::Undistorted => {
                let u = self.undistort(&raw)?;
                self.overlay(u, lane, m)
            }
        }
    }
}
