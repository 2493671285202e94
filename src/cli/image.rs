//! `lanes image`: the lane pipeline on stills; overlay per image, optional stage pictures and JSON.

use super::common::{ensure_out_dir, load_camera, load_config};
use super::inputs::{collect_images, stills_geometry, worth_searching};
use anyhow::{Context, Result};
use clap::Args;
use lanes::base::config::Config;
use lanes::base::frame::{BgrFrame, STILL_SIZE_TOLERANCE};
use lanes::lane::fit::Poly2;
use lanes::lane::pipeline::Pipeline;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct ImageArgs {
    /// Camera file (OpenCV YAML from `lanes calibrate`); without it frames are not undistorted.
    #[arg(long, value_name = "FILE")]
    camera: Option<PathBuf>,
    /// Configuration TOML (see `lanes config --print-default`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Images or directories of images.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    /// Also write the undistorted frame, bird's-eye view, scaled L and B, mask and search picture.
    #[arg(long)]
    stages: bool,
    /// Print one JSON object per image on stdout.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub preset: super::preset::ConfigPresetArgs,
}

/// One image's results, as printed by `--json`.
#[derive(Serialize)]
pub struct ImageRecord {
    pub file: String,
    /// The overlay written for it (inputs that share a name get their folders in it).
    pub overlay: String,
    pub left_fit: Option<Poly2>,
    pub right_fit: Option<Poly2>,
    pub left_radius_m: Option<f64>,
    pub right_radius_m: Option<f64>,
    pub radius_m: Option<f64>,
    pub offset_m: Option<f64>,
    pub lane_width_m: Option<f64>,
    pub left_pixels: usize,
    pub right_pixels: usize,
    /// Evidence for each line and the lane, 0..1 (see `lanes::lane::confidence`).
    pub left_confidence: f64,
    pub right_confidence: f64,
    pub confidence: f64,
    /// `both`, `left_only`, `right_only` or `none`.
    pub status: &'static str,
    /// How the file was converted to 8-bit BGR ("gray to BGR", "RGBA to BGR, alpha dropped",
    /// "16-bit RGB to 8-bit (scaled by 1/256) BGR"), or null for an 8-bit colour file.
    pub converted: Option<String>,
    /// The still's sensor noise (grey levels) when it was smoothed before the analysis
    /// (`lanes::lane::denoise`), or null.
    pub noise_smoothed: Option<f64>,
    pub ms: f64,
}

fn process(
    pipe: &Pipeline,
    raw: BgrFrame,
    path: &Path,
    stem: &str,
    out: &Path,
    stages: bool,
) -> Result<ImageRecord> {
    let t0 = Instant::now();
    let a = pipe.analyze(&raw, None)?;
    let lane = a.lane(pipe.default_lane_width_px());
    // The overlay is drawn on the frame itself, or on a copy when the stages need it after.
    let (canvas, raw) = if stages {
        (raw.clone(), Some(raw))
    } else {
        (raw, None)
    };
    let overlay = lanes::lane::present::overlay(
        pipe,
        canvas,
        lane.as_ref().map(|(l, r)| (l, r)),
        a.seen_from,
        a.measure.as_ref(),
        a.detection.status,
    )?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    let overlay_path = out.join(format!("{stem}_overlay.jpg"));
    overlay.write(&overlay_path)?;
    if let Some(raw) = &raw {
        pipe.undistort(raw)?
            .write(&out.join(format!("{stem}_undistorted.jpg")))?;
        match &a.birdseye {
            Some(b) => b.clone(),
            None => pipe.birdseye(raw)?,
        }
        .write(&out.join(format!("{stem}_birdseye.jpg")))?;
        a.thresholded
            .l_scaled()?
            .write(&out.join(format!("{stem}_l.png")))?;
        a.thresholded
            .b_scaled()?
            .write(&out.join(format!("{stem}_b.png")))?;
        a.thresholded
            .mask()?
            .write(&out.join(format!("{stem}_mask.png")))?;
        let pic = lanes::lane::present::search_picture(&a)?;
        pic.write(&out.join(format!("{stem}_search.png")))?;
    }
    let m = a.measure;
    let d = &a.detection;
    let r3 = |v: f64| (v * 1000.0).round() / 1000.0;
    Ok(ImageRecord {
        file: path.display().to_string(),
        overlay: overlay_path.display().to_string(),
        left_fit: d.left,
        right_fit: d.right,
        left_radius_m: m.map(|m| m.left_radius_m),
        right_radius_m: m.map(|m| m.right_radius_m),
        radius_m: m.map(|m| m.radius_m),
        offset_m: m.map(|m| m.offset_m),
        lane_width_m: m.map(|m| m.lane_width_m),
        left_pixels: a.fit.left_pixels,
        right_pixels: a.fit.right_pixels,
        left_confidence: r3(d.left_confidence),
        right_confidence: r3(d.right_confidence),
        confidence: r3(d.confidence),
        status: d.status.as_str(),
        converted: None,
        noise_smoothed: a.noise_smoothed.map(|n| (n * 10.0).round() / 10.0),
        ms,
    })
}

