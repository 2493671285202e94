//! Perspective quad and metres per pixel estimated from straight-road frames (`lanes perspective`).
//!
//! Per frame: candidate marking pixels ([`candidates`]), Hough segments and their vanishing
//! point, the ego lane's two lines, refitted ([`lines`]); a source trapezoid on those lines and a
//! straightness check in the bird's-eye view it gives. Over frames: the median vanishing point
//! and bottom-row line positions make one pair of lines and one quad. Scale: across the road
//! from the lane width; along the road from dash lengths ([`dashes`]) when dashes are measured,
//! else from the ground-plane geometry ([`ground`]).

pub mod candidates;
pub mod dashes;
pub mod ground;
pub mod lines;
pub mod report;

use crate::base::config::{PerspectiveConfig, UnitsConfig};
use crate::base::error::{Error, Result};
use crate::base::frame::{BgrFrame, BinaryMask};
use crate::lane::warp::Perspective;
use candidates::RidgeParams;
use dashes::Dash;
use ground::GroundScale;
use lines::{FittedLine, HoughParams, ImageLine};
use opencv::core::{Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// Where `units.ym_per_px` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YmSource {
    /// Geometry (the camera file's focal length, else an assumed field of view); dashes only
    /// when the geometry is degenerate.
    Auto,
    /// Dash lengths only (an error when none is measured).
    Dashes,
    /// Ground-plane geometry only.
    Geometry,
}

/// Options of the estimate. `Default` gives the values documented on each field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Lane width, metres. Default 3.7 (12 ft, US interstate).
    pub lane_width_m: f64,
    /// Length of one dash of a dashed line, metres. Default 3.0 (US: 10 ft dashes).
    pub dash_length_m: f64,
    /// Quad bottom row as a fraction of the frame height. Default 0.95 (the Udacity quad's
    /// bottom, 682 of 720, is just above the hood).
    pub bottom: f64,
    /// Quad top row as a fraction of the way from the bottom row up to the horizon. Default 0.83,
    /// the Udacity quad's (464 is 83% of the way from 682 up to its horizon at about 420).
    pub depth: f64,
    /// Margin of the destination rectangle on each side, as a fraction of the width. Default
    /// 450/1280: the Udacity destination x = 450..830.
    pub dst_margin: f64,
    /// A frame is straight when both lines, mapped to its bird's-eye view, stay within this many
    /// degrees of vertical at the view's top, middle and bottom. Default 1.5.
    pub max_angle_deg: f64,
    /// Where `ym_per_px` comes from. Default `Auto`.
    pub ym_source: YmSource,
    /// Lines are fitted on the rows from this fraction of the way down from the horizon to the
    /// frame's bottom. Default 0.1: nearly all of the road, for straight-road frames. On a bend
    /// the near range is nearly straight while the far range curves away: 0.45 keeps the fit
    /// to the nearest few car lengths, whose tangents meet on the horizon at the car's own
    /// heading (a flat road's every direction vanishes on the horizon).
    pub fit_from: f64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            lane_width_m: 3.7,
            dash_length_m: 3.0,
            bottom: 0.95,
            depth: 0.83,
            dst_margin: 450.0 / 1280.0,
            max_angle_deg: 1.5,
            ym_source: YmSource::Auto,
            fit_from: 0.1,
        }
    }
}

impl Options {
    /// Check ranges; the message names the option and its value.
    pub fn validate(&self) -> Result<()> {
        let bad = |name: &str, v: f64, range: &str| {
            Err(Error::Invalid(format!("{name} = {v} (expected {range})")))
        };
        if !(self.lane_width_m.is_finite() && self.lane_width_m > 0.5 && self.lane_width_m < 10.0) {
            return bad("--lane-width", self.lane_width_m, "0.5 < metres < 10");
        }
        if !(self.dash_length_m.is_finite()
            && self.dash_length_m > 0.1
            && self.dash_length_m < 50.0)
        {
            return bad("--dash-length", self.dash_length_m, "0.1 < metres < 50");
        }
        if !(self.bottom > 0.3 && self.bottom <= 1.0) {
            return bad("--bottom", self.bottom, "0.3 < fraction <= 1");
        }
        if !(self.depth > 0.1 && self.depth < 0.98) {
            return bad("--depth", self.depth, "0.1 < fraction < 0.98");
        }
        if !(self.dst_margin >= 0.0 && self.dst_margin < 0.45) {
            return bad("--dst-margin", self.dst_margin, "0 <= fraction < 0.45");
        }
        if !(self.fit_from >= 0.0 && self.fit_from < 0.9) {
            return bad("fit_from", self.fit_from, "0 <= fraction < 0.9");
        }
        if !(self.max_angle_deg > 0.0 && self.max_angle_deg < 45.0) {
            return bad("--max-angle", self.max_angle_deg, "0 < degrees < 45");
        }
        Ok(())
    }
}

