//! Confidence: how much the evidence of one frame supports each fitted line and the lane they
//! make, and which lines a frame reports (`Detection`, with its `LaneStatus`).
//!
//! A line's confidence (0..1) is the product of three scores from its pixels in the analysed
//! bird's-eye view: **support**, the share of rows with a marking pixel within
//! `row_tolerance_px` of the fit (full marks at `full_support`: a dashed line supports about a
//! quarter of the rows); **coverage**, support in both the near and the far half of the view
//! (a dash and a gap are shorter than either half, so a real line has pixels in both, while a
//! blob or a short edge does not, and a fit over a short stretch has no reliable curvature;
//! full marks at a twentieth of each half's rows); **concentration**, the share of the search's pixels that lie within the
//! tolerance (a marking is a stripe; texture or noise spreads evenly over the search band; 0
//! at 0.3, full marks at 0.7). A line tighter than `min_radius_m`, on the wrong side of the
//! camera or nearer to it than `min_line_distance_m` (under the car) scores 0; in a video, a line
//! found where a tracked one is (a lane change: the crossed line may be found on either side of
//! the camera) may come as near as `crossing_line_distance_m`. The lane then needs a plausible
//! width (`lane_width_m`) and two roughly parallel lines (`max_width_change_m` between bottom
//! and top); when the pair fails, only the stronger line is kept. Two rules let lines seen in the near half only count, where a
//! confirmation stands in for the far half: the partner of a line that can stand alone is
//! refitted as its parallel (the curvature given) and needs near-half support only, or failing
//! that as its shifted copy (curvature and heading given) with support in either half (one
//! dash fixes a position; a dashed line's gap can cover the near half); and when
//! neither line stands, two lines strong in the near half, sharing one curvature a lane width
//! apart, make a lane (a bend leaving the view sideways, a far half in shade or foliage);
//! such lines may bend down to the radius that still stays in the view over the near half.
//! In a video, a frame that still lacks a line is checked against the lane the tracker holds
//! (`confirm_with_expected`): each missing line refitted with the tracked curvature and
//! heading needs only one dash, in either half, at a lone line's confidence (two dashed
//! lines whose gaps cover the near half together, where neither line lends the other a shape).
//! A line the tracker would gate out of a pair it otherwise confirms is refitted the same way
//! with the tracked line's own shape (`lane::judge`).

use crate::base::config::{ConfidenceConfig, UnitsConfig};
use crate::lane::fit::{LaneFit, LinePixels, Poly2, Scale};
use crate::lane::measure;
use serde::Serialize;

/// What a frame (or the tracker) reports about the ego lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaneStatus {
    /// Both lines seen and the pair is plausible.
    Both,
    /// Only the left line seen; the right one is placed one lane width from it.
    LeftOnly,
    /// Only the right line seen; the left one is placed one lane width from it.
    RightOnly,
    /// No line seen.
    None,
    /// No line seen on this frame; the tracker's prediction is drawn (short gaps only).
    Predicted,
}

impl LaneStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            LaneStatus::Both => "both",
            LaneStatus::LeftOnly => "left_only",
            LaneStatus::RightOnly => "right_only",
            LaneStatus::None => "none",
            LaneStatus::Predicted => "predicted",
        }
    }
    /// The status of a frame with these lines seen.
    pub fn of(left: bool, right: bool) -> Self {
        match (left, right) {
            (true, true) => LaneStatus::Both,
            (true, false) => LaneStatus::LeftOnly,
            (false, true) => LaneStatus::RightOnly,
            (false, false) => LaneStatus::None,
        }
    }
}

/// The evidence for one fitted line.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LineEvidence {
    /// Share of the view's rows with a pixel near the fit.
    pub support: f64,
    /// Share of the view's height between the first and last supported rows.
    pub spread: f64,
    /// Share of supported rows in the near (bottom) and far (top) half of the view.
    pub near: f64,
    pub far: f64,
    /// Share of the line's search pixels near the fit.
    pub concentration: f64,
    /// The line's confidence, 0..1.
    pub confidence: f64,
    /// Covariance of the fit's coefficients referred to the bottom row (curvature, heading,
    /// position; see `fit_covariance`), in the analysed view's pixels until `assess` maps it
    /// to nominal pixels. The tracker weighs the line by it.
    #[serde(skip)]
    pub cov: [[f64; 3]; 3],
}

