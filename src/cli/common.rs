//! What the subcommands share: loading the config and camera, the output checks, the encode
//! and geometry flags.

use super::preset;
use anyhow::{Context, Result};
use lanes::base::camera::Camera;
use lanes::base::config::Config;
use std::path::{Path, PathBuf};

/// Load the config file if given over the run's preset (else the preset) and validate it.
pub fn load_config(path: Option<&Path>) -> Result<Config> {
    Ok(Config::load_over(path, preset())?)
}

/// The `--preset` chosen on the command line (robust by default).
pub fn preset() -> lanes::base::config::Preset {
    preset::config()
}

/// How output videos are encoded (`lanes video`, `lanes batch`, `lanes queue work`); the
/// libx264 speed preset is the global `--preset` (`veryfast` unless given).
#[derive(clap::Args, Clone, Debug)]
pub struct EncodeArgs {
    /// Output codec: h264 (libx264, yuv420p, index at the front: plays in browsers) or mpeg4
    /// (MPEG-4 Part 2, fourcc mp4v, as older versions wrote; `mp4v` is the same).
    #[arg(long, default_value = "h264", value_parser = ["h264", "mpeg4", "mp4v"])]
    pub codec: String,
    /// libx264's constant rate factor, 0..=51: lower is better quality and larger files.
    #[arg(long, default_value_t = 23, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=51))]
    pub crf: u8,
    #[command(flatten)]
    pub preset: preset::VideoPresetArgs,
}

impl EncodeArgs {
    /// The codec these flags and the run's `--preset` give.
    pub fn codec(&self) -> lanes::video::Codec {
        match self.codec.as_str() {
            "mpeg4" | "mp4v" => lanes::video::Codec::Mp4v,
            _ => lanes::video::Codec::H264 {
                preset: preset::x264(),
                crf: self.crf,
            },
        }
    }
}

/// Load the camera file if given.
pub fn load_camera(path: Option<&Path>) -> Result<Option<Camera>> {
    path.map(|p| Camera::load(p).with_context(|| "loading camera".to_string()))
        .transpose()
}

/// Refuse a camera file made for another frame size than the video's, naming both files and
/// the fix (before any output is opened). A video that does not open is left to the run.
pub fn check_camera_fits_video(
    camera: Option<&Camera>,
    camera_file: Option<&Path>,
    video: &Path,
) -> Result<()> {
    if let Some(cam) = camera {
        if let Ok(src) = lanes::video::VideoSource::open(video) {
            cam.check_frame_size(video, camera_file, (src.width, src.height))?;
        }
    }
    Ok(())
}

/// "1 frame", "2 frames": a count with its noun.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Refuse, before anything is written, an output that is the same file as an input or as
/// another output (`lanes::base::same_file::check`), and an output file (a role ending in "path")
/// whose directory does not exist, that is an existing folder, or that is a text output named
/// like a video or a still (`text_output`, `picture_kind`). Each entry is (role, path);
/// `None` paths are options not given.
pub fn check_outputs(
    inputs: &[(&str, Option<&Path>)],
    outputs: &[(&str, Option<&Path>)],
) -> Result<()> {
    use lanes::base::same_file::Named;
    let named = |v: &[(&str, Option<&Path>)]| -> Vec<(String, PathBuf)> {
        v.iter()
            .filter_map(|(r, p)| p.map(|p| (r.to_string(), p.to_path_buf())))
            .collect()
    };
    let (ins, outs) = (named(inputs), named(outputs));
    let text_outputs = || {
        outs.iter().filter_map(|(role, p)| {
            let opt = role.strip_suffix(" path")?;
            Some((opt, p, text_output(opt)))
        })
    };
    for (opt, p, text) in text_outputs() {
        lanes::base::atomic::check_parent_dir(p)?;
        if p.is_dir() {
            // A file in it with the name the option's files usually have.
            let e_g = text
                .map(|t| format!(", e.g. {opt} {}", p.join(t.name).display()))
                .unwrap_or_default();
            anyhow::bail!(
                "{}: {opt} names a folder, not a file: give a file in it{e_g}",
                p.display()
            );
        }
    }
    let named_ins: Vec<Named> = ins.iter().map(|(r, p)| Named::new(r, p)).collect();
    let named_outs: Vec<Named> = outs.iter().map(|(r, p)| Named::new(r, p)).collect();
    lanes::base::same_file::check(&named_ins, &named_outs)?;
    // A text output named like a video or a still: `--telemetry out.mp4` where `-o out.mp4`
    // was meant would write JSON Lines into a file every player then fails on.
    for (opt, p, text) in text_outputs() {
        let (Some(t), Some(kind)) = (text, picture_kind(p)) else {
            continue;
        };
        let picture = if kind == "a video" {
            "; the overlay video is -o"
        } else {
            ""
        };
        anyhow::bail!(
            "{}: {opt} names {kind}, but it writes {}: give e.g. {opt} {}{picture}",
            p.display(),
            t.what,
            p.with_extension(t.ext).display()
        );
    }
    Ok(())
}