/// The ego lane's two lines found on one frame.
#[derive(Debug, Clone)]
pub struct LaneLines {
    pub left: FittedLine,
    pub right: FittedLine,
    /// Where the two lines meet; its row is the horizon.
    pub vp: (f64, f64),
    /// The candidate-pixel mask the lines were fitted on.
    pub mask: BinaryMask,
}

/// Why a frame's lines were not found, with whatever was found for the picture.
#[derive(Debug, Clone)]
pub struct Rejection {
    pub reason: String,
    pub vp: Option<(f64, f64)>,
    pub left: Option<ImageLine>,
    pub right: Option<ImageLine>,
}

impl Rejection {
    fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            vp: None,
            left: None,
            right: None,
        }
    }
}

/// Find the ego lane's two straight lines on an undistorted frame.
///
/// Two passes: the first guesses the horizon at 45% of the height to size the ridge detector
/// and finds a vanishing point; the second sizes it from that vanishing point's row.
pub fn find_lane_lines(
    frame: &BgrFrame,
    l_contrast: u8,
    fit_from: f64,
) -> Result<std::result::Result<LaneLines, Rejection>> {
    let (w, h) = (frame.width(), frame.height());
    let (wf, hf) = (w as f64, h as f64);
    let hough = HoughParams::for_size(h);
    let tol_deg = 1.5;
    // Pass 1.
    let guess = 0.45 * hf;
    let p1 = RidgeParams {
        rows: ((0.4 * hf) as i32, h),
        horizon_y: guess,
        l_contrast,
        ..Default::default()
    };
    let mask1 = candidates::ridge_mask(frame, &p1)?;
    let segs1 = lines::hough_segments(&mask1, &hough)?;
    let Some((vp1, _)) = lines::vanishing_point(&segs1, w, h, tol_deg) else {
        return Ok(Err(Rejection::new(format!(
            "no vanishing point ({} line segments found)",
            segs1.len()
        ))));
    };
    if !(vp1.1 > 0.05 * hf && vp1.1 < 0.85 * hf) {
        return Ok(Err(Rejection {
            vp: Some(vp1),
            ..Rejection::new(format!("vanishing point row {:.0} is implausible", vp1.1))
        }));
    }
    // Pass 2, from just below the horizon.
    let top = (vp1.1 + 0.04 * (hf - vp1.1)).ceil() as i32;
    let p2 = RidgeParams {
        rows: (top, h),
        horizon_y: vp1.1,
        l_contrast,
        ..Default::default()
    };
    let mask = candidates::ridge_mask(frame, &p2)?;
    let segs = lines::hough_segments(&mask, &hough)?;
    let (vp2, inliers) = match lines::vanishing_point(&segs, w, h, tol_deg) {
        Some(v) => v,
        None => {
            return Ok(Err(Rejection {
                vp: Some(vp1),
                ..Rejection::new("no vanishing point in the second pass")
            }))
        }
    };
    let y_bottom = hf;
    let clusters = lines::clusters_through(&segs, &inliers, vp2, y_bottom, 0.03 * wf);
    let max_support = clusters.iter().map(|c| c.support).fold(0.0, f64::max);
    let (lc, rc) = lines::ego_clusters(&clusters, vp2.0, (0.08 * max_support).max(0.05 * hf));
    let initial = |c: Option<lines::LineCluster>| {
        c.and_then(|c| ImageLine::through(vp2, (c.x_bottom, y_bottom)))
    };
    let (li, ri) = (initial(lc), initial(rc));
    let mut rej = Rejection {
        vp: Some(vp2),
        left: li,
        right: ri,
        reason: String::new(),
    };
    let (Some(li), Some(ri)) = (li, ri) else {
        rej.reason = match (li, ri) {
            (None, None) => "neither lane line found".into(),
            (None, _) => "left lane line not found".into(),
            _ => "right lane line not found".into(),
        };
        return Ok(Err(rej));
    };
    let rows = ((vp2.1 + fit_from * (hf - vp2.1)).ceil() as i32, h);
    let fl = lines::refine_line(&mask, li, vp2.0, rows, 0.06)?;
    let fr = lines::refine_line(&mask, ri, vp2.0, rows, 0.06)?;
    let (Some(fl), Some(fr)) = (fl, fr) else {
        rej.reason = "too few marking pixels along a lane line".into();
        return Ok(Err(rej));
    };
    rej.left = Some(fl.line);
    rej.right = Some(fr.line);
    let need_rows = (0.08 * (hf - vp2.1)) as usize;
    for (name, f) in [("left", &fl), ("right", &fr)] {
        if f.rows < need_rows {
            rej.reason = format!(
                "{name} lane line has marking pixels on only {} rows (need {need_rows})",
                f.rows
            );
            return Ok(Err(rej));
        }
    }
    if !(fl.line.m < 0.0 && fr.line.m > 0.0) {
        rej.reason = format!(
            "lines do not converge upwards (dx/dy left {:.2}, right {:.2})",
            fl.line.m, fr.line.m
        );
        return Ok(Err(rej));
    }
    let Some(vp) = fl.line.intersect(&fr.line) else {
        rej.reason = "lane lines are parallel in the image".into();
        return Ok(Err(rej));
    };
    rej.vp = Some(vp);
    if !(vp.1 > 0.0 && vp.1 < 0.85 * hf && vp.0 > 0.0 && vp.0 < wf) {
        rej.reason = format!(
            "lane lines meet at ({:.0}, {:.0}), outside the plausible area",
            vp.0, vp.1
        );
        return Ok(Err(rej));
    }
    // The ego lane's lines lie on either side of the car, at comparable distances when the car
    // drives near its lane's centre (as calibration frames should show); a line several times
    // farther than the other is most likely the next lane's, picked where the ego line is faint.
    let (dl, dr) = (vp.0 - fl.line.x_at(hf), fr.line.x_at(hf) - vp.0);
    let ratio = dl.max(dr) / dl.min(dr).max(1e-9);
    if ratio > MAX_SIDE_RATIO {
        let (far, near) = if dr > dl {
            ("right", "left")
        } else {
            ("left", "right")
        };
        rej.reason = format!(
            "the {far} line crosses the bottom row {ratio:.1}x as far from the vanishing point as the {near} one (limit {MAX_SIDE_RATIO}): a line of the next lane, or the car far from its lane's centre"
        );
        return Ok(Err(rej));
    }
    Ok(Ok(LaneLines {
        left: fl,
        right: fr,
        vp,
        mask,
    }))
}

