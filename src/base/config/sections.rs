//! The configuration's sections, one per stage, with their documented defaults.

use serde::{Deserialize, Serialize};

/// How lane-marking pixels are told from the road.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdMethod {
    /// A marking is a bright (L) or yellow (B) stripe at most `marking_width_px` wide: each
    /// pixel is compared with the road on both sides at about one marking width (a symmetric
    /// local threshold), so shadow edges, tar seams and cracks do not pass, and a flat or
    /// uniformly lit image gives an empty mask.
    LocalContrast,
    /// The reference pipeline's rule: L and B scaled so their maxima become 255, then fixed
    /// thresholds (`l_min`, `b_min`, `b_scale_gate`).
    GlobalMax,
}

/// How the tracker smooths the lane over frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrackingMethod {
    /// A Kalman filter over the lane model (centre line's curvature, heading and position,
    /// and the lane width) in bird's-eye pixels: it predicts through gaps of up to
    /// `max_gap_s` and resets after longer ones.
    Kalman,
    /// The reference pipeline's rule: the mean of the last `keep` accepted fits per line,
    /// with the lane-width and coefficient-jump checks.
    Average,
}

/// Colour thresholds applied to the bird's-eye image.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ThresholdConfig {
    /// Keep pixels whose scaled HLS L is in `(l_min, l_max]` (white lines). Default 220.
    pub l_min: u8,
    /// Upper bound of the L range. Default 255.
    pub l_max: u8,
    /// Keep pixels whose (possibly scaled) LAB B is in `(b_min, b_max]` (yellow lines). Default 190.
    pub b_min: u8,
    /// Upper bound of the B range. Default 255.
    pub b_max: u8,
    /// Scale B so its maximum becomes 255 only when that maximum is over this gate;
    /// below it the frame has no yellow and scaling would only amplify noise. Default 175.
    pub b_scale_gate: u8,
    /// Optional Sobel-x magnitude threshold on L (off by default, as in the reference).
    pub sobel_enabled: bool,
    /// Scaled |Sobel x| range `(sobel_min, sobel_max]`, 0..255. Defaults 20..100.
    pub sobel_min: u8,
    pub sobel_max: u8,
    /// Optional HLS S channel threshold (off by default).
    pub s_enabled: bool,
    /// S range `(s_min, s_max]`. Defaults 180..255.
    pub s_min: u8,
    pub s_max: u8,
    /// How marking pixels are found. Default `local_contrast`; `global_max` is the
    /// reference's rule (the `l_min`.. `b_scale_gate` keys above apply only to it).
    pub method: ThresholdMethod,
    /// Widest marking, nominal bird's-eye px: the road is sampled this far to each side of a
    /// pixel, so every pixel of a marking up to this wide passes, and the centre of a bright
    /// stripe up to twice as wide; wider bright areas do not. Default 20 (about 20 cm at 3.7 m
    /// per 378 px; markings are 10-20 cm wide, and a sunlit gap between two shadows that is
    /// wider than 40 px does not pass: on the synthetic shadow suite 30 found both lines in 8
    /// of 20 scenes, 20 in 20 of 20).
    pub marking_width_px: u32,
    /// Length of each side's road sample, nominal px. Default 8.
    pub side_px: u32,
    /// White: L must exceed the brighter side by at least this much (0..255). Default 15
    /// (well above the noise of a compressed frame; a marking in deep shade still has 25-30).
    pub l_contrast_min: u8,
    /// White: ... and by at least this fraction of the brighter side's L, so the contrast
    /// needed scales with the light (a marking in shade is darker, and so is its road).
    /// Default 0.10: white paint on light concrete is only about 20% brighter than the
    /// concrete in L; 10% leaves it a margin.
    pub l_contrast_ratio: f64,
    /// Yellow: B must exceed the more yellow side by at least this much. Default 8.
    pub b_contrast_min: u8,
    /// Yellow: ... and B itself must be at least this (128 is neutral grey). Default 138.
    pub b_yellow_min: u8,
    /// Whole-view masks keep only pixels on a vertical run of at least this many nominal
    /// px (markings run along the bird's-eye view; speckle and texture do not). 0 = off.
    /// Default 8 (4 rows of the half-height view; a dash is about 100 px long).
    pub min_run_px: u32,
    /// Smooth a frame before its analysis when its sensor noise (standard deviation, grey
    /// levels, `lane::denoise`) is over a quarter of `l_contrast_min`: over a third, plain road
    /// passes the contrast rule by noise alone; from a quarter, a faint marking breaks into
    /// speckle (a 1 px blur there). Default true (the `reference` preset: false).
    pub smooth_noise: bool,
}

