//! Running `lanes eval`: classify truth files by format, run the pipeline on the images or
//! videos they name (pipelines built once per config, camera and frame size) and collect the
//! scores into one `Report` (printed by `eval::table` or as JSON by the CLI).

use crate::base::camera::Camera;
use crate::base::config::{Config, Preset};
use crate::base::error::{Error, Result};
use crate::base::frame::{BgrFrame, STILL_SIZE_TOLERANCE};
use crate::lane::fit::Poly2;
use crate::lane::pipeline::Pipeline;
use crate::tools::eval::negatives::{self, NegativeImage, NegativesSummary};
use crate::tools::eval::synthetic::{self, FrameScore, Prediction};
use crate::tools::eval::tusimple::{self, ImageScore};
use crate::tools::eval::{culane, line_in_image, masks, sample_rows, visible_rows, Polyline};
use crate::tools::synth::truth::{self, TruthFile};
use opencv::core::Mat;
use opencv::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// A truth file by format.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Synthetic(PathBuf),
    TuSimple(PathBuf),
    CuLane(PathBuf),
    Mask(PathBuf),
}

fn is_mask(p: &Path) -> bool {
    let png = p
        .extension()
        .map(|e| e.eq_ignore_ascii_case("png"))
        .unwrap_or(false);
    let parent = p
        .parent()
        .and_then(|d| d.file_name())
        .map(|n| n == "gt_binary_image")
        .unwrap_or(false);
    png && parent
}

/// Classify a JSON file: synthetic truth, TuSimple labels, or neither.
fn classify_json(p: &Path) -> Option<Item> {
    let text = std::fs::read_to_string(p).ok()?;
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        if v.get("kind").and_then(|k| k.as_str()) == Some(truth::KIND) {
            return Some(Item::Synthetic(p.to_path_buf()));
        }
        if v.get("raw_file").is_some()
            || v.as_array()
                .map(|a| a.iter().all(|r| r.get("raw_file").is_some()))
                .unwrap_or(false)
        {
            return Some(Item::TuSimple(p.to_path_buf()));
        }
    }
    let v: serde_json::Value = serde_json::from_str(first).ok()?;
    v.get("raw_file")
        .is_some()
        .then(|| Item::TuSimple(p.to_path_buf()))
}

/// Classify `p` (a truth file, or a directory searched recursively) into `out`. `explicit`: `p`
/// was named by the user, so a file that is not a truth file is an error.
pub fn classify(p: &Path, explicit: bool, out: &mut Vec<Item>) -> Result<()> {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| Error::Io {
                path: p.to_path_buf(),
                message: format!("cannot read directory ({e})"),
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            classify(&e, false, out)?;
        }
    } else if name.ends_with(".lines.txt") {
        out.push(Item::CuLane(p.to_path_buf()));
    } else if name.to_ascii_lowercase().ends_with(".json") {
        match classify_json(p) {
            Some(i) => out.push(i),
            None if explicit => {
                return Err(Error::Io {
                    path: p.to_path_buf(),
                    message: "neither synthetic truth nor TuSimple labels".into(),
                })
            }
            None => {}
        }
    } else if is_mask(p) {
        out.push(Item::Mask(p.to_path_buf()));
    } else if explicit {
        if !p.exists() {
            return Err(Error::NotFound {
                path: p.to_path_buf(),
            });
        }
        return Err(Error::Io {
            path: p.to_path_buf(),
            message: "not a truth file (expected .json, .lines.txt, or a PNG in gt_binary_image/)"
                .into(),
        });
    }
    Ok(())
}

/// A pipeline's identity: config file, camera file, frame width and height.
type PipeKey = (Option<PathBuf>, Option<PathBuf>, i32, i32);

