//! From a search's pixels to what a frame reports: the fits, the confidence rules
//! (`confidence`), a second search guided by a lone confident line, the tracked lane's
//! confirmation of lines seen as one dash, and the measurements of the reported lane.

use crate::base::config::Config;
use crate::base::error::Result;
use crate::base::frame::BinaryMask;
use crate::lane::confidence::{self, Detection, ViewGeometry};
use crate::lane::fit::{self, LaneFit, Poly2, Scale, SearchResult};
use crate::lane::measure::{self, LaneMeasure};
use crate::lane::warp::Perspective;

/// Search parameters for a bird's-eye view scaled by `s`: margins scale by `s.x`, pixel counts
/// by `s.x * s.y`; the number of windows and the minimum number of rows stay.
pub fn scaled_search(
    cfg: &crate::base::config::SearchConfig,
    s: Scale,
) -> crate::base::config::SearchConfig {
    crate::base::config::SearchConfig {
        windows: cfg.windows,
        margin: ((cfg.margin as f64 * s.x).round() as u32).max(1),
        min_pixels: (cfg.min_pixels as f64 * s.x * s.y).round() as u32,
        prior_margin: ((cfg.prior_margin as f64 * s.x).round() as u32).max(1),
        ..*cfg
    }
}

/// What `judge` makes of a search.
pub struct Judged {
    /// The search's pixels (with a partner search's pixels for a line found one lane width
    /// from its confident partner).
    pub search: SearchResult,
    pub fit: LaneFit,
    pub detection: Detection,
    pub measure: Option<LaneMeasure>,
    /// The nominal bird's-eye row the reported lane is seen from: below a vehicle ahead
    /// (`occlusion::visible_road`) the rows under it, else 0 (the whole view). A still's
    /// overlay draws the lane from there down.
    pub seen_from: f64,
}

fn fit_and_assess(
    search: &SearchResult,
    cfg: &Config,
    persp: &Perspective,
    visible_from: usize,
    tracked: Option<confidence::Tracked>,
) -> (LaneFit, Detection) {
    let s = cfg.perspective.scale();
    let search_cfg = scaled_search(&cfg.search, s);
    let mut fit = fit::fit_lines_with(search, &search_cfg, 6.0 * s.x);
    if visible_from > 0 {
        // The near range below a vehicle ahead fixes a line's position and heading, not its
        // curvature: fitted straight.
        let straight = |px: &fit::LinePixels| fit::robust_fit_with_curvature(px, 0.0, 6.0 * s.x, 3);
        fit.left = fit.left.and_then(|_| straight(&search.left));
        fit.right = fit.right.and_then(|_| straight(&search.right));
    }
    fit.left = fit.left.map(|p| p.from_scaled(s));
    fit.right = fit.right.map(|p| p.from_scaled(s));
    let detection = confidence::assess(
        &fit,
        &search.left,
        &search.right,
        view_of(persp, s, visible_from),
        &cfg.confidence,
        &cfg.units,
        tracked,
    );
    (fit, detection)
}

/// The nominal view `persp` describes, analysed at scale `s`.
fn view_of(persp: &Perspective, s: Scale, visible_from: usize) -> ViewGeometry {
    ViewGeometry {
        width: persp.width,
        height: persp.height,
        scale: s,
        visible_from,
    }
}

/// What a whole view's `mask` reports, as a still (and a video frame without a prior fit)
/// does: the road below a vehicle ahead (`occlusion::visible_road`) searched with sliding
/// windows, then judged (`judge`, with that mask for the guided partner search).
pub fn judge_whole_view(
    mask: &BinaryMask,
    expected: Option<(Poly2, Poly2)>,
    cfg: &Config,
    persp: &Perspective,
) -> Result<Judged> {
    let visible = crate::lane::occlusion::visible_road(mask, cfg)?;
    let searched = visible.mask.as_ref().unwrap_or(mask);
    let search_cfg = scaled_search(&cfg.search, cfg.perspective.scale());
    let search = fit::sliding_window_search(searched, &search_cfg)?;
    judge(search, Some(searched), expected, visible.from, cfg, persp)
}

