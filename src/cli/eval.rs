//! `lanes eval`: run the pipeline on the images or videos named by truth files and score it
//! (synthetic truth, TuSimple labels per subset, CULane `.lines.txt`, lane masks) and the share of
//! lane-free images (`--negatives`) with a reported lane; a table or `--json`.

use super::load_config;
use anyhow::{Context, Result};
use clap::Args;
use lanes::camera::Camera;
use lanes::eval::negatives::{self, NegativeImage, NegativesSummary};
use lanes::eval::synthetic::{self, FrameScore, Prediction};
use lanes::eval::tusimple::{self, ImageScore};
use lanes::eval::{culane, line_in_image, masks, sample_rows, visible_rows, Polyline};
use lanes::fit::Poly2;
use lanes::frame::BgrFrame;
use lanes::pipeline::Pipeline;
use lanes::synth::truth::{self, TruthFile};
use opencv::core::Mat;
use opencv::imgcodecs;
use opencv::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct EvalArgs {
    /// Truth files or directories: synthetic truth JSON (from `lanes synth`), TuSimple label JSON
    /// (JSON lines), CULane `.lines.txt`, lane-mask PNGs in a `gt_binary_image` folder.
    #[arg(required_unless_present = "negatives", value_name = "TRUTH")]
    truth: Vec<PathBuf>,
    /// Directory TuSimple `raw_file` paths are relative to (default: the label file's directory
    /// or the nearest of its ancestors where the file exists).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Directory of images with no lane (searched recursively: jpg, jpeg, png, bmp): report the
    /// share where a lane is reported. Repeatable.
    #[arg(long, value_name = "DIR")]
    negatives: Vec<PathBuf>,
    /// Camera file (default: the one named by synthetic truth; none for other labels).
    #[arg(long, value_name = "FILE")]
    camera: Option<PathBuf>,
    /// Configuration TOML (default: the one named by synthetic truth; the defaults otherwise).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the results as one JSON document on stdout (with every frame and image).
    #[arg(long)]
    json: bool,
    /// Also list every frame or image in the table.
    #[arg(long)]
    frames: bool,
}

/// One thing to score.
enum Item {
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

fn classify(p: &Path, explicit: bool, out: &mut Vec<Item>) -> Result<()> {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .with_context(|| format!("{}: cannot read directory", p.display()))?
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
            None if explicit => anyhow::bail!(
                "{}: neither synthetic truth nor TuSimple labels",
                p.display()
            ),
            None => {}
        }
    } else if is_mask(p) {
        out.push(Item::Mask(p.to_path_buf()));
    } else if explicit {
        if !p.exists() {
            anyhow::bail!("{}: file not found", p.display());
        }
        anyhow::bail!(
            "{}: not a truth file (expected .json, .lines.txt, or a PNG in gt_binary_image/)",
            p.display()
        );
    }
    Ok(())
}

/// A pipeline's identity: config file, camera file, frame width and height.
type PipeKey = (Option<PathBuf>, Option<PathBuf>, i32, i32);

/// Pipelines built on demand, one per (config, camera, frame size).
struct Runner {
    camera_override: Option<PathBuf>,
    config_override: Option<PathBuf>,
    pipes: HashMap<PipeKey, (Pipeline, Option<Camera>)>,
}

impl Runner {
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
            let config = load_config(cfg.as_deref())?;
            let camera = match &cam {
                Some(p) => Some(Camera::load(p).with_context(|| "loading camera".to_string())?),
                None => None,
            };
            let pipe = Pipeline::new(config, camera.as_ref(), w, h)?;
            self.pipes.insert(key.clone(), (pipe, camera));
        }
        self.pipes.get(&key).context("pipeline cache")
    }
}

/// The lines of a lane in the original image.
fn image_lines(
    pipe: &Pipeline,
    cam: Option<&Camera>,
    left: Option<&Poly2>,
    right: Option<&Poly2>,
) -> (Option<Polyline>, Option<Polyline>) {
    let f = |p: Option<&Poly2>| p.map(|p| line_in_image(p, &pipe.persp, cam, 1.0));
    (f(left), f(right))
}

fn read_image(p: &Path) -> Result<BgrFrame> {
    Ok(BgrFrame::read(p)?)
}

#[derive(Serialize, Default)]
struct SyntheticOut {
    files: usize,
    summary: synthetic::Summary,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    frames: Vec<FrameScore>,
}

