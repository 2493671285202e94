//! Previews of many stills under one parameter set: the stills and their bird's-eye views are
//! cached so a threshold change re-runs only threshold, search, fit, measure and drawing.
//!
//! The sequence per still is that of `Pipeline::analyze` (sliding-window search, no prior),
//! split so that the parts that depend only on the perspective (the remap, the L and B
//! channels) are computed once per perspective and reused while thresholds change.

use crate::base::camera::Camera;
use crate::base::config::{Config, PerspectiveConfig};
use crate::base::error::{Error, Result};
use crate::base::frame::{BgrFrame, BinaryMask, GrayImage};
use crate::lane::fit::{LaneFit, LinePixels, SearchResult, Window};
use crate::lane::measure::LaneMeasure;
use crate::lane::pipeline::Pipeline;
use crate::lane::render;
use crate::lane::threshold;
use base64::Engine;
use opencv::core::{self, Mat, Size};
use opencv::imgproc;
use opencv::prelude::*;
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// Decoded stills kept in memory at once, about 10 MB each at 1280x720 (least recently used
/// ones are dropped; three pages of the grid).
pub const STILL_CACHE: usize = 36;
/// Built pipelines kept at once (one per perspective quad and frame size).
pub const PIPELINE_CACHE: usize = 4;

/// Identity of a perspective (both quads and the bird's-eye scale, bit for bit) at a frame size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct PipeKey {
    quads: [u64; 16],
    birdseye_scale: [u64; 2],
    width: i32,
    height: i32,
}

impl PipeKey {
    fn new(p: &PerspectiveConfig, width: i32, height: i32) -> Self {
        let mut quads = [0u64; 16];
        for (i, v) in p.src.iter().chain(p.dst.iter()).flatten().enumerate() {
            quads[i] = v.to_bits();
        }
        Self {
            quads,
            birdseye_scale: [p.birdseye_scale_x.to_bits(), p.birdseye_scale_y.to_bits()],
            width,
            height,
        }
    }
}

/// The parts of a still's analysis that depend only on the perspective.
struct Warped {
    key: PipeKey,
    birdseye: BgrFrame,
    l: GrayImage,
    b: GrayImage,
}

/// One decoded still, its undistorted frame, and its latest bird's-eye view.
struct StillData {
    raw: BgrFrame,
    undistorted: BgrFrame,
    warped: Mutex<Option<Arc<Warped>>>,
    /// The undistorted frame reduced by a preview scale: (scale, image).
    small: Mutex<Option<(u32, Arc<Mat>)>>,
}

impl StillData {
    fn small(&self, scale: u32) -> Result<Arc<Mat>> {
        if let Some((s, m)) = lock(&self.small).as_ref() {
            if *s == scale {
                return Ok(Arc::clone(m));
            }
        }
        let m = Arc::new(reduce(self.undistorted.mat(), scale)?);
        *lock(&self.small) = Some((scale, Arc::clone(&m)));
        Ok(m)
    }
}

/// A JPEG preview, as a `data:` URL for an `<img>`.
fn data_url(jpeg: &[u8]) -> String {
    format!(
        "data:image/jpeg;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(jpeg)
    )
}

/// Reduce an image by `scale` (1 = full size) with area averaging.
pub fn reduce(img: &Mat, scale: u32) -> Result<Mat> {
    if scale <= 1 {
        return Ok(img.try_clone()?);
    }
    let w = (img.cols() / scale as i32).max(1);
    let h = (img.rows() / scale as i32).max(1);
    let mut out = Mat::default();
    imgproc::resize(
        img,
        &mut out,
        Size::new(w, h),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )?;
    Ok(out)
}

/// Encode as JPEG at the given quality.
pub fn jpeg(img: &Mat, quality: i32) -> Result<Vec<u8>> {
    crate::base::imageio::encode_jpeg(img, quality)
        .map_err(|e| Error::Invalid(format!("JPEG encoding failed: {e}")))
}

