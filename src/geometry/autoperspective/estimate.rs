//! Frames combined: the median lines, the quad, the bird's-eye scales across and along the
//! road (from the ground-plane geometry or the dashes).

use super::dashes::Dash;
use super::frame::{median, quad_on_lines, quad_rows, LaneLines};
use super::ground::GroundScale;
use super::lines::ImageLine;
use super::options::{Options, YmSource};
use crate::base::config::{PerspectiveConfig, UnitsConfig};
use crate::base::error::{Error, Result};
use crate::lane::warp::Perspective;

/// The lines of several frames combined: the median vanishing point and the median x of each
/// line at the bottom row, one vote per view, joined into two lines.
#[derive(Debug, Clone, PartialEq)]
pub struct CombinedLines {
    pub vp: (f64, f64),
    pub left: ImageLine,
    pub right: ImageLine,
    /// The frames grouped by the view they showed ([`super::views::view_groups`]: indices into
    /// the frames combined); frames of one view, a car standing still, are one vote.
    pub views: Vec<Vec<usize>>,
    /// Frames left out as disagreeing with the others' medians ([`disagrees`]): indices into
    /// the frames combined (in no view), each with the reason.
    pub outliers: Vec<(usize, String)>,
}

/// How far (share of the height) a frame's horizon may lie from the median of all frames'
/// before the frame is left out: 0.08. A camera fixed to a car has one horizon; the body's
/// pitch moves it by 1-2% of the height and a change of grade by a few percent (the shared
/// clips' frames lie within 0.3-1.3% of their median), while lines found on another lane, a
/// car or a barrier met 10-14% off on the LA clip darkened.
pub const MAX_HORIZON_OFF: f64 = 0.08;

/// Why frames whose lines were found cannot be one road camera's, if they cannot: two or more
/// of them, and no two with horizons within [`MAX_HORIZON_OFF`] of the height of each other.
/// The medians of [`combine`] leave out a frame that disagrees with the others, but two frames
/// that disagree are each as far from their median (chessboard photos taken from several
/// angles: horizons 19% of the height apart on OpenCV's sample boards).
pub fn no_two_agree(horizons: &[f64], height: i32) -> Option<String> {
    let tol = MAX_HORIZON_OFF * height as f64;
    let agree = horizons
        .iter()
        .enumerate()
        .any(|(i, a)| horizons[i + 1..].iter().any(|b| (a - b).abs() <= tol));
    (horizons.len() >= 2 && !agree).then(|| {
        let rows: Vec<String> = horizons.iter().map(|r| format!("{r:.0}")).collect();
        format!(
            "the {} frames whose lines were found disagree: horizons at rows {}, no two within {:.0}% of the height (a road camera's frames lie within a few %): not frames of one camera looking along a road",
            horizons.len(),
            rows.join(", "),
            100.0 * MAX_HORIZON_OFF
        )
    })
}

/// Why a frame's lines disagree with the median lines of all frames, if they do: its horizon
/// more than [`MAX_HORIZON_OFF`] of the height away. Medians of a few frames (a short or busy
/// clip gives 4-5) move by a whole rank for each gross error, and the horizon sets the pitch,
/// so the scale along the road and whether the lines come out parallel. A frame whose lane
/// alone is too wide (a line of the next lane) is not left out: it moves one line's bottom
/// position by a rank, and leaving such frames out made the LA clip's quad worse (both lines
/// on 71% of its frames -> 65%; the lines' width at the top of the bird's-eye view over that
/// at the bottom, median 1.03 -> 1.08).
pub fn disagrees(f: &LaneLines, median_row: f64, height: i32) -> Option<String> {
    let h = height as f64;
    let off = (f.vp.1 - median_row).abs();
    (off > MAX_HORIZON_OFF * h).then(|| {
        format!(
            "its horizon (row {:.0}) is {:.0}% of the height from the other frames' (row {median_row:.0})",
            f.vp.1,
            100.0 * off / h,
        )
    })
}