/// Largest ratio of the two ego lines' distances from the vanishing point's column at the
/// bottom row: 2 allows the car about a sixth of the lane width off its centre.
const MAX_SIDE_RATIO: f64 = 2.0;

/// Quad rows for a horizon at `vp_y`: `(top, bottom)`.
pub fn quad_rows(vp_y: f64, height: i32, opts: &Options) -> (f64, f64) {
    let yb = opts.bottom * height as f64;
    (yb - opts.depth * (yb - vp_y), yb)
}

/// The bird's-eye view every found geometry is given in, whatever the frame size: the Udacity
/// camera's 1280x720, so that the search's sizes in view pixels (tuned there) mean the same
/// metres on the road on every camera.
pub const NOMINAL_VIEW: [i32; 2] = [1280, 720];

/// The source trapezoid on two lines and the destination rectangle (in the [`NOMINAL_VIEW`]),
/// in config order.
pub fn quad_on_lines(
    left: &ImageLine,
    right: &ImageLine,
    vp_y: f64,
    height: i32,
    opts: &Options,
) -> PerspectiveConfig {
    let (yt, yb) = quad_rows(vp_y, height, opts);
    let [vw, vh] = NOMINAL_VIEW;
    let (w, h) = (vw as f64, vh as f64);
    let mx = (opts.dst_margin * w).round();
    PerspectiveConfig {
        src: [
            [left.x_at(yt), yt],
            [right.x_at(yt), yt],
            [left.x_at(yb), yb],
            [right.x_at(yb), yb],
        ],
        dst: [[mx, 0.0], [w - mx, 0.0], [mx, h], [w - mx, h]],
        view: Some(NOMINAL_VIEW),
        ..PerspectiveConfig::default()
    }
}