/// Pipelines built on demand, one per (config, camera, frame size).
pub struct Runner {
    pub camera_override: Option<PathBuf>,
    pub config_override: Option<PathBuf>,
    pub preset: Preset,
    pub pipes: HashMap<PipeKey, (Pipeline, Option<Camera>)>,
    /// Whether the stills of each labelled set get the road geometry found in them
    /// (`geometry::stills`, once per set and frame size), as `lanes image` gives stills when no
    /// `[perspective]` is given. Negatives and synthetic truth keep their configured geometry.
    pub find_geometry: bool,
    /// Pipelines with a set's own geometry, by (set, width, height).
    found: HashMap<(PathBuf, i32, i32), (Pipeline, Option<Camera>)>,
    /// What each search found, or why not: "SET: LINE" for the user.
    pub notes: Vec<String>,
}

impl Runner {
    /// A runner whose `--camera`/`--config` overrides replace the truth files' own, with
    /// config files merged over `preset`.
    pub fn new(camera: Option<PathBuf>, config: Option<PathBuf>, preset: Preset) -> Self {
        Self {
            camera_override: camera,
            config_override: config,
            preset,
            pipes: HashMap::new(),
            find_geometry: false,
            found: HashMap::new(),
            notes: Vec::new(),
        }
    }

    /// The pipeline for the still `raw` (read from `path`) of the labelled set `set` (a label
    /// file, or the folder of a sequence), whose stills `images` lists: with `find_geometry`,
    /// the geometry found in the set's stills of that size (`geometry::stills::stills_config`,
    /// its lines kept in `notes`); else the configured one.
    fn still_pipeline(
        &mut self,
        set: &Path,
        images: impl FnOnce() -> Vec<PathBuf>,
        path: &Path,
        raw: &BgrFrame,
    ) -> Result<&(Pipeline, Option<Camera>)> {
        let (w, h) = (raw.width(), raw.height());
        if !self.find_geometry {
            return self.pipeline(None, None, w, h);
        }
        let key = (set.to_path_buf(), w, h);
        if !self.found.contains_key(&key) {
            let (config, camera) = self.load(
                self.config_override.as_deref(),
                self.camera_override.as_deref(),
            )?;
            let (c, notes) = crate::geometry::stills::stills_config(
                &images(),
                Some((path, raw)),
                &config,
                camera.as_ref(),
            );
            let set_name = set.display();
            self.notes
                .extend(notes.into_iter().map(|n| format!("{set_name}: {n}")));
            let pipe = Pipeline::new(c, camera.as_ref(), w, h)?;
            self.found.insert(key.clone(), (pipe, camera));
        }
        self.found
            .get(&key)
            .ok_or_else(|| Error::Invalid("pipeline cache".into()))
    }

    /// The configuration (`cfg` over the preset) and the camera (`cam`) a pipeline is built
    /// with.
    fn load(&self, cfg: Option<&Path>, cam: Option<&Path>) -> Result<(Config, Option<Camera>)> {
        let config = Config::load_over(cfg, self.preset)?;
        let camera = cam.map(Camera::load).transpose()?;
        Ok((config, camera))
    }

    /// The size of the `--camera` file's frames, read once for a set of stills: a still a
    /// pixel or two off it is placed at its top-left (`BgrFrame::fitted_within`), as `lanes
    /// image` and `lanes calibrate` use such photos; a size further off is refused by the
    /// pipeline, by name.
    fn camera_override_size(&self) -> Result<Option<(i32, i32)>> {
        Ok(match self.camera_override.as_deref() {
            Some(cam) => {
                let c = Camera::load(cam)?;
                Some((c.width, c.height))
            }
            None => None,
        })
    }

    fn pipeline(
        &mut self,
        cfg: Option<&Path>,
        cam: Option<&Path>,
        w: i32,
        h: i32,
    ) -> Result<&(Pipeline, Option<Camera>)> {
        let cfg = self
            .config_override
            .as_deref()
            .or(cfg)
            .map(Path::to_path_buf);
        let cam = self
            .camera_override
            .as_deref()
            .or(cam)
            .map(Path::to_path_buf);
        let key = (cfg.clone(), cam.clone(), w, h);
        if !self.pipes.contains_key(&key) {
            let (config, camera) = self.load(cfg.as_deref(), cam.as_deref())?;
            let pipe = Pipeline::new(config, camera.as_ref(), w, h)?;
            self.pipes.insert(key.clone(), (pipe, camera));
        }
        self.pipes
            .get(&key)
            .ok_or_else(|| Error::Invalid("pipeline cache".into()))
    }
}