/// Combine frames (at least one) by medians, one vote per view: each quantity's median over a
/// view's frames, then the median over views (frames of distinct views: the median over
/// frames). Frames that disagree with that median ([`disagrees`]) are then left out of their
/// views and the rest combined again (when any is left). `None` for no frames or degenerate
/// lines.
pub fn combine(frames: &[&LaneLines], height: i32) -> Option<CombinedLines> {
    if frames.is_empty() {
        return None;
    }
    let views: Vec<Option<&super::views::View>> = frames.iter().map(|f| f.view.as_ref()).collect();
    let mut groups = super::views::view_groups(&views);
    let (mut vp, mut left, mut right) = vote(frames, &groups, height)?;
    let outliers: Vec<(usize, String)> = frames
        .iter()
        .enumerate()
        .filter_map(|(i, f)| disagrees(f, vp.1, height).map(|why| (i, why)))
        .collect();
    if outliers.is_empty() || outliers.len() == frames.len() {
        return Some(CombinedLines {
            vp,
            left,
            right,
            views: groups,
            outliers: Vec::new(),
        });
    }
    for g in &mut groups {
        g.retain(|i| !outliers.iter().any(|(o, _)| o == i));
    }
    groups.retain(|g| !g.is_empty());
    (vp, left, right) = vote(frames, &groups, height)?;
    Some(CombinedLines {
        vp,
        left,
        right,
        views: groups,
        outliers,
    })
}

/// The vanishing point and the two lines through it, each quantity's median over each view of
/// `groups` (indices into `frames`), then over views.
fn vote(
    frames: &[&LaneLines],
    groups: &[Vec<usize>],
    height: i32,
) -> Option<((f64, f64), ImageLine, ImageLine)> {
    let yb = height as f64;
    let vote = |of: &dyn Fn(&LaneLines) -> f64| {
        let mut per_view: Vec<f64> = groups
            .iter()
            .map(|g| {
                let mut v: Vec<f64> = g.iter().map(|&i| of(frames[i])).collect();
                median(&mut v)
            })
            .collect();
        median(&mut per_view)
    };
    let vp = (vote(&|f| f.vp.0), vote(&|f| f.vp.1));
    let left = ImageLine::through(vp, (vote(&|f| f.left.line.x_at(yb)), yb))?;
    let right = ImageLine::through(vp, (vote(&|f| f.right.line.x_at(yb)), yb))?;
    Some((vp, left, right))
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
    /// Where `ground`'s focal length came from.
    pub focal: crate::base::camera::Focal,
    /// The picture's width between black side bars, frame pixels, when the field of view
    /// (given or assumed) was taken over it (`Options::picture_width`).
    pub picture_width: Option<f64>,
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
    let mut out = super::dashes::measure_dashes(
        &lines.mask,
        &lines.left.line,
        persp,
        &lane_px,
        yt.ceil() as i32,
        yb.floor() as i32,
        min_gap,
    )?;
    out.extend(super::dashes::measure_dashes(
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
/// given; without one, the given field of view's or the assumed one (`Focal`).
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
    // The focal length: the camera file's, else the given field of view's, else the assumed one.
    let focal = crate::base::camera::Focal::of(k.is_some(), opts.hfov_deg);
    let mut kk = focal.k(k, width, height);
    // A field of view spans the picture between black side bars: a shorter focal length.
    let picture_width = opts.picture_width.filter(|_| k.is_none());
    if let Some(pw) = picture_width {
        let s = pw / width as f64;
        kk[0][0] *= s;
        kk[1][1] *= s;
    }
    // Pixels wider than tall (an anamorphic video): the field of view spans the picture's
    // stored width, and a row is `pixel_aspect` times as many pixels per radian as a column.
    // (A camera file's matrix is its own.)
    if k.is_none() {
        kk[1][1] *= opts.pixel_aspect;
    }
    let (yt, yb) = quad_rows(combined.vp.1, height, opts);
    let dst_h = perspective.dst[2][1] - perspective.dst[0][1];
    let g = super::ground::ground_scale(
        &kk,
        combined.vp,
        (&combined.left, &combined.right),
        (yt, yb),
        opts.lane_width_m,
        dst_h,
    );
    let mut lengths = Vec::new();
    // The frames that voted, in order.
    let voted = |i: &usize| !combined.outliers.iter().any(|(o, _)| o == i);
    for f in (0..frames.len()).filter(voted).map(|i| frames[i]) {
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
        // at their ends); they are the geometry's cross-check ([`scale_warnings`]).
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
        focal,
        picture_width,
        dashes: dash,
        ym_from,
    })
}

/// Dash lengths on real roads, metres: 3 m (US 10 ft, much of Europe) to 6 m (German
/// motorways); by a factor of [`SCALE_DISAGREEMENT`] outside this range the dashes and the
/// geometry disagree.
pub const DASH_RANGE_M: (f64, f64) = (3.0, 6.0);

/// The factor by which the along-road sources may disagree before a warning: 1.5, wider than
/// an assumed field of view's usual error (dashcams: 50 to 75 degrees around the assumed 58).
pub const SCALE_DISAGREEMENT: f64 = 1.5;

/// Warnings when the along-road scale's sources disagree: the dashes measured with the chosen
/// scale should be between 3 and 6 m long.
pub fn scale_warnings(est: &Estimate) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = &est.dashes {
        if d.cluster_count >= 2 {
            let m = d.median_px * est.units.ym_per_px;
            let (lo, hi) = DASH_RANGE_M;
            if m < lo / SCALE_DISAGREEMENT || m > hi * SCALE_DISAGREEMENT {
                out.push(format!(
                    "along-road scale uncertain: with {:.4} m/px (from {}) the dashes measure {m:.1} m, outside {lo}-{hi} m by more than {SCALE_DISAGREEMENT}x (give --camera for a calibrated focal length or --fov for the field of view, or check --lane-width)",
                    est.units.ym_per_px, est.ym_from
                ));
            }
        }
    }
    if let Some(g) = &est.ground {
        let (lo, hi) = CAMERA_HEIGHT_RANGE_M;
        if !(lo..=hi).contains(&g.camera_height_m) {
            out.push(format!(
                "the lane width implies a camera {:.2} m above the road (expected {lo}-{hi} m): check --lane-width",
                g.camera_height_m
            ));
        }
        if -g.pitch_deg > MAX_UPWARD_PITCH_DEG {
            out.push(format!(
                "the horizon lies so far below the picture's centre that the camera would look {:.1} deg up, as no road camera is mounted: the picture is likely not centred on the lens (two pictures one above the other, or a crop of a taller frame), and the metres, which assume it is, are off: cut the road's picture out (the lower of two: `ffmpeg -i IN -vf crop=iw:ih/2:0:ih/2 lower.mp4`)",
                -g.pitch_deg
            ));
        }
    }
    out
}

