//! Pictures of a pipeline's results: the overlay in the configured output geometry and the
//! search picture. Composes `pipeline` (geometry, undistortion) and `render` (drawing values),
//! so that neither of those two depends on the other.

use crate::base::config::Geometry;
use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::lane::confidence::LaneStatus;
use crate::lane::fit::Poly2;
use crate::lane::measure::LaneMeasure;
use crate::lane::pipeline::{Analysis, Pipeline};
use crate::lane::render;

/// Draw the overlay on an undistorted frame (consumed; drawn in place).
pub fn overlay_undistorted(
    pipe: &Pipeline,
    undistorted: BgrFrame,
    lane: Option<(&Poly2, &Poly2)>,
    seen_from: f64,
    m: Option<&LaneMeasure>,
    status: LaneStatus,
) -> Result<BgrFrame> {
    let cfg = &pipe.cfg.render;
    render::overlay(
        undistorted,
        render::LaneToDraw::of(lane, seen_from),
        &pipe.persp,
        &|x, y| (x, y),
        m,
        status,
        cfg,
        pipe.pixel_aspect(),
    )
}

/// Draw the overlay on the raw frame, distorting the lane polygon to the raw geometry.
pub fn overlay_raw(
    pipe: &Pipeline,
    raw: BgrFrame,
    lane: Option<(&Poly2, &Poly2)>,
    seen_from: f64,
    m: Option<&LaneMeasure>,
    status: LaneStatus,
) -> Result<BgrFrame> {
    let Some(cam) = pipe.camera() else {
        return overlay_undistorted(pipe, raw, lane, seen_from, m, status);
    };
    let distort = |x, y| cam.distort_pixel(x, y);
    let cfg = &pipe.cfg.render;
    render::overlay(
        raw,
        render::LaneToDraw::of(lane, seen_from),
        &pipe.persp,
        &distort,
        m,
        status,
        cfg,
        pipe.pixel_aspect(),
    )
}

/// The overlay in the configured output geometry (`render.geometry`), from the raw frame; the
/// lane drawn from the nominal bird's-eye row `seen_from` down (`Analysis::seen_from`).
pub fn overlay(
    pipe: &Pipeline,
    raw: BgrFrame,
    lane: Option<(&Poly2, &Poly2)>,
    seen_from: f64,
    m: Option<&LaneMeasure>,
    status: LaneStatus,
) -> Result<BgrFrame> {
    match pipe.cfg.render.geometry {
        Geometry::Original => overlay_raw(pipe, raw, lane, seen_from, m, status),
        Geometry::Undistorted => {
            let u = pipe.undistort(&raw)?;
            overlay_undistorted(pipe, u, lane, seen_from, m, status)
        }
    }
}

/// The search picture (windows, line pixels, this frame's fits, histogram) in the analysed view.
pub fn search_picture(a: &Analysis) -> Result<BgrFrame> {
    let l = a.fit.left.map(|p| p.to_scaled(a.scale));
    let r = a.fit.right.map(|p| p.to_scaled(a.scale));
    render::search_picture(&a.thresholded.mask()?, &a.search, l.as_ref(), r.as_ref())
}