/// Angle from vertical, degrees, of a line's pixels in a bird's-eye view: a parabola
/// `x = a*y^2 + b*y + c` fitted to the mapped pixels, its slope evaluated at the view's top,
/// middle and bottom rows. `None` with too few pixels.
pub fn birdseye_angles(
    pixels: &[(f64, f64)],
    persp: &Perspective,
    rows: (f64, f64),
) -> Option<[f64; 3]> {
    let pts: Vec<(f64, f64)> = pixels
        .iter()
        .filter(|p| p.1 >= rows.0 && p.1 <= rows.1)
        .map(|p| persp.to_birdseye(p.0, p.1))
        .collect();
    if pts.len() < 10 {
        return None;
    }
    let h = persp.height as f64;
    // Normal equations in t = y / h; a second pass drops points more than 3 robust standard
    // deviations (1.4826 * median absolute residual, at least 2 px) off the first fit.
    let solve = |keep: &dyn Fn(f64, f64) -> bool| -> Option<nalgebra::Vector3<f64>> {
        let mut a = nalgebra::Matrix3::<f64>::zeros();
        let mut r = nalgebra::Vector3::<f64>::zeros();
        for (x, y) in &pts {
            if !keep(*x, *y) {
                continue;
            }
            let t = y / h;
            let v = nalgebra::Vector3::new(t * t, t, 1.0);
            a += v * v.transpose();
            r += v * *x;
        }
        a.lu().solve(&r)
    };
    let eval = |s: &nalgebra::Vector3<f64>, y: f64| {
        let t = y / h;
        s[0] * t * t + s[1] * t + s[2]
    };
    let s0 = solve(&|_, _| true)?;
    let mut res: Vec<f64> = pts.iter().map(|(x, y)| (x - eval(&s0, *y)).abs()).collect();
    let limit = (3.0 * 1.4826 * median(&mut res)).max(2.0);
    let s = solve(&|x, y| (x - eval(&s0, y)).abs() <= limit)?;
    let slope = |t: f64| (2.0 * s[0] * t + s[1]) / h; // dx/dy in px/px
    let (y0, y1) = pts
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    if y1 - y0 < 0.5 * h {
        // Pixels of the near range only (`Options::fit_from`): a parabola over a short span
        // extrapolates wildly to the view's top, so the direction of a straight line through
        // them (the trimmed pixels) stands for all three rows.
        let kept: Vec<(f64, f64)> = pts
            .iter()
            .copied()
            .filter(|(x, y)| (x - eval(&s, *y)).abs() <= limit)
            .collect();
        let n = kept.len() as f64;
        let (my, mx) = kept
            .iter()
            .fold((0.0, 0.0), |(a, b), p| (a + p.1 / n, b + p.0 / n));
        let (sxy, syy) = kept.iter().fold((0.0, 0.0), |(a, b), p| {
            (a + (p.1 - my) * (p.0 - mx), b + (p.1 - my) * (p.1 - my))
        });
        if syy <= 0.0 {
            return None;
        }
        let d = (sxy / syy).atan().to_degrees();
        return Some([d, d, d]);
    }
    Some([slope(0.0), slope(0.5), slope(1.0)].map(|d| d.atan().to_degrees()))
}

/// The straightness check of one frame, in the bird's-eye view of its own quad.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameCheck {
    /// Angles from vertical (top, middle, bottom row of the view), left then right line, degrees.
    pub angles: [[f64; 3]; 2],
    /// Largest absolute angle.
    pub max_angle: f64,
}

/// Map each line's pixels through the frame's own quad and measure how far from vertical they run.
pub fn check_straight(
    lines: &LaneLines,
    width: i32,
    height: i32,
    opts: &Options,
) -> Result<Option<FrameCheck>> {
    let q = quad_on_lines(
        &lines.left.line,
        &lines.right.line,
        lines.vp.1,
        height,
        opts,
    );
    let persp = Perspective::from_config(&q, width, height)?;
    let rows = (q.src[0][1], q.src[2][1]);
    let (Some(l), Some(r)) = (
        birdseye_angles(&lines.left.pixels, &persp, rows),
        birdseye_angles(&lines.right.pixels, &persp, rows),
    ) else {
        return Ok(None);
    };
    let max_angle = l.iter().chain(r.iter()).fold(0.0f64, |m, a| m.max(a.abs()));
    Ok(Some(FrameCheck {
        angles: [l, r],
        max_angle,
    }))
}