/// Upward pitch of a road camera's axis beyond which its picture is taken for one not centred
/// on the lens ([`scale_warnings`]), degrees: a dashcam looks level to a few degrees down (the
/// shared clips and labelled sets: 3.6 up to 6.6 down), and at 12 up the road would fill less
/// than a third of a 58-degree picture's lower half.
const MAX_UPWARD_PITCH_DEG: f64 = 12.0;

impl Estimate {
    /// Where the focal length came from when it was not a camera file's ("assumed 58-deg field
    /// of view"), and the picture it spans between black side bars, if any.
    pub fn focal_note(&self) -> Option<String> {
        self.focal.note().map(|n| match self.picture_width {
            Some(pw) => format!("{n} over the {pw:.0}-px-wide picture between black bars"),
            None => n,
        })
    }
}

/// Heights of a vehicle's camera above the road, metres: 0.5 (a low car's bumper camera) to 4
/// (a bus's or a truck's cab). Outside it the lane-width prior and the lines disagree
/// ([`scale_warnings`]); by more than [`SCALE_DISAGREEMENT`] outside it (under 0.33 m or over
/// 6 m) no lane of a plausible width explains the lines ([`implausible_lines`]).
pub const CAMERA_HEIGHT_RANGE_M: (f64, f64) = (0.5, 4.0);