#[derive(Serialize, Default)]
struct TuSimpleOut {
    #[serde(flatten)]
    summary: tusimple::Summary,
    /// The same per subset of frames (`challenge`, `harder`, `p1`, `project`).
    subsets: BTreeMap<&'static str, tusimple::Summary>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    per_image: Vec<ImageScore>,
    /// Subsets of the records with `"skip": true`.
    #[serde(skip)]
    skipped: Vec<&'static str>,
}

#[derive(Serialize, Default)]
struct NegativesOut {
    total: Option<NegativesSummary>,
    sets: Vec<NegativesSummary>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    per_image: Vec<NegativeImage>,
}

#[derive(Serialize)]
struct CountsImage {
    file: String,
    #[serde(flatten)]
    counts: culane::Counts,
}

#[derive(Serialize, Default)]
struct CuLaneOut {
    images: usize,
    counts: culane::Counts,
    precision: f64,
    recall: f64,
    f1: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    per_image: Vec<CountsImage>,
}

#[derive(Serialize)]
struct MaskImage {
    file: String,
    #[serde(flatten)]
    counts: masks::MaskCounts,
}

#[derive(Serialize, Default)]
struct MasksOut {
    images: usize,
    counts: masks::MaskCounts,
    pred_near_mask: f64,
    mask_near_pred: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    per_image: Vec<MaskImage>,
}

#[derive(Serialize)]
struct Failure {
    file: String,
    error: String,
}

impl Failure {
    fn new(file: &Path, error: &anyhow::Error) -> Self {
        Self {
            file: file.display().to_string(),
            error: format!("{error:#}"),
        }
    }
}

#[derive(Serialize, Default)]
struct Report {
    #[serde(skip_serializing_if = "Option::is_none")]
    synthetic: Option<SyntheticOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tusimple: Option<TuSimpleOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    culane: Option<CuLaneOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    masks: Option<MasksOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    negatives: Option<NegativesOut>,
    failed: Vec<Failure>,
}

