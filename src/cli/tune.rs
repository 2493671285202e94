//! `lanes tune`: the live threshold tuner in the browser, or a headless sweep to a contact sheet.

use super::common::{load_camera, load_config};
use anyhow::{Context, Result};
use clap::Args;
use lanes::base::frame::write_mat;
use lanes::tools::tune::{contact_sheet, App, Server, Show, Sweep, Tuner};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[derive(Args)]
pub struct TuneArgs {
    /// Camera file (OpenCV YAML from `lanes calibrate`); without it frames are not undistorted.
    #[arg(long, value_name = "FILE")]
    camera: Option<PathBuf>,
    /// Configuration TOML to start from (and, without --save-to, the file Save writes).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Still images, directories of them, or videos (frames are sampled from them: --frames).
    #[arg(required = true, value_name = "IMAGE|DIR|VIDEO")]
    inputs: Vec<PathBuf>,
    /// Frames sampled from each video input, spread evenly over the clip.
    #[arg(long, default_value_t = lanes::geometry::sample::DEFAULT_FRAMES as u32, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=500))]
    frames: u32,
    /// Port on 127.0.0.1 (0 = any free port; the URL is printed).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// File that Save writes [default: the --config file, else lanes.toml].
    #[arg(long, value_name = "FILE")]
    save_to: Option<PathBuf>,
    /// Previews are this many times smaller than the stills (1..=8).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=8))]
    scale: u32,
    /// Headless: render a contact sheet over one parameter instead of serving the page,
    /// e.g. threshold.l_min=180..240:20 or search.windows=6,9,12.
    #[arg(long, value_name = "KEY=FROM..TO:STEP", requires = "output")]
    sweep: Option<String>,
    /// The contact sheet to write (PNG or JPEG), with --sweep.
    #[arg(short = 'o', long, value_name = "FILE", requires = "sweep")]
    output: Option<PathBuf>,
    /// What each cell of the contact sheet shows.
    #[arg(long, value_enum, default_value_t = Show::Mask, requires = "sweep")]
    show: Show,
    /// Width of one cell of the contact sheet, px.
    #[arg(long, default_value_t = 320, requires = "sweep")]
    cell_width: i32,
    #[command(flatten)]
    pub preset: super::preset::ConfigPresetArgs,
}

pub fn run(a: TuneArgs) -> Result<i32> {
    let cfg = load_config(a.config.as_deref())?;
    let camera = load_camera(a.camera.as_deref())?;
    let sampled = super::inputs::SampledStills::new("tune");
    let images = super::inputs::stills_of(&a.inputs, a.frames as usize, &sampled)?;
    let mut inputs: Vec<(&str, Option<&Path>)> = images
        .iter()
        .chain(a.inputs.iter())
        .map(|p| ("input image", Some(p.as_path())))
        .collect();
    inputs.push(("camera file (--camera)", a.camera.as_deref()));
    // Save writes the --config file by design; a sweep's sheet must not replace it.
    let mut outputs = vec![("--save-to path", a.save_to.as_deref())];
    if a.sweep.is_some() {
        inputs.push(("config file (--config)", a.config.as_deref()));
        outputs = vec![("-o path", a.output.as_deref())];
    }
    super::common::check_outputs(&inputs, &outputs)?;
    // The sheet is a still: a name it cannot be written under is refused before the work.
    if let (Some(_), Some(out)) = (&a.sweep, &a.output) {
        if !lanes::base::still::is_still_path(out) {
            anyhow::bail!(
                "{}: -o names no picture format the contact sheet is written in: give a .png or .jpg, e.g. -o {}",
                out.display(),
                out.with_extension("png").display()
            );
        }
    }
    // Without a [perspective] (robust preset), frames of a video and stills get a geometry found
    // in themselves, as in `lanes video` and `lanes image` (`stills_geometry`: the Udacity
    // camera's keep the built-in one); Save then writes it with the thresholds.
    let cfg = if super::common::geometry_given(a.config.as_deref())? {
        cfg
    } else {
        super::inputs::stills_geometry(&images, None, &cfg, camera.as_ref())
    };
    let tuner = Tuner::new(images, camera, cfg)?;
    match (&a.sweep, &a.output) {
        (Some(spec), Some(out)) => sweep(&tuner, spec, out, a.show, a.cell_width),
        _ => serve(tuner, &a),
    }
}