/// Why the estimate's lines cannot be a lane's, when they cannot: the camera height they imply
/// with the lane width (`lane_width_m`, the prior or the user's) lies further outside
/// [`CAMERA_HEIGHT_RANGE_M`] than [`SCALE_DISAGREEMENT`]. The height follows from the lines'
/// separation at the bottom row and their distance below the horizon, nearly independently of
/// the focal length, so an assumed field of view cannot explain it: lines 9 m "above" the road
/// are found in a video turned on its side, or in clutter, not on a lane. Real lanes of 2.7-4.3 m
/// under the 3.7 m prior move a 1-3 m camera to 0.9-4.1 m.
pub fn implausible_lines(est: &Estimate, lane_width_m: f64) -> Option<String> {
    let g = est.ground.as_ref()?;
    let (lo, hi) = CAMERA_HEIGHT_RANGE_M;
    let (min, max) = (lo / SCALE_DISAGREEMENT, hi * SCALE_DISAGREEMENT);
    (!(min..=max).contains(&g.camera_height_m)).then(|| {
        format!(
            "the lines found imply a camera {:.2} m above the road with a {lane_width_m} m lane (a vehicle's camera is {lo}-{hi} m high; beyond {min:.2}-{max:.0} m no lane explains them): they are not a lane's lines, or the video is turned on its side, or --lane-width is wrong",
            g.camera_height_m
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::frame::BinaryMask;
    use crate::geometry::autoperspective::lines::FittedLine;
    use crate::geometry::autoperspective::views::View;
    use crate::lane::shot::LumaSample;

    /// Lines meeting at (640, 400) and crossing the bottom row (720) at `xl` and `xr`, seen in
    /// a frame whose luma grid is `luma` (a standing car's frames share one).
    fn frame(xl: f64, xr: f64, luma: LumaSample) -> LaneLines {
        frame_at((640.0, 400.0), xl, xr, luma)
    }

    /// [`frame`] with the lines meeting at `vp`.
    fn frame_at(vp: (f64, f64), xl: f64, xr: f64, luma: LumaSample) -> LaneLines {
        let fitted = |x: f64| FittedLine {
            line: ImageLine::through(vp, (x, 720.0)).unwrap(),
            pixels: vec![(x, 719.0)],
            rms: 0.5,
            rows: 100,
            span: (450, 719),
        };
        LaneLines {
            left: fitted(xl),
            right: fitted(xr),
            vp,
            mask: BinaryMask::zeros(1, 1).unwrap(),
            view: Some(View {
                luma,
                at_s: None,
                road_bottom: 720.0,
            }),
        }
    }

    /// A 1280x720 luma grid of a scene: pseudo-random edges drawn from `seed`.
    fn scene(seed: u64) -> LumaSample {
        let mut x = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let values = (0..160 * 90)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (40 + (x >> 57)) as u8
            })
            .collect();
        LumaSample {
            size: (1280, 720),
            values,
        }
    }

    /// CULane driver_161's first sequence: six frames of one stop put the right line on a car
    /// in the next lane (x 1225 against the lane's 1014); with a vote per frame they outvoted
    /// the three other views, with a vote per view they do not.
    #[test]
    fn the_frames_of_a_stop_do_not_outvote_the_other_views() {
        let stop = scene(1);
        let mut frames: Vec<LaneLines> =
            (0..6).map(|_| frame(470.0, 1225.0, stop.clone())).collect();
        frames.push(frame(430.0, 950.0, scene(2)));
        frames.push(frame(439.0, 969.0, scene(3)));
        frames.push(frame(480.0, 1014.0, scene(4)));
        let refs: Vec<&LaneLines> = frames.iter().collect();
        let c = combine(&refs, 720).unwrap();
        assert_eq!(c.views.len(), 4);
        // The views' right lines: 950, 969, 1014 and the stop's 1225: median 991.5.
        assert!((c.right.x_at(720.0) - 991.5).abs() < 1e-9, "{c:?}");
        // The left: 430, 439, 480 and the stop's 470.
        assert!((c.left.x_at(720.0) - 454.5).abs() < 1e-9, "{c:?}");
        // Frames of distinct views vote one each, as before.
        for f in &mut frames[..6] {
            f.view = None;
        }
        let refs: Vec<&LaneLines> = frames.iter().collect();
        let c = combine(&refs, 720).unwrap();
        assert_eq!(c.views.len(), 9);
        assert!((c.right.x_at(720.0) - 1225.0).abs() < 1e-9, "{c:?}");
    }

    /// Five frames of a short clip: three agree, one found its lines on another lane's line
    /// and a barrier (horizon 80 px, 11% of the height, off) and one took the next lane's line
    /// (the lane twice as wide at the bottom row). The first is left out; the second stays
    /// (`disagrees`: its error moves one line's bottom position by a rank).
    #[test]
    fn a_frame_whose_horizon_disagrees_with_the_others_does_not_vote() {
        let frames = [
            frame_at((630.0, 398.0), 430.0, 950.0, scene(1)),
            frame_at((640.0, 402.0), 440.0, 960.0, scene(2)),
            frame_at((650.0, 404.0), 450.0, 970.0, scene(3)),
            frame_at((700.0, 480.0), 300.0, 1000.0, scene(4)),
            frame_at((560.0, 396.0), -600.0, 955.0, scene(5)),
        ];
        let refs: Vec<&LaneLines> = frames.iter().collect();
        let c = combine(&refs, 720).unwrap();
        let out: Vec<usize> = c.outliers.iter().map(|(i, _)| *i).collect();
        assert_eq!(out, vec![3], "{:?}", c.outliers);
        assert!(c.outliers[0].1.contains("horizon"), "{:?}", c.outliers);
        assert_eq!(c.views, vec![vec![0], vec![1], vec![2], vec![4]]);
        // Medians of the four kept: rows 396, 398, 402, 404; x 560, 630, 640, 650.
        assert!((c.vp.1 - 400.0).abs() < 1e-9, "{c:?}");
        assert!((c.vp.0 - 635.0).abs() < 1e-9, "{c:?}");
        // All five voting: row 402, x 640.
        let all: Vec<Vec<usize>> = (0..5).map(|i| vec![i]).collect();
        let (vp, _, _) = vote(&refs, &all, 720).unwrap();
        assert!((vp.1 - 402.0).abs() < 1e-9, "{vp:?}");
        // Frames that agree are all kept, as before.
        let c = combine(&refs[..3], 720).unwrap();
        assert!(c.outliers.is_empty());
        assert_eq!(c.views.len(), 3);
    }

    /// Lines meeting 320 rows above the bottom of a 720-row frame (58-degree field of view
    /// assumed): 700 px apart at the bottom is a 3.7 m lane seen from 1.7 m; 130 px apart, from
    /// 9.1 m, which no vehicle's camera is; 4680 px apart, from 0.25 m.
    #[test]
    fn lines_no_camera_height_explains_are_not_a_lane() {
        let height_of = |xl: f64, xr: f64| {
            let frames: Vec<LaneLines> = (0..3).map(|i| frame(xl, xr, scene(10 + i))).collect();
            let refs: Vec<&LaneLines> = frames.iter().collect();
            let est = estimate(&refs, None, 1280, 720, &Options::default()).unwrap();
            let h = est.ground.unwrap().camera_height_m;
            (h, implausible_lines(&est, 3.7))
        };
        let (h, why) = height_of(290.0, 990.0);
        assert!((1.4..2.0).contains(&h) && why.is_none(), "{h} {why:?}");
        let (h, why) = height_of(575.0, 705.0);
        assert!(h > 6.0, "{h}");
        let why = why.unwrap();
        assert!(
            why.contains("m above the road") && why.contains("on its side"),
            "{why}"
        );
        let (h, why) = height_of(-1700.0, 2980.0);
        assert!(h < 0.33 && why.is_some(), "{h}");
        // 280 px apart: 4.2 m, a truck's cab on a narrow lane; warned of, not refused.
        let (h, why) = height_of(500.0, 780.0);
        assert!((4.0..6.0).contains(&h) && why.is_none(), "{h} {why:?}");
    }

    /// The same road filmed on square pixels (1280x720) and stored anamorphic (960x720 shown at
    /// 16:9, pixels 4:3 wide, every column at 3/4 of its place): with the pixel shape, the
    /// camera height, pitch and scale along the road are those of the square frame; without
    /// it the height came out 4/3 as high and the pitch 4/3 as steep.
    #[test]
    fn frames_of_no_one_road_camera_are_told_by_their_horizons() {
        // OpenCV's sample boards: two frames with lines, horizons 19% of 480 rows apart.
        let why = no_two_agree(&[307.7, 218.3], 480).unwrap();
        assert!(why.contains("rows 308, 218"), "{why}");
        // Udacity's straight_lines1/2 (rows 424 and 426 of 720), one frame, or a pair that
        // agrees among frames that do not: one camera.
        assert!(no_two_agree(&[424.0, 426.0], 720).is_none());
        assert!(no_two_agree(&[424.0], 720).is_none());
        assert!(no_two_agree(&[300.0, 424.0, 430.0], 720).is_none());
        assert!(no_two_agree(&[100.0, 300.0, 500.0], 720).is_some());
    }

    #[test]
    fn an_anamorphic_frame_s_geometry_is_that_of_its_square_picture() {
        let geometry = |squeeze: f64, pixel_aspect: f64| {
            let vp = (640.0 * squeeze, 400.0);
            let frames: Vec<LaneLines> = (0..3)
                .map(|i| frame_at(vp, 290.0 * squeeze, 990.0 * squeeze, scene(20 + i)))
                .collect();
            let refs: Vec<&LaneLines> = frames.iter().collect();
            let opts = Options {
                pixel_aspect,
                ..Options::default()
            };
            let w = (1280.0 * squeeze) as i32;
            estimate(&refs, None, w, 720, &opts)
                .unwrap()
                .ground
                .unwrap()
        };
        let square = geometry(1.0, 1.0);
        let stored = geometry(0.75, 4.0 / 3.0);
        let rel = |a: f64, b: f64| (a / b - 1.0).abs();
        assert!(
            rel(stored.camera_height_m, square.camera_height_m) < 1e-6,
            "{stored:?} {square:?}"
        );
        assert!(
            rel(stored.pitch_deg, square.pitch_deg) < 1e-6,
            "{stored:?} {square:?}"
        );
        assert!(
            rel(stored.ym_per_px, square.ym_per_px) < 1e-6,
            "{stored:?} {square:?}"
        );
        let unshaped = geometry(0.75, 1.0);
        assert!(
            rel(unshaped.camera_height_m, square.camera_height_m * 4.0 / 3.0) < 0.01,
            "{unshaped:?}"
        );
    }
}