/// A lane's lines (bird's-eye fits, as `Analysis::reported_lines` gives them) in the original
/// image.
fn image_lines(
    pipe: &Pipeline,
    cam: Option<&Camera>,
    (left, right): (Option<Poly2>, Option<Poly2>),
) -> (Option<Polyline>, Option<Polyline>) {
    let f = |p: Option<Poly2>| p.map(|p| line_in_image(&p, &pipe.persp, cam, 1.0));
    (f(left), f(right))
}

fn read_image(p: &Path) -> Result<BgrFrame> {
    BgrFrame::read(p)
}

#[derive(Serialize, Default)]
pub struct SyntheticOut {
    pub files: usize,
    pub summary: synthetic::Summary,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<FrameScore>,
}

#[derive(Serialize, Default)]
pub struct TuSimpleOut {
    #[serde(flatten)]
    pub summary: tusimple::Summary,
    /// The same per subset of frames (`challenge`, `harder`, `p1`, `project`).
    pub subsets: BTreeMap<&'static str, tusimple::Summary>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_image: Vec<ImageScore>,
    /// Subsets of the records with `"skip": true`.
    #[serde(skip)]
    pub skipped: Vec<&'static str>,
}

#[derive(Serialize, Default)]
pub struct NegativesOut {
    pub total: Option<NegativesSummary>,
    pub sets: Vec<NegativesSummary>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_image: Vec<NegativeImage>,
}

#[derive(Serialize)]
pub struct CountsImage {
    pub file: String,
    #[serde(flatten)]
    pub counts: culane::Counts,
}

#[derive(Serialize, Default)]
pub struct CuLaneOut {
    pub images: usize,
    pub counts: culane::Counts,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_image: Vec<CountsImage>,
}

#[derive(Serialize)]
pub struct MaskImage {
    pub file: String,
    #[serde(flatten)]
    pub counts: masks::MaskCounts,
}

#[derive(Serialize, Default)]
pub struct MasksOut {
    pub images: usize,
    pub counts: masks::MaskCounts,
    pub pred_near_mask: f64,
    pub mask_near_pred: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_image: Vec<MaskImage>,
}

#[derive(Serialize)]
pub struct Failure {
    pub file: String,
    pub error: String,
}

impl Failure {
    pub fn new(file: &Path, error: &Error) -> Self {
        Self {
            file: file.display().to_string(),
            error: error.to_string(),
        }
    }
}

#[derive(Serialize, Default)]
pub struct Report {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<SyntheticOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tusimple: Option<TuSimpleOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub culane: Option<CuLaneOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub masks: Option<MasksOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub negatives: Option<NegativesOut>,
    pub failed: Vec<Failure>,
}

