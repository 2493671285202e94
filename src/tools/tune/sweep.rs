//! The headless sweep: one parameter over a list of values, every still under every value,
//! drawn as a labelled contact sheet (one row per still, one column per value).

use super::params::{self, Kind};
use super::preview::{bgr_of, reduce, Tuner};
use crate::base::config::Config;
use crate::base::error::{Error, Result};
use opencv::core::{self, Mat, Point, Rect, Scalar};
use opencv::imgproc;
use opencv::prelude::*;
use rayon::prelude::*;
use serde_json::Value;

/// Most values one sweep may have (columns of the sheet).
pub const MAX_VALUES: usize = 40;

/// What each cell of the contact sheet shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Show {
    /// The binary mask (bird's-eye view).
    Mask,
    /// The lane overlay on the undistorted frame.
    Overlay,
    /// The search picture (windows, line pixels, fits, histogram).
    Search,
}

/// One parameter and the values it takes, parsed from `KEY=A..B:STEP` or `KEY=V1,V2,...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub key: String,
    pub values: Vec<Value>,
}

fn bad_spec(spec: &str, why: &str) -> Error {
    Error::Invalid(format!(
        "--sweep {spec}: {why} (expected KEY=FROM..TO:STEP or KEY=V1,V2,..., e.g. threshold.l_min=180..240:20)"
    ))
}

impl Sweep {
    /// Parse `threshold.l_min=180..240:20` (180, 200, 220, 240; TO is included when the steps
    /// reach it), `search.windows=6,9,12` or `threshold.s_enabled=false,true`.
    pub fn parse(spec: &str) -> Result<Self> {
        let (key, range) = spec
            .split_once('=')
            .ok_or_else(|| bad_spec(spec, "no `=`"))?;
        let key = key.trim();
        let ps = params::spec(key).ok_or_else(|| {
            if key == params::PERSPECTIVE_SRC {
                bad_spec(
                    spec,
                    "the perspective quad cannot be swept; sweep a threshold or search parameter",
                )
            } else {
                Error::Invalid(format!("--sweep {spec}: {}", params::unknown(key)))
            }
        })?;
        let range = range.trim();
        let values: Vec<Value> = if let Some((from, rest)) = range.split_once("..") {
            if ps.kind == Kind::Bool {
                return Err(bad_spec(
                    spec,
                    "a true/false parameter takes a list: KEY=false,true",
                ));
            }
            let (to, step) = rest.split_once(':').unwrap_or((rest, "1"));
            let num = |s: &str, what: &str| {
                s.trim()
                    .parse::<i64>()
                    .map_err(|_| bad_spec(spec, &format!("{what} `{s}` is not an integer")))
            };
            let (from, to, step) = (num(from, "FROM")?, num(to, "TO")?, num(step, "STEP")?);
            if step <= 0 {
                return Err(bad_spec(spec, "STEP must be positive"));
            }
            if to < from {
                return Err(bad_spec(spec, "TO is below FROM"));
            }
            let n = (to - from) / step + 1;
            if n as usize > MAX_VALUES {
                return Err(bad_spec(spec, &format!("{n} values, at most {MAX_VALUES}")));
            }
            (0..n).map(|i| Value::from(from + i * step)).collect()
        } else {
            range
                .split(',')
                .map(|v| {
                    let v = v.trim();
                    match v {
                        "true" => Ok(Value::Bool(true)),
                        "false" => Ok(Value::Bool(false)),
                        _ => v
                            .parse::<i64>()
                            .map(Value::from)
                            .map_err(|_| bad_spec(spec, &format!("value `{v}` is not an integer"))),
                    }
                })
                .collect::<Result<_>>()?
        };
        if values.is_empty() || values.len() > MAX_VALUES {
            return Err(bad_spec(
                spec,
                &format!("{} values, expected 1..={MAX_VALUES}", values.len()),
            ));
        }
        Ok(Self {
            key: key.to_string(),
            values,
        })
    }

    /// The config for each value: `base` with the value set, validated (the first bad value is
    /// the error, naming key and value).
    pub fn configs(&self, base: &Config) -> Result<Vec<Config>> {
        self.values
            .iter()
            .map(|v| {
                let mut m = serde_json::Map::new();
                m.insert(self.key.clone(), v.clone());
                params::apply_params(base, &m)
            })
            .collect()
    }

    /// The short column label, e.g. `l_min = 180`.
    pub fn label(&self, i: usize) -> String {
        let short = self.key.rsplit('.').next().unwrap_or(&self.key);
        format!("{short} = {}", self.values[i])
    }
}

/// What one cell found, for the printed summary.
#[derive(Debug, Clone, Default)]
pub struct CellStats {
    pub error: Option<String>,
    pub left_found: bool,
    pub right_found: bool,
    pub left_pixels: usize,
    pub right_pixels: usize,
    pub mask_pixels: i32,
}

