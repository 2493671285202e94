//! One frame: its ego lane's two lines, whether they are straight enough, and the quad they
//! give.

use super::candidates::RidgeParams;
use super::lines::{FittedLine, HoughParams, ImageLine};
use super::options::Options;
use super::views::View;
use crate::base::config::PerspectiveConfig;
use crate::base::error::Result;
use crate::base::frame::{BgrFrame, BinaryMask, GrayImage};
use crate::lane::warp::Perspective;

/// The ego lane's two lines found on one frame.
#[derive(Debug, Clone)]
pub struct LaneLines {
    pub left: FittedLine,
    pub right: FittedLine,
    /// Where the two lines meet; its row is the horizon.
    pub vp: (f64, f64),
    /// The candidate-pixel mask the lines were fitted on.
    pub mask: BinaryMask,
    /// What the frame showed and when, to tell frames of one view apart when frames are
    /// combined: set by [`analyze_frame`], `None` from [`find_lane_lines`].
    pub view: Option<View>,
}

impl LaneLines {
    /// The rows of both lines' marking pixels.
    pub fn marking_rows(&self) -> impl Iterator<Item = f64> + '_ {
        self.left
            .pixels
            .iter()
            .chain(&self.right.pixels)
            .map(|p| p.1)
    }

    /// The lowest marking pixel's row: where the road the lines show ends (a hood, the
    /// picture's bottom); `None` without pixels.
    pub fn lowest_marking(&self) -> Option<f64> {
        self.marking_rows()
            .reduce(f64::max)
            .filter(|y| y.is_finite())
    }
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
    let (l, b) = crate::lane::threshold::channels(frame, super::candidates::RIDGE_CUE)?;
    find_lane_lines_in(&l, &b, l_contrast, fit_from)
}

/// `find_lane_lines` on the frame's L and B channels (`threshold::channels` with the yellow
/// cue), computed once for the several attempts of `analyze_frame`.
pub fn find_lane_lines_in(
    l: &GrayImage,
    b: &GrayImage,
    l_contrast: u8,
    fit_from: f64,
) -> Result<std::result::Result<LaneLines, Rejection>> {
    match candidate_lines(l, b, l_contrast)? {
        Ok(c) => lines_from(&c, fit_from, c.size.1 as f64),
        Err(rej) => Ok(Err(rej)),
    }
}

/// What the ridge detector and Hough segments at one L contrast give, before the lines are
/// refitted over a range of rows: the same for every `fit_from`.
pub struct CandidateLines {
    mask: BinaryMask,
    vp: (f64, f64),
    left: ImageLine,
    right: ImageLine,
    size: (i32, i32),
}

