//! What the perspective estimate is asked: lane width, field of view, the quad's rows,
//! straightness, where metres along the road come from.

use crate::base::error::{Error, Result};

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
    /// Horizontal field of view of the frames, degrees, for the geometry when no camera file
    /// is given (`--fov`, `camera.hfov_deg`). Default: none, 58 degrees assumed.
    pub hfov_deg: Option<f64>,
    /// Width of the picture between black side bars (a pillarboxed video: a 4:3 or a narrower
    /// picture padded to 16:9), in the frames' pixels: the field of view, given or assumed,
    /// spans the picture, not the bars. Default: none, the frame's width.
    pub picture_width: Option<f64>,
    /// The frames' pixel shape, width over height (an anamorphic video's sample aspect ratio:
    /// 64:45 for 720x576 shown at 16:9): the focal length along the rows is this times the one
    /// across, so that the camera height and pitch come out as on square pixels. Default 1.
    pub pixel_aspect: f64,
    /// Largest angle between the camera's axis and where a frame's lines meet, degrees: a
    /// frame whose lines meet further to the side is not used. Default 10: a dashcam is
    /// mounted facing along the road (within a few degrees), and on a bend the near-range
    /// tangents the frames give turn by less than 5 degrees at radii above 200 m; lines meeting
    /// further to the side are not the road ahead (CULane's A00720: 15 degrees, the right
    /// line on a white car in the next lane).
    pub max_yaw_deg: f64,
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
            hfov_deg: None,
            picture_width: None,
            pixel_aspect: 1.0,
            max_yaw_deg: 10.0,
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
        if let Some(f) = self.hfov_deg {
            let (lo, hi) = crate::base::camera::HFOV_RANGE_DEG;
            if !(f.is_finite() && (lo..=hi).contains(&f)) {
                return bad("--fov", f, &format!("{lo} <= degrees <= {hi}"));
            }
        }
        if let Some(w) = self.picture_width {
            if !(w.is_finite() && w > 0.0) {
                return bad("picture_width", w, "pixels > 0");
            }
        }
        if !(self.pixel_aspect.is_finite() && (0.25..=4.0).contains(&self.pixel_aspect)) {
            return bad(
                "pixel_aspect",
                self.pixel_aspect,
                "0.25 <= width/height <= 4",
            );
        }
        if !(self.max_angle_deg > 0.0 && self.max_angle_deg < 45.0) {
            return bad("--max-angle", self.max_angle_deg, "0 < degrees < 45");
        }
        if !(self.max_yaw_deg > 0.0 && self.max_yaw_deg < 45.0) {
            return bad("max_yaw_deg", self.max_yaw_deg, "0 < degrees < 45");
        }
        Ok(())
    }
}
