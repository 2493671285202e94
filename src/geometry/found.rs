//! What the road-geometry search (`selfcal`) is given and gives: its options
//! (`SelfCalOptions`), the geometry found with how it was found and how sure
//! (`FoundGeometry`), and how closely a view must agree with it to be the same camera's
//! (`SAME_CAMERA`).

use crate::base::config::Config;
use crate::geometry::autoperspective::{Estimate, Options};
use crate::geometry::work_scale::WorkScale;

/// Options of the search. `Default` gives the values documented on each field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfCalOptions {
    /// The estimate's options (lane width, field of view, quad rows, straightness limit).
    /// Default: [`Options::default`], with `max_angle_deg` 3 and `fit_from` 0.45: lines are
    /// fitted on the near range, where a bend is still nearly straight (so frames on a long bend
    /// count), and the median over frames absorbs the slight bends that 3 degrees lets in.
    pub estimate: Options,
    /// Frames sampled. Default 24: a median over many frames withstands a third of them wrong,
    /// at tens of milliseconds each.
    pub samples: usize,
    /// The opening seconds the frames are sampled from. Default 30 s: long enough to see past
    /// a winding stretch or a truck ahead, short enough that the camera has not moved and that
    /// decoding it in order stays cheap. Shortened, down to 5 s
    /// ([`crate::geometry::sample::MIN_WINDOW_S`]), where the frames of 30 s would not fit the
    /// memory kept for the run ([`crate::geometry::sample::recordable_window_s`]: 1080p).
    pub window_s: f64,
    /// Fewest usable frames for a geometry. Default 3: one frame can be wrong in a way the
    /// checks do not see; with three the median needs two wrong ones.
    pub min_frames: usize,
    /// Largest spread of the frames' horizon rows (median absolute deviation), as a share of
    /// the frame's height. Default 0.04: a camera fixed to a car has one horizon, moved by the
    /// body's pitch (a degree or so: 1-2% of the height at dashcam focal lengths); frames that
    /// disagree by more found their lines in noise, not on the road (the shared clips: 0.3-1.3%).
    pub max_horizon_spread: f64,
    /// Searches running at the same time in this process (`lanes batch --jobs`), which share
    /// the memory for kept frames ([`record_budget_shared`]). Default 1.
    pub searches_at_once: usize,
    /// Rows frames are analysed at: taller frames are shrunk (an area average), shorter ones
    /// enlarged (bilinear), and the geometry found is scaled back. Default 480: the geometry is
    /// a median over frames of lines fitted through hundreds of marking pixels, so a pixel of
    /// 0.2% of the height is finer than the frames' own horizon spread (0.3-1.3% on the shared
    /// clips), while the cost grows with the pixel count (a 1080p frame has 5x the pixels).
    /// Shorter frames are enlarged because the search's sizes in pixels (the ridge detector's
    /// 2-px floor, the Hough segments' floors) were chosen at this height: at 360 rows far
    /// markings fall under them. The LA clip scaled to 640x360 (crf 26) found its lines at
    /// the bottom row 32% too far apart and both lines on 41% of its frames; enlarged, 61%.
    pub work_rows: i32,
    /// `tracking.cut_ratio` when cuts are followed (`tracking.restart_at_cuts`): the opening
    /// search then keeps to the opening shot of an edited video (`opening_geometry`).
    /// Default `None`: every sample counts.
    pub cut_ratio: Option<f64>,
}

impl Default for SelfCalOptions {
    fn default() -> Self {
        Self {
            estimate: Options {
                max_angle_deg: 3.0,
                fit_from: 0.45,
                ..Options::default()
            },
            samples: 24,
            window_s: 30.0,
            min_frames: 3,
            max_horizon_spread: 0.04,
            searches_at_once: 1,
            work_rows: 480,
            cut_ratio: None,
        }
    }
}