impl Default for ThresholdConfig {
    fn default() -> Self {
        Self {
            l_min: 220,
            l_max: 255,
            b_min: 190,
            b_max: 255,
            b_scale_gate: 175,
            sobel_enabled: false,
            sobel_min: 20,
            sobel_max: 100,
            s_enabled: false,
            s_min: 180,
            s_max: 255,
            method: ThresholdMethod::LocalContrast,
            marking_width_px: 20,
            side_px: 8,
            l_contrast_min: 15,
            l_contrast_ratio: 0.10,
            b_contrast_min: 8,
            b_yellow_min: 138,
            min_run_px: 8,
            smooth_noise: true,
        }
    }
}

/// Perspective quad, in pixels of the undistorted frame (src) and the bird's-eye view (dst).
/// Order: top-left, top-right, bottom-left, bottom-right.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PerspectiveConfig {
    /// Source trapezoid on the road. Default: the Udacity camera's
    /// (575,464) (707,464) (258,682) (1049,682).
    pub src: [[f64; 2]; 4],
    /// Destination rectangle. Default for 1280x720: (450,0) (830,0) (450,720) (830,720).
    pub dst: [[f64; 2]; 4],
    /// The bird's-eye view is analysed at this fraction of its nominal width (0.25..=1). All
    /// other parameters (search margins, fits, tracking limits) stay in nominal pixels; they
    /// are scaled internally. Default 1: across the road every pixel counts for curvature.
    pub birdseye_scale_x: f64,
    /// The same along the road (rows). Default 0.5: half the rows, which keeps the fits and
    /// the radius within the reference's accuracy at half the cost.
    pub birdseye_scale_y: f64,
    /// Size `[width, height]` of the nominal bird's-eye view that `dst` is given in, pixels.
    /// Default: none, the frame's own size (the Udacity quad on 1280x720 frames). Geometry found
    /// by `lanes video` and `lanes perspective` sets `[1280, 720]` on every camera, so that the
    /// search's sizes in view pixels (margins, marking widths) mean the same metres on the road
    /// whatever the frame size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<[i32; 2]>,
    /// Size `[width, height]` of the frames `src` was found on, pixels. Written by
    /// `lanes perspective` and `lanes video --save-geometry`: `src` is in that size's pixels,
    /// so a video of another size is refused before its first frame (a still gets a note),
    /// even when the quad happens to lie inside its frames (a 960x540 camera's quad inside
    /// 1280x720 frames). Default: none, only the quad's corners are checked against the frame
    /// (hand-written configs, the Udacity quad).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<[i32; 2]>,
}

impl Default for PerspectiveConfig {
    fn default() -> Self {
        Self {
            src: [
                [575.0, 464.0],
                [707.0, 464.0],
                [258.0, 682.0],
                [1049.0, 682.0],
            ],
            dst: [[450.0, 0.0], [830.0, 0.0], [450.0, 720.0], [830.0, 720.0]],
            birdseye_scale_x: 1.0,
            birdseye_scale_y: 0.5,
            view: None,
            frame: None,
        }
    }
}