/// Rows next to each other do not err independently (the marking and its blur span several):
/// the least-squares covariance over rows is inflated by this many rows.
const ROW_CORRELATION: f64 = 5.0;

/// The least-squares covariance of `x = a t^2 + b t + c` (t = row - bottom row) over the
/// supported rows, from each row's mean residual: `sigma^2 (sum phi phi^T)^-1`, with sigma
/// at least 1 px and inflated by `ROW_CORRELATION`. Few rows, or rows close together, give a
/// large covariance: a dash or two fix a line's position but hardly its heading or curvature.
fn fit_covariance(row_res: &[(f64, u32)]) -> [[f64; 3]; 3] {
    let bottom = row_res.len().saturating_sub(1) as f64;
    let mut n = nalgebra::Matrix3::<f64>::zeros();
    let (mut ss, mut k) = (0.0, 0.0);
    for (r, (sum, cnt)) in row_res.iter().enumerate() {
        if *cnt == 0 {
            continue;
        }
        let t = r as f64 - bottom;
        let phi = nalgebra::Vector3::new(t * t, t, 1.0);
        n += phi * phi.transpose();
        let e = sum / *cnt as f64;
        ss += e * e;
        k += 1.0;
    }
    let sigma2 = if k > 0.0 { (ss / k).max(1.0) } else { 1.0 } * ROW_CORRELATION;
    let huge = [[1.0, 0.0, 0.0], [0.0, 1e6, 0.0], [0.0, 0.0, 1e8]];
    match n.try_inverse() {
        Some(inv) if k >= 3.0 => {
            let c = inv * sigma2;
            [
                [c[(0, 0)], c[(0, 1)], c[(0, 2)]],
                [c[(1, 0)], c[(1, 1)], c[(1, 2)]],
                [c[(2, 0)], c[(2, 1)], c[(2, 2)]],
            ]
        }
        _ => huge,
    }
}

/// `cov` of coefficients in a view scaled by `s`, in nominal pixels
/// (`a = a_s s.y^2 / s.x`, `b = b_s s.y / s.x`, `c = c_s / s.x`).
fn cov_to_nominal(cov: &[[f64; 3]; 3], s: Scale) -> [[f64; 3]; 3] {
    let d = [s.y * s.y / s.x, s.y / s.x, 1.0 / s.x];
    let mut out = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = cov[i][j] * d[i] * d[j];
        }
    }
    out
}

/// The lines one frame reports, with their confidences.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Detection {
    /// The reported lines (nominal bird's-eye px): a line below `min_line`, or the weaker of
    /// an implausible pair, is `None`.
    pub left: Option<Poly2>,
    pub right: Option<Poly2>,
    pub left_confidence: f64,
    pub right_confidence: f64,
    /// The lane's confidence: the mean of the reported lines' confidences (a missing line
    /// counts 0).
    pub confidence: f64,
    pub status: LaneStatus,
    pub left_evidence: LineEvidence,
    pub right_evidence: LineEvidence,
}

impl Detection {
    /// The lane to draw for a still: both lines, or the seen one and the other placed
    /// `width_px` (nominal) away, parallel.
    pub fn lane(&self, width_px: f64) -> Option<(Poly2, Poly2)> {
        match (self.left, self.right) {
            (Some(l), Some(r)) => Some((l, r)),
            (Some(l), None) => Some((l, shifted(&l, width_px))),
            (None, Some(r)) => Some((shifted(&r, -width_px), r)),
            (None, None) => None,
        }
    }

    /// This detection with its left (`left`) or right line dropped: its status the other
    /// line's alone, its confidence that line's over two.
    pub fn without(&self, left: bool) -> Self {
        let mut d = *self;
        if left {
            d.left = None;
        } else {
            d.right = None;
        }
        d.status = LaneStatus::of(d.left.is_some(), d.right.is_some());
        d.confidence = if left {
            d.right_confidence
        } else {
            d.left_confidence
        } / 2.0;
        d
    }
}

