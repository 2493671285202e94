//! Generated negatives: 1280x720 images with no lane in them, for measuring how often the
//! pipeline reports a lane where there is none (`lanes eval --negatives`).
//!
//! The set is deterministic (fixed seeds): flat grey at three levels, uniform noise, the same
//! noise Gaussian-blurred at two scales, a synthetic road frame flipped upside down (the lines
//! are in the sky half, the bottom half is sky-coloured) and horizontal stripes.

use super::noise::{hash3, unit};
use super::rig::{QuadGeometry, Rig};
use super::road::{CurvatureProfile, VehiclePose};
use super::scene::{Renderer, SceneOptions};
use super::RoadSpec;
use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use opencv::core::{self, Mat, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;

/// Size of the generated negatives.
pub const WIDTH: i32 = 1280;
pub const HEIGHT: i32 = 720;

/// One generated negative: a file stem and the image.
pub struct Negative {
    pub name: &'static str,
    pub image: BgrFrame,
}

fn flat(level: f64) -> Result<BgrFrame> {
    let m = Mat::new_rows_cols_with_default(HEIGHT, WIDTH, core::CV_8UC3, Scalar::all(level))?;
    BgrFrame::new(m)
}

/// Uniform noise in 0..=255 per channel from a seeded hash (identical on every platform).
fn noise(seed: u32) -> Result<BgrFrame> {
    let mut f = BgrFrame::zeros(WIDTH, HEIGHT)?;
    let data = f.mat_mut().data_bytes_mut()?;
    for (i, px) in data.iter_mut().enumerate() {
        *px = (unit(hash3(i as u32, seed, 0x6e65_6761)) * 255.999) as u8;
    }
    Ok(f)
}

fn blurred(seed: u32, sigma: f64) -> Result<BgrFrame> {
    let src = noise(seed)?;
    let mut dst = Mat::default();
    imgproc::gaussian_blur_def(src.mat(), &mut dst, Size::new(0, 0), sigma)?;
    // Stretch the blurred noise back to a useful contrast around mid-grey.
    let mut out = Mat::default();
    let gain = (sigma * 2.0).clamp(1.0, 12.0);
    dst.convert_to(&mut out, core::CV_8UC3, gain, 128.0 - 128.0 * gain)?;
    BgrFrame::new(out)
}

/// A straight synthetic road frame through the default rig, flipped vertically.
fn flipped_road() -> Result<BgrFrame> {
    let rig = Rig::default();
    let renderer = Renderer::new(&rig, 1)?;
    let spec = RoadSpec {
        name: "road".into(),
        profile: CurvatureProfile::constant(0.0),
        pose: VehiclePose {
            s_m: 0.0,
            offset_m: 0.2,
            yaw_rad: 0.0,
        },
        options: SceneOptions::default(),
        car_ahead_m: None,
    };
    let (img, _) = super::render_road(&renderer, &spec, &QuadGeometry::default(), "road.png")?;
    let mut out = Mat::default();
    core::flip(img.mat(), &mut out, 0)?;
    let mut f = BgrFrame::new(out)?;
    if f.width() != WIDTH || f.height() != HEIGHT {
        let mut r = Mat::default();
        imgproc::resize_def(f.mat(), &mut r, Size::new(WIDTH, HEIGHT))?;
        f = BgrFrame::new(r)?;
    }
    Ok(f)
}

/// Horizontal stripes: 12 px light bands every 48 px on dark grey.
fn stripes() -> Result<BgrFrame> {
    let mut f = flat(60.0)?;
    let mut y = 0;
    while y < HEIGHT {
        imgproc::rectangle(
            f.mat_mut(),
            core::Rect::new(0, y, WIDTH, 12),
            Scalar::all(220.0),
            imgproc::FILLED,
            imgproc::LINE_8,
            0,
        )?;
        y += 48;
    }
    Ok(f)
}

/// The whole set, in a fixed order (8 images).
pub fn negatives() -> Result<Vec<Negative>> {
    Ok(vec![
        Negative {
            name: "gray_040",
            image: flat(40.0)?,
        },
        Negative {
            name: "gray_128",
            image: flat(128.0)?,
        },
        Negative {
            name: "gray_220",
            image: flat(220.0)?,
        },
        Negative {
            name: "noise_uniform",
            image: noise(1)?,
        },
        Negative {
            name: "noise_blur_2",
            image: blurred(2, 2.0)?,
        },
        Negative {
            name: "noise_blur_8",
            image: blurred(3, 8.0)?,
        },
        Negative {
            name: "road_flipped",
            image: flipped_road()?,
        },
        Negative {
            name: "stripes_horizontal",
            image: stripes()?,
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_is_deterministic_and_full_size() {
        let a = negatives().unwrap();
        let b = negatives().unwrap();
        assert_eq!(a.len(), 8);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.image.width(), x.image.height()), (WIDTH, HEIGHT));
            assert_eq!(
                x.image.bytes().unwrap(),
                y.image.bytes().unwrap(),
                "{}",
                x.name
            );
        }
        let names: std::collections::HashSet<_> = a.iter().map(|n| n.name).collect();
        assert_eq!(names.len(), a.len());
    }
}