const BG: f64 = 32.0;
/// Height of the stats band under each cell's picture, px.
const BAND: i32 = 18;
const FONT: i32 = imgproc::FONT_HERSHEY_SIMPLEX;

fn text_width(s: &str, scale: f64) -> Result<i32> {
    let mut base = 0;
    Ok(imgproc::get_text_size(s, FONT, scale, 1, &mut base)?.width)
}

fn put(img: &mut Mat, s: &str, x: i32, y: i32, scale: f64, color: Scalar) -> Result<()> {
    imgproc::put_text(
        img,
        s,
        Point::new(x, y),
        FONT,
        scale,
        color,
        1,
        imgproc::LINE_AA,
        false,
    )?;
    Ok(())
}

/// Fit `img` into `w` x `h` (reduced by area averaging, then padded).
fn fit_cell(img: &Mat, w: i32, h: i32) -> Result<Mat> {
    let mut small = Mat::default();
    imgproc::resize(
        img,
        &mut small,
        core::Size::new(w, h),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )?;
    Ok(small)
}

fn cell(
    tuner: &Tuner,
    i: usize,
    cfg: &Config,
    show: Show,
    w: i32,
    h: i32,
) -> Result<(Mat, CellStats)> {
    let r = tuner.analyze(i, cfg)?;
    let pic = match show {
        Show::Mask => bgr_of(&r.mask)?,
        Show::Overlay => r.overlay(cfg)?.into_mat(),
        Show::Search => r.search_picture()?.into_mat(),
    };
    // Reduce in two steps when large: area averaging keeps thin line pixels visible.
    let scale = (pic.cols() / w).max(1) as u32;
    let img = fit_cell(&reduce(&pic, scale)?, w, h)?;
    let stats = CellStats {
        error: None,
        left_found: r.fit.left.is_some(),
        right_found: r.fit.right.is_some(),
        left_pixels: r.fit.left_pixels,
        right_pixels: r.fit.right_pixels,
        mask_pixels: r.mask.count()?,
    };
    // Stats band under the picture: pixel counts, and a red marker for a line not found.
    let mut out = Mat::new_rows_cols_with_default(h + BAND, w, core::CV_8UC3, Scalar::all(0.0))?;
    img.copy_to(&mut Mat::roi_mut(&mut out, Rect::new(0, 0, w, h))?)?;
    let white = Scalar::new(235.0, 235.0, 235.0, 0.0);
    let red = Scalar::new(60.0, 60.0, 255.0, 0.0);
    let l = if stats.left_found {
        format!("L {}", stats.left_pixels)
    } else {
        "L not found".into()
    };
    let r_txt = if stats.right_found {
        format!("R {}", stats.right_pixels)
    } else {
        "R not found".into()
    };
    let base = h + BAND - 5;
    put(
        &mut out,
        &l,
        4,
        base,
        0.42,
        if stats.left_found { white } else { red },
    )?;
    let m_txt = format!("mask {}", stats.mask_pixels);
    put(
        &mut out,
        &m_txt,
        (w - text_width(&m_txt, 0.42)?) / 2,
        base,
        0.42,
        Scalar::new(170.0, 170.0, 170.0, 0.0),
    )?;
    let rw = text_width(&r_txt, 0.42)?;
    put(
        &mut out,
        &r_txt,
        w - rw - 4,
        base,
        0.42,
        if stats.right_found { white } else { red },
    )?;
    if !(stats.left_found && stats.right_found) {
        imgproc::rectangle(
            &mut out,
            Rect::new(0, 0, w, h + BAND),
            red,
            3,
            imgproc::LINE_8,
            0,
        )?;
    }
    Ok((out, stats))
}