/// The numbers and pictures of one still under one parameter set.
#[derive(Debug, Clone, Serialize)]
pub struct StillPreview {
    pub index: usize,
    pub name: String,
    pub width: i32,
    pub height: i32,
    /// Set when the still could not be processed (then every picture is empty).
    pub error: Option<String>,
    pub left_found: bool,
    pub right_found: bool,
    pub left_pixels: usize,
    pub right_pixels: usize,
    /// Set pixels of the whole binary mask.
    pub mask_pixels: i32,
    pub radius_m: Option<f64>,
    pub offset_m: Option<f64>,
    pub lane_width_m: Option<f64>,
    /// Milliseconds spent on this still (analysis, drawing and encoding).
    pub ms: f64,
    pub overlay: String,
    pub mask: String,
    pub search: String,
    /// The colour bird's-eye view, only for the still asked for with `birdseye_of`.
    pub birdseye: Option<String>,
}

/// Everything computed for one still, at full size (the sweep draws from this). The frames
/// are shared with the cache, not copied.
pub struct StillResult {
    pub mask: BinaryMask,
    pub search: SearchResult,
    pub fit: LaneFit,
    /// The lines the still reports (as `lanes image`).
    pub detection: crate::lane::confidence::Detection,
    pub measure: Option<LaneMeasure>,
    /// The nominal bird's-eye row the lane is seen from (`Judged::seen_from`).
    pub seen_from: f64,
    pipe: Arc<Pipeline>,
    data: Arc<StillData>,
    warped: Arc<Warped>,
}

impl StillResult {
    /// The undistorted frame.
    pub fn undistorted(&self) -> &BgrFrame {
        &self.data.undistorted
    }

    /// The bird's-eye view.
    pub fn birdseye(&self) -> &BgrFrame {
        &self.warped.birdseye
    }

    /// The overlay drawn with `cfg.render`.
    pub fn overlay(&self, cfg: &Config) -> Result<BgrFrame> {
        let width_px = cfg.confidence.default_lane_width_m / cfg.units.xm_per_px;
        let lane = self.detection.lane(width_px);
        render::overlay(
            self.data.undistorted.clone(),
            render::LaneToDraw::of(lane.as_ref().map(|(l, r)| (l, r)), self.seen_from),
            &self.pipe.persp,
            &|x, y| (x, y),
            self.measure.as_ref(),
            self.detection.status,
            &cfg.render,
            self.pipe.pixel_aspect(),
        )
    }

    /// The search picture (mask, windows, line pixels, fits, histogram) in the analysed
    /// bird's-eye view (`perspective.birdseye_scale_x`, `_y` of the nominal size).
    pub fn search_picture(&self) -> Result<BgrFrame> {
        let bs = self.pipe.cfg.perspective.scale();
        let l = self.fit.left.map(|p| p.to_scaled(bs));
        let r = self.fit.right.map(|p| p.to_scaled(bs));
        render::search_picture(&self.mask, &self.search, l.as_ref(), r.as_ref())
    }

    /// The overlay drawn on the undistorted frame reduced by `scale` (as `overlay`, with the
    /// lane polygon's vertices scaled).
    pub fn overlay_reduced(&self, cfg: &Config, scale: u32) -> Result<Mat> {
        let small = self.data.small(scale)?;
        let mut out = small.try_clone()?;
        let s = scale as f64;
        let width_px = cfg.confidence.default_lane_width_m / cfg.units.xm_per_px;
        if let Some((l, r)) = self.detection.lane(width_px) {
            let poly: Vec<(f64, f64)> = render::lane_polygon_frame(
                &l,
                &r,
                &self.pipe.persp,
                self.seen_from,
                cfg.render.polygon_points,
            )
            .into_iter()
            .map(|(x, y)| ((x + 0.5) / s - 0.5, (y + 0.5) / s - 0.5))
            .collect();
            render::fill_polygon_blended(&mut out, &poly, cfg.render.lane_color, cfg.render.alpha)?;
        }
        let lines = match &self.measure {
            Some(m) => vec![
                render::radius_text(m.radius_m, cfg.render.straight_above_m),
                render::offset_text(m.offset_m),
            ],
            None => vec!["Lane not found".to_string()],
        };
        let ts = out.cols() as f64 / 1280.0 * 1.5;
        let origin = ((40.0 * ts) as i32, (60.0 * ts) as i32);
        render::draw_text_lines(
            &mut out,
            &lines,
            origin,
            ts,
            core::Scalar::new(255.0, 255.0, 255.0, 0.0),
        )?;
        Ok(out)
    }

    /// The analysed mask resized to the nominal bird's-eye size divided by `scale` (the size of
    /// the other previews).
    pub fn mask_reduced(&self, scale: u32) -> Result<BinaryMask> {
        BinaryMask::new(self.to_preview_size(self.mask.mat(), scale)?)
    }

