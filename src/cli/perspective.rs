//! `lanes perspective`: estimate the perspective quad and metres per pixel from straight-road
//! frames, write a config with those sections, and pictures of the quad and bird's-eye view.

use super::common::load_camera;
use super::inputs::collect_images;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use lanes::base::frame::BgrFrame;
use lanes::geometry::autoperspective::{self as ap, report, LaneLines, Options, YmSource};
use lanes::lane::undistort::Undistorter;
use lanes::lane::warp::Perspective;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, ValueEnum)]
enum YmFrom {
    /// Geometry (the camera file's focal length, else --fov or an assumed 58-degree field of
    /// view); measured dashes only cross-check it (a warning when they disagree by 1.5x), as
    /// their real length differs by country. Dashes only when the geometry is degenerate.
    Auto,
    /// Dash lengths only.
    Dashes,
    /// Ground-plane geometry from the camera matrix (an assumed one without --camera).
    Geometry,
}

#[derive(Args)]
pub struct PerspectiveArgs {
    /// Camera file (OpenCV YAML from `lanes calibrate`); frames are undistorted with it. Without
    /// it frames are used as they are and a 58-degree field of view is assumed for the geometry.
    #[arg(long, value_name = "FILE")]
    camera: Option<PathBuf>,
    /// Frames, directories of frames, or videos (frames sampled from them; frames where the road
    /// is not straight ahead are found and left out).
    #[arg(required = true, value_name = "FRAME_OR_VIDEO")]
    inputs: Vec<PathBuf>,
    /// Frames sampled from each video, spread over its whole length.
    #[arg(long, default_value_t = 24, value_name = "N")]
    samples: usize,
    /// Lane width in metres.
    #[arg(long, default_value_t = 3.7, value_name = "M")]
    lane_width: f64,
    /// Length of one dash of a dashed line, metres.
    #[arg(long, default_value_t = 3.0, value_name = "M")]
    dash_length: f64,
    /// Quad bottom row as a fraction of the frame height.
    #[arg(long, default_value_t = 0.95, value_name = "FRACTION")]
    bottom: f64,
    /// Quad top row as a fraction of the way from the bottom row up to the horizon.
    #[arg(long, default_value_t = 0.83, value_name = "FRACTION")]
    depth: f64,
    /// Destination rectangle margin on each side, as a fraction of the width (450/1280).
    #[arg(long, default_value_t = 450.0 / 1280.0, value_name = "FRACTION")]
    dst_margin: f64,
    /// Largest angle from vertical of a line in a frame's bird's-eye view, degrees.
    #[arg(long, default_value_t = 3.0, value_name = "DEG")]
    max_angle: f64,
    /// Lines are fitted from this fraction of the way down from the horizon to the bottom row:
    /// the near range, nearly straight even on a bend (0.1: nearly the whole road).
    #[arg(long, default_value_t = 0.45, value_name = "FRACTION")]
    fit_from: f64,
    /// Horizontal field of view of the frames, degrees (without --camera): the geometry's focal
    /// length instead of the assumed 58 degrees; written to the config as `[camera] hfov_deg`.
    #[arg(long, value_name = "DEG")]
    fov: Option<f64>,
    /// Where metres per pixel along the road come from.
    #[arg(long, value_enum, default_value_t = YmFrom::Auto)]
    ym_from: YmFrom,
    /// Output config TOML; the pictures are written beside it.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

impl PerspectiveArgs {
    fn options(&self) -> Options {
        Options {
            lane_width_m: self.lane_width,
            dash_length_m: self.dash_length,
            bottom: self.bottom,
            depth: self.depth,
            dst_margin: self.dst_margin,
            max_angle_deg: self.max_angle,
            fit_from: self.fit_from,
            hfov_deg: self.fov,
            picture_width: None,
            pixel_aspect: 1.0,
            max_yaw_deg: Options::default().max_yaw_deg,
            ym_source: match self.ym_from {
                YmFrom::Auto => YmSource::Auto,
                YmFrom::Dashes => YmSource::Dashes,
                YmFrom::Geometry => YmSource::Geometry,
            },
        }
    }
}

pub fn run(a: PerspectiveArgs) -> Result<i32> {
    let mut opts = a.options();
    opts.validate()?;
    let out = &a.output;
    let out_dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !out_dir.is_dir() {
        anyhow::bail!("{}: output directory does not exist", out_dir.display());
    }
    let out_stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "lanes".into());
    let camera = load_camera(a.camera.as_deref())?;
    super::common::check_fov_without_camera(a.fov, camera.is_some())?;
    let undistorter = camera.as_ref().map(Undistorter::new).transpose()?;
    // Videos are sampled (`--samples` frames over the whole video); images are read in turn.
    let (videos, images): (Vec<PathBuf>, Vec<PathBuf>) = a
        .inputs
        .iter()
        .cloned()
        .partition(|p| p.is_file() && lanes::video::is_video_path(p));
    let paths = if images.is_empty() {
        Vec::new()
    } else {
        collect_images(&images)?
    };
    // Never over an input (a still or video given as -o by mistake), nor into a folder.
    let mut inputs: Vec<(&str, Option<&Path>)> = videos
        .iter()
        .map(|p| ("input video", Some(p.as_path())))
        .chain(paths.iter().map(|p| ("input image", Some(p.as_path()))))
        .collect();
    inputs.push(("camera file (--camera)", a.camera.as_deref()));
    super::common::check_outputs(&inputs, &[("-o path", Some(out.as_path()))])?;
    super::common::check_config_output("-o", out)?;
    // Frames sampled from videos carry their time: a video's frames less than a second apart
    // are never taken for one view (`ap::views`).
    let mut sampled: Vec<(PathBuf, BgrFrame, Option<f64>)> = Vec::new();
    // Videos of one pixel shape (an anamorphic camera's): the geometry on it; stills and
    // videos of several shapes: square pixels.
    let aspects: Vec<f64> = videos
        .iter()
        .map(|v| {
            Ok(lanes::video::pixel_aspect(
                lanes::video::VideoSource::open(v)?.sample_aspect,
            ))
        })
        .collect::<Result<_>>()?;
    if images.is_empty() && aspects.windows(2).all(|p| p[0] == p[1]) {
        opts.pixel_aspect = aspects.first().copied().unwrap_or(1.0);
    }
    for v in &videos {
        let stem = v
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "video".into());
        for f in lanes::geometry::sample::sample_video_frames(v, a.samples)? {
            sampled.push((
                v.with_file_name(format!("{stem}_f{:05}.frame", f.index)),
                f.frame,
                f.at_s,
            ));
        }
    }
    let frames = sampled
        .into_iter()
        .map(|(p, f, at_s)| Ok::<_, lanes::base::error::Error>((p, f, at_s)))
        .chain(
            paths
                .iter()
                .map(|p| Ok((p.clone(), BgrFrame::read(p)?, None))),
        );
    let k = camera.as_ref().map(|c| c.k);

    let mut used = HashSet::new();
    let mut results: Vec<report::FrameResult> = Vec::new();
    let mut bars = Vec::new();
    let mut bottom_bars = Vec::new();
    let mut size: Option<(i32, i32)> = None;
    for item in frames {
        let (path, raw, at_s): (PathBuf, BgrFrame, Option<f64>) = item?;
        let path = &path;
        if let Some(u) = &undistorter {
            u.check_size(&raw, path)?;
        }
        match size {
            None => size = Some((raw.width(), raw.height())),
            Some((w, h)) if (w, h) != (raw.width(), raw.height()) => anyhow::bail!(
                "{}: frame is {}x{}, the first frame is {w}x{h} (all frames must come from one camera)",
                path.display(),
                raw.width(),
                raw.height()
            ),
            _ => {}
        }
        let undistorted = match &undistorter {
            Some(u) => u.undistort(&raw)?,
            None => raw,
        };
        let h = undistorted.height();
        let name = report::unique_name(path, &mut used);
        let o = ap::analyze_frame(&undistorted, at_s, k.as_ref(), &opts)
            .with_context(|| format!("{}: finding lane lines", path.display()))?;
        if let Some(line) = report::frame_ok_text(&o, h) {
            outln!("{}: {line}", path.display());
        }
        bars.push(o.side_bars);
        bottom_bars.push(o.bottom_bar);
        let r = report::FrameResult {
            name,
            undistorted,
            lines: o.lines,
            problem: o.problem,
            rejection: o.rejection,
        };
        if let Some(p) = &r.problem {
            outln!("{}: not used: {p}", path.display());
        }
        results.push(r);
    }
    let Some((w, h)) = size else {
        anyhow::bail!("no input images given")
    };
    // Photos carry their field of view (EXIF), unless a camera file or --fov gives it.
    if a.fov.is_none() && camera.is_none() && videos.is_empty() {
        let stills: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
        if let Some((fov, note)) = lanes::geometry::stills::exif_fov(&stills, (w, h)) {
            opts.hfov_deg = fov;
            outln!("{note}");
        }
    }
    // The frames whose lines were found, in order.
    let found: Vec<usize> = (0..results.len())
        .filter(|&i| results[i].problem.is_none() && results[i].lines.is_some())
        .collect();
    if found.is_empty() {
        report::write_frame_pictures(&results, None, None, &out_dir, &out_stem)?;
        let reasons: Vec<String> = results
            .iter()
            .map(|r| format!("{}: {}", r.name, r.problem.as_deref().unwrap_or("?")))
            .collect();
        // One video whose frames show a road the other way up, or in one of two pictures
        // side by side: say so, with the fix.
        let turned = match a.inputs.as_slice() {
            [v] if v.is_file() && lanes::video::is_video_path(v) => {
                lanes::geometry::resolve::refusal_hint(
                    v,
                    camera.as_ref(),
                    &lanes::geometry::selfcal::SelfCalOptions::default(),
                    "perspective",
                )
                .map(|hint| format!("; {hint}"))
            }
            _ => None,
        };
        anyhow::bail!(
            "no usable straight-road frame among {} ({}); no config written{}",
            results.len(),
            reasons.join("; "),
            turned.unwrap_or_default()
        );
    }
    let horizons: Vec<f64> = found
        .iter()
        .filter_map(|&i| results[i].lines.as_ref().map(|l| l.vp.1))
        .collect();
    if let Some(why) = ap::no_two_agree(&horizons, h) {
        anyhow::bail!("no config written: {why}");
    }
    let est = {
        let usable: Vec<&LaneLines> = found
            .iter()
            .filter_map(|&i| results[i].lines.as_ref())
            .collect();
        // A pillarboxed video: the field of view spans the picture between its black bars.
        let picture_width = ap::picture_width(bars.iter().copied(), w);
        // A dashcam's info bar at the bottom of every frame, a hood: the quad ends above them,
        // as the video search's does.
        let end = ap::bars::road_end(
            opts.bottom,
            bottom_bars.iter().copied(),
            || usable.iter().map(|f| f.marking_rows()),
            h,
        );
        if end.bar > 0 {
            outln!(
                "a {}-row black bar at the bottom of every frame: the quad ends above it",
                end.bar
            );
        } else if end.hood {
            outln!(
                "no marking below row {:.0}: a hood, or the lines leave the picture's sides; the quad ends above it",
                end.low
            );
        }
        let bottom = end.bottom;
        ap::estimate(
            &usable,
            k.as_ref(),
            w,
            h,
            &Options {
                picture_width,
                bottom,
                ..opts
            },
        )?
    };
    // Frames that disagree with the others' medians were left out: say so, as for the rest
    // (after their "ok" line above, hence "after all").
    let names: Vec<String> = found.iter().map(|&i| results[i].name.clone()).collect();
    for (o, why) in &est.lines.outliers {
        let r = &mut results[found[*o]];
        outln!("{}: not used after all: {why}", r.name);
        r.problem = Some(why.clone());
    }
    let used = found.len() - est.lines.outliers.len();
    if let Some(why) = ap::implausible_lines(&est, opts.lane_width_m) {
        anyhow::bail!("no config written: in the {used} usable frames, {why}");
    }
    let persp = Perspective::from_config(&est.perspective, w, h)?;
    report::write_frame_pictures(
        &results,
        Some(&est.perspective),
        Some(&persp),
        &out_dir,
        &out_stem,
    )?;

    let cfg = report::config_from_estimate(&est)?;
    let text = report::config_file_text(&est, &opts, &cfg, used, results.len(), (w, h));
    std::fs::write(out, text).with_context(|| format!("{}: cannot write config", out.display()))?;

    for line in report::estimate_text(&est, &opts) {
        outln!("{line}");
    }
    // Frames of one view (a car standing still) were one vote.
    for g in est.lines.views.iter().filter(|g| g.len() > 1) {
        let frames: Vec<&str> = g
            .iter()
            .filter_map(|&i| names.get(i).map(String::as_str))
            .collect();
        outln!(
            "one view in {} frames, one vote: {}",
            frames.len(),
            frames.join(", ")
        );
    }
    for w in lanes::geometry::autoperspective::scale_warnings(&est) {
        eprintln!("lanes: warning: {w}");
    }
    outln!(
        "wrote {} and pictures {}_*_quad.jpg, {}_*_birdseye.jpg in {} ({} of {} frames used)",
        out.display(),
        out_stem,
        out_stem,
        out_dir.display(),
        used,
        results.len()
    );
    Ok(0)
}