/// Lane-pixel search parameters (bird's-eye pixels).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Number of sliding windows stacked over the image height. Default 10.
    pub windows: u32,
    /// Half-width of a sliding window in px. Default 80.
    pub margin: u32,
    /// A window re-centres on its pixels' mean x when it holds more than this many. Default 40.
    pub min_pixels: u32,
    /// Half-width of the band around the previous fit used by the prior search, px (nominal
    /// bird's-eye pixels; about 49 cm at the default scale of 3.7 m per 378 px). Default 50:
    /// the same telemetry as 80 within 0.03 cm of offset on the five real clips in the data set
    /// (60 and 80 give identical telemetry), the same `lanes eval` scores on the synthetic drive
    /// down to 40, and 37% fewer pixels to analyse per frame than 80.
    pub prior_margin: u32,
    /// A line with pixels on fewer distinct rows than this is "not found". Default 3.
    pub min_rows: u32,
    /// With a prior fit, compute the bird's-eye view and the thresholds only inside the
    /// search bands (L and B are then normalised by their maxima within the bands): about a
    /// quarter of the work. `false` computes the whole view on every frame. Default true.
    pub band_only: bool,
    /// In band-only analysis, compute every n-th row of the bird's-eye view; a row not
    /// computed takes the nearest computed row's marking pixels, moved along the band's curve.
    /// 1..=8. Default 1 (every row).
    pub band_row_step: u32,
    /// In band-only analysis, compute a bird's-eye row only when the raw frame's row it
    /// samples lies at least this many rows from the last computed row's; a row not computed
    /// takes the nearest computed row's marking pixels, moved along the band's curve. The far
    /// half of a bird's-eye view is interpolated from few source rows (at the top of the
    /// default view a tenth of a source row per row), so its neighbouring rows repeat each
    /// other. 0..=4; 0 computes every row (with `band_row_step`). Default 1.0 (one computed row
    /// per source row: 140 of the default view's 360 analysed rows).
    pub band_min_source_rows: f64,
    /// Robust search and fit: sliding windows that follow the curve's direction through empty
    /// windows, and fits that drop outlier pixels (iteratively trimmed least squares).
    /// Default true; false is the reference's search and plain least squares.
    pub robust: bool,
    /// A vehicle ahead in the lane (`lane::occlusion`): in a whole-view search, the view above
    /// the lowest band of rows (about 0.7 m on the road at the default scale) whose marking
    /// pixels cover at least this share of the middle half of the lane's columns is left out,
    /// and the lines are judged on the rows below it and fitted straight. Markings run along
    /// a lane's edges; a vehicle lies across its middle. Used when at least 5 m of road stay
    /// visible. 0 turns it off. Default 0.3.
    pub occluder_share: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            windows: 10,
            margin: 80,
            min_pixels: 40,
            prior_margin: 50,
            min_rows: 3,
            band_only: true,
            band_row_step: 1,
            band_min_source_rows: 1.0,
            robust: true,
            occluder_share: 0.3,
        }
    }
}