/// What an output option that writes a text file writes: for messages, the file's usual
/// name, its extension and what it holds.
struct TextOutput {
    name: &'static str,
    ext: &'static str,
    what: &'static str,
}

/// The text file an output option writes (`None` for the others: videos, folders, pictures).
fn text_output(opt: &str) -> Option<TextOutput> {
    let (name, ext, what) = match opt {
        "--telemetry" => ("telemetry.jsonl", "jsonl", "telemetry as JSON Lines or CSV"),
        "--report" => ("report.html", "html", "an HTML page"),
        "--events" => ("events.json", "json", "the events as JSON"),
        "--save-geometry" => ("lanes.toml", "toml", "the geometry as a TOML config"),
        "--save-to" => ("lanes.toml", "toml", "the configuration as TOML"),
        _ => return None,
    };
    Some(TextOutput { name, ext, what })
}

/// Refuse a config output (`lanes perspective -o`, `lanes tune --save-to`) named like a video
/// or a still: the user meant another option, or a file name such as `cam.toml`.
pub fn check_config_output(opt: &str, p: &Path) -> Result<()> {
    if let Some(kind) = picture_kind(p) {
        anyhow::bail!(
            "{}: {opt} names {kind}, but it writes the geometry as a TOML config: give e.g. {opt} {}",
            p.display(),
            p.with_extension("toml").display()
        );
    }
    Ok(())
}

/// "a video" or "a still" when `p` is named like one, by its extension.
fn picture_kind(p: &Path) -> Option<&'static str> {
    if lanes::video::is_video_path(p) {
        Some("a video")
    } else if lanes::base::still::is_still_path(p) {
        Some("a still")
    } else {
        None
    }
}

/// `--frames N` (frames processed, or sampled from a video): a count of at least 1.
pub fn frame_count(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 frames is nothing to process: give at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e}: a number of frames, at least 1")),
    }
}

/// Refuse an output folder that does not exist yet and is named like a video or a still
/// (`-o out.jpg` to `lanes image`, `-o out.mp4` to `lanes batch`): the user meant a file, and
/// would get a folder of that name with the outputs inside.
pub fn check_out_dir_name(dir: &Path, opt: &str) -> Result<()> {
    if picture_kind(dir).is_some() && !dir.is_dir() {
        let stem = dir.with_extension("");
        anyhow::bail!(
            "{}: {opt} names a file, but this command writes a folder of outputs: give a folder, e.g. {opt} {}",
            dir.display(),
            stem.display()
        );
    }
    Ok(())
}