/// L contrasts tried in turn: the default, then a lower one for faint paint (a frame found
/// straight at the first is kept as it is; textured concrete needs the first).
pub const L_CONTRASTS: [u8; 2] = [18, 10];

/// What one frame gave: its lines when found, the straightness check, and why it is not used.
#[derive(Debug, Clone)]
pub struct FrameOutcome {
    pub lines: Option<LaneLines>,
    pub check: Option<FrameCheck>,
    /// `None` when the frame is usable.
    pub problem: Option<String>,
    /// When no lines were found: what was found, for the picture.
    pub rejection: Option<Rejection>,
    /// The L contrast of the ridge detector that gave this outcome.
    pub l_contrast: u8,
}

impl FrameOutcome {
    pub fn usable(&self) -> bool {
        self.problem.is_none() && self.lines.is_some()
    }
}

fn outcome_at(frame: &BgrFrame, l_contrast: u8, opts: &Options) -> Result<FrameOutcome> {
    let (w, h) = (frame.width(), frame.height());
    let mut o = FrameOutcome {
        lines: None,
        check: None,
        problem: None,
        rejection: None,
        l_contrast,
    };
    match find_lane_lines(frame, l_contrast, opts.fit_from)? {
        Err(rej) => {
            o.problem = Some(rej.reason.clone());
            o.rejection = Some(rej);
        }
        Ok(lines) => {
            match check_straight(&lines, w, h, opts)? {
                None => o.problem = Some("too few marking pixels inside the quad".into()),
                Some(c) => {
                    if c.max_angle > opts.max_angle_deg {
                        o.problem = Some(format!(
                            "not straight: in its bird's-eye view a line runs {:.1} deg from vertical (limit {:.1}; left {:+.1}/{:+.1}/{:+.1}, right {:+.1}/{:+.1}/{:+.1} deg top/middle/bottom)",
                            c.max_angle,
                            opts.max_angle_deg,
                            c.angles[0][0],
                            c.angles[0][1],
                            c.angles[0][2],
                            c.angles[1][0],
                            c.angles[1][1],
                            c.angles[1][2]
                        ));
                    }
                    o.check = Some(c);
                }
            }
            o.lines = Some(lines);
        }
    }
    Ok(o)
}

/// Find a frame's lines and check them: at each of [`L_CONTRASTS`] in turn until the frame is
/// usable; an unusable frame reports the first attempt's problem.
pub fn analyze_frame(frame: &BgrFrame, opts: &Options) -> Result<FrameOutcome> {
    let first = outcome_at(frame, L_CONTRASTS[0], opts)?;
    if first.usable() {
        return Ok(first);
    }
    // A dashed line can leave the near range empty (a 12 m gap between 6 m dashes): then the
    // lines are fitted over nearly the whole road, where the straightness check over the view's
    // full height keeps bends out.
    let whole = Options {
        fit_from: FIT_FROM_WHOLE.min(opts.fit_from),
        ..*opts
    };
    for &c in &L_CONTRASTS {
        for o in [opts, &whole] {
            if c == L_CONTRASTS[0] && o.fit_from == opts.fit_from {
                continue;
            }
            let out = outcome_at(frame, c, o)?;
            if out.usable() {
                return Ok(out);
            }
        }
    }
    Ok(first)
}

/// `Options::fit_from` of the fallback that fits nearly the whole road.
const FIT_FROM_WHOLE: f64 = 0.1;

fn median(v: &mut [f64]) -> f64 {
    crate::base::stats::median(v).unwrap_or(f64::NAN)
}

/// The lines of several frames combined: the median vanishing point and the median x of each
/// line at the bottom row, joined into two lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CombinedLines {
    pub vp: (f64, f64),
    pub left: ImageLine,
    pub right: ImageLine,
}

/// Combine frames (at least one) by medians; `None` for no frames or degenerate lines.
pub fn combine(frames: &[&LaneLines], height: i32) -> Option<CombinedLines> {
    if frames.is_empty() {
        return None;
    }
    let yb = height as f64;
    let mut vx: Vec<f64> = frames.iter().map(|f| f.vp.0).collect();
    let mut vy: Vec<f64> = frames.iter().map(|f| f.vp.1).collect();
    let mut xl: Vec<f64> = frames.iter().map(|f| f.left.line.x_at(yb)).collect();
    let mut xr: Vec<f64> = frames.iter().map(|f| f.right.line.x_at(yb)).collect();
    let vp = (median(&mut vx), median(&mut vy));
    let left = ImageLine::through(vp, (median(&mut xl), yb))?;
    let right = ImageLine::through(vp, (median(&mut xr), yb))?;
    Some(CombinedLines { vp, left, right })
}