/// Score a synthetic truth file (a still or a video).
pub fn eval_synthetic(run: &mut Runner, path: &Path) -> Result<Vec<FrameScore>> {
    let t = TruthFile::load(path)?;
    let cam = TruthFile::resolve(path, &t.camera);
    let cfg = TruthFile::resolve(path, &t.config);
    let file = path.display().to_string();
    if let Some(img) = &t.image {
        let raw = read_image(&TruthFile::resolve(path, img))?;
        let (pipe, camera) = run.pipeline(Some(&cfg), Some(&cam), raw.width(), raw.height())?;
        let a = pipe.analyze(&raw, None)?;
        let (left, right) = image_lines(pipe, camera.as_ref(), a.reported_lines());
        let pred = Prediction {
            detected: left.is_some() && right.is_some(),
            left,
            right,
            radius_m: a.measure.map(|m| m.radius_m),
            offset_m: a.measure.map(|m| m.offset_m),
            lane_width_m: a.measure.map(|m| m.lane_width_m),
        };
        let ft = t.frames.first().ok_or_else(|| Error::Io {
            path: path.to_path_buf(),
            message: "no frames".into(),
        })?;
        return Ok(vec![synthetic::score_frame(&file, ft, &pred, raw.width())]);
    }
    let video = t.video.as_ref().ok_or_else(|| Error::Io {
        path: path.to_path_buf(),
        message: "names neither an image nor a video".into(),
    })?;
    let vpath = TruthFile::resolve(path, video);
    if !vpath.exists() {
        return Err(Error::NotFound { path: vpath });
    }
    // The video pipeline itself (tracker, prior search, smoothing): exactly what `lanes video`
    // reports in its telemetry.
    let (pipe, camera) = run.pipeline(Some(&cfg), Some(&cam), t.width, t.height)?;
    let records =
        crate::video::analyze_video(&vpath, &pipe.cfg, camera.as_ref(), 0, Some(t.frames.len()))?;
    if records.len() < t.frames.len() {
        return Err(Error::Io {
            path: vpath,
            message: format!(
                "video has {} frames but the truth has {}",
                records.len(),
                t.frames.len()
            ),
        });
    }
    let mut out = Vec::new();
    for (ft, r) in t.frames.iter().zip(&records) {
        let (left, right) = image_lines(pipe, camera.as_ref(), (r.left_fit, r.right_fit));
        let pred = Prediction {
            left,
            right,
            detected: r.detected,
            radius_m: r.radius_m,
            offset_m: r.offset_m,
            lane_width_m: r.lane_width_m,
        };
        out.push(synthetic::score_frame(&file, ft, &pred, t.width));
    }
    Ok(out)
}

/// Score a TuSimple label file (every record but the skipped ones).
pub fn eval_tusimple(
    run: &mut Runner,
    path: &Path,
    root: Option<&Path>,
    out: &mut TuSimpleOut,
    failed: &mut Vec<Failure>,
) -> Result<()> {
    let labels = tusimple::load_labels(path)?;
    let images: Vec<PathBuf> = labels
        .iter()
        .filter(|l| !l.skip)
        .map(|l| tusimple::resolve_raw_file(path, &l.raw_file, root))
        .collect();
    for l in labels {
        let subset = tusimple::subset(&l.raw_file);
        if l.skip {
            out.skipped.push(subset);
            continue;
        }
        let img_path = tusimple::resolve_raw_file(path, &l.raw_file, root);
        let r = (|| -> Result<ImageScore> {
            let raw = read_image(&img_path)?;
            let (pipe, camera) = run.still_pipeline(path, || images.clone(), &img_path, &raw)?;
            let a = pipe.analyze(&raw, None)?;
            let (left, right) = image_lines(pipe, camera.as_ref(), a.reported_lines());
            let pred: Vec<Vec<f64>> = [left, right]
                .into_iter()
                .flatten()
                .map(|p| sample_rows(&p, &l.h_samples, raw.width()))
                .collect();
            let gt = tusimple::scored_lanes(&l, raw.width(), raw.height());
            let thresh = tusimple::thresh_for_width(raw.width());
            let dst = pipe.cfg.perspective.dst;
            let rows = visible_rows(
                &pipe.persp,
                [dst[2][0], dst[3][0]],
                camera.as_ref(),
                raw.height(),
            );
            Ok(ImageScore {
                file: img_path.display().to_string(),
                subset,
                bench: tusimple::bench(&pred, &gt, &l.h_samples, thresh),
                labelled_rows: tusimple::bench_labelled_rows(
                    &pred,
                    &gt,
                    &l.h_samples,
                    thresh,
                    rows,
                ),
                labelled_lines: gt.len(),
                predicted_lines: pred.len(),
            })
        })();
        match r {
            Ok(i) => out.per_image.push(i),
            Err(e) => failed.push(Failure::new(&img_path, &e)),
        }
    }
    Ok(())
}