/// From a search's pixels (analysed view) to what a frame reports, as `Pipeline::analyze`
/// does after the search: the fits (robust when `search.robust`), mapped to nominal pixels;
/// the confidence and the reported lines; the measurements of the lane a still draws.
///
/// `mask` is the whole view's mask of a sliding-window search. When only one line is
/// reported, its partner is searched for again with windows guided by it
/// (`fit::guided_search`, starting a plausible lane width away): the windows of a dashed or
/// faint line often wander off it onto texture, while the confident line says where to look.
/// `expected` is the lane a video's tracker holds (nominal px): a frame that still lacks a
/// line may be confirmed by it (`confidence::confirm_with_expected`), from the pixels near the
/// expected lines (the band search's own, or the whole view's mask there). `visible_from` is
/// the first analysed row of road below a vehicle ahead (`occlusion::visible_road`; 0: all of
/// it): the lines are then judged on the rows below it, and fitted straight.
pub fn judge(
    search: SearchResult,
    mask: Option<&BinaryMask>,
    expected: Option<(Poly2, Poly2)>,
    visible_from: usize,
    cfg: &Config,
    persp: &Perspective,
) -> Result<Judged> {
    let tracked = expected.map(|lane| confidence::Tracked {
        lane,
        margin_px: cfg.search.prior_margin as f64,
    });
    let (mut fit, mut detection) = fit_and_assess(&search, cfg, persp, visible_from, tracked);
    let mut search = search;
    let width_px = cfg.confidence.default_lane_width_m / cfg.units.xm_per_px;
    let single = matches!(
        detection.status,
        confidence::LaneStatus::LeftOnly | confidence::LaneStatus::RightOnly
    );
    if let (Some(mask), true, true) = (mask, single, cfg.confidence.min_line > 0.0) {
        let s = cfg.perspective.scale();
        let scfg = scaled_search(&cfg.search, s);
        let px = |m: f64| m / cfg.units.xm_per_px * s.x;
        let [wmin, wmax] = cfg.confidence.lane_width_m;
        let left_seen = detection.left.is_some();
        let guide = if left_seen {
            detection.left
        } else {
            detection.right
        };
        if let Some(g) = guide {
            let gap = if left_seen {
                (px(wmin), px(wmax))
            } else {
                (-px(wmax), -px(wmin))
            };
            let partner = fit::guided_search(mask, &g.to_scaled(s), gap, &scfg)?;
            let mut again = search.clone();
            if left_seen {
                again.right = partner;
            } else {
                again.left = partner;
            }
            let (f2, d2) = fit_and_assess(&again, cfg, persp, visible_from, tracked);
            if d2.status == confidence::LaneStatus::Both {
                (search, fit, detection) = (again, f2, d2);
            }
        }
    }
    // A pair whose one line the tracker would gate out (`tracking.gate_px` from the line it
    // holds, at the bottom row) while the other agrees: that line is fitted again as a missing
    // one is, below. A free quadratic through a far dash and a few stray pixels near the car
    // (a dashed line whose gap covers the near half) points anywhere; the tracked line's own
    // shape leaves its pixels only its position to fix. Its own, not its partner's: in this
    // fixed view the two lines' headings differ while the online pitch differs from the
    // calibration's.
    let full = detection;
    // Only while the track holds (the frame searched around it: `mask` is `None`): a track
    // that coasts is what a fresh pair, gated out whole, starts again (`track::lane`).
    let gated_side = tracked
        .filter(|_| mask.is_none())
        .and_then(|t| gated_out(&detection, t.lane, persp, cfg));
    if let Some(left) = gated_side {
        detection = detection.without(left);
    }
    if let (Some(t), true) = (tracked, detection.status != confidence::LaneStatus::Both) {
        let (l, r) = t.lane;
        let s = cfg.perspective.scale();
        let near = match mask {
            Some(m) => {
                let margin = scaled_search(&cfg.search, s).prior_margin;
                fit::prior_search(m, &l.to_scaled(s), &r.to_scaled(s), margin)?
            }
            None => search.clone(),
        };
        if let Some(d) = confidence::confirm_with_expected(
            &detection,
            &near.left,
            &near.right,
            t,
            view_of(persp, s, visible_from),
            &cfg.confidence,
            &cfg.units,
            gated_side.is_none(),
        ) {
            detection = d;
        }
    }
    // Not placed (the line dropped above is still missing), or placed where the tracker gates
    // it out still: the pair as it was (the tracker decides on it as before).
    let placed = detection.status == confidence::LaneStatus::Both
        && tracked.is_some_and(|t| gated_out(&detection, t.lane, persp, cfg).is_none());
    if gated_side.is_some() && !placed {
        detection = full;
    }
    // The lane's radius from both lines, each weighted by how well its pixels fix its
    // curvature (a placed line copies its partner's, so the weights do not matter then).
    let weights = (
        1.0 / detection.left_evidence.cov[0][0],
        1.0 / detection.right_evidence.cov[0][0],
    );
    let measure = detection.lane(width_px).map(|(l, r)| {
        measure::measure_weighted(&l, &r, persp.width, persp.height, &cfg.units, weights)
    });
    Ok(Judged {
        search,
        fit,
        detection,
        measure,
        seen_from: visible_from as f64 / cfg.perspective.scale().y,
    })
}