/// The two passes of `find_lane_lines_in` up to the ego lines' first guess through the
/// vanishing point.
fn candidate_lines(
    l: &GrayImage,
    b: &GrayImage,
    l_contrast: u8,
) -> Result<std::result::Result<CandidateLines, Rejection>> {
    let (w, h) = (l.width(), l.height());
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
    let mask1 = super::candidates::ridge_mask_of(l, b, &p1)?;
    let segs1 = super::lines::hough_segments(&mask1, &hough)?;
    let Some((vp1, _)) = super::lines::vanishing_point(&segs1, w, h, tol_deg) else {
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
    let mask = super::candidates::ridge_mask_of(l, b, &p2)?;
    let segs = super::lines::hough_segments(&mask, &hough)?;
    let (vp2, inliers) = match super::lines::vanishing_point(&segs, w, h, tol_deg) {
        Some(v) => v,
        None => {
            return Ok(Err(Rejection {
                vp: Some(vp1),
                ..Rejection::new("no vanishing point in the second pass")
            }))
        }
    };
    let y_bottom = hf;
    let clusters = super::lines::clusters_through(&segs, &inliers, vp2, y_bottom, 0.03 * wf);
    let max_support = clusters.iter().map(|c| c.support).fold(0.0, f64::max);
    let (lc, rc) =
        super::lines::ego_clusters(&clusters, vp2.0, (0.08 * max_support).max(0.05 * hf));
    let initial = |c: Option<super::lines::LineCluster>| {
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
    Ok(Ok(CandidateLines {
        mask,
        vp: vp2,
        left: li,
        right: ri,
        size: (w, h),
    }))
}

/// The ego lines refitted on the marking pixels from `fit_from` of the way down from the
/// horizon to row `bottom` (the frame's bottom, or the top of a hood that hides the road
/// below), and checked.
fn lines_from(
    c: &CandidateLines,
    fit_from: f64,
    bottom: f64,
) -> Result<std::result::Result<LaneLines, Rejection>> {
    let (w, h) = c.size;
    let (wf, hf) = (w as f64, h as f64);
    let (vp2, li, ri) = (c.vp, c.left, c.right);
    let mut rej = Rejection {
        vp: Some(vp2),
        left: Some(li),
        right: Some(ri),
        reason: String::new(),
    };
    let mask = &c.mask;
    let bottom = bottom.min(hf);
    let rows = (
        (vp2.1 + fit_from * (bottom - vp2.1)).ceil() as i32,
        bottom.ceil() as i32,
    );
    let fl = super::lines::refine_line(mask, li, vp2.0, rows, 0.06)?;
    let fr = super::lines::refine_line(mask, ri, vp2.0, rows, 0.06)?;
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
            "lane lines meet outside the plausible area (at x {:.0}, y {:.0})",
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
        mask: mask.clone(),
        view: None,
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
    /// Columns of black at the frame's left and right sides (`bars::side_bars`).
    pub side_bars: (u32, u32),
    /// Rows of a black bar at the frame's bottom (`bars::bottom_bar`).
    pub bottom_bar: u32,
}

impl FrameOutcome {
    pub fn usable(&self) -> bool {
        self.problem.is_none() && self.lines.is_some()
    }
}

/// How many distinct views the usable frames of a search show (`views::view_groups`): what a
/// geometry needs several of, where frames of one stop count once.
pub fn usable_views(outcomes: &[FrameOutcome]) -> usize {
    let views: Vec<Option<&View>> = outcomes
        .iter()
        .filter(|o| o.usable())
        .filter_map(|o| o.lines.as_ref())
        .map(|l| l.view.as_ref())
        .collect();
    super::views::view_groups(&views).len()
}

/// One attempt of `lines_and_checks`: the lines of `candidates` fitted (`Options::fit_from`)
/// over the road down to `road_bottom` (a hood's top; `None`: the frame's bottom) and checked
/// in the bird's-eye view of the quad `opts` gives.
fn outcome_at(
    candidates: &std::result::Result<CandidateLines, Rejection>,
    (w, h): (i32, i32),
    l_contrast: u8,
    k: Option<&[[f64; 3]; 3]>,
    opts: &Options,
    road_bottom: Option<f64>,
) -> Result<FrameOutcome> {
    let mut o = FrameOutcome {
        lines: None,
        check: None,
        problem: None,
        rejection: None,
        l_contrast,
        side_bars: (0, 0),
        bottom_bar: 0,
    };
    let found = match candidates {
        Ok(c) => lines_from(c, opts.fit_from, road_bottom.unwrap_or(h as f64))?,
        Err(rej) => Err(rej.clone()),
    };
    match found {
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
            if let Some(p) = side_problem(lines.vp, k, (w, h), opts) {
                o.problem = Some(p);
            }
            o.lines = Some(lines);
        }
    }
    Ok(o)
}

/// Why lines meeting at `vp` are not the road ahead, if they meet more than
/// `opts.max_yaw_deg` to the side of the camera's axis ([`super::ground::side_angle_deg`]: with
/// the camera matrix `k`, else the given field of view, else the narrowest one assumed).
fn side_problem(
    vp: (f64, f64),
    k: Option<&[[f64; 3]; 3]>,
    size: (i32, i32),
    opts: &Options,
) -> Option<String> {
    let side = super::ground::side_angle_deg(vp, k, opts.hfov_deg, size)?;
    (side.abs() > opts.max_yaw_deg).then(|| {
        format!(
            "lines meet off to the side: {:.1} deg from the camera's axis{} (a dashcam faces along the road: at most {} deg)",
            side.abs(),
            if k.is_none() && opts.hfov_deg.is_none() {
                format!(
                    " with a field of view as narrow as {} deg",
                    super::ground::NARROWEST_ASSUMED_HFOV_DEG
                )
            } else {
                String::new()
            },
            opts.max_yaw_deg
        )
    })
}

/// Find a frame's lines and check them: at each of [`L_CONTRASTS`] in turn until the frame is
/// usable or its lines meet far to the side; an unusable frame reports the first attempt's
/// problem, or that one. `at_s` is the frame's time
/// in its video (`None` for a still) and `k` the camera matrix when a camera file was given
/// (the frame undistorted with it): the lines found carry the frame's [`View`], and lines
/// meeting more than `opts.max_yaw_deg` to the side are not the road ahead.
pub fn analyze_frame(
    frame: &BgrFrame,
    at_s: Option<f64>,
    k: Option<&[[f64; 3]; 3]>,
    opts: &Options,
) -> Result<FrameOutcome> {
    let mut o = lines_and_checks(frame, k, opts)?;
    o.side_bars = super::bars::side_bars(frame);
    o.bottom_bar = super::bars::bottom_bar(frame);
    if let Some(lines) = o.lines.as_mut() {
        let road_bottom = lines.lowest_marking().unwrap_or(frame.height() as f64);
        lines.view = Some(View {
            luma: crate::lane::shot::luma_sample(&crate::base::planes::RawFrame::Bgr(frame))?,
            at_s,
            road_bottom,
        });
    }
    Ok(o)
}

/// `analyze_frame` without the frame's view.
fn lines_and_checks(
    frame: &BgrFrame,
    k: Option<&[[f64; 3]; 3]>,
    opts: &Options,
) -> Result<FrameOutcome> {
    // A noisy frame's markings are looked for in it smoothed, as the pipeline does
    // (`lane::denoise`, at the default contrast's level).
    use crate::lane::denoise;
    let gate = denoise::gate(crate::base::config::ThresholdConfig::default().l_contrast_min);
    let smoothed = denoise::when_noisy(crate::base::planes::RawFrame::Bgr(frame), gate)?;
    let frame = match &smoothed {
        Some((denoise::Smoothed::Bgr(b), _)) => b,
        _ => frame,
    };
    // L and B once for every attempt's masks.
    let (l, b) = crate::lane::threshold::channels(frame, super::candidates::RIDGE_CUE)?;
    let size = (frame.width(), frame.height());
    // The masks and segments at each contrast once, for both fitting ranges.
    let at = |c: u8| candidate_lines(&l, &b, c);
    let mut candidates = vec![at(L_CONTRASTS[0])?];
    // Lines meeting far to the side end the search: the camera looks across the road (a lane
    // change, a turn) or they are not the road's, and other lines found in the frame at a
    // lower contrast are no more the ego lane's (CULane's A00720: 15 degrees to the side, then
    // at contrast 10 the next lanes' lines, two lanes apart).
    let sideways = |o: &FrameOutcome| {
        o.lines
            .as_ref()
            .is_some_and(|l| side_problem(l.vp, k, size, opts).is_some())
    };
    let first = outcome_at(&candidates[0], size, L_CONTRASTS[0], k, opts, None)?;
    if first.usable() || sideways(&first) {
        return Ok(first);
    }
    for &c in &L_CONTRASTS[1..] {
        candidates.push(at(c)?);
    }
    // A dashed line can leave the near range empty (a 12 m gap between 6 m dashes): then the
    // lines are fitted over nearly the whole road, where the straightness check over the view's
    // full height keeps bends out.
    let whole = Options {
        fit_from: FIT_FROM_WHOLE.min(opts.fit_from),
        ..*opts
    };
    // Per contrast, the lowest marking pixel of the lines fitted over the whole range (where a
    // hood's top is, below).
    let mut lows = Vec::with_capacity(L_CONTRASTS.len());
    for (&c, cand) in L_CONTRASTS.iter().zip(&candidates) {
        let mut low = None;
        for o in [opts, &whole] {
            if c == L_CONTRASTS[0] && o.fit_from == opts.fit_from {
                low = first.lines.as_ref().and_then(LaneLines::lowest_marking);
                continue;
            }
            let out = outcome_at(cand, size, c, k, o, None)?;
            if out.usable() || sideways(&out) {
                return Ok(out);
            }
            low = out.lines.as_ref().and_then(LaneLines::lowest_marking);
        }
        lows.push(low);
    }
    // A hood (a dashboard) hides the road's near range: the lines' pixels end well above the
    // frame's bottom (`bars::HOOD_BELOW`), the default fitting range lies mostly on the hood,
    // and over the whole range a bend far ahead fails the straightness check. The lines are
    // then fitted and checked over the road that is visible, as the geometry's quad will end
    // above the hood (`selfcal::geometry_from`): the frame's quad ends a percent of the height
    // above the lowest marking pixel (`bars::quad_bottom`).
    let hf = size.1 as f64;
    for ((&c, cand), low) in L_CONTRASTS.iter().zip(&candidates).zip(lows) {
        let Some(low) = low.filter(|&y| y < super::bars::HOOD_BELOW * hf) else {
            continue;
        };
        let visible = Options {
            bottom: super::bars::quad_bottom(opts.bottom, low, size.1),
            ..*opts
        };
        let visible_whole = Options {
            fit_from: whole.fit_from,
            ..visible
        };
        for o in [&visible, &visible_whole] {
            let out = outcome_at(cand, size, c, k, o, Some(low))?;
            if out.usable() || sideways(&out) {
                return Ok(out);
            }
        }
    }
    Ok(first)
}

/// `Options::fit_from` of the fallback that fits nearly the whole road.
const FIT_FROM_WHOLE: f64 = 0.1;

pub(super) fn median(v: &mut [f64]) -> f64 {
    crate::base::stats::median(v).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_meeting_far_to_the_side_are_not_the_road_ahead() {
        let opts = Options::default();
        // CULane A00720 (1640x590, no camera file): 15 degrees to the side at the narrowest
        // assumed lens; its first clause is what a refusal lists.
        let p = side_problem((1352.0, 390.9), None, (1640, 590), &opts).unwrap();
        assert!(p.starts_with("lines meet off to the side: 15.0 deg"), "{p}");
        assert!(
            p.contains("as narrow as 45 deg") && p.contains("at most 10 deg"),
            "{p}"
        );
        // A frame of the same sequence facing along the road (x 772): used.
        assert_eq!(side_problem((772.1, 373.3), None, (1640, 590), &opts), None);
        // With a camera matrix the angle is its own, and the lens is not mentioned.
        let k = [[1000.0, 0.0, 640.0], [0.0, 1000.0, 360.0], [0.0, 0.0, 1.0]];
        let p = side_problem((900.0, 300.0), Some(&k), (1280, 720), &opts).unwrap();
        assert!(p.contains("14.6 deg") && !p.contains("narrow"), "{p}");
        assert_eq!(
            side_problem((800.0, 300.0), Some(&k), (1280, 720), &opts),
            None
        );
    }
}