/// Run the still pipeline on every image of a negatives directory.
pub fn eval_negatives(
    run: &mut Runner,
    dir: &Path,
    failed: &mut Vec<Failure>,
) -> Result<Vec<NegativeImage>> {
    let mut out = Vec::new();
    let camera_size = run.camera_override_size()?;
    for p in negatives::find_images(dir)? {
        let r = (|| -> Result<NegativeImage> {
            let raw = read_image(&p)?;
            let raw = match camera_size {
                Some(size) => raw
                    .fitted_within(size, STILL_SIZE_TOLERANCE)?
                    .unwrap_or(raw),
                None => raw,
            };
            let (pipe, _) = run.pipeline(None, None, raw.width(), raw.height())?;
            let a = pipe.analyze(&raw, None)?;
            let (l, r) = a.reported_lines();
            Ok(NegativeImage {
                file: p.display().to_string(),
                left: l.is_some(),
                right: r.is_some(),
            })
        })();
        match r {
            Ok(i) => out.push(i),
            Err(e) => failed.push(Failure::new(&p, &e)),
        }
    }
    Ok(out)
}

/// Score one CULane label file against its `.jpg`.
pub fn eval_culane(run: &mut Runner, path: &Path) -> Result<CountsImage> {
    let name = path.to_string_lossy();
    let img_path = PathBuf::from(format!("{}.jpg", name.trim_end_matches(".lines.txt")));
    let raw = read_image(&img_path)?;
    let gt_all = culane::load_lines(path)?;
    let gt = culane::ego_lines(&gt_all, raw.width(), raw.height());
    // A sequence's frames (the `.lines.txt` files of one folder) are one camera's.
    let set = path.parent().unwrap_or(Path::new("."));
    let images = || sibling_images(set, ".lines.txt", ".jpg");
    let (pipe, camera) = run.still_pipeline(set, images, &img_path, &raw)?;
    let a = pipe.analyze(&raw, None)?;
    let (left, right) = image_lines(pipe, camera.as_ref(), a.reported_lines());
    let pred: Vec<Polyline> = [left, right].into_iter().flatten().collect();
    Ok(CountsImage {
        file: img_path.display().to_string(),
        counts: culane::score(&pred, &gt, raw.width(), raw.height())?,
    })
}

/// The stills beside the truth files of a folder: each file in `dir` whose name ends with
/// `suffix`, that suffix replaced by `ext` (CULane: `N.lines.txt` -> `N.jpg`), sorted.
fn sibling_images(dir: &Path, suffix: &str, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let stem = name.strip_suffix(suffix)?;
            Some(dir.join(format!("{stem}{ext}")))
        })
        .collect();
    out.sort();
    out
}

fn read_gray(p: &Path) -> Result<Mat> {
    if !p.exists() {
        return Err(Error::NotFound {
            path: p.to_path_buf(),
        });
    }
    // Truncated, corrupt or oversized masks are errors, as for every still.
    crate::base::still::read_gray(p)
}