fn error_cell(w: i32, h: i32, message: &str) -> Result<Mat> {
    let mut img =
        Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::new(20.0, 20.0, 70.0, 0.0))?;
    let mut line = String::new();
    let mut y = 20;
    for word in message.split_whitespace() {
        if text_width(&format!("{line} {word}"), 0.4)? > w - 8 && !line.is_empty() {
            put(&mut img, &line, 4, y, 0.4, Scalar::all(255.0))?;
            y += 16;
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    put(&mut img, &line, 4, y, 0.4, Scalar::all(255.0))?;
    Ok(img)
}

/// Render the contact sheet: a header row of values, a column of still names, and one cell
/// `cell_width` px wide per still and value. Returns the sheet and the stats `[still][value]`.
pub fn contact_sheet(
    tuner: &Tuner,
    base: &Config,
    sweep: &Sweep,
    show: Show,
    cell_width: i32,
) -> Result<(Mat, Vec<Vec<CellStats>>)> {
    let configs = sweep.configs(base)?;
    crate::lane::warp::Perspective::from_config(&base.perspective, 1280, 720)?;
    let w = cell_width.clamp(64, 1280);
    // Cell height from the first readable still's aspect ratio (all cells share it).
    let h = (0..tuner.len())
        .find_map(|i| tuner.undistorted(i).ok())
        .map(|f| ((w as f64) * f.height() as f64 / f.width() as f64).round() as i32)
        .unwrap_or(w * 9 / 16)
        .max(40);
    let jobs: Vec<(usize, usize)> = (0..tuner.len())
        .flat_map(|r| (0..configs.len()).map(move |c| (r, c)))
        .collect();
    let cells: Vec<(Mat, CellStats)> = jobs
        .par_iter()
        .map(|&(r, c)| match cell(tuner, r, &configs[c], show, w, h) {
            Ok(x) => Ok(x),
            Err(e) => {
                let msg = e.to_string();
                Ok((
                    error_cell(w, h + BAND, &msg)?,
                    CellStats {
                        error: Some(msg),
                        ..Default::default()
                    },
                ))
            }
        })
        .collect::<Result<_>>()?;

    let (gap, head) = (4, 30);
    let label_scale = 0.5;
    let mut label_w = text_width(&sweep.key, label_scale)?;
    for n in tuner.names() {
        label_w = label_w.max(text_width(n, label_scale)?);
    }
    let label_w = label_w.min(400) + 16;
    let cols = configs.len() as i32;
    let rows = tuner.len() as i32;
    let sheet_w = label_w + cols * (w + gap) + gap;
    let ch = h + BAND;
    let sheet_h = head + rows * (ch + gap) + gap;
    let mut sheet =
        Mat::new_rows_cols_with_default(sheet_h, sheet_w, core::CV_8UC3, Scalar::all(BG))?;
    let white = Scalar::new(240.0, 240.0, 240.0, 0.0);
    put(
        &mut sheet,
        &sweep.key,
        8,
        20,
        label_scale,
        Scalar::new(160.0, 220.0, 255.0, 0.0),
    )?;
    for c in 0..cols {
        let label = sweep.label(c as usize);
        let x = label_w + c * (w + gap) + (w - text_width(&label, 0.6)?) / 2;
        put(&mut sheet, &label, x, 21, 0.6, white)?;
    }
    let mut stats = vec![Vec::with_capacity(configs.len()); tuner.len()];
    for ((r, c), (img, st)) in jobs.iter().zip(cells) {
        let (x, y) = (
            label_w + *c as i32 * (w + gap),
            head + *r as i32 * (ch + gap),
        );
        let mut roi = Mat::roi_mut(&mut sheet, Rect::new(x, y, w, ch))?;
        img.copy_to(&mut roi)?;
        stats[*r].push(st);
    }
    for (r, name) in tuner.names().iter().enumerate() {
        let y = head + r as i32 * (ch + gap) + ch / 2 + 6;
        let mut shown = name.clone();
        while text_width(&shown, label_scale)? > label_w - 12 && shown.chars().count() > 4 {
            shown = format!("...{}", shown.chars().skip(4).collect::<String>());
        }
        put(&mut sheet, &shown, 8, y, label_scale, white)?;
    }
    Ok((sheet, stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_includes_its_end_when_steps_reach_it() {
        let s = Sweep::parse("threshold.l_min=180..240:20").unwrap();
        assert_eq!(s.key, "threshold.l_min");
        assert_eq!(
            s.values,
            vec![
                Value::from(180),
                Value::from(200),
                Value::from(220),
                Value::from(240)
            ]
        );
        let s = Sweep::parse("search.windows=5..12:3").unwrap();
        assert_eq!(
            s.values,
            vec![Value::from(5), Value::from(8), Value::from(11)]
        );
        assert_eq!(s.label(1), "windows = 8");
    }

    #[test]
    fn lists_and_flags_parse() {
        let s = Sweep::parse("threshold.s_enabled=false,true").unwrap();
        assert_eq!(s.values, vec![Value::Bool(false), Value::Bool(true)]);
        let s = Sweep::parse("search.margin=50, 80,120").unwrap();
        assert_eq!(s.values.len(), 3);
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let e = Sweep::parse("threshold.l_min=180..240:0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("STEP must be positive"), "{e}");
        let e = Sweep::parse("threshold.lmin=1..2").unwrap_err().to_string();
        assert!(e.contains("unknown parameter `threshold.lmin`"), "{e}");
        let e = Sweep::parse("threshold.l_min=0..255:1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("256 values, at most 40"), "{e}");
        let e = Sweep::parse("threshold.l_min").unwrap_err().to_string();
        assert!(e.contains("no `=`"), "{e}");
    }

    #[test]
    fn a_value_that_breaks_validation_is_named() {
        let s = Sweep::parse("threshold.l_min=235..255:10").unwrap();
        let e = s.configs(&Config::default()).unwrap_err().to_string();
        assert_eq!(
            e,
            "config threshold.l_min = 255 (expected less than threshold.l_max = 255)"
        );
    }
}