/// Create the output directory given with option `opt` (its parent must exist; named like a
/// file it is refused: `check_out_dir_name`). True when this call created it (a command that
/// then writes nothing removes it again).
pub fn ensure_out_dir(dir: &Path, opt: &str) -> Result<bool> {
    check_out_dir_name(dir, opt)?;
    if dir.exists() {
        return Ok(false);
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create output directory", dir.display()))?;
    Ok(true)
}

/// Whether the stills commands (`lanes image`, `lanes tune`) take the road geometry as given
/// rather than finding it in the stills (`inputs::stills_geometry`): a `--config` that names
/// `[perspective]`, or the reference preset (the Udacity pipeline's own quad).
pub fn geometry_given(config: Option<&Path>) -> Result<bool> {
    let named = match config {
        Some(p) => Config::file_names_section(p, "perspective")?,
        None => false,
    };
    Ok(named || preset() == lanes::base::config::Preset::Reference)
}

/// Where `lanes video` and `lanes batch` take the road geometry from.
#[derive(clap::Args, Clone)]
pub struct GeometryArgs {
    /// Lane width in metres: the scale across the road when the geometry is found in the video.
    #[arg(long, default_value_t = 3.7, value_name = "M")]
    pub lane_width: f64,
    /// Horizontal field of view of the video's frames, degrees (without --camera): the focal
    /// length the along-road scale and the online pitch use instead of the assumed 58 degrees.
    /// Written to --save-geometry as `[camera] hfov_deg`.
    #[arg(long, value_name = "DEG")]
    pub fov: Option<f64>,
    /// Write the geometry found in the video as a config that `--config` accepts.
    #[arg(long, value_name = "FILE.toml")]
    pub save_geometry: Option<PathBuf>,
}

/// `--fov` and `--camera` are two answers to one question (the focal length): one of them.
pub fn check_fov_without_camera(fov: Option<f64>, camera: bool) -> Result<()> {
    match fov {
        Some(f) if camera => anyhow::bail!("--fov {f}: the camera file given with --camera has the focal length already; give one of the two"),
        _ => Ok(()),
    }
}

impl GeometryArgs {
    /// The configuration for one video: the `--config` file over the preset; its perspective
    /// as given when the file names `[perspective]`, else found in the video (printed). With
    /// it, the video opened to check or find it, at its first frame, the first frame the
    /// geometry was found in (0 for a given one), and where the geometry came from, for the
    /// report.
    pub fn resolve(
        &self,
        input: &Path,
        config: Option<&Path>,
        camera: Option<&Camera>,
    ) -> Result<Resolved> {
        use lanes::geometry::resolve::{self, GeometryChoice};
        use lanes::geometry::selfcal::SelfCalOptions;
        let mut cfg = load_config(config)?;
        check_fov_without_camera(self.fov, camera.is_some())?;
        if let Some(f) = self.fov {
            cfg.camera.hfov_deg = Some(f);
            cfg.validate()
                .map_err(|e| anyhow::anyhow!("--fov {f}: {e}"))?;
        }
        let fixed = match config {
            Some(p) => Config::file_names_section(p, "perspective")?,
            None => false,
        };
        let mut opts = SelfCalOptions {
            // Edited videos: the opening search keeps to the opening shot.
            cut_ratio: cfg.tracking.cuts(),
            ..SelfCalOptions::default()
        };
        opts.estimate.lane_width_m = self.lane_width;
        opts.estimate.hfov_deg = cfg.camera.hfov_deg;
        opts.estimate.validate()?;
        let choice = if fixed {
            GeometryChoice::Fixed
        } else {
            GeometryChoice::Find
        };
        let base = cfg.clone();
        let resolve::Resolved { cfg, found, source } =
            resolve::resolve(input, &cfg, choice, camera, &opts)?;
        // Each shot's geometry, as the opening's, on the video's pixel shape.
        opts.estimate.pixel_aspect = lanes::video::pixel_aspect(source.sample_aspect);
        // Found in the video: each shot after a cut gets its own.
        let shot_search = found.is_some().then(|| {
            lanes::geometry::resolve::shot_search(base, camera.cloned(), opts, found.clone())
        });
        if let Some(g) = &found {
            eprintln!("lanes: {}: {}", input.display(), g.describe());
            for w in &g.warnings {
                eprintln!("lanes: warning: {}: {w}", input.display());
            }
            if let Some(out) = &self.save_geometry {
                let text = lanes::geometry::autoperspective::report::config_file_text(
                    &g.estimate,
                    &opts.estimate,
                    &cfg,
                    g.frames_used,
                    g.frames_sampled,
                    g.size,
                );
                lanes::base::atomic::write_atomic(out, text.as_bytes())
                    .with_context(|| format!("{}: cannot write the geometry", out.display()))?;
                eprintln!("lanes: wrote the geometry to {}", out.display());
            }
        } else if self.save_geometry.is_some() {
            anyhow::bail!(
                "--save-geometry: the geometry comes from {} (it names [perspective]); nothing found to save",
                config.map(|p| p.display().to_string()).unwrap_or_default()
            );
        }
        let from = found.as_ref().map_or(0, |g| g.first_frame_used);
        let note = match &found {
            Some(g) => g.note(),
            None => format!(
                "fixed, from the [perspective] of {}",
                config.map(|p| p.display().to_string()).unwrap_or_default()
            ),
        };
        Ok(Resolved {
            cfg,
            source,
            found_from: from,
            note,
            shot_search,
            opening_cut: found.as_ref().and_then(|g| g.first_cut),
        })
    }
}

/// What `GeometryArgs::resolve` settled: the configuration, the video opened at its first
/// frame, the first frame the geometry was found in (0 when given), the geometry's note, and
/// with a geometry found in the video the search for each later shot's own.
pub struct Resolved {
    pub cfg: Config,
    pub source: lanes::video::VideoSource,
    pub found_from: usize,
    pub note: String,
    pub shot_search: Option<std::sync::Arc<lanes::video::ShotSearch>>,
    /// The first cut the opening search saw (`VideoJob::opening_cut`).
    pub opening_cut: Option<usize>,
}
