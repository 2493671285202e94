//! `lanes eval`: run the pipeline on the images or videos named by truth files and score it
//! (synthetic truth, TuSimple labels per subset, CULane `.lines.txt`, lane masks) and the share of
//! lane-free images (`--negatives`) with a reported lane; a table or `--json`.

use super::common::load_config;
use anyhow::{Context, Result};
use clap::Args;
use lanes::base::camera::Camera;
use lanes::tools::eval::run::{classify, evaluate, Runner};
use lanes::tools::eval::table::table;
use std::path::PathBuf;

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
    #[command(flatten)]
    pub preset: super::preset::ConfigPresetArgs,
}

/// One thing to score.
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
    let mut runner = Runner::new(a.camera.clone(), a.config.clone(), super::common::preset());
    // Without a [perspective], labelled stills get the geometry found in each set's stills, as
    // `lanes image` gives them (synthetic truth names its own config).
    runner.find_geometry = !super::common::geometry_given(a.config.as_deref())?;
    let rep = evaluate(&mut runner, &items, &a.negatives, a.root.as_deref());
    for n in &runner.notes {
        eprintln!("lanes: {n}");
    }
    for f in &rep.failed {
        // Most errors name their file already.
        if f.error.starts_with(&f.file) {
            eprintln!("lanes: {}", f.error);
        } else {
            eprintln!("lanes: {}: {}", f.file, f.error);
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&rep)?);
    } else {
        outln!("{}", table(&rep, a.frames).trim_end_matches('\n'));
    }
    Ok(if rep.failed.is_empty() { 0 } else { 2 })
}
