//! `lanes undistort`: camera file + images -> undistorted images.

use super::common::{check_outputs, ensure_out_dir};
use super::inputs::collect_images;
use anyhow::{bail, Result};
use clap::Args;
use lanes::base::camera::Camera;
use lanes::base::frame::BgrFrame;
use lanes::lane::undistort::Undistorter;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct UndistortArgs {
    /// Camera file (OpenCV YAML, e.g. from `lanes calibrate`). Images must have the size it
    /// names (image_width x image_height); other sizes are an error, not rescaled.
    #[arg(long, value_name = "FILE")]
    camera: PathBuf,
    /// Images, or directories of images.
    #[arg(required = true, value_name = "IMAGE")]
    inputs: Vec<PathBuf>,
    /// Output directory (created if missing); each image keeps its file name.
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    /// Images whose size is off the camera's by at most this many pixels per axis are
    /// undistorted as if they had its size (same top-left origin; cut or padded at the right
    /// and bottom), as `lanes calibrate --size-tolerance` uses such board photos; larger
    /// differences are an error naming the image. 0 makes any difference an error.
    #[arg(long, value_name = "PX", default_value_t = 2)]
    size_tolerance: i32,
}

pub fn run(a: UndistortArgs) -> Result<i32> {
    let t0 = Instant::now();
    let camera = Camera::load(&a.camera)?;
    let paths = collect_images(&a.inputs)?;
    // Inputs that share a name (`a/0.jpg`, `b/0.jpg`) get their folders in the output's name.
    let names = lanes::base::still::unique_names(&paths);
    let planned: Vec<PathBuf> = names.iter().map(|n| a.output.join(n)).collect();
    let mut inputs: Vec<(&str, Option<&std::path::Path>)> = paths
        .iter()
        .map(|p| ("input image", Some(p.as_path())))
        .collect();
    inputs.push(("camera file (--camera)", Some(a.camera.as_path())));
    let outputs: Vec<(&str, Option<&std::path::Path>)> = planned
        .iter()
        .map(|p| ("-o directory", Some(p.as_path())))
        .collect();
    check_outputs(&inputs, &outputs)?;
    ensure_out_dir(&a.output, "-o")?;
    let und = Undistorter::new(&camera)?;
    let mut failed = 0usize;
    for (p, out) in paths.iter().zip(&planned) {
        let res = (|| -> Result<()> {
            let frame = BgrFrame::read(p)?;
            let Some(fitted) = und.fit_within_tolerance(&frame, a.size_tolerance)? else {
                camera.check_frame_size(p, Some(&a.camera), (frame.width(), frame.height()))?;
                bail!("{}: image size", p.display());
            };
            if (frame.width(), frame.height()) != (camera.width, camera.height) {
                eprintln!(
                    "lanes: note: {}: image is {}x{}, undistorted as {}x{} (top-left kept; within --size-tolerance {}, as `lanes calibrate` used it)",
                    p.display(),
                    frame.width(),
                    frame.height(),
                    camera.width,
                    camera.height,
                    a.size_tolerance
                );
            }
            und.undistort(&fitted)?.write(out)?;
            Ok(())
        })();
        if let Err(e) = res {
            eprintln!("lanes: {e:#}");
            failed += 1;
        }
    }
    outln!(
        "undistorted {} of {} images into {} ({:.2} s)",
        paths.len() - failed,
        paths.len(),
        a.output.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(if failed > 0 { 2 } else { 0 })
}