/// `p` moved `dx` px across the view.
pub fn shifted(p: &Poly2, dx: f64) -> Poly2 {
    Poly2::new(p.a, p.b, p.c + dx)
}

/// The evidence for `fit` (analysed view) from the pixels the search gave it, in a view of
/// `rows` rows whose road is visible from row `from` down (support, halves and spread are
/// shares of those rows). `tol` is the row tolerance in analysed-view px.
pub fn line_evidence(
    fit: &Poly2,
    px: &LinePixels,
    rows: usize,
    from: usize,
    tol: f64,
    full: f64,
) -> LineEvidence {
    if rows == 0 || px.is_empty() {
        return LineEvidence::default();
    }
    let mut near_row = vec![false; rows];
    let mut near = 0usize;
    // Sum and count of the residuals of the near pixels, per row.
    let mut row_res = vec![(0.0f64, 0u32); rows];
    for (x, y) in px.xs.iter().zip(&px.ys) {
        let e = *x as f64 - fit.eval(*y as f64);
        if e.abs() <= tol {
            near += 1;
            if let Some(r) = near_row.get_mut(*y as usize) {
                *r = true;
                let rr = &mut row_res[*y as usize];
                rr.0 += e;
                rr.1 += 1;
            }
        }
    }
    let cov = fit_covariance(&row_res);
    let near_row = &near_row[from.min(rows - 1)..];
    let rows = near_row.len();
    let count = |r: &[bool]| r.iter().filter(|v| **v).count() as f64 / r.len().max(1) as f64;
    let support = count(near_row);
    let (far, near_half) = near_row.split_at(rows / 2);
    let (far, near_half) = (count(far), count(near_half));
    let first = near_row.iter().position(|v| *v);
    let last = near_row.iter().rposition(|v| *v);
    let spread = match (first, last) {
        (Some(a), Some(b)) => (b - a + 1) as f64 / rows as f64,
        _ => 0.0,
    };
    let concentration = near as f64 / px.len() as f64;
    let mut ev = LineEvidence {
        support,
        spread,
        near: near_half,
        far,
        concentration,
        confidence: 0.0,
        cov,
    };
    ev.confidence = ev.score(full, Coverage::BothHalves);
    ev
}

/// Which halves of the view a line must be seen in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// The near and the far half: a dash (3 m) and a gap (9 m) are shorter than either half
    /// (11 m at the default scale), so a real line has pixels in both; a blob or a short edge
    /// has them in one, and a fit over one half has no reliable curvature.
    BothHalves,
    /// The near half: for a line fitted as the parallel of a confident partner, whose
    /// curvature it takes, so its own pixels need to fix only its position and heading (a
    /// line running into deep shade or round a bend past the view's side).
    NearHalf,
    /// Either half: for a line fitted as the shifted copy of a partner that stands alone (its
    /// curvature and heading given), so its own pixels need to fix only its position, which one
    /// dash anywhere in the view does (a dashed line whose gap covers the near half).
    EitherHalf,
}

impl LineEvidence {
    /// Confidence from the evidence: support (full marks at `full`) x coverage of the halves
    /// `cov` names (full marks at a twentieth of a half's rows) x, for a line judged over both
    /// halves, its extent (the spread between its first and last supported rows: 0 at 0.35
    /// of the view, full marks at half of it) x concentration (0 at 0.3, full marks at 0.7).
    /// Two dashes of a dashed line (3 m dash, 9 m gap) span 12 of the default view's 22 m and a
    /// solid line all of it; a streak of glare or a patch lying across the middle row has
    /// pixels in both halves over a shorter stretch.
    pub fn score(&self, full: f64, cov: Coverage) -> f64 {
        let score = |v: f64, zero: f64, one: f64| ((v - zero) / (one - zero)).clamp(0.0, 1.0);
        let (seen, extent) = match cov {
            Coverage::BothHalves => (self.far.min(self.near), score(self.spread, 0.35, 0.5)),
            Coverage::NearHalf => (self.near, 1.0),
            Coverage::EitherHalf => (self.near.max(self.far), 1.0),
        };
        score(self.support, 0.0, full)
            * score(seen, 0.0, 0.05)
            * extent
            * score(self.concentration, 0.3, 0.7)
    }
}