/// Score one lane mask (lanenet layout: `gt_binary_image/N.png`, `image/N.png`,
/// optional `gt_instance_image/N.png`).
pub fn eval_mask(run: &mut Runner, path: &Path) -> Result<MaskImage> {
    let bad = |what: &str| Error::Io {
        path: path.to_path_buf(),
        message: what.to_string(),
    };
    let name = path.file_name().ok_or_else(|| bad("no mask file name"))?;
    let root = path
        .parent()
        .and_then(|p| p.parent())
        .ok_or_else(|| bad("no mask folder"))?;
    let img_path = root.join("image").join(name);
    let inst_path = root.join("gt_instance_image").join(name);
    let raw = read_image(&img_path)?;
    let bin = read_gray(path)?;
    if bin.cols() != raw.width() || bin.rows() != raw.height() {
        return Err(bad(&format!(
            "mask is {}x{}, image is {}x{}",
            bin.cols(),
            bin.rows(),
            raw.width(),
            raw.height()
        )));
    }
    let inst = if inst_path.exists() {
        Some(read_gray(&inst_path)?)
    } else {
        None
    };
    let ego = masks::ego_mask(&bin, inst.as_ref())?;
    // The set's images (`image/`, beside `gt_binary_image/`) are one camera's.
    let masks_dir = path.parent().unwrap_or(Path::new("."));
    let images = || {
        sibling_images(masks_dir, ".png", ".png")
            .into_iter()
            .filter_map(|p| p.file_name().map(|n| root.join("image").join(n)))
            .collect()
    };
    let (pipe, camera) = run.still_pipeline(root, images, &img_path, &raw)?;
    let a = pipe.analyze(&raw, None)?;
    let (left, right) = image_lines(pipe, camera.as_ref(), a.reported_lines());
    let pred: Vec<Polyline> = [left, right].into_iter().flatten().collect();
    Ok(MaskImage {
        file: img_path.display().to_string(),
        counts: masks::score(&pred, &bin, &ego)?,
    })
}

/// Score every truth item and every negatives directory into one report. Per-file trouble is
/// recorded in `Report::failed` and the run goes on.
pub fn evaluate(
    run: &mut Runner,
    items: &[Item],
    negatives: &[PathBuf],
    root: Option<&Path>,
) -> Report {
    let mut rep = Report::default();
    let mut synth_frames: Vec<FrameScore> = Vec::new();
    let mut synth_files = 0usize;
    for item in items {
        let (p, result) = match item {
            Item::Synthetic(p) => (
                p,
                eval_synthetic(run, p).map(|f| {
                    synth_files += 1;
                    synth_frames.extend(f);
                }),
            ),
            Item::TuSimple(p) => {
                let out = rep.tusimple.get_or_insert_with(TuSimpleOut::default);
                (p, eval_tusimple(run, p, root, out, &mut rep.failed))
            }
            Item::CuLane(p) => {
                let r = eval_culane(run, p);
                let out = rep.culane.get_or_insert_with(CuLaneOut::default);
                (p, r.map(|i| out.per_image.push(i)))
            }
            Item::Mask(p) => {
                let r = eval_mask(run, p);
                let out = rep.masks.get_or_insert_with(MasksOut::default);
                (p, r.map(|i| out.per_image.push(i)))
            }
        };
        if let Err(e) = result {
            rep.failed.push(Failure::new(p, &e));
        }
    }
    if synth_files > 0 {
        rep.synthetic = Some(SyntheticOut {
            files: synth_files,
            summary: synthetic::summarize(&synth_frames),
            frames: synth_frames,
        });
    }
    if let Some(t) = &mut rep.tusimple {
        let (summary, subsets) = tusimple::summarize_subsets(&t.per_image, &t.skipped);
        t.summary = summary;
        t.subsets = subsets;
    }
    if !negatives.is_empty() {
        let mut out = NegativesOut::default();
        for d in negatives {
            match eval_negatives(run, d, &mut rep.failed) {
                Ok(imgs) => {
                    out.sets
                        .push(negatives::summarize(&d.display().to_string(), &imgs));
                    out.per_image.extend(imgs);
                }
                Err(e) => rep.failed.push(Failure::new(d, &e)),
            }
        }
        out.total = Some(negatives::summarize("total", &out.per_image));
        rep.negatives = Some(out);
    }
    if let Some(c) = &mut rep.culane {
        c.images = c.per_image.len();
        for i in &c.per_image {
            c.counts.add(i.counts);
        }
        c.precision = c.counts.precision();
        c.recall = c.counts.recall();
        c.f1 = c.counts.f1();
    }
    if let Some(m) = &mut rep.masks {
        m.images = m.per_image.len();
        for i in &m.per_image {
            m.counts.add(i.counts);
        }
        m.pred_near_mask = m.counts.pred_near_mask();
        m.mask_near_pred = m.counts.mask_near_pred();
    }
    rep
}