/// Frame-to-frame tracking (the lane tracker's sanity checks and smoothing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrackingConfig {
    /// Number of accepted fits kept per line; their mean is drawn. Default 5.
    pub keep: u32,
    /// Expected distance between the two lines at the bottom row, px. Default 350.
    pub lane_width_px: f64,
    /// Allowed deviation from `lane_width_px`, px. Default 100.
    pub lane_width_tolerance_px: f64,
    /// Largest allowed |coefficient - smoothed coefficient| for a, b, c. Default (0.001, 1.0, 100).
    pub max_coeff_diff: [f64; 3],
    /// The smoothing. Default `kalman`; `average` is the reference's (uses `keep`,
    /// `lane_width_px`, `lane_width_tolerance_px` and `max_coeff_diff`).
    pub method: TrackingMethod,
    /// Kalman: longest gap without a confident detection that is bridged by prediction
    /// (status `predicted`), seconds. Longer gaps reset the tracker; twice as long while the
    /// car is over one of the tracked lines (a lane change, `confidence.crossing_line_distance_m`).
    /// Default 0.5.
    pub max_gap_s: f64,
    /// Kalman: a detection whose bottom-row position differs from the prediction by more than
    /// this (nominal px) is an outlier and not used, unless `max_gap_s` has passed. Default 60
    /// (about 0.6 m: a lane change moves the lines by a whole lane width, 378 px).
    pub gate_px: f64,
    /// Kalman: process noise per frame (standard deviation) of the centre line's curvature
    /// `a` (px^-1), heading `b`, position `c` (px), the lane width (px) and the lateral
    /// velocity (px per frame). Default (5e-5, 0.005, 1.0, 1.0, 0.3): at 25 fps the road's
    /// curvature and the car's heading change over seconds, not frames.
    pub process_noise: [f64; 5],
    /// Kalman: smallest measurement noise (standard deviation) of one frame's curvature of a
    /// line, 1/km, whatever its fit's own covariance says: a quadratic fitted to one frame's
    /// pixels over the view's 20-odd metres does not fix the curvature better than this (the
    /// markings' blurred edges, the remap's resolution far ahead, the road's pitch). In metres,
    /// so it means the same on every camera; converted to view pixels with `units`.
    /// Default 1.0 (a radius of 1 km told from a straight road by a single frame only barely).
    pub curvature_floor_per_km: f64,
    /// Kalman: process noise of the lane's curvature in metres, 1/km per square root of a
    /// second (a random walk); it replaces `process_noise[0]` (view pixels per frame) unless 0.
    /// Default 0.3: roads change curvature along clothoids over hundreds of metres (0 to 4/km
    /// over 70 m at the tightest motorway ramps), so at 30 m/s the curvature moves by a few
    /// tenths per km in a second; per-frame changes beyond that are the fit's noise.
    pub curvature_noise_per_km_s: f64,
    /// Follow the camera's pitch relative to the road while driving (videos only): each frame
    /// whose two lines are seen in both halves of the view gives the horizon row where they
    /// meet in the image; a filter smooths it and the lane is measured in the bird's-eye view
    /// of that pitch, so that a grade change or a bumped mount does not turn parallel lines
    /// into a bend. Its value per frame is in the telemetry (`pitch_deg`, `horizon_y`).
    /// Default true.
    pub online_pitch: bool,
    /// Largest change of the pitch from the geometry's own (config or self-calibration),
    /// degrees: a road's grade changes by a few per cent (6% is 3.4 degrees), and a larger
    /// apparent change comes from lines that are not parallel (a lane that widens, an exit).
    /// Default 3.
    pub pitch_max_change_deg: f64,
    /// Process noise of the pitch, degrees per square root of a second (a random walk).
    /// Default 0.5: with `pitch_observation_deg` the filter follows a change within about 6
    /// frames at 25 fps; the car's body pitches on its springs at 1-2 Hz, and slower settings
    /// (0.05-0.1) left more curvature noise on every shared clip (docs/any-camera.md).
    pub pitch_noise_deg_s: f64,
    /// Noise of one frame's pitch from its lines' meeting point, degrees. Default 0.5.
    pub pitch_observation_deg: f64,
    /// Restart the lane and pitch trackers at a cut of an edited video (videos only): a
    /// compilation's next clip or a zoomed replay shows another road, or the same one from
    /// another camera, and the lane held before is not in it. Default true.
    pub restart_at_cuts: bool,
    /// A frame is a cut when its mean absolute luma difference to the frame before is this many
    /// times the shot's usual one (the median over the last second) and 0.03 of full scale
    /// above it (`lane::shot`). Default 4: on the shared dashcam clips and 18 re-encoded
    /// variants (bumps, exposure changes, a 30 fps forest road) one frame reaches 3.1 times
    /// its shot's usual difference (0.006 above it) and no other 2.5, while cuts measured 4.8
    /// (the same drive 2 s later) to 23 (the Los Angeles clip's zoomed replay).
    pub cut_ratio: f64,
}

impl TrackingConfig {
    /// `cut_ratio` when cuts are followed (`restart_at_cuts`), else `None`.
    pub fn cuts(&self) -> Option<f64> {
        self.restart_at_cuts.then_some(self.cut_ratio)
    }
}

impl Default for TrackingConfig {
    fn default() -> Self {
        Self {
            keep: 5,
            lane_width_px: 350.0,
            lane_width_tolerance_px: 100.0,
            max_coeff_diff: [0.001, 1.0, 100.0],
            method: TrackingMethod::Kalman,
            max_gap_s: 0.5,
            gate_px: 60.0,
            process_noise: [5e-5, 0.005, 1.0, 1.0, 0.3],
            curvature_floor_per_km: 1.0,
            curvature_noise_per_km_s: 0.3,
            online_pitch: true,
            pitch_max_change_deg: 3.0,
            pitch_noise_deg_s: 0.5,
            pitch_observation_deg: 0.5,
            restart_at_cuts: true,
            cut_ratio: 4.0,
        }
    }
}