/// Everything `assess` needs about the view.
#[derive(Debug, Clone, Copy)]
pub struct ViewGeometry {
    /// Nominal bird's-eye size.
    pub width: i32,
    pub height: i32,
    /// Scale of the analysed view.
    pub scale: Scale,
    /// The first analysed row where the road is visible: 0, or the row below a vehicle ahead
    /// in the lane (`lane::occlusion`). Evidence is counted over the rows from here down.
    pub visible_from: usize,
}

/// The lane a video's tracker holds (nominal px), and how near one of its lines (px, at the
/// car) a frame's line counts as found where a tracked one is (the prior search's margin):
/// such a line may come nearer the camera (`crossing_line_distance_m`), on either side of it.
#[derive(Debug, Clone, Copy)]
pub struct Tracked {
    pub lane: (Poly2, Poly2),
    pub margin_px: f64,
}

/// How one line is judged in a view: its evidence from its pixels, its confidence under the
/// coverage asked for, and the checks that zero it (the wrong side of the camera, under the car,
/// tighter than the radius the coverage allows).
struct LineJudge<'a> {
    view: ViewGeometry,
    cfg: &'a ConfidenceConfig,
    units: &'a UnitsConfig,
    tracked: Option<Tracked>,
    /// Rows of the analysed view and the row tolerance there.
    rows: usize,
    tol: f64,
    /// The tightest radius a line seen in the near half only may have.
    near_min_radius: f64,
}

impl<'a> LineJudge<'a> {
    fn new(
        view: ViewGeometry,
        cfg: &'a ConfidenceConfig,
        units: &'a UnitsConfig,
        tracked: Option<Tracked>,
    ) -> Self {
        let rows = (view.height as f64 * view.scale.y).round().max(1.0) as usize;
        let tol = cfg.row_tolerance_px * view.scale.x;
        let centre = view.width as f64 / 2.0;
        // A line seen in the near half only needs to stay in the view over that half: from a
        // lane's edge (half the default lane width from the camera) to the view's side, over
        // the half's length. Tighter bends than `min_radius_m` fit there (13.6 m at the
        // defaults).
        let near_len_m = view.height as f64 / 2.0 * units.ym_per_px;
        let room_m = (centre * units.xm_per_px - cfg.default_lane_width_m / 2.0).max(0.1);
        let near_min_radius = (near_len_m * near_len_m / (2.0 * room_m)).min(cfg.min_radius_m);
        Self {
            view,
            cfg,
            units,
            tracked,
            rows,
            tol,
            near_min_radius,
        }
    }

    /// The evidence for fit `f` (nominal px) from `px` (analysed view) and the fit itself.
    fn line(
        &self,
        f: Option<Poly2>,
        px: &LinePixels,
        left: bool,
        coverage: Coverage,
    ) -> (LineEvidence, Option<Poly2>) {
        let Some(f) = f else {
            return (LineEvidence::default(), None);
        };
        let (view, cfg, units) = (self.view, self.cfg, self.units);
        let mut ev = line_evidence(
            &f.to_scaled(view.scale),
            px,
            self.rows,
            view.visible_from,
            self.tol,
            cfg.full_support,
        );
        ev.confidence = ev.score(cfg.full_support, coverage);
        ev.cov = cov_to_nominal(&ev.cov, view.scale);
        let y_bottom = (view.height - 1) as f64;
        let centre = view.width as f64 / 2.0;
        let x = f.eval(y_bottom);
        // The ego lane's lines lie on either side of the camera, at most a lane width away; a
        // line found where a tracked one is may come nearer (a lane change). Either tracked
        // line: the line a lane change crosses is the old lane's right line and, once the
        // camera is over it, the new lane's left one (or the other way round). Which side of
        // the car it lies on is what changes; where it lies, the track still says.
        let max_w_px = cfg.lane_width_m[1] / units.xm_per_px;
        let followed = self.tracked.is_some_and(|t| {
            [t.lane.0, t.lane.1]
                .iter()
                .any(|e| (e.eval(y_bottom) - x).abs() <= t.margin_px)
        });
        let near_m = if followed {
            cfg.crossing_distance_m()
        } else {
            cfg.min_line_distance_m
        };
        let near_px = near_m / units.xm_per_px;
        let side_ok = if left {
            x < centre - near_px && x > centre - max_w_px
        } else {
            x > centre + near_px && x < centre + max_w_px
        };
        let min_radius = match coverage {
            Coverage::BothHalves | Coverage::EitherHalf => cfg.min_radius_m,
            Coverage::NearHalf => self.near_min_radius,
        };
        let radius_ok = measure::radius_m(&f, y_bottom, units) >= min_radius;
        if !(side_ok && radius_ok && x.is_finite()) {
            ev.confidence = 0.0;
        }
        (ev, Some(f))
    }
}

