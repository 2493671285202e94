//! The stills pipeline: set-up computed once (`Pipeline::new`), then `analyze` per frame
//! (raw frame -> bird's-eye -> threshold -> search -> fit -> measure); drawing is in
//! `present` (pictures of the results) on top of `render`.

use crate::base::camera::{Camera, Focal};
use crate::base::config::Config;
use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::base::planes::RawFrame;
use crate::lane::confidence::Detection;
use crate::lane::denoise;
use crate::lane::fit::{self, LaneFit, Poly2, Scale, SearchResult};
use crate::lane::horizon::Horizon;
use crate::lane::judge::{judge, judge_whole_view, scaled_search, Judged};
use crate::lane::measure::{self, LaneMeasure};
use crate::lane::threshold::{self, MaskRef, Thresholded};
use crate::lane::undistort::Undistorter;
use crate::lane::warp::{BirdseyeRemap, ColumnBands, Perspective, RowPlan};
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// Milliseconds spent in each analysis stage of one frame.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct StageTimes {
    /// Raw frame to bird's-eye view (undistortion and warp in one remap). With a prior fit
    /// (band mode) only the bands' set-up: their remap is done inside the threshold pass.
    pub warp_ms: f64,
    /// Thresholding; in band mode including the bands' remap.
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
    /// The whole bird's-eye view in colour; `None` when only the search bands were computed
    /// (`search.band_only` with a prior fit).
    pub birdseye: Option<BgrFrame>,
    pub thresholded: Thresholded,
    pub search: SearchResult,
    /// This frame's fits (every line the search found enough rows for).
    pub fit: LaneFit,
    /// What the frame reports: the lines the evidence supports, their confidences, the status.
    pub detection: Detection,
    /// Measurements of the lane this frame reports (`Analysis::lane`), when it reports one.
    pub measure: Option<LaneMeasure>,
    /// The nominal bird's-eye row the lane is seen from (`Judged::seen_from`; 0: all of it).
    pub seen_from: f64,
    /// The frame's sensor noise (grey levels) when it was smoothed before the analysis
    /// (`denoise`); `None` when it was analysed as given.
    pub noise_smoothed: Option<f64>,
    pub times: StageTimes,
}

/// Threshold parameters for a bird's-eye view scaled by `s`: widths across the road scale by
/// `s.x`, run lengths along it by `s.y`.
pub fn scaled_threshold(
    cfg: &crate::base::config::ThresholdConfig,
    s: Scale,
) -> crate::base::config::ThresholdConfig {
    let px = |v: u32, k: f64| ((v as f64 * k).round() as u32).max(1);
    crate::base::config::ThresholdConfig {
        marking_width_px: px(cfg.marking_width_px, s.x),
        side_px: px(cfg.side_px, s.x),
        min_run_px: if cfg.min_run_px == 0 {
            0
        } else {
            px(cfg.min_run_px, s.y)
        },
        ..*cfg
    }
}

impl Analysis {
    /// The lines this frame reports (nominal bird's-eye pixels): what stills, `lanes eval` and
    /// the overlay of a still draw. A line the pipeline is not confident of is `None`.
    pub fn reported_lines(&self) -> (Option<Poly2>, Option<Poly2>) {
        (self.detection.left, self.detection.right)
    }

    /// The lane a still draws: both reported lines, or the one seen and the other placed one
    /// lane width (`width_px`, nominal) from it.
    pub fn lane(&self, width_px: f64) -> Option<(Poly2, Poly2)> {
        self.detection.lane(width_px)
    }
}