/// How much the pipeline believes a line and a lane (`confidence`, 0..1, from evidence).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConfidenceConfig {
    /// A line below this confidence is not reported. 0 reports every fit (the reference).
    /// Default 0.5.
    pub min_line: f64,
    /// A marking pixel supports a row of the fit when it lies within this many nominal px of
    /// it. Default 12 (half a wide marking plus the fit's noise).
    pub row_tolerance_px: f64,
    /// Share of bird's-eye rows with support that gives full marks. A dashed line (3 m dash,
    /// 9 m gap) supports about a quarter of the rows. Default 0.2.
    pub full_support: f64,
    /// Plausible lane width at the bottom of the view, metres. Default 2.5..=4.8.
    pub lane_width_m: [f64; 2],
    /// Largest change of the lane width between the bottom and the top of the view, metres.
    /// The two lines of a lane are parallel, but the bird's-eye view assumes the calibration's
    /// flat ground: where the road ahead pitches by `d` against it (a change of grade, the car
    /// braking), a lane `W` wide seen `Z` ahead from a camera `h` high measures about
    /// `W (1 + Z tan(d) / h)`. Default 2.0: about 1.25 deg of pitch for a 3.7 m lane 30 m
    /// ahead seen from 1.2 m (1.6, the earlier default, allowed 1 deg and dropped the right
    /// line on the challenge video's grade).
    pub max_width_change_m: f64,
    /// Tightest plausible radius of a line at the car, metres. Default 30: a line that tight
    /// leaves the default bird's-eye view (12.5 m wide, 22 m long) sideways after about 16 m,
    /// so the view cannot hold the evidence for it (hairpins are not tracked).
    pub min_radius_m: f64,
    /// A line reported without its partner (the other line below `min_line` or the pair
    /// implausible) needs at least this confidence: nothing confirms it. Default 0.8.
    pub min_single: f64,
    /// A line of the ego lane lies at least this far (metres, at the car) to the side of the
    /// camera: about half a car's width; a line nearer than that runs under the car, which is
    /// then changing lanes, or it is not a lane line. Default 0.8.
    pub min_line_distance_m: f64,
    /// How near the camera a line the tracker holds may come (metres, at the car), when the
    /// frame finds it where one of the tracked lines is (within `search.prior_margin`): the car
    /// is changing lanes, and the ego lane is the lane the camera is in until the camera is over
    /// the line; past it, the line is the new lane's other line (the old lane's right line is
    /// the new one's left), though the track, a prediction, may still hold it on the other
    /// side. The lane's edge is the marking's centre line, which the fit follows to about
    /// 10 px (0.1 m) at the car: nearer than that, which side of the camera it is on is not
    /// known. Default 0.15 (half as much again to spare; 0.3 until 2026-12-07, which also
    /// kept the marking's half-width clear of the camera). A line found without that history
    /// (a still, a fresh search) keeps `min_line_distance_m`: under the camera it is as likely
    /// an edge of something else (a chessboard's squares).
    pub crossing_line_distance_m: f64,
    /// Lane width assumed to place the second line from one confident line when nothing
    /// better is known (a still, or a tracker without history), metres. Default 3.7.
    pub default_lane_width_m: f64,
}

impl ConfidenceConfig {
    /// How near the camera a line the tracker holds may come, metres: never further than an
    /// untracked line may (`min_line_distance_m`).
    pub fn crossing_distance_m(&self) -> f64 {
        self.crossing_line_distance_m.min(self.min_line_distance_m)
    }
}

impl Default for ConfidenceConfig {
    fn default() -> Self {
        Self {
            min_line: 0.5,
            row_tolerance_px: 12.0,
            full_support: 0.2,
            lane_width_m: [2.5, 4.8],
            max_width_change_m: 2.0,
            min_radius_m: 30.0,
            min_single: 0.8,
            min_line_distance_m: 0.8,
            crossing_line_distance_m: 0.15,
            default_lane_width_m: 3.7,
        }
    }
}