/// Score a synthetic truth file (a still or a video).
fn eval_synthetic(run: &mut Runner, path: &Path) -> Result<Vec<FrameScore>> {
    let t = TruthFile::load(path)?;
    let cam = TruthFile::resolve(path, &t.camera);
    let cfg = TruthFile::resolve(path, &t.config);
    let file = path.display().to_string();
    if let Some(img) = &t.image {
        let raw = read_image(&TruthFile::resolve(path, img))?;
        let (pipe, camera) = run.pipeline(Some(&cfg), Some(&cam), raw.width(), raw.height())?;
        let a = pipe.analyze(&raw, None)?;
        let (l_fit, r_fit) = a.reported_lines();
        let (left, right) = image_lines(pipe, camera.as_ref(), l_fit.as_ref(), r_fit.as_ref());
        let pred = Prediction {
            left,
            right,
            detected: l_fit.is_some() && r_fit.is_some(),
            radius_m: a.measure.map(|m| m.radius_m),
            offset_m: a.measure.map(|m| m.offset_m),
            lane_width_m: a.measure.map(|m| m.lane_width_m),
        };
        let ft = t
            .frames
            .first()
            .with_context(|| format!("{}: no frames", path.display()))?;
        return Ok(vec![synthetic::score_frame(&file, ft, &pred, raw.width())]);
    }
    let video = t
        .video
        .as_ref()
        .with_context(|| format!("{}: names neither an image nor a video", path.display()))?;
    let vpath = TruthFile::resolve(path, video);
    if !vpath.exists() {
        anyhow::bail!("{}: file not found", vpath.display());
    }
    // The video pipeline itself (tracker, prior search, smoothing): exactly what `lanes video`
    // reports in its telemetry.
    let (pipe, camera) = run.pipeline(Some(&cfg), Some(&cam), t.width, t.height)?;
    let records =
        lanes::video::analyze_video(&vpath, &pipe.cfg, camera.as_ref(), 0, Some(t.frames.len()))?;
    if records.len() < t.frames.len() {
        anyhow::bail!(
            "{}: video has {} frames but the truth has {}",
            vpath.display(),
            records.len(),
            t.frames.len()
        );
    }
    let mut out = Vec::new();
    for (ft, r) in t.frames.iter().zip(&records) {
        let (left, right) = image_lines(
            pipe,
            camera.as_ref(),
            r.left_fit.as_ref(),
            r.right_fit.as_ref(),
        );
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
fn eval_tusimple(
    run: &mut Runner,
    path: &Path,
    root: Option<&Path>,
    out: &mut TuSimpleOut,
    failed: &mut Vec<Failure>,
) -> Result<()> {
    let labels = tusimple::load_labels(path)?;
    for l in labels {
        let subset = tusimple::subset(&l.raw_file);
        if l.skip {
            out.skipped.push(subset);
            continue;
        }
        let img_path = tusimple::resolve_raw_file(path, &l.raw_file, root);
        let r = (|| -> Result<ImageScore> {
            let raw = read_image(&img_path)?;
            let (pipe, camera) = run.pipeline(None, None, raw.width(), raw.height())?;
            let a = pipe.analyze(&raw, None)?;
            let (l_fit, r_fit) = a.reported_lines();
            let (left, right) = image_lines(pipe, camera.as_ref(), l_fit.as_ref(), r_fit.as_ref());
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
fn eval_negatives(
    run: &mut Runner,
    dir: &Path,
    failed: &mut Vec<Failure>,
) -> Result<Vec<NegativeImage>> {
    let mut out = Vec::new();
    for p in negatives::find_images(dir)? {
        let r = (|| -> Result<NegativeImage> {
            let raw = read_image(&p)?;
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
fn eval_culane(run: &mut Runner, path: &Path) -> Result<CountsImage> {
    let name = path.to_string_lossy();
    let img_path = PathBuf::from(format!("{}.jpg", name.trim_end_matches(".lines.txt")));
    let raw = read_image(&img_path)?;
    let gt_all = culane::load_lines(path)?;
    let gt = culane::ego_lines(&gt_all, raw.width(), raw.height());
    let (pipe, camera) = run.pipeline(None, None, raw.width(), raw.height())?;
    let a = pipe.analyze(&raw, None)?;
    let (l_fit, r_fit) = a.reported_lines();
    let (left, right) = image_lines(pipe, camera.as_ref(), l_fit.as_ref(), r_fit.as_ref());
    let pred: Vec<Polyline> = [left, right].into_iter().flatten().collect();
    Ok(CountsImage {
        file: img_path.display().to_string(),
        counts: culane::score(&pred, &gt, raw.width(), raw.height())?,
    })
}

fn read_gray(p: &Path) -> Result<Mat> {
    if !p.exists() {
        anyhow::bail!("{}: file not found", p.display());
    }
    // Truncated, corrupt or oversized masks are errors, as for every still.
    lanes::still::check_file(p)?;
    let m = imgcodecs::imread(p, imgcodecs::IMREAD_GRAYSCALE)?;
    if m.empty() {
        anyhow::bail!("{}: cannot read as an image", p.display());
    }
    Ok(m)
}

/// Score one lane mask (lanenet layout: `gt_binary_image/N.png`, `image/N.png`,
/// optional `gt_instance_image/N.png`).
fn eval_mask(run: &mut Runner, path: &Path) -> Result<MaskImage> {
    let name = path.file_name().context("mask file name")?;
    let root = path
        .parent()
        .and_then(|p| p.parent())
        .context("mask folder")?;
    let img_path = root.join("image").join(name);
    let inst_path = root.join("gt_instance_image").join(name);
    let raw = read_image(&img_path)?;
    let bin = read_gray(path)?;
    if bin.cols() != raw.width() || bin.rows() != raw.height() {
        anyhow::bail!(
            "{}: mask is {}x{}, image is {}x{}",
            path.display(),
            bin.cols(),
            bin.rows(),
            raw.width(),
            raw.height()
        );
    }
    let inst = if inst_path.exists() {
        Some(read_gray(&inst_path)?)
    } else {
        None
    };
    let ego = masks::ego_mask(&bin, inst.as_ref())?;
    let (pipe, camera) = run.pipeline(None, None, raw.width(), raw.height())?;
    let a = pipe.analyze(&raw, None)?;
    let (l_fit, r_fit) = a.reported_lines();
    let (left, right) = image_lines(pipe, camera.as_ref(), l_fit.as_ref(), r_fit.as_ref());
    let pred: Vec<Polyline> = [left, right].into_iter().flatten().collect();
    Ok(MaskImage {
        file: img_path.display().to_string(),
        counts: masks::score(&pred, &bin, &ego)?,
    })
}

fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{:.1}%", v * 100.0))
        .unwrap_or_else(|| "-".into())
}
fn cm(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} cm"))
        .unwrap_or_else(|| "-".into())
}

fn print_table(r: &Report, frames: bool) {
    let row = |k: &str, v: String| println!("  {k:<32} {v}");
    if let Some(s) = &r.synthetic {
        let m = &s.summary;
        println!(
            "synthetic truth: {} frames from {} files",
            m.frames, s.files
        );
        row(
            "detection rate (both lines)",
            format!(
                "{:.1}% ({}/{})",
                m.detection_rate * 100.0,
                m.detected,
                m.frames
            ),
        );
        row("radius error median", pct(m.radius_rel_error_median));
        row(
            "radius error p90",
            format!(
                "{} ({} curved frames)",
                pct(m.radius_rel_error_p90),
                m.curved_frames
            ),
        );
        row(
            "radius error vs ideal quadratic",
            format!(
                "{} median, {} p90",
                pct(m.radius_quadratic_rel_error_median),
                pct(m.radius_quadratic_rel_error_p90)
            ),
        );
        row(
            "straight reported > 2 km",
            format!("{}/{}", m.straight_over_2km, m.straight_frames),
        );
        row("offset error median", cm(m.offset_error_cm_median));
        row("offset error p90", cm(m.offset_error_cm_p90));
        row("lane width error median", cm(m.lane_width_error_cm_median));
        row("lane width error p90", cm(m.lane_width_error_cm_p90));
        row(
            "TuSimple accuracy, bird's-eye",
            format!(
                "{:.3} (FP {:.3}, FN {:.3})",
                m.tusimple_birdseye_accuracy, m.tusimple_birdseye_fp, m.tusimple_birdseye_fn
            ),
        );
        row(
            "TuSimple accuracy, to 100 m",
            format!(
                "{:.3} (FP {:.3}, FN {:.3})",
                m.tusimple_accuracy, m.tusimple_fp, m.tusimple_fn
            ),
        );
        if frames {
            println!(
                "  {:<44} {:>9} {:>9} {:>8} {:>8} {:>8} {:>6}",
                "file", "R true", "R", "R err", "off cm", "w cm", "acc"
            );
            for f in &s.frames {
                let file = Path::new(&f.file)
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default();
                let label = if s.summary.frames > s.files {
                    format!("{file}#{}", f.frame)
                } else {
                    file
                };
                let num = |v: Option<f64>, d: usize| {
                    v.map(|v| format!("{v:.d$}")).unwrap_or_else(|| "-".into())
                };
                println!(
                    "  {:<44} {:>9} {:>9} {:>8} {:>8} {:>8} {:>6.3}",
                    label,
                    f.radius_true_m
                        .map(|r| format!("{r:.0}"))
                        .unwrap_or_else(|| "straight".into()),
                    num(f.radius_m, 0),
                    f.radius_rel_error
                        .map(|e| format!("{:.1}%", e * 100.0))
                        .unwrap_or_else(|| f
                            .straight_ok
                            .map(|b| if b { "ok" } else { "BENT" }.to_string())
                            .unwrap_or_else(|| "-".into())),
                    num(f.offset_error_cm, 1),
                    num(f.lane_width_error_cm, 1),
                    f.tusimple_birdseye.accuracy
                );
            }
        }
    }
    if let Some(t) = &r.tusimple {
        let s = &t.summary;
        println!(
            "TuSimple labels: {} images (ego lines), {} skipped",
            s.images, s.skipped
        );
        row("accuracy", format!("{:.3}", s.accuracy));
        row("false positive rate", format!("{:.3}", s.fp));
        row("false negative rate", format!("{:.3}", s.fn_));
        row(
            "labelled rows in the quad",
            format!(
                "{:.3} (FP {:.3}, FN {:.3}; {} images)",
                s.labelled_rows_accuracy,
                s.labelled_rows_fp,
                s.labelled_rows_fn,
                s.labelled_rows_images
            ),
        );
        println!(
            "  {:<10} {:>6} {:>7} {:>6} {:>6} {:>9} {:>6} {:>6}",
            "subset", "images", "skipped", "acc", "FP", "rows acc", "FP", "FN"
        );
        for (name, s) in &t.subsets {
            println!(
                "  {:<10} {:>6} {:>7} {:>6.3} {:>6.3} {:>9.3} {:>6.3} {:>6.3}",
                name,
                s.images,
                s.skipped,
                s.accuracy,
                s.fp,
                s.labelled_rows_accuracy,
                s.labelled_rows_fp,
                s.labelled_rows_fn
            );
        }
        if frames {
            for i in &t.per_image {
                let lr = i
                    .labelled_rows
                    .map(|b| format!("rows acc {:.3} fp {:.2} fn {:.2}", b.accuracy, b.fp, b.fn_))
                    .unwrap_or_else(|| "rows -".into());
                println!(
                    "  {:<60} {:<9} acc {:.3} fp {:.2} fn {:.2}  {lr}",
                    i.file, i.subset, i.bench.accuracy, i.bench.fp, i.bench.fn_
                );
            }
        }
    }
    if let Some(n) = &r.negatives {
        println!("negatives: share of images with a reported lane (either line)");
        let line = |s: &NegativesSummary| format!("{:.3} ({}/{})", s.share, s.reported, s.images);
        for s in &n.sets {
            row(&s.dir, line(s));
        }
        if let Some(t) = n.total.as_ref().filter(|_| n.sets.len() > 1) {
            row("total", line(t));
        }
        if frames {
            for i in &n.per_image {
                let side = match (i.left, i.right) {
                    (true, true) => "left+right",
                    (true, false) => "left",
                    (false, true) => "right",
                    (false, false) => "none",
                };
                println!("  {:<60} {side}", i.file);
            }
        }
    }
    if let Some(c) = &r.culane {
        println!(
            "CULane labels: {} images (ego lines, IoU > 0.5, 30 px lines)",
            c.images
        );
        row(
            "precision",
            format!(
                "{:.3} ({} TP, {} FP)",
                c.precision, c.counts.tp, c.counts.fp
            ),
        );
        row("recall", format!("{:.3} ({} FN)", c.recall, c.counts.fn_));
        row("F1", format!("{:.3}", c.f1));
        if frames {
            for i in &c.per_image {
                println!(
                    "  {:<60} TP {} FP {} FN {}",
                    i.file, i.counts.tp, i.counts.fp, i.counts.fn_
                );
            }
        }
    }
    if let Some(m) = &r.masks {
        println!("lane masks: {} images", m.images);
        row(
            "predicted points near a lane",
            format!(
                "{:.3} ({}/{})",
                m.pred_near_mask, m.counts.pred_near, m.counts.pred_points
            ),
        );
        row(
            "ego-lane pixels near prediction",
            format!(
                "{:.3} ({}/{})",
                m.mask_near_pred, m.counts.mask_near, m.counts.mask_pixels
            ),
        );
        if frames {
            for i in &m.per_image {
                println!(
                    "  {:<60} {:.3} {:.3}",
                    i.file,
                    i.counts.pred_near_mask(),
                    i.counts.mask_near_pred()
                );
            }
        }
    }
    if !r.failed.is_empty() {
        println!("failed: {}", r.failed.len());
    }
}

pub fn run(a: EvalArgs) -> Result<i32> {
    if let Some(c) = &a.config {
        load_config(Some(c))?;
    }
    if let Some(c) = &a.camera {
        Camera::load(c).with_context(|| "loading camera".to_string())?;
    }
    for d in &a.negatives {
        if !d.is_dir() {
            anyhow::bail!("{}: not a directory (--negatives)", d.display());
        }
    }
    let mut items = Vec::new();
    for p in &a.truth {
        if !p.exists() {
            anyhow::bail!("{}: file not found", p.display());
        }
        classify(p, true, &mut items)?;
    }
    if items.is_empty() && a.negatives.is_empty() {
        anyhow::bail!(
            "no truth files found in {}",
            a.truth
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut run = Runner {
        camera_override: a.camera.clone(),
        config_override: a.config.clone(),
        pipes: HashMap::new(),
    };
    let mut rep = Report::default();
    let mut synth_frames: Vec<FrameScore> = Vec::new();
    let mut synth_files = 0usize;
    for item in &items {
        let (p, result) = match item {
            Item::Synthetic(p) => (
                p,
                eval_synthetic(&mut run, p).map(|f| {
                    synth_files += 1;
                    synth_frames.extend(f);
                }),
            ),
            Item::TuSimple(p) => {
                let out = rep.tusimple.get_or_insert_with(TuSimpleOut::default);
                (
                    p,
                    eval_tusimple(&mut run, p, a.root.as_deref(), out, &mut rep.failed),
                )
            }
            Item::CuLane(p) => {
                let r = eval_culane(&mut run, p);
                let out = rep.culane.get_or_insert_with(CuLaneOut::default);
                (p, r.map(|i| out.per_image.push(i)))
            }
            Item::Mask(p) => {
                let r = eval_mask(&mut run, p);
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
    if !a.negatives.is_empty() {
        let mut out = NegativesOut::default();
        for d in &a.negatives {
            match eval_negatives(&mut run, d, &mut rep.failed) {
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
    for f in &rep.failed {
        eprintln!("lanes: {}: {}", f.file, f.error);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else {
        print_table(&rep, a.frames);
    }
    Ok(if rep.failed.is_empty() { 0 } else { 2 })
}