fn sweep(tuner: &Tuner, spec: &str, out: &Path, show: Show, cell_width: i32) -> Result<i32> {
    let sweep = Sweep::parse(spec)?;
    if let Some(p) = lanes::tools::tune::params::spec(&sweep.key) {
        if !p.applies.acts(&tuner.loaded) {
            eprintln!(
                "lanes: warning: --sweep {}: this parameter does not act under this configuration, so every column will be the same; it needs {}",
                sweep.key,
                p.applies.config_fix()
            );
        }
    }
    let t0 = Instant::now();
    let (sheet, stats) = contact_sheet(tuner, &tuner.loaded, &sweep, show, cell_width)?;
    write_mat(&sheet, out).with_context(|| "writing the contact sheet".to_string())?;
    let mut failed = 0;
    for (r, row) in stats.iter().enumerate() {
        if let Some(e) = row.iter().find_map(|c| c.error.as_ref()) {
            failed += 1;
            eprintln!("lanes: {}: {e}", tuner.names()[r]);
        }
    }
    for (c, v) in sweep.values.iter().enumerate() {
        let col: Vec<_> = stats
            .iter()
            .map(|row| &row[c])
            .filter(|s| s.error.is_none())
            .collect();
        let both = col.iter().filter(|s| s.left_found && s.right_found).count();
        let mean_mask =
            col.iter().map(|s| s.mask_pixels as f64).sum::<f64>() / col.len().max(1) as f64;
        outln!(
            "{} = {v}: both lines on {both}/{} stills, mean mask pixels {mean_mask:.0}",
            sweep.key,
            col.len()
        );
    }
    eprintln!(
        "lanes tune: {} stills x {} values in {:.1} s; contact sheet {}x{} in {}",
        tuner.len(),
        sweep.values.len(),
        t0.elapsed().as_secs_f64(),
        sheet_size(&sheet).0,
        sheet_size(&sheet).1,
        out.display()
    );
    Ok(if failed > 0 { 2 } else { 0 })
}

fn sheet_size(m: &opencv::core::Mat) -> (i32, i32) {
    use opencv::prelude::*;
    (m.cols(), m.rows())
}

fn serve(tuner: Tuner, a: &TuneArgs) -> Result<i32> {
    let save_to = a
        .save_to
        .clone()
        .or_else(|| a.config.clone())
        .unwrap_or_else(|| PathBuf::from("lanes.toml"));
    let dir = save_to
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        anyhow::bail!(
            "{}: cannot save there: directory {} does not exist",
            save_to.display(),
            dir.display()
        );
    }
    let n = tuner.len();
    let header = format!(
        "lanes configuration written by `lanes tune` from {n} still(s).\nThe geometry tuned on ([perspective], [units]) is written whole, so that it stays fixed; of the\nrest, only values that differ from the defaults are listed (see `lanes config --print-default`)."
    );
    let app = Arc::new(App {
        tuner,
        save_to: save_to.clone(),
        scale: a.scale,
        header,
    });
    let server = Server::bind(a.port)?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        // Ctrl-C (SIGINT), and SIGTERM/SIGHUP too: requests in progress finish, then we exit 0.
        let stop = Arc::clone(&stop);
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .context("installing the Ctrl-C handler")?;
    }
    let url = server.url();
    outln!("{url}");
    eprintln!(
        "lanes tune: {n} stills at {url} ; Save writes {}; Ctrl-C stops",
        save_to.display()
    );
    if a.open {
        open_browser(&url);
    }
    // Decode and warp the first page while the browser loads the page. One still at a time,
    // checking `stop`, and joined before we exit: OpenCV must not be busy in another thread
    // while the process tears down.
    let warm = {
        let (app, stop) = (Arc::clone(&app), Arc::clone(&stop));
        std::thread::spawn(move || {
            for i in 0..app.tuner.len().min(lanes::tools::tune::server::PAGE_SIZE) {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let _ = app.tuner.previews(&app.tuner.loaded, &[i], app.scale, None);
            }
        })
    };
    server.run(&app, &stop, 4);
    let _ = warm.join();
    eprintln!("lanes tune: stopped");
    Ok(0)
}

/// Start the platform's URL opener; a failure is reported, not fatal (the URL is printed).
fn open_browser(url: &str) {
    let (cmd, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    if let Err(e) = std::process::Command::new(cmd).args(&args).spawn() {
        eprintln!("lanes tune: cannot open a browser ({cmd}: {e}); open {url} yourself");
    }
}