    /// The colour bird's-eye view at the size of `mask_reduced`.
    pub fn birdseye_reduced(&self, scale: u32) -> Result<Mat> {
        self.to_preview_size(self.warped.birdseye.mat(), scale)
    }

    /// Resize a bird's-eye image to the nominal bird's-eye size divided by `scale`.
    fn to_preview_size(&self, img: &Mat, scale: u32) -> Result<Mat> {
        let w = (self.pipe.persp.width / scale.max(1) as i32).max(1);
        let h = (self.pipe.persp.height / scale.max(1) as i32).max(1);
        let interp = if w <= img.cols() {
            imgproc::INTER_AREA
        } else {
            imgproc::INTER_NEAREST
        };
        let mut out = Mat::default();
        imgproc::resize(img, &mut out, Size::new(w, h), 0.0, 0.0, interp)?;
        Ok(out)
    }

    /// The search picture drawn on `small_mask` (from `mask_reduced`), with the pixels,
    /// windows, histogram and fits mapped to it.
    pub fn search_picture_reduced(&self, small_mask: &BinaryMask) -> Result<BgrFrame> {
        // Analysed-view pixels per preview pixel, per axis.
        let f = self.mask.width() as f64 / small_mask.width().max(1) as f64;
        let fy = self.mask.height() as f64 / small_mask.height().max(1) as f64;
        let (mw, mh) = (small_mask.width().max(1), small_mask.height().max(1));
        let px = |p: &LinePixels| LinePixels {
            xs: p
                .xs
                .iter()
                .map(|x| ((*x as f64 / f) as u32).min(mw as u32 - 1))
                .collect(),
            ys: p
                .ys
                .iter()
                .map(|y| ((*y as f64 / fy) as u32).min(mh as u32 - 1))
                .collect(),
        };
        let d = |v: i32| (v as f64 / f).round() as i32;
        let dy = |v: i32| (v as f64 / fy).round() as i32;
        let win = |ws: &[Window]| -> Vec<Window> {
            ws.iter()
                .map(|w| Window {
                    x_low: d(w.x_low),
                    x_high: d(w.x_high),
                    y_low: dy(w.y_low),
                    y_high: dy(w.y_high),
                })
                .collect()
        };
        // Each preview column sums the analysed columns it covers.
        let hist = &self.search.histogram;
        let histogram: Vec<u32> = if hist.is_empty() {
            Vec::new()
        } else {
            (0..mw as usize)
                .map(|c| {
                    let a = ((c as f64 * f) as usize).min(hist.len() - 1);
                    let b = (((c + 1) as f64 * f) as usize).clamp(a + 1, hist.len());
                    hist[a..b].iter().sum()
                })
                .collect()
        };
        let scaled = SearchResult {
            mode: self.search.mode,
            left: px(&self.search.left),
            right: px(&self.search.right),
            left_windows: win(&self.search.left_windows),
            right_windows: win(&self.search.right_windows),
            histogram,
        };
        // Fits are in nominal pixels; the preview is the nominal view scaled by mw / nominal.
        let k = crate::lane::fit::Scale {
            x: mw as f64 / self.pipe.persp.width.max(1) as f64,
            y: mh as f64 / self.pipe.persp.height.max(1) as f64,
        };
        let l = self.fit.left.map(|p| p.to_scaled(k));
        let r = self.fit.right.map(|p| p.to_scaled(k));
        render::search_picture(small_mask, &scaled, l.as_ref(), r.as_ref())
    }
}

/// A set of stills under tuning, with the camera, the loaded config and the caches.
pub struct Tuner {
    paths: Vec<PathBuf>,
    names: Vec<String>,
    camera: Option<Camera>,
    /// The configuration the session started from (the `--config` file or the defaults).
    pub loaded: Config,
    stills: Mutex<Vec<(usize, Arc<StillData>)>>,
    pipes: Mutex<Vec<(PipeKey, Arc<Pipeline>)>>,
}