/// Judge one frame's fits: per-line evidence, then the plausibility of each line and of the
/// pair; returns what the frame reports. `fit` is in nominal px, the pixels in the analysed
/// view.
pub fn assess(
    fit: &LaneFit,
    left_px: &LinePixels,
    right_px: &LinePixels,
    view: ViewGeometry,
    cfg: &ConfidenceConfig,
    units: &UnitsConfig,
    tracked: Option<Tracked>,
) -> Detection {
    let judge = LineJudge::new(view, cfg, units, tracked);
    let rows = judge.rows;
    let line = |f: Option<Poly2>, px: &LinePixels, left: bool, coverage: Coverage| {
        judge.line(f, px, left, coverage)
    };
    let (mut lev, lf) = line(fit.left, left_px, true, Coverage::BothHalves);
    let (mut rev, rf) = line(fit.right, right_px, false, Coverage::BothHalves);
    let min = cfg.min_line;
    // With `min_line` 0 every fit is reported (the reference's behaviour).
    let pass = |ev: &LineEvidence| min <= 0.0 || ev.confidence >= min;
    let mut left = lf.filter(|_| pass(&lev));
    let mut right = rf.filter(|_| pass(&rev));
    if min > 0.0 {
        // The width change is checked up to the top of the view only when both lines are seen
        // in its far half: a quadratic extrapolated past its last pixels says nothing there.
        let plausible = |l: &Option<Poly2>,
                         r: &Option<Poly2>,
                         le: &LineEvidence,
                         re: &LineEvidence| match (l, r) {
            (Some(l), Some(r)) => {
                // Above a vehicle ahead (`visible_from`) the top of the view is not seen.
                let far_seen = view.visible_from == 0 && le.far.min(re.far) >= MIN_HALF_COVERAGE;
                pair_plausible(l, r, view.height, far_seen, cfg, units)
            }
            _ => false,
        };
        // A lone line needs stronger evidence, seen in both the near and the far half.
        let lone_ok = |ev: &LineEvidence| {
            ev.confidence >= cfg.min_single && ev.near.min(ev.far) >= MIN_HALF_COVERAGE
        };
        // A weak or implausible partner of a confident line: fit it again as a parallel of
        // the confident one (its curvature given). Sparse dashes leave a free quadratic's
        // curvature to a handful of pixels; the lane's two lines share it.
        if !plausible(&left, &right, &lev, &rev) {
            let s = view.scale;
            let strong_left = lev.confidence >= rev.confidence;
            let (strong, weak_px, weak_is_left) = if strong_left {
                (left, right_px, false)
            } else {
                (right, left_px, true)
            };
            // A partner that could stand alone gives the curvature: the near half must fix
            // the rest.
            let coverage = if lone_ok(if strong_left { &lev } else { &rev }) {
                Coverage::NearHalf
            } else {
                Coverage::BothHalves
            };
            if let Some(st) = strong.map(|p| p.to_scaled(s)) {
                use crate::lane::fit::{robust_fit_with_curvature, robust_fit_with_shape};
                let parallel = robust_fit_with_curvature(weak_px, st.a, 6.0 * s.x, 3);
                // A partner that stands alone also gives the heading: one dash of the weak line,
                // in either half, then fixes its position.
                let shifted = (coverage == Coverage::NearHalf).then(|| {
                    let f = robust_fit_with_shape(weak_px, (st.a, st.b), 6.0 * s.x, 3);
                    (f, Coverage::EitherHalf)
                });
                for (refit, coverage) in std::iter::once((parallel, coverage)).chain(shifted) {
                    let (ev, f) = line(
                        refit.map(|p| p.from_scaled(s)),
                        weak_px,
                        weak_is_left,
                        coverage,
                    );
                    let f = f.filter(|_| pass(&ev));
                    let (l2, r2, le2, re2) = if weak_is_left {
                        (f, right, &ev, &rev)
                    } else {
                        (left, f, &lev, &ev)
                    };
                    if plausible(&l2, &r2, le2, re2) {
                        (left, right) = (l2, r2);
                        *(if weak_is_left { &mut lev } else { &mut rev }) = ev;
                        break;
                    }
                }
            }
        }
        // Two lines that do not make a lane: keep the one that could stand alone (of two
        // that could, the more confident one).
        if let (Some(_), Some(_)) = (left, right) {
            if !plausible(&left, &right, &lev, &rev) {
                let keep_left = match (lone_ok(&lev), lone_ok(&rev)) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => lev.confidence >= rev.confidence,
                };
                if keep_left {
                    right = None;
                } else {
                    left = None;
                }
            }
        }
        match (left, right) {
            (Some(_), None) if !lone_ok(&lev) => left = None,
            (None, Some(_)) if !lone_ok(&rev) => right = None,
            _ => {}
        }
        // Neither line stands, but both may be seen well in the near half: a bend that leaves
        // the view sideways, or a far half in deep shade or foliage. Two lines strong there,
        // sharing one curvature and a lane width apart, confirm each other as the far half
        // confirms one line.
        if left.is_none() && right.is_none() {
            let near = |px: &LinePixels| near_half(px, rows, view.visible_from);
            let (lnear, rnear) = (near(left_px), near(right_px));
            let s = view.scale;
            let floor = 6.0 * s.x;
            if let (Some(lf), Some(rf)) = (
                crate::lane::fit::robust_fit(&lnear, floor, 3),
                crate::lane::fit::robust_fit(&rnear, floor, 3),
            ) {
                let a = (lf.a + rf.a) / 2.0;
                let refit = |px: &LinePixels| {
                    crate::lane::fit::robust_fit_with_curvature(px, a, floor, 3)
                        .map(|p| p.from_scaled(s))
                };
                let (le, l) = line(refit(&lnear), &lnear, true, Coverage::NearHalf);
                let (re, r) = line(refit(&rnear), &rnear, false, Coverage::NearHalf);
                let strong = |ev: &LineEvidence| ev.confidence >= cfg.min_single;
                if let (Some(l), Some(r), true) = (l, r, strong(&le) && strong(&re)) {
                    if pair_plausible(&l, &r, view.height, false, cfg, units) {
                        (left, right, lev, rev) = (Some(l), Some(r), le, re);
                    }
                }
            }
        }
    }
    let lc = if left.is_some() { lev.confidence } else { 0.0 };
    let rc = if right.is_some() { rev.confidence } else { 0.0 };
    Detection {
        left,
        right,
        left_confidence: lev.confidence,
        right_confidence: rev.confidence,
        confidence: (lc + rc) / 2.0,
        status: LaneStatus::of(left.is_some(), right.is_some()),
        left_evidence: lev,
        right_evidence: rev,
    }
}