/// Overlay rendering.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenderConfig {
    /// Lane fill colour, BGR. Default green (0, 255, 0).
    pub lane_color: [u8; 3],
    /// Opacity of the lane fill, 0..1. Default 0.3.
    pub alpha: f64,
    /// Radii above this many metres are printed as "straight". Default 3000.
    pub straight_above_m: f64,
    /// Number of polygon vertices per line side. Default 30.
    pub polygon_points: u32,
    /// Output geometry of overlay videos and images: "original" (the frame as recorded, with
    /// the lane polygon's vertices distorted by the lens model to fit it; no per-frame image
    /// warp) or "undistorted" (the frame is undistorted first, as the reference pipeline does;
    /// costs one full-frame remap per frame). Without a camera the two are the same.
    /// Default "original".
    pub geometry: Geometry,
}

/// Output geometry of the overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Geometry {
    Undistorted,
    Original,
}

impl Default for RenderConfig {
    fn default() -> Self {
        Self {
            lane_color: [0, 255, 0],
            alpha: 0.3,
            straight_above_m: 3000.0,
            polygon_points: 30,
            geometry: Geometry::Original,
        }
    }
}

/// What is known of the camera without a camera file (`--camera`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct CameraConfig {
    /// Horizontal field of view of the video's frames as they are (pinhole), degrees: the focal
    /// length of the geometry (the along-road scale that self-calibration finds, the online
    /// pitch). Default: none, 58 degrees assumed (the Udacity dashcam's). `--fov` sets it; a
    /// camera file's focal length takes its place. A lens whose straight lines bend (a
    /// wide-angle dashcam) needs a camera file instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hfov_deg: Option<f64>,
}

impl CameraConfig {
    /// Nothing given (the section is left out of a written config).
    pub fn is_empty(&self) -> bool {
        self.hfov_deg.is_none()
    }
}

/// Pixel-to-metre scale of the bird's-eye view.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UnitsConfig {
    /// Metres per bird's-eye pixel across the road. Default 3.7/378 (a 12 ft lane spans 378 px).
    pub xm_per_px: f64,
    /// Metres per bird's-eye pixel along the road. Default 3.048/100 (a 10 ft dash spans 100 px).
    pub ym_per_px: f64,
}

impl Default for UnitsConfig {
    fn default() -> Self {
        Self {
            xm_per_px: 3.7 / 378.0,
            ym_per_px: 3.048 / 100.0,
        }
    }
}

/// Lane events found in telemetry (`lanes events`, `lanes report`; `src/events.rs`).
/// Times in seconds, lengths in metres.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventsConfig {
    /// A span of frames with status `none` at least this long is a `lane_lost` event.
    /// `predicted` frames do not count as lost (a lane is drawn). Default 0.5.
    pub lost_min_s: f64,
    /// A lane change is an offset jump of at least this fraction of the lane width with a
    /// sign flip. Default 0.6 (a full change jumps by about 1.0 lane width).
    pub lane_change_min_jump: f64,
    /// ... and at most this fraction of the lane width. Default 1.4.
    pub lane_change_max_jump: f64,
    /// The jump may span a gap of frames without an offset (status `none`) this long at most;
    /// a `none` span inside a lane change is part of it, not a `lane_lost`. Default 1.5.
    pub lane_change_max_gap_s: f64,
    /// Width of the car: its outer edges are `car_width_m / 2` either side of the camera.
    /// Default 1.8.
    pub car_width_m: f64,
    /// A departure warning needs the car's edge this far past a line's centre. Default 0.1.
    pub departure_margin_m: f64,
    /// ... for at least this long. Default 0.3.
    pub departure_min_s: f64,
    /// A departure whose span ends at most this long before a lane change to the same side
    /// is that lane change's start, not a warning; and radii read during a lane change and this
    /// long after it start no tight bend (the new lane is fitted from its first frames while
    /// the car still turns). Default 1.0.
    pub lane_change_grace_s: f64,
    /// Lateral speed at a warning: least-squares slope of the offset over this long before
    /// the warning's first frame. Default 0.5.
    pub lateral_speed_window_s: f64,
    /// A tracked radius below this is a tight bend. Default 250.
    pub tight_radius_m: f64,
    /// ... for at least this long. Default 0.5.
    pub tight_min_s: f64,
    /// Tight-bend runs of the same direction less than this far apart (end of one to start of
    /// the next) are one bend: back-to-back events of one curve (9.77-11.93 s and 12.00-13.00 s)
    /// are reported once. Default 0.5 (0 keeps every run apart).
    pub tight_merge_gap_s: f64,
}