/// Which line of a pair (`Some(true)`: the left) lies more than `tracking.gate_px` from the
/// tracked lane's (`lane`, nominal px) at the bottom row while the other lies within it: the
/// line the tracker would gate out of a lane it otherwise confirms. `None` for anything else
/// (one line, both lines off: a lane change or a track gone wrong, which the tracker handles).
fn gated_out(
    det: &confidence::Detection,
    lane: (Poly2, Poly2),
    persp: &Perspective,
    cfg: &Config,
) -> Option<bool> {
    let (Some(l), Some(r)) = (det.left, det.right) else {
        return None;
    };
    let y = (persp.height - 1) as f64;
    let off = |p: &Poly2, e: &Poly2| (p.eval(y) - e.eval(y)).abs() > cfg.tracking.gate_px;
    match (off(&l, &lane.0), off(&r, &lane.1)) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lane::occlusion::tests::view;

    /// A still's analysed view (1280x360, default scale) with the lane's two solid lines and,
    /// over analysed rows 150-170, a vehicle's rear lights and bumper across the lane
    /// (`occlusion`'s test view): the lane is reported from the row below the vehicle (nominal
    /// row 340) down, and a lane drawn from there (`render::lane_polygon_birdseye`) stays
    /// below it.
    #[test]
    fn a_lane_below_a_vehicle_ahead_is_seen_from_under_it() {
        let cfg = Config::default();
        let persp = Perspective::from_config(&cfg.perspective, 1280, 720).unwrap();
        let j = judge_whole_view(&view(0, Some((150, 170))), None, &cfg, &persp).unwrap();
        assert_eq!(j.detection.status, confidence::LaneStatus::Both);
        assert_eq!(j.seen_from, 340.0);
        let (l, r) = j.detection.lane(380.0).unwrap();
        let poly = crate::lane::render::lane_polygon_birdseye(&l, &r, 720, j.seen_from, 8);
        let top = poly.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        assert_eq!(top, 340.0);
        // Without a vehicle the lane is seen over the whole view.
        let j = judge_whole_view(&view(0, None), None, &cfg, &persp).unwrap();
        assert_eq!(j.seen_from, 0.0);
    }

    /// A tracked lane (lines at nominal x 450 and 830) and a frame searched around it whose
    /// left line shows one far dash (analysed rows 0-80) and, nearer, a stray blob 35-40 px
    /// to its right: a free fit through both leaves the tracked line by more than the tracker's
    /// gate at the bottom row; fitted again with the tracked line's shape, the dash alone fixes
    /// its position and the pair stands.
    #[test]
    fn a_far_dash_places_a_tracked_line_that_stray_pixels_would_turn() {
        use opencv::core::{Mat, Rect, Scalar, CV_8UC1};
        use opencv::prelude::*;
        let cfg = Config::default();
        let persp = Perspective::from_config(&cfg.perspective, 1280, 720).unwrap();
        let mut m = Mat::new_rows_cols_with_default(360, 1280, CV_8UC1, Scalar::all(0.0)).unwrap();
        for r in [
            Rect::new(825, 0, 10, 360),
            Rect::new(445, 0, 10, 80),
            Rect::new(485, 200, 6, 20),
        ] {
            Mat::roi_mut(&mut m, r)
                .unwrap()
                .set_to_def(&Scalar::all(255.0))
                .unwrap();
        }
        let mask = BinaryMask::new(m).unwrap();
        let lane = (Poly2::new(0.0, 0.0, 450.0), Poly2::new(0.0, 0.0, 830.0));
        let s = cfg.perspective.scale();
        let margin = scaled_search(&cfg.search, s).prior_margin;
        let search =
            fit::prior_search(&mask, &lane.0.to_scaled(s), &lane.1.to_scaled(s), margin).unwrap();
        // As the search alone gives it: a pair whose left line the tracker would gate out.
        let (_, free) = fit_and_assess(&search, &cfg, &persp, 0, None);
        assert_eq!(free.status, confidence::LaneStatus::Both);
        let off = |p: Poly2| (p.eval(719.0) - 450.0).abs();
        assert!(
            off(free.left.unwrap()) > cfg.tracking.gate_px,
            "{:?}",
            free.left
        );
        // Judged with the tracked lane: the line placed by its dash.
        let j = judge(search.clone(), None, Some(lane), 0, &cfg, &persp).unwrap();
        assert_eq!(j.detection.status, confidence::LaneStatus::Both);
        assert!(
            off(j.detection.left.unwrap()) < 5.0,
            "{:?}",
            j.detection.left
        );
        assert_eq!(j.detection.right, free.right);
        // A track that coasts (the frame searched with sliding windows: a mask given) is not
        // held up this way: the pair stands as found, for the tracker to judge.
        let j = judge(search, Some(&mask), Some(lane), 0, &cfg, &persp).unwrap();
        assert_eq!(j.detection.left, free.left);
    }
}