/// Lock a cache, recovering it if a thread panicked while holding it (the data stays valid:
/// every update is a single push or remove).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Tuner {
    /// A tuner over `paths` (read lazily). Names are the file names, made unique by their parent.
    pub fn new(paths: Vec<PathBuf>, camera: Option<Camera>, loaded: Config) -> Result<Self> {
        if paths.is_empty() {
            return Err(Error::Invalid("no stills given".into()));
        }
        loaded.validate()?;
        let file_name = |p: &Path| {
            p.file_name()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default()
        };
        let mut names: Vec<String> = paths.iter().map(|p| file_name(p)).collect();
        for i in 0..names.len() {
            if names.iter().filter(|n| **n == names[i]).count() > 1 {
                names[i] = paths[i].display().to_string();
            }
        }
        Ok(Self {
            paths,
            names,
            camera,
            loaded,
            stills: Mutex::new(Vec::new()),
            pipes: Mutex::new(Vec::new()),
        })
    }

    /// Number of stills.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Always false: a tuner has at least one still.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Display names, one per still.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Path of still `i`.
    pub fn path(&self, i: usize) -> Option<&Path> {
        self.paths.get(i).map(|p| p.as_path())
    }

    /// The pipeline for a perspective and frame size, built once and cached.
    fn pipeline(&self, cfg: &Config, width: i32, height: i32) -> Result<Arc<Pipeline>> {
        let key = PipeKey::new(&cfg.perspective, width, height);
        // Built under the lock: the stills of one request all wait for the same pipeline, so
        // building it once and letting the others wait beats building it on every thread.
        let mut pipes = lock(&self.pipes);
        if let Some((_, p)) = pipes.iter().find(|(k, _)| *k == key) {
            return Ok(Arc::clone(p));
        }
        let pipe = Arc::new(Pipeline::new(
            cfg.clone(),
            self.camera.as_ref(),
            width,
            height,
        )?);
        if pipes.len() >= PIPELINE_CACHE {
            pipes.remove(0);
        }
        pipes.push((key, Arc::clone(&pipe)));
        Ok(pipe)
    }

    /// Still `i`, decoded and undistorted (cached, least recently used dropped first).
    fn still(&self, i: usize, cfg: &Config) -> Result<Arc<StillData>> {
        {
            let mut stills = lock(&self.stills);
            if let Some(pos) = stills.iter().position(|(k, _)| *k == i) {
                let entry = stills.remove(pos);
                let data = Arc::clone(&entry.1);
                stills.push(entry);
                return Ok(data);
            }
        }
        let path = self
            .paths
            .get(i)
            .ok_or_else(|| Error::Invalid(format!("no still number {i} (have {})", self.len())))?;
        let raw = BgrFrame::read(path)?;
        if let Some(cam) = &self.camera {
            if cam.width != raw.width() || cam.height != raw.height() {
                return Err(Error::SizeMismatch {
                    path: path.clone(),
                    expected_w: cam.width,
                    expected_h: cam.height,
                    got_w: raw.width(),
                    got_h: raw.height(),
                });
            }
        }
        let pipe = self.pipeline(cfg, raw.width(), raw.height())?;
        let undistorted = pipe.undistort(&raw)?;
        let data = Arc::new(StillData {
            raw,
            undistorted,
            warped: Mutex::new(None),
            small: Mutex::new(None),
        });
        let mut stills = lock(&self.stills);
        if !stills.iter().any(|(k, _)| *k == i) {
            if stills.len() >= STILL_CACHE {
                stills.remove(0);
            }
            stills.push((i, Arc::clone(&data)));
        }
        Ok(data)
    }

    /// The undistorted still `i` (for placing the perspective quad).
    pub fn undistorted(&self, i: usize) -> Result<BgrFrame> {
        Ok(self.still(i, &self.loaded)?.undistorted.clone())
    }

    /// Run the analysis of still `i` under `cfg` (validated by the caller).
    pub fn analyze(&self, i: usize, cfg: &Config) -> Result<StillResult> {
        let data = self.still(i, cfg)?;
        let pipe = self.pipeline(cfg, data.raw.width(), data.raw.height())?;
        let key = PipeKey::new(&cfg.perspective, data.raw.width(), data.raw.height());
        let cached = lock(&data.warped)
            .as_ref()
            .filter(|w| w.key == key)
            .cloned();
        let warped = match cached {
            Some(w) => w,
            None => {
                let birdseye = pipe.birdseye(&data.raw)?;
                let (l, b) = threshold::channels(&birdseye, threshold::cue(&cfg.threshold))?;
                let w = Arc::new(Warped {
                    key,
                    birdseye,
                    l,
                    b,
                });
                *lock(&data.warped) = Some(Arc::clone(&w));
                w
            }
        };
        let bs = cfg.perspective.scale();
        let th = threshold::threshold_channels(
            &warped.birdseye,
            warped.l.clone(),
            warped.b.clone(),
            &crate::lane::pipeline::scaled_threshold(&cfg.threshold, bs),
        )?;
        // As Pipeline::analyze: search in the analysed (scaled) view, fits in nominal pixels.
        let mask = th.into_mask()?;
        let crate::lane::judge::Judged {
            search,
            fit,
            detection,
            measure,
            seen_from,
        } = crate::lane::judge::judge_whole_view(&mask, None, cfg, &pipe.persp)?;
        Ok(StillResult {
            mask,
            search,
            fit,
            detection,
            measure,
            seen_from,
            pipe,
            data,
            warped,
        })
    }

    fn preview_one(
        &self,
        i: usize,
        cfg: &Config,
        scale: u32,
        with_birdseye: bool,
    ) -> Result<StillPreview> {
        let t0 = Instant::now();
        let r = self.analyze(i, cfg)?;
        // Draw at preview size: reduce first, then draw (drawing at full size and reducing
        // costs several times more and shows the same thing).
        let small_mask = r.mask_reduced(scale)?;
        let overlay = r.overlay_reduced(cfg, scale)?;
        let search = r.search_picture_reduced(&small_mask)?;
        let m = r.measure;
        Ok(StillPreview {
            index: i,
            name: self.names[i].clone(),
            width: r.undistorted().width(),
            height: r.undistorted().height(),
            error: None,
            left_found: r.detection.left.is_some(),
            right_found: r.detection.right.is_some(),
            left_pixels: r.fit.left_pixels,
            right_pixels: r.fit.right_pixels,
            mask_pixels: r.mask.count()?,
            radius_m: m.map(|m| m.radius_m),
            offset_m: m.map(|m| m.offset_m),
            lane_width_m: m.map(|m| m.lane_width_m),
            overlay: data_url(&jpeg(&overlay, 80)?),
            mask: data_url(&jpeg(small_mask.mat(), 80)?),
            search: data_url(&jpeg(search.mat(), 80)?),
            birdseye: if with_birdseye {
                Some(data_url(&jpeg(&r.birdseye_reduced(scale)?, 80)?))
            } else {
                None
            },
            ms: t0.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// Previews of the given stills under `cfg`, in parallel, reduced by `scale`. A still that
    /// fails carries its error; the others are unaffected. `birdseye_of` adds the colour
    /// bird's-eye view to that one still's preview.
    ///
    /// Fails as a whole only when `cfg` is invalid or its perspective quad is degenerate.
    pub fn previews(
        &self,
        cfg: &Config,
        indices: &[usize],
        scale: u32,
        birdseye_of: Option<usize>,
    ) -> Result<Vec<StillPreview>> {
        cfg.validate()?;
        // A degenerate quad fails here once rather than on every still (the check does not
        // depend on the frame size).
        crate::lane::warp::Perspective::from_config(&cfg.perspective, 1280, 720)?;
        let out = indices
            .par_iter()
            .map(|&i| {
                self.preview_one(i, cfg, scale, birdseye_of == Some(i))
                    .unwrap_or_else(|e| StillPreview {
                        index: i,
                        name: self.names.get(i).cloned().unwrap_or_default(),
                        width: 0,
                        height: 0,
                        error: Some(e.to_string()),
                        left_found: false,
                        right_found: false,
                        left_pixels: 0,
                        right_pixels: 0,
                        mask_pixels: 0,
                        radius_m: None,
                        offset_m: None,
                        lane_width_m: None,
                        ms: 0.0,
                        overlay: String::new(),
                        mask: String::new(),
                        search: String::new(),
                        birdseye: None,
                    })
            })
            .collect();
        Ok(out)
    }
}

/// Reduce and encode a frame for the page.
pub fn frame_jpeg(img: &BgrFrame, scale: u32) -> Result<Vec<u8>> {
    jpeg(&reduce(img.mat(), scale)?, 85)
}

/// A single-channel image as BGR (for composing pictures).
pub fn bgr_of(mask: &BinaryMask) -> Result<Mat> {
    let mut m = Mat::default();
    imgproc::cvt_color_def(mask.mat(), &mut m, imgproc::COLOR_GRAY2BGR)?;
    Ok(m)
}