impl Default for EventsConfig {
    fn default() -> Self {
        Self {
            lost_min_s: 0.5,
            lane_change_min_jump: 0.6,
            lane_change_max_jump: 1.4,
            lane_change_max_gap_s: 1.5,
            car_width_m: 1.8,
            departure_margin_m: 0.1,
            departure_min_s: 0.3,
            lane_change_grace_s: 1.0,
            lateral_speed_window_s: 0.5,
            tight_radius_m: 250.0,
            tight_min_s: 0.5,
            tight_merge_gap_s: 0.5,
        }
    }
}

impl PerspectiveConfig {
    /// The analysis scale of the bird's-eye view.
    pub fn scale(&self) -> Scale {
        Scale {
            x: self.birdseye_scale_x,
            y: self.birdseye_scale_y,
        }
    }

    /// Why the quad does not fit `width` x `height` frames, if it does not: it was found on
    /// frames of another size (`frame`), or a corner lies outside them (`corner_outside`).
    /// `whose` names the frames ("the video's", "the"); the text follows "the config's".
    pub fn misfit(&self, width: i32, height: i32, whose: &str) -> Option<String> {
        if let Some([fw, fh]) = self.frame {
            if (fw, fh) != (width, height) {
                return Some(format!(
                    "[perspective] was found on {fw}x{fh} frames, not {whose} {width}x{height} ones: its quad is in the pixels of that size, most likely of another camera"
                ));
            }
        }
        let c = self.corner_outside(width, height)?;
        Some(format!(
            "perspective.src corner [{}, {}] lies outside {whose} {width}x{height} frames: the quad was made for another camera or frame size",
            c[0], c[1]
        ))
    }

    /// The first corner of the source quad that does not fit a `width` x `height` frame (a quad
    /// made for another camera or frame size), if any. Every corner's row must lie in the frame,
    /// and the top corners (the far end of the lane) inside it. A bottom corner may lie beyond
    /// the frame's side: a lane line leaves the frame at its side before it reaches the bottom
    /// row when the camera is turned from the road's direction, its picture is cut off-centre or
    /// the lane is wide close up (geometry found in such a video puts it there). Its side of the
    /// quad must then still be in view over at least half its rows, or that line is barely seen.
    pub fn corner_outside(&self, width: i32, height: i32) -> Option<[f64; 2]> {
        let (w, h) = (width as f64, height as f64);
        let inside_x = |x: f64| (0.0..=w - 1.0).contains(&x);
        let [tl, tr, bl, br] = self.src;
        let side_in_view = |top: [f64; 2], bottom: [f64; 2]| {
            if inside_x(bottom[0]) {
                return true;
            }
            let edge = if bottom[0] < 0.0 { 0.0 } else { w - 1.0 };
            let rows = bottom[1] - top[1];
            // The share of the side's rows, from its top down, before it crosses the edge.
            let t = (edge - top[0]) / (bottom[0] - top[0]);
            rows > 0.0 && t >= 0.5
        };
        let row_out = self
            .src
            .into_iter()
            .find(|[_, y]| !(0.0..=h - 1.0).contains(y));
        let top_out = [tl, tr].into_iter().find(|c| !inside_x(c[0]));
        let side_out = [(tl, bl), (tr, br)]
            .into_iter()
            .find(|&(top, bottom)| !side_in_view(top, bottom))
            .map(|(_, bottom)| bottom);
        row_out.or(top_out).or(side_out)
    }
}

/// Scale of an analysed bird's-eye view relative to the nominal one, per axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub x: f64,
    pub y: f64,
}

impl Scale {
    /// No scaling.
    pub const ONE: Scale = Scale { x: 1.0, y: 1.0 };
}