/// The names `lanes image` gives its outputs (`--stages` writes them all).
const OUTPUT_SUFFIXES: [&str; 7] = [
    "_overlay.jpg",
    "_undistorted.jpg",
    "_birdseye.jpg",
    "_l.png",
    "_b.png",
    "_mask.png",
    "_search.png",
];

/// `images` less the outputs of an earlier run into the same folder (`lanes image DIR -o DIR`
/// run again): they would be taken for stills, and their own outputs' names would be theirs.
fn without_earlier_outputs(images: Vec<PathBuf>, out_dir: &Path) -> Vec<PathBuf> {
    let same_dir = |p: &Path| {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        match (dir.canonicalize(), out_dir.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    };
    let (earlier, stills): (Vec<PathBuf>, Vec<PathBuf>) = images.into_iter().partition(|p| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        OUTPUT_SUFFIXES.iter().any(|s| name.ends_with(s)) && same_dir(p)
    });
    if !earlier.is_empty() {
        eprintln!(
            "lanes: note: {} files in {} left out as earlier outputs of lanes image (*_overlay.jpg, ...); they are written again",
            earlier.len(),
            out_dir.display()
        );
    }
    stills
}

pub fn run(a: ImageArgs) -> Result<i32> {
    let cfg = load_config(a.config.as_deref())?;
    let camera = load_camera(a.camera.as_deref())?;
    let images = without_earlier_outputs(collect_images(&a.inputs)?, &a.output);
    // One still's OpenCV calls (the bird's-eye remap, drawing) take a few milliseconds: less
    // than starting OpenCV's worker pool, its threads and the allocator library it loads at
    // run time (about 2 ms of a 70 ms run, `lanes bench`'s start-up row). The pixels are the
    // same either way.
    if images.len() == 1 {
        opencv::core::set_num_threads(0)?;
    }
    // Inputs that share a name (`a/0.jpg`, `b/0.jpg`) get their folders in the outputs' names.
    let stems: Vec<String> = lanes::base::still::unique_names(&images)
        .iter()
        .map(|n| lanes::base::still::stem_of(n))
        .collect();
    let suffixes: &[&str] = if a.stages {
        &OUTPUT_SUFFIXES
    } else {
        &OUTPUT_SUFFIXES[..1]
    };
    let out_dir = &a.output;
    let planned: Vec<PathBuf> = stems
        .iter()
        .flat_map(|s| {
            suffixes
                .iter()
                .map(move |x| out_dir.join(format!("{s}{x}")))
        })
        .collect();
    let mut inputs: Vec<(&str, Option<&Path>)> = images
        .iter()
        .map(|p| ("input image", Some(p.as_path())))
        .collect();
    inputs.push(("camera file (--camera)", a.camera.as_deref()));
    inputs.push(("config file (--config)", a.config.as_deref()));
    let outputs: Vec<(&str, Option<&Path>)> = planned
        .iter()
        .map(|p| ("-o directory", Some(p.as_path())))
        .collect();
    super::common::check_outputs(&inputs, &outputs)?;
    let created = ensure_out_dir(&a.output, "-o")?;
    // The built-in geometry is the Udacity camera's, made for its 1280x720 frames. Without a
    // [perspective] (and with the robust preset), stills get a geometry found in themselves, as
    // `lanes video` finds a video's, unless they are the Udacity camera's (`stills_geometry`);
    // found once per size, from up to `STILLS_SAMPLED` of the inputs spread over them.
    let given = super::common::geometry_given(a.config.as_deref())?;
    let mut found: std::collections::HashMap<(i32, i32), Config> = Default::default();
    let needs_search = |w: i32, h: i32| !given && worth_searching((w, h), images.len());
    let mut pipe: Option<Pipeline> = None;
    let (mut ok, mut failed, mut no_lane) = (0usize, 0usize, 0usize);
    for (path, stem) in images.iter().zip(&stems) {
        let result = (|| -> Result<ImageRecord> {
            let fits = |p: &Option<Pipeline>, w: i32, h: i32| {
                p.as_ref().is_some_and(|p| p.width == w && p.height == h)
            };
            // A pipeline for the size in the header is built while the pixels are decoded.
            let (raw, converted, built) = BgrFrame::read_converted_beside(path, |w, h| {
                let (w, h) = (w as i32, h as i32);
                (!fits(&pipe, w, h) && !needs_search(w, h))
                    .then(|| Pipeline::new(cfg.clone(), camera.as_ref(), w, h))
            })?;
            // A still a pixel or two off the camera's size is used as `lanes calibrate` and
            // `lanes undistort` use it: placed at the top-left, with a note.
            let raw = match &camera {
                Some(cam) if (raw.width(), raw.height()) != (cam.width, cam.height) => {
                    match raw.fitted_within((cam.width, cam.height), STILL_SIZE_TOLERANCE)? {
                        Some(fitted) => {
                            eprintln!(
                                "lanes: note: {}: image is {}x{}, analysed as {}x{} (top-left kept; within {STILL_SIZE_TOLERANCE} px of the camera's size, as `lanes calibrate` uses such photos)",
                                path.display(),
                                raw.width(),
                                raw.height(),
                                cam.width,
                                cam.height
                            );
                            fitted
                        }
                        None => raw,
                    }
                }
                _ => raw,
            };
            if !fits(&pipe, raw.width(), raw.height()) {
                let (w, h) = (raw.width(), raw.height());
                if let Some(cam) = &camera {
                    cam.check_frame_size(path, a.camera.as_deref(), (w, h))?;
                }
                let p = match built {
                    Some(Ok(p)) if p.width == w && p.height == h => p,
                    _ if needs_search(w, h) => {
                        let c = match found.get(&(w, h)) {
                            Some(c) => c.clone(),
                            None => {
                                let c = stills_geometry(
                                    &images,
                                    Some((path, &raw)),
                                    &cfg,
                                    camera.as_ref(),
                                );
                                found.insert((w, h), c.clone());
                                c
                            }
                        };
                        Pipeline::new(c, camera.as_ref(), w, h)?
                    }
                    // Turned by its EXIF orientation, or refused (the error again, from here).
                    _ => Pipeline::new(cfg.clone(), camera.as_ref(), w, h)?,
                };
                if let Some(n) = p.quad_note() {
                    eprintln!("lanes: note: {}: {n}", path.display());
                }
                pipe = Some(p);
            }
            let p = pipe.as_ref().context("pipeline")?;
            let rec = process(p, raw, path, stem, &a.output, a.stages)?;
            Ok(ImageRecord { converted, ..rec })
        })();
        match result {
            Ok(rec) => {
                ok += 1;
                if rec.left_fit.is_none() || rec.right_fit.is_none() {
                    no_lane += 1;
                }
                if a.json {
                    outln!("{}", serde_json::to_string(&rec)?);
                } else {
                    let m = |v: Option<f64>, d: usize| {
                        v.map(|v| format!("{v:.d$}")).unwrap_or_else(|| "-".into())
                    };
                    // As the overlay says it: "straight" beyond `render.straight_above_m`.
                    let radius = match rec.radius_m {
                        Some(r) if r > cfg.render.straight_above_m => {
                            format!("straight (radius {r:.0} m)")
                        }
                        r => format!("radius {} m", m(r, 0)),
                    };
                    eprintln!(
                        "{}: {} (confidence {:.2}), {radius}, offset {} m, width {} m, pixels {}/{}, {:.1} ms{}{}",
                        path.display(),
                        rec.status,
                        rec.confidence,
                        m(rec.offset_m, 3),
                        m(rec.lane_width_m, 2),
                        rec.left_pixels,
                        rec.right_pixels,
                        rec.ms,
                        rec.converted
                            .as_deref()
                            .map(|c| format!(" (converted: {c})"))
                            .unwrap_or_default(),
                        rec.noise_smoothed
                            .map(|n| format!(" (smoothed first: sensor noise {n} grey levels)"))
                            .unwrap_or_default()
                    );
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("lanes: {e:#}");
            }
        }
    }
    // A folder made for outputs of which none was written is not left behind (`remove_dir`
    // removes only an empty one).
    let written = if ok == 0 && created && std::fs::remove_dir(&a.output).is_ok() {
        format!("nothing written ({} not created)", a.output.display())
    } else {
        format!("overlays in {}", a.output.display())
    };
    eprintln!(
        "lanes image: {ok} processed, {no_lane} without both lines, {failed} failed; {written}"
    );
    // Failed images are counted and the others processed: exit 1 when any failed.
    Ok(if failed > 0 { 1 } else { 0 })
}