/// The geometry found, and how it was found.
#[derive(Debug, Clone)]
pub struct FoundGeometry {
    pub estimate: Estimate,
    pub frames_sampled: usize,
    pub frames_used: usize,
    /// Median absolute deviation of the frames' horizon rows, pixels.
    pub horizon_spread_px: f64,
    /// The quad's bottom row, pixels (above the hood when one was seen).
    pub bottom_row: f64,
    /// Whether the markings end above the frame's bottom (a hood, a dashboard).
    pub hood: bool,
    /// Rows of the black bar at the bottom of every sampled frame (a dashcam's info bar), or 0.
    pub bar_rows: u32,
    /// Warnings about the scale (sources that disagree).
    pub warnings: Vec<String>,
    /// Frame size the geometry is for.
    pub size: (i32, i32),
    /// Time spent, seconds.
    pub seconds: f64,
    /// The video's first frame among those the geometry was found in (0 for frames given as
    /// such): a video that opens off the road (a car park) shows no lane before it.
    pub first_frame_used: usize,
    /// `Some(s)` when the opening `s` seconds (the windows searched in order before the one
    /// the geometry was found in, or all of them when the rest of a long drive was sampled)
    /// showed too few usable frames and the search went on past them.
    pub past_opening_s: Option<f64>,
    /// The first cut among the frames the search decoded (an edited video; `None` when there
    /// is none, or cuts were not watched for): where the opening shot ends.
    pub first_cut: Option<usize>,
}

impl FoundGeometry {
    /// `base` with this geometry's perspective quad and units (the base's bird's-eye scales kept).
    pub fn apply(&self, base: &Config) -> Config {
        let mut c = base.clone();
        c.perspective = crate::base::config::PerspectiveConfig {
            birdseye_scale_x: base.perspective.birdseye_scale_x,
            birdseye_scale_y: base.perspective.birdseye_scale_y,
            ..self.estimate.perspective
        };
        c.units = self.estimate.units;
        c
    }

    /// This geometry, found at a working size, in the video's pixels. The bird's-eye view and
    /// the units do not depend on the frame size; the quad, the lines and the rows do.
    pub fn scaled_back(mut self, work: &WorkScale) -> Self {
        if work.is_identity() {
            return self;
        }
        let e = &mut self.estimate;
        for c in &mut e.perspective.src {
            let (x, y) = work.point_back((c[0], c[1]));
            *c = [x, y];
        }
        e.lines.vp = work.point_back(e.lines.vp);
        e.picture_width = e
            .picture_width
            .map(|pw| work.point_back((pw, 0.0)).0 - work.point_back((0.0, 0.0)).0);
        e.lines.left = work.line_back(e.lines.left);
        e.lines.right = work.line_back(e.lines.right);
        self.bottom_row = work.point_back((0.0, self.bottom_row)).1;
        self.horizon_spread_px = work.point_back((0.0, self.horizon_spread_px)).1;
        let bar = work.point_back((0.0, self.bar_rows as f64)).1;
        self.bar_rows = bar.round() as u32;
        self.size = work.video_size(self.size);
        self
    }

    /// How far a view of the road lies from this geometry, when it agrees within
    /// [`SAME_CAMERA`]: the view's vanishing point `vp` and its lane's width in pixels at this
    /// geometry's bottom row (video pixels); the horizon's distance as a share of the height,
    /// the vanishing point's column's as a share of the width, and the width's as a share of
    /// this geometry's.
    pub fn agrees_with(&self, vp: (f64, f64), width: f64) -> Option<(f64, f64, f64)> {
        let (w, h) = (self.size.0 as f64, self.size.1 as f64);
        let lines = &self.estimate.lines;
        let own = lines.right.x_at(self.bottom_row) - lines.left.x_at(self.bottom_row);
        let d = (
            (vp.1 - lines.vp.1).abs() / h,
            (vp.0 - lines.vp.0).abs() / w,
            (width / own - 1.0).abs(),
        );
        let (th, tx, tw) = SAME_CAMERA;
        (d.0 <= th && d.1 <= tx && d.2 <= tw).then_some(d)
    }