/// The built pipeline for one frame size: undistortion maps, perspective, composed remap.
pub struct Pipeline {
    pub cfg: Config,
    undistorter: Option<Undistorter>,
    camera: Option<Camera>,
    pub persp: Perspective,
    birdseye: BirdseyeRemap,
    /// The bird's-eye rows band analysis computes (`search.band_row_step`,
    /// `search.band_min_source_rows`).
    rows: std::sync::Arc<RowPlan>,
    /// The geometry's horizon (for the online pitch); `None` for an affine quad.
    horizon: Option<Horizon>,
    /// A pixel's width over its height in the frames (1: square; 64:45 in an anamorphic
    /// PAL video), for the online pitch's focal length in rows ([`Pipeline::with_pixel_aspect`]).
    pixel_aspect: f64,
    /// The remap to the diagnostic panel's bird's-eye view, built on first use.
    panel: std::sync::OnceLock<std::result::Result<BirdseyeRemap, String>>,
    pub width: i32,
    pub height: i32,
}

impl Pipeline {
    /// Build for frames of `width` x `height`. With a camera, its size must match.
    pub fn new(cfg: Config, camera: Option<&Camera>, width: i32, height: i32) -> Result<Self> {
        cfg.validate()?;
        if let Some(cam) = camera {
            crate::base::frame::check_size(
                Path::new("frame"),
                (cam.width, cam.height),
                (width, height),
            )?;
        }
        let persp = Perspective::from_config(&cfg.perspective, width, height)?;
        let birdseye = BirdseyeRemap::new(&persp, camera, cfg.perspective.scale())?;
        let undistorter = camera.map(Undistorter::new).transpose()?;
        let k =
            Focal::of(camera.is_some(), cfg.camera.hfov_deg).k(camera.map(|c| &c.k), width, height);
        let horizon = Horizon::new(&persp, &k);
        threshold::prepare_small();
        let rows = std::sync::Arc::new(RowPlan::thinned(
            &birdseye.source_rows()?,
            cfg.search.band_row_step as usize,
            cfg.search.band_min_source_rows,
        ));
        Ok(Self {
            cfg,
            undistorter,
            camera: camera.cloned(),
            persp,
            birdseye,
            rows,
            horizon,
            pixel_aspect: 1.0,
            panel: std::sync::OnceLock::new(),
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

    /// The camera frames are undistorted with, if any.
    pub fn camera(&self) -> Option<&Camera> {
        self.camera.as_ref()
    }

    /// The bird's-eye view of a raw frame.
    pub fn birdseye(&self, raw: &BgrFrame) -> Result<BgrFrame> {
        self.birdseye.apply(raw)
    }

    /// The bird's-eye view of a raw frame at the size of a diagnostic panel (half the frame
    /// each way), straight from the raw frame, and its scale relative to the nominal view.
    pub fn birdseye_panel(&self, raw: &BgrFrame) -> Result<(BgrFrame, Scale)> {
        let s = Scale {
            x: (self.width / 2) as f64 / self.persp.width as f64,
            y: (self.height - self.height / 2) as f64 / self.persp.height as f64,
        };
        let remap = self.panel.get_or_init(|| {
            BirdseyeRemap::new(&self.persp, self.camera.as_ref(), s).map_err(|e| e.to_string())
        });
        match remap {
            Ok(r) => Ok((r.apply(raw)?, s)),
            Err(e) => Err(crate::base::error::Error::Invalid(format!(
                "building the diagnostic bird's-eye remap: {e}"
            ))),
        }
    }

    /// A one-line note when the perspective quad (`perspective.src`) does not fit the frames
    /// (`PerspectiveConfig::misfit`: found on frames of another size, or a corner outside
    /// them): the quad was made for another camera or frame size, and lanes are then rarely
    /// found ("Lane not found" on every frame says nothing about why).
    pub fn quad_note(&self) -> Option<String> {
        let why = self
            .cfg
            .perspective
            .misfit(self.width, self.height, "the")?;
        Some(format!(
            "{why} (`lanes perspective` makes one from this camera's frames)"
        ))
    }

    /// The set-up a video's frames need that a still does not: the 16 MiB LAB table of band
    /// analysis (made once per process; its blocks are filled as the frames' colours need
    /// them). A frame loop calls this before its first frame.
    pub fn prepare_for_video(&self) -> Result<()> {
        if self.analyses_bands() {
            threshold::prepare(threshold::cue(&self.cfg.threshold))?;
        }
        Ok(())
    }

    /// Whether `analyze` samples a frame on its search bands (given a prior fit) rather than
    /// converting and warping it whole.
    pub fn samples_bands(&self, has_prior: bool) -> bool {
        has_prior && self.analyses_bands()
    }

    /// Whether frames with a prior fit are analysed on the search bands only
    /// (`search.band_only`; the Sobel option needs whole rows).
    fn analyses_bands(&self) -> bool {
        self.cfg.search.band_only && !self.cfg.threshold.sobel_enabled
    }

    /// Analyse one raw frame: with `prior` fits, search a band around them, else sliding windows.
    /// A frame given as the decoder's planes is converted to BGR only when the whole view is
    /// needed (no prior, or band analysis off); band analysis reads the planes.
    pub fn analyze<'a>(
        &self,
        raw: impl Into<RawFrame<'a>>,
        prior: Option<(Poly2, Poly2)>,
    ) -> Result<Analysis> {
        self.analyze_tracked(raw, prior, prior)
    }

    /// `analyze` in a video: `expected` is the lane the tracker holds, searched around or not
    /// (`judge`).
    pub fn analyze_tracked<'a>(
        &self,
        raw: impl Into<RawFrame<'a>>,
        prior: Option<(Poly2, Poly2)>,
        expected: Option<(Poly2, Poly2)>,
    ) -> Result<Analysis> {
        let raw = raw.into();
        let t0 = Instant::now();
        // A noisy frame is analysed smoothed (`denoise`).
        let smoothed = if self.cfg.threshold.smooth_noise {
            denoise::when_noisy(raw, denoise::gate(self.cfg.threshold.l_contrast_min))?
        } else {
            None
        };
        let raw = match &smoothed {
            Some((f, _)) => f.raw()?,
            None => raw,
        };
        let noise_smoothed = smoothed.as_ref().map(|s| s.1);
        let s = self.cfg.perspective.scale();
        let search_cfg = scaled_search(&self.cfg.search, s);
        let thr_cfg = scaled_threshold(&self.cfg.threshold, s);
        let prior = prior.map(|(l, r)| (l.to_scaled(s), r.to_scaled(s)));
        let bands = match prior {
            Some((l, r)) if self.analyses_bands() => {
                // The local-contrast decision needs road on both sides of every band pixel.
                Some(ColumnBands::around(
                    &[l, r],
                    search_cfg.prior_margin + threshold::context_px(&thr_cfg),
                    self.birdseye.width,
                    self.birdseye.height,
                    &self.rows,
                ))
            }
            _ => None,
        };
        let (birdseye, thresholded, t1) = match bands {
            Some(b) => {
                // Remap and threshold are one pass here: the remap time is the start of the
                // bands' set-up (`ColumnBands::around` above), the rest is threshold time.
                let t1 = Instant::now();
                (
                    None,
                    threshold::threshold_bands(raw, &self.birdseye, b, &thr_cfg)?,
                    t1,
                )
            }
            None => {
                let img = match raw {
                    RawFrame::Bgr(bgr) => self.birdseye.apply(bgr)?,
                    RawFrame::Yuv(planes) => self.birdseye.apply(&planes.to_bgr()?)?,
                };
                let t1 = Instant::now();
                let th = threshold::threshold(&img, &thr_cfg)?;
                (Some(img), th, t1)
            }
        };
        let t2 = Instant::now();
        let (cfg, persp, margin) = (&self.cfg, &self.persp, search_cfg.prior_margin);
        let Judged {
            search,
            fit,
            detection,
            measure,
            seen_from,
        } = match (prior, thresholded.mask_as_computed()) {
            (Some((l, r)), MaskRef::Bands(m, bands)) => {
                let search = fit::prior_search_bands(m, bands, &l, &r, margin)?;
                judge(search, None, expected, 0, cfg, persp)?
            }
            (Some((l, r)), MaskRef::View(m)) => judge(
                fit::prior_search(m, &l, &r, margin)?,
                None,
                expected,
                0,
                cfg,
                persp,
            )?,
            (None, MaskRef::View(m)) => judge_whole_view(m, expected, cfg, persp)?,
            // Bands are only computed around a prior fit.
            (None, MaskRef::Bands(..)) => {
                judge_whole_view(&thresholded.mask()?, expected, cfg, persp)?
            }
        };
        let t3 = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        Ok(Analysis {
            scale: s,
            birdseye,
            thresholded,
            search,
            fit,
            detection,
            measure,
            seen_from,
            noise_smoothed,
            times: StageTimes {
                warp_ms: ms(t0, t1),
                threshold_ms: ms(t1, t2),
                search_fit_ms: ms(t2, t3),
            },
        })
    }

    /// The lane width assumed to place a missing line, nominal bird's-eye px.
    pub fn default_lane_width_px(&self) -> f64 {
        self.cfg.confidence.default_lane_width_m / self.cfg.units.xm_per_px
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

    /// The geometry's horizon, when the quad has one (every perspective quad does; an affine
    /// one does not).
    pub fn horizon(&self) -> Option<&Horizon> {
        self.horizon.as_ref()
    }

    /// For frames whose pixels are `pixel_aspect` times as wide as tall (`video::pixel_aspect`
    /// of a video's sample aspect): without a camera file the field of view spans the stored
    /// width, so a row is that many times as many pixels per radian as a column, and the online
    /// pitch's degrees are those of the square picture (as `geometry::autoperspective` finds
    /// them). A camera file's matrix is its own; square pixels change nothing.
    pub fn with_pixel_aspect(mut self, pixel_aspect: f64) -> Self {
        if self.camera.is_some() || pixel_aspect == self.pixel_aspect || !pixel_aspect.is_finite() {
            return self;
        }
        let mut k = Focal::of(false, self.cfg.camera.hfov_deg).k(None, self.width, self.height);
        k[1][1] *= pixel_aspect;
        self.horizon = Horizon::new(&self.persp, &k);
        self.pixel_aspect = pixel_aspect;
        self
    }

    /// A pixel's width over its height ([`Pipeline::with_pixel_aspect`]).
    pub fn pixel_aspect(&self) -> f64 {
        self.pixel_aspect
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn repo(p: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)
    }

    /// The band machinery under the reference threshold (whose band masks equal the whole
    /// view's pixel for pixel).
    fn pipelines() -> (Pipeline, Pipeline, BgrFrame) {
        pipelines_with(|cfg| cfg.threshold.method = crate::base::config::ThresholdMethod::GlobalMax)
    }

    /// A band and a whole-view pipeline on the test camera (every source row computed), with
    /// `tweak` applied to both, and the test frame.
    fn pipelines_with(tweak: impl Fn(&mut Config)) -> (Pipeline, Pipeline, BgrFrame) {
        let mut cfg = Config::load(&repo("test_images/lanes.toml")).unwrap();
        tweak(&mut cfg);
        cfg.search.band_min_source_rows = 0.0;
        let cam = Camera::load(&repo("test_images/camera.yml")).unwrap();
        let raw = BgrFrame::read(&repo("test_images/gentle_left.jpg")).unwrap();
        let (w, h) = (raw.width(), raw.height());
        let band = Pipeline::new(cfg.clone(), Some(&cam), w, h).unwrap();
        let mut full_cfg = cfg;
        full_cfg.search.band_only = false;
        let full = Pipeline::new(full_cfg, Some(&cam), w, h).unwrap();
        (band, full, raw)
    }

    #[test]
    fn band_analysis_sees_the_same_pixels_as_the_whole_view() {
        let (band, full, raw) = pipelines();
        let first = full.analyze(&raw, None).unwrap();
        let prior = (first.fit.left.unwrap(), first.fit.right.unwrap());
        let a = band.analyze(&raw, Some(prior)).unwrap();
        let b = full.analyze(&raw, Some(prior)).unwrap();
        assert!(a.birdseye.is_none() && b.birdseye.is_some());
        // Every band pixel's L and B equal the whole view's at the same place (same remap
        // entries), and outside the bands nothing was computed.
        let s = band.cfg.perspective.scale();
        let m = scaled_search(&band.cfg.search, s).prior_margin;
        let (l, r) = (prior.0.to_scaled(s), prior.1.to_scaled(s));
        let plan = std::sync::Arc::new(RowPlan::every(band.birdseye.height, 1));
        let bands =
            ColumnBands::around(&[l, r], m, band.birdseye.width, band.birdseye.height, &plan);
        // The scaled channels of both share the maxima (checked below), so they compare.
        let (la, lb) = (
            a.thresholded.l_scaled().unwrap(),
            b.thresholded.l_scaled().unwrap(),
        );
        let (ba, bb) = (
            a.thresholded.b_scaled().unwrap(),
            b.thresholded.b_scaled().unwrap(),
        );
        let (la, lb, ba, bb) = (
            la.bytes().unwrap(),
            lb.bytes().unwrap(),
            ba.bytes().unwrap(),
            bb.bytes().unwrap(),
        );
        let mut inside = vec![false; la.len()];
        for sp in bands.spans() {
            inside[sp.view..sp.view + sp.len].fill(true);
        }
        let n_in = inside.iter().filter(|v| **v).count();
        // Two runs of 2 * margin + 2 columns on every row, a few clipped at the view's edges.
        let full_runs = 2 * (2 * m as usize + 2) * bands.rows();
        assert!(
            n_in <= full_runs && n_in * 10 >= full_runs * 9,
            "{n_in} band pixels of {full_runs}"
        );
        for i in 0..la.len() {
            if inside[i] {
                assert_eq!((la[i], ba[i]), (lb[i], bb[i]), "pixel {i}");
            } else {
                assert_eq!((la[i], ba[i]), (0, 0), "pixel {i} outside the bands");
            }
        }
        // On this still the brightest L and B lie on the lines, so the maxima agree and the
        // search finds exactly the same pixels and fits.
        assert_eq!(
            (a.thresholded.l_max, a.thresholded.b_max),
            (b.thresholded.l_max, b.thresholded.b_max)
        );
        assert_eq!(a.search.left.xs, b.search.left.xs);
        assert_eq!(a.search.right.ys, b.search.right.ys);
        assert_eq!(a.fit.left, b.fit.left);
        assert_eq!(a.fit.right, b.fit.right);
        assert!(a.search.left.len() > 1000, "{}", a.search.left.len());
    }

    #[test]
    fn local_contrast_band_mask_equals_the_whole_view_mask_inside_the_search_band() {
        let (band, full, raw) = pipelines_with(|cfg| {
            cfg.threshold.method = crate::base::config::ThresholdMethod::LocalContrast;
            // The vertical-run filter needs whole columns; the band pass has none.
            cfg.threshold.min_run_px = 0;
        });
        let first = full.analyze(&raw, None).unwrap();
        let prior = (first.fit.left.unwrap(), first.fit.right.unwrap());
        let a = band.analyze(&raw, Some(prior)).unwrap();
        let b = full.analyze(&raw, Some(prior)).unwrap();
        // The band pass computed road context beyond the search band, so every pixel the
        // prior search looks at has the whole view's decision: same pixels, same fits.
        assert_eq!(a.search.left.xs, b.search.left.xs);
        assert_eq!(a.search.right.ys, b.search.right.ys);
        assert_eq!(a.fit.left, b.fit.left);
        assert!(a.search.left.len() > 500, "{}", a.search.left.len());
        assert_eq!(
            a.detection.status,
            crate::lane::confidence::LaneStatus::Both
        );
    }

    #[test]
    fn band_columns_cover_the_prior_search_band() {
        // Strictly within 80 px of x = 100.5 is 21..=180; of x = 1270 the run is cut at 1279.
        let every = |h: i32, step: usize| std::sync::Arc::new(RowPlan::every(h, step));
        let b = ColumnBands::around(
            &[Poly2::new(0.0, 0.0, 100.5), Poly2::new(0.0, 0.0, 1270.0)],
            80,
            1280,
            4,
            &every(4, 1),
        );
        let (r, x) = b.run(0, 0).unwrap();
        assert!(x <= 21 && x + r.len() > 180, "{x} {r:?}");
        let (r, x) = b.run(0, 1).unwrap();
        assert_eq!((x, x + r.len()), (1190, 1280));
        // Nothing of the run reaches past the view: 90 of its 162 columns are inside.
        assert_eq!((r.len(), b.cols), (90, 162));
        let spans: Vec<_> = b.spans().take(2).collect();
        assert_eq!(spans[1].view, 1190);
        assert_eq!(spans[1].packed, b.cols);
        let nan = ColumnBands::around(&[Poly2::new(f64::NAN, 0.0, 0.0)], 80, 1280, 2, &every(2, 1));
        assert!(nan.run(1, 0).is_none());
        // Every other row: rows 0, 2, 4 of a 5-row view; packed row 2 is view row 4.
        let s = ColumnBands::around(&[Poly2::new(0.0, 1.0, 100.0)], 10, 1280, 5, &every(5, 2));
        assert_eq!((s.rows(), s.view_row(2)), (3, 4));
        assert_eq!(s.run(2, 0).unwrap().1, (104 - 10) as usize);
    }

    #[test]
    fn band_rows_with_a_step_are_the_whole_view_rows() {
        let (band, full, raw) = pipelines();
        let first = full.analyze(&raw, None).unwrap();
        let prior = (first.fit.left.unwrap(), first.fit.right.unwrap());
        let mut cfg = band.cfg.clone();
        cfg.search.band_row_step = 2;
        let cam = band.camera.clone();
        let step = Pipeline::new(cfg, cam.as_ref(), raw.width(), raw.height()).unwrap();
        let a = step.analyze(&raw, Some(prior)).unwrap();
        let b = band.analyze(&raw, Some(prior)).unwrap();
        // Packed row r of the step-2 channels is packed row 2r of the every-row channels (same
        // remap entries); an odd row has its stand-in's marking pixels (as many, moved along
        // the band's curve); the fit moves by a fraction of a pixel.
        let pw = a.thresholded.l.width() as usize;
        for (ca, cb) in [
            (&a.thresholded.l, &b.thresholded.l),
            (&a.thresholded.b, &b.thresholded.b),
        ] {
            let (da, db) = (ca.bytes().unwrap(), cb.bytes().unwrap());
            assert_eq!(ca.height() * 2, cb.height());
            for (r, ra) in da.chunks(pw).enumerate() {
                assert_eq!(ra, &db[2 * r * pw..(2 * r + 1) * pw], "packed row {r}");
            }
        }
        let mask = a.thresholded.mask().unwrap();
        let ma = mask.bytes().unwrap();
        let w = mask.width() as usize;
        let set = |y: usize| ma[y * w..(y + 1) * w].iter().filter(|v| **v != 0).count();
        let rows = ma.len() / w;
        let mut marked = 0;
        for y in (1..rows).step_by(2) {
            let stand_in = if y + 1 < rows { y + 1 } else { y - 1 };
            assert_eq!(set(y), set(stand_in), "row {y}");
            marked += (set(y) > 0) as usize;
        }
        assert!(marked > rows / 8, "{marked} odd rows with markings");
        let h = step.persp.height as f64;
        let (fa, fb) = (a.fit.left.unwrap(), b.fit.left.unwrap());
        assert!((fa.eval(h) - fb.eval(h)).abs() < 1.0, "{fa:?} vs {fb:?}");
    }

    #[test]
    fn rows_thinned_by_source_rows_compute_the_near_rows_and_a_third_of_the_far_ones() {
        let (band, _, raw) = pipelines();
        let src = band.birdseye.source_rows().unwrap();
        let h = src.len();
        // Source rows advance monotonically down the view, slowest at the top.
        assert!(src.windows(2).all(|p| p[1] > p[0]), "{src:?}");
        assert!(src[1] - src[0] < src[h - 1] - src[h - 2]);
        let plan = RowPlan::thinned(&src, 1, 1.0);
        // Consecutive computed rows are at least a source row apart, and the rows between
        // them less than two.
        for p in plan.computed.windows(2) {
            let (a, b) = (p[0] as usize, p[1] as usize);
            assert!(src[b] - src[a] >= 1.0, "{a}..{b}");
            if b > a + 1 {
                assert!(src[b - 1] - src[a] < 1.0, "{a}..{b}");
            }
        }
        let n = plan.computed.len();
        assert!(n < h * 2 / 3 && n > h / 5, "{n} of {h} rows");
        // Each row's stand-in is the nearest computed row.
        for (y, i) in plan.stand_in.iter().enumerate() {
            let c = plan.computed[*i as usize] as usize;
            assert!(plan
                .computed
                .iter()
                .all(|o| (*o as usize).abs_diff(y) >= c.abs_diff(y)));
        }
        // The band analysis on the thinned rows: the same lines within a pixel at the car.
        let mut cfg = band.cfg.clone();
        cfg.search.band_min_source_rows = 1.0;
        let cam = band.camera.clone();
        let thin = Pipeline::new(cfg, cam.as_ref(), raw.width(), raw.height()).unwrap();
        assert_eq!(thin.rows.computed, plan.computed);
        let first = band.analyze(&raw, None).unwrap();
        let prior = (first.fit.left.unwrap(), first.fit.right.unwrap());
        let (a, b) = (
            thin.analyze(&raw, Some(prior)).unwrap(),
            band.analyze(&raw, Some(prior)).unwrap(),
        );
        let y = thin.persp.height as f64 - 1.0;
        for (fa, fb) in [
            (a.fit.left.unwrap(), b.fit.left.unwrap()),
            (a.fit.right.unwrap(), b.fit.right.unwrap()),
        ] {
            assert!((fa.eval(y) - fb.eval(y)).abs() < 1.0, "{fa:?} vs {fb:?}");
            assert!(
                (fa.eval(0.0) - fb.eval(0.0)).abs() < 3.0,
                "{fa:?} vs {fb:?}"
            );
        }
    }

    #[test]
    fn an_anamorphic_video_s_online_pitch_is_that_of_its_square_picture() {
        // The Udacity quad on 1280x720, and the same picture stored squeezed to 960x720 with
        // pixels 4/3 as wide as tall (the field of view spans either frame's width).
        let square = Pipeline::new(Config::default(), None, 1280, 720).unwrap();
        let mut cfg = Config::default();
        for p in cfg.perspective.src.iter_mut() {
            p[0] *= 0.75;
        }
        cfg.perspective.view = Some([1280, 720]);
        let stored = Pipeline::new(cfg, None, 960, 720).unwrap();
        let pitch = |p: &Pipeline| p.horizon().unwrap().base_pitch().to_degrees();
        let row = |p: &Pipeline| {
            p.horizon()
                .unwrap()
                .horizon_row(p.horizon().unwrap().base_pitch())
        };
        // Taken as square pixels, the rows' focal length is 3/4 of the picture's: the pitch
        // reads a third too steep.
        assert!(
            (pitch(&stored) - pitch(&square)).abs() > 0.5,
            "{} {}",
            pitch(&stored),
            pitch(&square)
        );
        let shaped = stored.with_pixel_aspect(4.0 / 3.0);
        assert_eq!(shaped.pixel_aspect(), 4.0 / 3.0);
        assert!(
            (pitch(&shaped) - pitch(&square)).abs() < 1e-9,
            "{} {}",
            pitch(&shaped),
            pitch(&square)
        );
        // The horizon stays on the same row.
        assert!((row(&shaped) - row(&square)).abs() < 1e-9);
        // A camera file's matrix is its own.
        let cam = Camera::load(&repo("calibration/udacity.yml")).unwrap();
        let calibrated = Pipeline::new(Config::default(), Some(&cam), 1280, 720).unwrap();
        let before = pitch(&calibrated);
        assert_eq!(pitch(&calibrated.with_pixel_aspect(4.0 / 3.0)), before);
    }
}