/// A frame that does not report both lines, while the tracker holds a lane (`expected`, nominal
/// px): each missing line is fitted again with the expected line's curvature and heading, so
/// that its own pixels need only fix its position, which one dash in either half of the view
/// does; such a line needs a lone line's confidence (`min_single`), and the pair a plausible
/// lane. Where both lines are dashed, the gaps of both often cover the near half together
/// (the dashes of neighbouring lines are laid in step), and neither line then stands alone to
/// lend the other its shape: the lane of the last frames does. `None` when the frame's report
/// stands as it is. `left_px`/`right_px`: pixels near the expected lines (analysed view).
/// `partner_shape`: the shape comes from the line the frame reports (with the expected lines'
/// difference in shape added), else from the expected line itself.
#[allow(clippy::too_many_arguments)]
pub fn confirm_with_expected(
    det: &Detection,
    left_px: &LinePixels,
    right_px: &LinePixels,
    expected: Tracked,
    view: ViewGeometry,
    cfg: &ConfidenceConfig,
    units: &UnitsConfig,
    partner_shape: bool,
) -> Option<Detection> {
    if det.status == LaneStatus::Both || cfg.min_line <= 0.0 {
        return None;
    }
    let judge = LineJudge::new(view, cfg, units, Some(expected));
    let expected = expected.lane;
    let s = view.scale;
    let refit = |px: &LinePixels, e: &Poly2, left: bool| {
        let e = e.to_scaled(s);
        let f = crate::lane::fit::robust_fit_with_shape(px, (e.a, e.b), 6.0 * s.x, 3);
        let (ev, f) = judge.line(f.map(|p| p.from_scaled(s)), px, left, Coverage::EitherHalf);
        (ev, f.filter(|_| ev.confidence >= cfg.min_single))
    };
    // The shape comes from this frame's other line when it reports one (the tracked heading
    // lags while the car moves sideways), plus the tracked lines' difference in shape (in the
    // search's fixed view the two lines' headings differ while the online pitch differs from
    // the calibration's); else from the tracked line.
    let shape = |partner: &Option<Poly2>, own: Poly2, other: Poly2| match partner {
        Some(p) if partner_shape => {
            Poly2::new(p.a + (own.a - other.a), p.b + (own.b - other.b), p.c)
        }
        _ => own,
    };
    let (lev, l) = match det.left {
        Some(l) => (det.left_evidence, Some(l)),
        None => refit(left_px, &shape(&det.right, expected.0, expected.1), true),
    };
    let (rev, r) = match det.right {
        Some(r) => (det.right_evidence, Some(r)),
        None => refit(right_px, &shape(&det.left, expected.1, expected.0), false),
    };
    let (l, r) = (l?, r?);
    if !pair_plausible(&l, &r, view.height, false, cfg, units) {
        return None;
    }
    Some(Detection {
        left: Some(l),
        right: Some(r),
        left_confidence: lev.confidence,
        right_confidence: rev.confidence,
        confidence: (lev.confidence + rev.confidence) / 2.0,
        status: LaneStatus::Both,
        left_evidence: lev,
        right_evidence: rev,
    })
}