    /// How sure: "high" with at least 8 frames agreeing on the horizon within 1% of the
    /// height, "medium" with 5 within 2%, else "low".
    pub fn confidence(&self) -> &'static str {
        let h = self.size.1 as f64;
        if self.frames_used >= 8 && self.horizon_spread_px <= 0.01 * h {
            "high"
        } else if self.frames_used >= 5 && self.horizon_spread_px <= 0.02 * h {
            "medium"
        } else {
            "low"
        }
    }

    /// `describe` with the warnings after it: what a batch note and a report show.
    pub fn note(&self) -> String {
        std::iter::once(self.describe())
            .chain(self.warnings.iter().map(|w| format!("warning: {w}")))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Whether the markings end where the lane's lines leave the picture at its sides (a
    /// camera mounted low, a portrait crop) rather than behind a hood: a line reaches a side
    /// edge above the frame's bottom, and the quad's bottom row (where the markings end) lies
    /// within a tenth of the height above that row (dashes end short of it).
    pub fn lines_leave_sides(&self) -> bool {
        let (w, h) = (self.size.0 as f64, self.size.1 as f64);
        let lines = &self.estimate.lines;
        // The row where a line crosses the edge column `x`, below the horizon.
        let exit = |m: f64, c: f64, x: f64| {
            (m.abs() > 1e-9)
                .then(|| (x - c) / m)
                .filter(|y| *y > lines.vp.1)
        };
        let rows = [
            exit(lines.left.m, lines.left.c, 0.0),
            exit(lines.right.m, lines.right.c, w),
        ];
        rows.into_iter()
            .flatten()
            .reduce(f64::min)
            .is_some_and(|y| y < h && self.bottom_row >= y - 0.1 * h)
    }

    /// One line for the user: what was found and how sure.
    pub fn describe(&self) -> String {
        let e = &self.estimate;
        let (w, h) = self.size;
        let g = e
            .ground
            .map(|g| {
                format!(
                    ", camera {:.2} m high, pitch {:.1} deg, yaw {:.1} deg",
                    g.camera_height_m, g.pitch_deg, g.yaw_deg
                )
            })
            .unwrap_or_default();
        let past = self
            .past_opening_s
            .map(|s| {
                format!(
                    "; too few usable frames in the opening {s:.0} s, found from frame {} on",
                    self.first_frame_used
                )
            })
            .unwrap_or_default();
        // Frames of one view (a stop) were one vote.
        let views = match e.lines.views.len() {
            n if n >= self.frames_used => String::new(),
            1 => ", all one view".to_string(),
            n => format!(", {n} distinct views"),
        };
        format!(
            "geometry found in {} of {} sampled frames ({w}x{h}{views}, {} confidence, {:.2} s{past}): horizon at row {:.1} (spread {:.1} px), vanishing point x {:.1}, road up to row {:.0}{}{g}; {:.4} m/px across, {:.4} m/px along ({}{})",
            self.frames_used,
            self.frames_sampled,
            self.confidence(),
            self.seconds,
            e.lines.vp.1,
            self.horizon_spread_px,
            e.lines.vp.0,
            self.bottom_row,
            match self.bar_rows {
                0 if self.hood && self.lines_leave_sides() => {
                    " (below it the lane's lines leave the picture's sides)".to_string()
                }
                0 if self.hood => " (hood below)".to_string(),
                0 => String::new(),
                b => format!(" (a {b}-row black bar below)"),
            },
            e.units.xm_per_px,
            e.units.ym_per_px,
            e.ym_from,
            e.focal_note().map(|n| format!(", {n}")).unwrap_or_default()
        )
    }
}