/// Dash statistics over all usable frames.
#[derive(Debug, Clone, PartialEq)]
pub struct DashStats {
    /// Every complete dash measured, in bird's-eye pixels.
    pub lengths_px: Vec<f64>,
    /// How many lie in the densest cluster (within 15% of its centre).
    pub cluster_count: usize,
    /// The median of that cluster: partly hidden or worn dashes (short) and dashes merged over
    /// a missed gap (long) fall outside it.
    pub median_px: f64,
    /// `dash_length_m / median_px`.
    pub ym_per_px: f64,
}

/// The densest cluster of lengths: for each length, the lengths within 15% of it; the largest
/// such set (ties: the longer lengths) and its median.
pub fn dash_cluster(lengths: &[f64]) -> Option<(usize, f64)> {
    let mut best: Option<Vec<f64>> = None;
    for &l in lengths {
        let members: Vec<f64> = lengths
            .iter()
            .copied()
            .filter(|&o| (o - l).abs() <= 0.15 * l)
            .collect();
        if best
            .as_ref()
            .map(|b| members.len() >= b.len())
            .unwrap_or(true)
        {
            best = Some(members);
        }
    }
    let mut b = best?;
    let n = b.len();
    Some((n, median(&mut b)))
}

/// The result: config sections and how they were obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub perspective: PerspectiveConfig,
    pub units: UnitsConfig,
    pub lines: CombinedLines,
    /// Lane width in the bird's-eye view, px (the destination rectangle's width).
    pub lane_width_px: f64,
    /// Ground-plane geometry (with the camera's K, or an assumed one).
    pub ground: Option<GroundScale>,
    /// Whether `ground` used an assumed camera matrix.
    pub assumed_k: bool,
    pub dashes: Option<DashStats>,
    /// Where `units.ym_per_px` came from: "dashes" or "geometry".
    pub ym_from: &'static str,
}

/// Dashes of a frame's two lines measured in the combined bird's-eye view.
pub fn frame_dashes(
    lines: &LaneLines,
    persp: &Perspective,
    combined: &CombinedLines,
    height: i32,
    opts: &Options,
) -> Result<Vec<Dash>> {
    let (yt, yb) = quad_rows(combined.vp.1, height, opts);
    let lane_px = |y: f64| combined.right.x_at(y) - combined.left.x_at(y);
    // Gaps and dashes shorter than a tenth of the lane width in bird's-eye pixels are noise
    // (worn paint, reflectors). The along-road scale is not known yet; on the Udacity camera
    // that is 38 px, 1.4 m along the road.
    let min_gap = 0.1 * (1.0 - 2.0 * opts.dst_margin) * persp.width as f64;
    let mut out = dashes::measure_dashes(
        &lines.mask,
        &lines.left.line,
        persp,
        &lane_px,
        yt.ceil() as i32,
        yb.floor() as i32,
        min_gap,
    )?;
    out.extend(dashes::measure_dashes(
        &lines.mask,
        &lines.right.line,
        persp,
        &lane_px,
        yt.ceil() as i32,
        yb.floor() as i32,
        min_gap,
    )?);
    Ok(out)
}