/// The pixels in the near (bottom) half of the visible rows (`visible_from` down) of a view of
/// `rows` rows.
fn near_half(px: &LinePixels, rows: usize, visible_from: usize) -> LinePixels {
    let v = visible_from.min(rows.saturating_sub(1));
    let from = (v + (rows - v) / 2) as u32;
    let mut out = LinePixels::default();
    for (x, y) in px.xs.iter().zip(&px.ys) {
        if *y >= from {
            out.xs.push(*x);
            out.ys.push(*y);
        }
    }
    out
}

/// Share of a half of the view's rows a line must cover to count as seen there.
const MIN_HALF_COVERAGE: f64 = 0.1;

/// Two lines make a lane: a plausible width at the bottom, roughly parallel up the view, and
/// not crossing. `far_seen`: both lines are seen in the far half, so the width at the top of
/// the view is measured, not extrapolated, and is checked too.
pub fn pair_plausible(
    l: &Poly2,
    r: &Poly2,
    height: i32,
    far_seen: bool,
    cfg: &ConfidenceConfig,
    units: &UnitsConfig,
) -> bool {
    let h = (height - 1) as f64;
    let wb = (r.eval(h) - l.eval(h)) * units.xm_per_px;
    let wt = (r.eval(0.0) - l.eval(0.0)) * units.xm_per_px;
    let wm = (r.eval(h / 2.0) - l.eval(h / 2.0)) * units.xm_per_px;
    wb >= cfg.lane_width_m[0]
        && wb <= cfg.lane_width_m[1]
        && wt > 0.0
        && wm > 0.0
        && (!far_seen || (wt - wb).abs() <= cfg.max_width_change_m)
        && (wm - wb).abs() <= cfg.max_width_change_m
}