/// How closely two views of a road must agree to be taken as one camera's
/// ([`FoundGeometry::agrees_with`]: a shot's first samples and the run's geometry,
/// `geometry::resolve`):
/// - horizon within 1.5% of the height: a camera's frames lie within 0.3-1.3% of their median
///   (the shared clips), a zoomed replay or another mount moves it further;
/// - vanishing point within 3% of the width: the camera's yaw, moved a degree or two by the
///   car's own heading;
/// - lane width at the quad's bottom row within 10%: lanes differ by up to 7% between roads
///   (3.5-3.75 m), a zoom or another camera changes it more.
pub const SAME_CAMERA: (f64, f64, f64) = (0.015, 0.03, 0.10);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::autoperspective as ap;

    #[test]
    fn a_geometry_found_at_the_working_size_is_scaled_back_to_the_video() {
        let s = WorkScale::for_size((1280, 720), 480);
        let line = ap::lines::ImageLine { m: -1.3, c: 700.0 };
        let (y, x) = (300.0, line.x_at(300.0));
        let mut g = found_for_test(line);
        g.estimate.perspective.src[2] = [x, y];
        g.bottom_row = y;
        let r = g.scaled_back(&s);
        let (xv, yv) = (x / s.sx, y / s.sy);
        assert!((r.estimate.lines.left.x_at(yv) - xv).abs() < 1e-9);
        assert!((r.estimate.perspective.src[2][0] - xv).abs() < 1e-9);
        assert!((r.estimate.perspective.src[2][1] - yv).abs() < 1e-9);
        assert!((r.bottom_row - yv).abs() < 1e-9);
        assert!((r.estimate.lines.vp.1 - 200.0 / s.sy).abs() < 1e-9);
        assert!((r.horizon_spread_px - 2.0 / s.sy).abs() < 1e-9);
        assert_eq!(r.size, (1280, 720));
    }

    #[test]
    fn markings_that_end_where_the_lines_leave_the_sides_are_not_a_hood() {
        // Lines from a vanishing point at (426, 200) of an 853x480 frame.
        let vp = (426.0, 200.0);
        let through_vp = |m: f64| ap::lines::ImageLine {
            m,
            c: vp.0 - m * vp.1,
        };
        let with = |left: f64, right: f64, bottom_row: f64| {
            let mut g = found_for_test(through_vp(left));
            g.estimate.lines.left = through_vp(left);
            g.estimate.lines.right = through_vp(right);
            g.estimate.lines.vp = vp;
            g.bottom_row = bottom_row;
            g.lines_leave_sides()
        };
        // Slopes of 1: the lines reach the sides below the frame (row 626): a hood at 400.
        assert!(!with(-1.0, 1.0, 400.0));
        // The left line leaves the picture at row 413: markings ending at 400 end there.
        assert!(with(-2.0, 1.0, 400.0));
        // Markings that end at 300, far above where it leaves: a hood (or a dashboard).
        assert!(!with(-2.0, 1.0, 300.0));
        // The right line leaves at row 413.3 too (x = 853).
        assert!(with(-1.0, 2.0, 400.0));
    }

    /// A found geometry at the 853x480 working size of a 1280x720 video, both lines `line`.
    fn found_for_test(line: ap::lines::ImageLine) -> FoundGeometry {
        let vp = (line.x_at(200.0), 200.0);
        let estimate = Estimate {
            perspective: crate::base::config::PerspectiveConfig::default(),
            units: crate::base::config::UnitsConfig::default(),
            lines: ap::CombinedLines {
                vp,
                left: line,
                right: line,
                views: (0..8).map(|i| vec![i]).collect(),
                outliers: Vec::new(),
            },
            lane_width_px: 700.0,
            ground: None,
            focal: crate::base::camera::Focal::AssumedFov,
            picture_width: None,
            dashes: None,
            ym_from: "geometry",
        };
        FoundGeometry {
            estimate,
            frames_sampled: 8,
            frames_used: 8,
            horizon_spread_px: 2.0,
            bottom_row: 470.0,
            hood: false,
            bar_rows: 0,
            warnings: Vec::new(),
            size: (853, 480),
            seconds: 0.0,
            first_frame_used: 0,
            past_opening_s: None,
            first_cut: None,
        }
    }
}