/// Combine usable frames into the estimate. `k` is the camera matrix when a camera file was
/// given; without one, [`ground::assumed_k`] is used for the geometry.
pub fn estimate(
    frames: &[&LaneLines],
    k: Option<&[[f64; 3]; 3]>,
    width: i32,
    height: i32,
    opts: &Options,
) -> Result<Estimate> {
    opts.validate()?;
    let combined = combine(frames, height)
        .ok_or_else(|| Error::Invalid("no usable frame to combine".into()))?;
    let perspective = quad_on_lines(&combined.left, &combined.right, combined.vp.1, height, opts);
    let persp = Perspective::from_config(&perspective, width, height)?;
    let lane_width_px = perspective.dst[1][0] - perspective.dst[0][0];
    let xm_per_px = opts.lane_width_m / lane_width_px;
    let assumed = k.is_none();
    let kk = k
        .copied()
        .unwrap_or_else(|| ground::assumed_k(width, height));
    let (yt, yb) = quad_rows(combined.vp.1, height, opts);
    let dst_h = perspective.dst[2][1] - perspective.dst[0][1];
    let g = ground::ground_scale(
        &kk,
        combined.vp,
        (&combined.left, &combined.right),
        (yt, yb),
        opts.lane_width_m,
        dst_h,
    );
    let mut lengths = Vec::new();
    for f in frames {
        lengths.extend(
            frame_dashes(f, &persp, &combined, height, opts)?
                .iter()
                .map(|d| d.length_px),
        );
    }
    let dash = dash_cluster(&lengths).map(|(n, m)| DashStats {
        lengths_px: lengths.clone(),
        cluster_count: n,
        median_px: m,
        ym_per_px: opts.dash_length_m / m,
    });
    let use_dashes = match opts.ym_source {
        YmSource::Dashes => true,
        YmSource::Geometry => false,
        // The geometry, with the camera's focal length or an assumed field of view: exact for a
        // flat straight road with a calibrated camera, and off by the focal length's error
        // without one. Dashes are not a source of their own: their real length differs by
        // country (3 m in the US, 6 m on German motorways) and measured dashes run long (blur
        // at their ends); they are the geometry's cross-check (`selfcal::scale_warnings`).
        YmSource::Auto => g.is_none(),
    };
    let (ym_per_px, ym_from) = if use_dashes {
        match &dash {
            Some(d) => (d.ym_per_px, "dashes"),
            None => {
                return Err(Error::Invalid(
                    "no complete dash measured on any frame (use --ym-from geometry)".into(),
                ))
            }
        }
    } else {
        match &g {
            Some(g) => (g.ym_per_px, "geometry"),
            None => {
                return Err(Error::Invalid(
                    "the ground-plane geometry is degenerate for these lines".into(),
                ))
            }
        }
    };
    Ok(Estimate {
        perspective,
        units: UnitsConfig {
            xm_per_px,
            ym_per_px,
        },
        lines: combined,
        lane_width_px,
        ground: g,
        assumed_k: assumed,
        dashes: dash,
        ym_from,
    })
}

fn pt(x: f64, y: f64) -> Point {
    Point::new(
        x.clamp(-1e5, 1e5).round() as i32,
        y.clamp(-1e5, 1e5).round() as i32,
    )
}

/// The picture of one frame for the user to check: candidate pixels tinted, the found lines
/// (red left, blue right) up to the vanishing point, the horizon (cyan) and the quad (green).
pub fn frame_picture(
    frame: &BgrFrame,
    mask: Option<&BinaryMask>,
    left: Option<&ImageLine>,
    right: Option<&ImageLine>,
    vp: Option<(f64, f64)>,
    quad: Option<&PerspectiveConfig>,
    caption: &str,
) -> Result<BgrFrame> {
    let mut img = frame.mat().try_clone()?;
    let (w, h) = (img.cols(), img.rows());
    if let Some(m) = mask {
        let md = m.bytes()?;
        let d = img.data_bytes_mut()?;
        for (i, &v) in md.iter().enumerate() {
            if v != 0 {
                d[i * 3] = 255;
                d[i * 3 + 1] = 0;
                d[i * 3 + 2] = 255;
            }
        }
    }
    let thick = (w / 640).max(1) + 1;
    if let Some(vp) = vp {
        imgproc::line(
            &mut img,
            pt(0.0, vp.1),
            pt(w as f64, vp.1),
            Scalar::new(255.0, 255.0, 0.0, 0.0),
            1,
            imgproc::LINE_AA,
            0,
        )?;
        imgproc::circle(
            &mut img,
            pt(vp.0, vp.1),
            3 * thick,
            Scalar::new(255.0, 255.0, 0.0, 0.0),
            thick,
            imgproc::LINE_AA,
            0,
        )?;
    }
    let top = vp.map(|v| v.1).unwrap_or(0.0).max(0.0);
    for (l, c) in [
        (left, Scalar::new(0.0, 0.0, 255.0, 0.0)),
        (right, Scalar::new(255.0, 0.0, 0.0, 0.0)),
    ] {
        if let Some(l) = l {
            imgproc::line(
                &mut img,
                pt(l.x_at(top), top),
                pt(l.x_at(h as f64), h as f64),
                c,
                1,
                imgproc::LINE_AA,
                0,
            )?;
        }
    }
    if let Some(q) = quad {
        let poly: Vector<Point> = [q.src[0], q.src[1], q.src[3], q.src[2]]
            .iter()
            .map(|p| pt(p[0], p[1]))
            .collect();
        let polys: Vector<Vector<Point>> = std::iter::once(poly).collect();
        imgproc::polylines(
            &mut img,
            &polys,
            true,
            Scalar::new(0.0, 255.0, 0.0, 0.0),
            thick,
            imgproc::LINE_AA,
            0,
        )?;
    }
    let scale = (w as f64 / 1280.0).max(0.4);
    crate::lane::render::draw_text_lines(
        &mut img,
        &[caption.to_string()],
        ((20.0 * scale) as i32, (40.0 * scale) as i32),
        0.9 * scale,
        Scalar::new(255.0, 255.0, 255.0, 0.0),
    )?;
    BgrFrame::new(img)
}

/// The bird's-eye view of a frame with the destination lines (green) where the lane lines should run.
pub fn birdseye_picture(
    frame: &BgrFrame,
    persp: &Perspective,
    q: &PerspectiveConfig,
) -> Result<BgrFrame> {
    let warped = persp.warp(frame)?;
    let mut img = warped.into_mat();
    let h = img.rows() as f64;
    for x in [q.dst[0][0], q.dst[1][0]] {
        imgproc::line(
            &mut img,
            pt(x, 0.0),
            pt(x, h),
            Scalar::new(0.0, 255.0, 0.0, 0.0),
            1,
            imgproc::LINE_AA,
            0,
        )?;
    }
    BgrFrame::new(img)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_options_rebuild_the_udacity_quad_from_its_own_lines() {
        // The Udacity quad's edges as lines; its horizon is where they meet.
        let l = ImageLine::through((575.0, 464.0), (258.0, 682.0)).unwrap();
        let r = ImageLine::through((707.0, 464.0), (1049.0, 682.0)).unwrap();
        let vp = l.intersect(&r).unwrap();
        let q = quad_on_lines(&l, &r, vp.1, 720, &Options::default());
        let reference = PerspectiveConfig::default();
        // Rows 684 / 466 instead of 682 / 464: the corners sit on the same lines within 4 px.
        for i in 0..4 {
            assert!((q.src[i][1] - reference.src[i][1]).abs() < 3.0, "{q:?}");
            let line = if i % 2 == 0 { &l } else { &r };
            assert!((line.x_at(q.src[i][1]) - q.src[i][0]).abs() < 1e-9);
        }
        assert_eq!(q.dst, reference.dst);
    }

    #[test]
    fn dash_cluster_ignores_partial_and_merged_dashes() {
        let (n, m) = dash_cluster(&[36.0, 44.0, 80.0, 82.0, 84.0, 88.0, 90.0, 348.0]).unwrap();
        assert_eq!(n, 5);
        assert_eq!(m, 84.0);
        assert!(dash_cluster(&[]).is_none());
    }

    #[test]
    fn parallel_lines_are_vertical_in_their_own_birdseye_view() {
        let l = ImageLine::through((575.0, 464.0), (258.0, 682.0)).unwrap();
        let r = ImageLine::through((707.0, 464.0), (1049.0, 682.0)).unwrap();
        let vp = l.intersect(&r).unwrap();
        let q = quad_on_lines(&l, &r, vp.1, 720, &Options::default());
        let persp = Perspective::from_config(&q, 1280, 720).unwrap();
        let pixels: Vec<(f64, f64)> = (470..680).map(|y| (l.x_at(y as f64), y as f64)).collect();
        let a = birdseye_angles(&pixels, &persp, (q.src[0][1], q.src[2][1])).unwrap();
        assert!(a.iter().all(|d| d.abs() < 1e-3), "{a:?}"); // the quad goes through f32 in OpenCV
                                                            // A line bending away near the top is not.
        let bent: Vec<(f64, f64)> = (470..680)
            .map(|y| {
                (
                    l.x_at(y as f64) + 0.002 * (680.0 - y as f64).powi(2),
                    y as f64,
                )
            })
            .collect();
        let b = birdseye_angles(&bent, &persp, (q.src[0][1], q.src[2][1])).unwrap();
        assert!(b[0].abs() > 2.0, "{b:?}");
    }
}
