//! What bounds a video's picture of the road: black bars at the sides (a 4:3 picture padded to
//! 16:9, where the field of view spans the picture, not the frame) and at the bottom (a
//! dashcam's info bar of date, speed and position), and a hood, below all of which the quad
//! must not reach.

use crate::base::frame::BgrFrame;

/// Brightest a black bar's pixel may be in any channel: video black is 16 and a coder's ringing
/// at the bar's edge adds a few levels; the darkest road or sky in a real picture has texture
/// or noise above this somewhere along a whole column.
const BAR_MAX: u8 = 28;

/// Columns of black bars at the left and right sides of `frame` (a pillarboxed video): whole
/// columns, every row, no channel above [`BAR_MAX`]; at most 40% of the width each. A frame
/// whose pixels are not one contiguous block (a view into a larger image) shows none.
pub fn side_bars(frame: &BgrFrame) -> (u32, u32) {
    let (w, h) = (frame.width() as usize, frame.height() as usize);
    let bytes = match frame.bytes() {
        Ok(b) if b.len() >= w * h * 3 => b,
        _ => return (0, 0),
    };
    let black =
        |x: usize| (0..h).all(|y| bytes[(y * w + x) * 3..][..3].iter().all(|&v| v <= BAR_MAX));
    let most = w * 2 / 5;
    let left = (0..most).take_while(|&x| black(x)).count();
    let right = (0..most).take_while(|&x| black(w - 1 - x)).count();
    (left as u32, right as u32)
}

/// The width of the picture between black side bars shown by every frame of a video (`bars`:
/// each frame's `side_bars`) `width` pixels wide: `None` without bars. Bars count when every
/// frame has them on both sides, each at least 1% of the width, and their narrowest widths
/// differ by at most 2% of the width (padding centres the picture); a dark roadside at one edge
/// of a night drive is not on both sides of every frame.
pub fn picture_width(bars: impl Iterator<Item = (u32, u32)>, width: i32) -> Option<f64> {
    let (l, r) = bars.fold((u32::MAX, u32::MAX), |(l, r), b| (l.min(b.0), r.min(b.1)));
    let w = width as f64;
    let (lf, rf) = (l as f64, r as f64);
    (l != u32::MAX && lf >= 0.01 * w && rf >= 0.01 * w && (lf - rf).abs() <= 0.02 * w)
        .then_some(w - lf - rf)
}

/// Share of a row's pixels that must be black ([`BAR_MAX`]) for the row to be part of a bottom
/// bar: 0.5, as the text a dashcam writes in its bar lights well under half of a row (a 32-px
/// date, time, speed and position line across 70% of a 1280-px bar: at most 37%).
const BAR_ROW_MIN_BLACK: f64 = 0.5;

/// Share of a row's pixels that must be black for the row to be a bar's edge: 0.9. A bar has a
/// black margin above its text; a dark hood's reflections or a night road's rows mix in more
/// light (the LA clip's hood rows: 26-48% black, a darkened Udacity clip's bottom rows 17-28%).
const BAR_EDGE_MIN_BLACK: f64 = 0.9;

/// Rows of a black bar at the bottom of `frame` (a dashcam's info bar): scanning up from the
/// bottom over rows at least half black, up to the highest row at least 90% black, within 40%
/// of the height; 0 when the bottom row is not part of one.
pub fn bottom_bar(frame: &BgrFrame) -> u32 {
    let (w, h) = (frame.width() as usize, frame.height() as usize);
    let bytes = match frame.bytes() {
        Ok(b) if b.len() >= w * h * 3 && w > 0 => b,
        _ => return 0,
    };
    let black_share = |y: usize| {
        let row = &bytes[y * w * 3..(y + 1) * w * 3];
        let n = row
            .chunks_exact(3)
            .filter(|p| p.iter().all(|&v| v <= BAR_MAX))
            .count();
        n as f64 / w as f64
    };
    let mut top = None;
    for k in 0..h * 2 / 5 {
        let share = black_share(h - 1 - k);
        if share < BAR_ROW_MIN_BLACK {
            break;
        }
        if share >= BAR_EDGE_MIN_BLACK {
            top = Some(k + 1);
        }
    }
    top.unwrap_or(0) as u32
}

/// The rows of the bottom bar every frame of a video shows (`bars`: each frame's
/// [`bottom_bar`]), when at least 1% of the `height`: 0 otherwise.
pub fn bottom_bar_rows(bars: impl Iterator<Item = u32>, height: i32) -> u32 {
    let least = bars.min().unwrap_or(0);
    if (least as f64) < 0.01 * height as f64 {
        0
    } else {
        least
    }
}

/// Share of the top third of a bottom bar's rows that the ego lines' marking pixels (pooled
/// over the sampled frames) must reach for the "bar" to be road: 0.8. A dashcam's info bar hides
/// the road, so no lane line runs into it, and its black margin above the text holds no
/// marking; a road dark enough to pass for black (night, an underexposed camera) shows its
/// lines running on into the rows below, row after row (a dashed line's dashes move down
/// from frame to frame and fill the rows between them).
const LINES_INTO_BAR: f64 = 0.8;

/// The rows of the bottom bar every sampled frame shows ([`bottom_bar_rows`] of `bars`),
/// unless the lanes' lines run into it (`lines`: each usable frame's ego-line marking pixels'
/// rows): then it is dark road, not a bar, and 0 ([`LINES_INTO_BAR`]).
pub fn bottom_bar_below_road<F, R>(bars: impl Iterator<Item = u32>, lines: F, height: i32) -> u32
where
    F: IntoIterator<Item = R>,
    R: IntoIterator<Item = f64>,
{
    let bar = bottom_bar_rows(bars, height);
    if bar == 0 {
        return 0;
    }
    let top = (height - bar as i32).max(0) as f64;
    let third = (bar as usize).div_ceil(3);
    let mut reached = vec![false; third];
    for y in lines.into_iter().flatten() {
        let k = (y - top).floor();
        if k >= 0.0 && (k as usize) < third {
            reached[k as usize] = true;
        }
    }
    let share = reached.iter().filter(|r| **r).count() as f64 / third as f64;
    if share >= LINES_INTO_BAR {
        0
    } else {
        bar
    }
}

/// Share of the picture's height above which the markings must end for a hood to hide the
/// road below them: 0.93. A solid line runs to within a few rows of the bottom, and the
/// Udacity quad's bottom (0.95) is just above its car's hood.
pub const HOOD_BELOW: f64 = 0.93;

/// Where the road the sampled frames show ends, and so the quad (`road_end`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoadEnd {
    /// Rows of a black bar at the bottom of every frame ([`bottom_bar_below_road`]), or 0.
    pub bar: u32,
    /// The lowest row the lanes' markings reach above the bar ([`marking_bottom`]).
    pub low: f64,
    /// The markings end above [`HOOD_BELOW`] of the picture: a hood (or the lines leave the
    /// picture's sides) hides the road below.
    pub hood: bool,
    /// The quad's bottom row, a fraction of the height (`Options::bottom`, raised above a bar
    /// or a hood by [`quad_bottom`]).
    pub bottom: f64,
}

/// Where the quad of a `height`-row picture must end (`bottom`: the fraction asked for): above
/// a dashcam's info bar (`bars`: each frame's [`bottom_bar`]; not a dark road the lines run
/// into) and above the row below which no frame's markings were seen (`lines`: each usable
/// frame's marking pixels' rows): a hood, a dashboard, or the lines leaving the picture's
/// sides. The video search and `lanes perspective` end their quads alike.
pub fn road_end<L, R>(
    bottom: f64,
    bars: impl Iterator<Item = u32>,
    lines: impl Fn() -> L,
    height: i32,
) -> RoadEnd
where
    L: IntoIterator<Item = R>,
    R: IntoIterator<Item = f64>,
{
    let bar = bottom_bar_below_road(bars, lines(), height);
    let picture_bottom = (height - bar as i32) as f64;
    let low = marking_bottom(lines(), picture_bottom).unwrap_or(picture_bottom);
    let hood = low < HOOD_BELOW * picture_bottom;
    let bottom = if hood || bar > 0 {
        quad_bottom(bottom, low, height)
    } else {
        bottom
    };
    RoadEnd {
        bar,
        low,
        hood,
        bottom,
    }
}

/// The quad's bottom row (a fraction of `height`, `Options::bottom`) for a picture of the road
/// that ends at row `road_end` (a hood's top, or a bottom bar's): a percent of the height
/// above it, where that is higher than `bottom`, and never above 35% of the height.
pub fn quad_bottom(bottom: f64, road_end: f64, height: i32) -> f64 {
    let h = height as f64;
    bottom.min((road_end - 0.01 * h) / h).clamp(0.35, 1.0)
}

/// The row below which no frame's markings were seen, above row `picture_bottom` (the top of
/// a bottom bar, whose text is no marking): the median over frames (`frames`: each frame's
/// marking pixels' rows, both lines) of the lowest marking pixel. A solid line runs to the
/// picture's bottom unless something hides the road (a hood, a dashboard).
pub fn marking_bottom<F, R>(frames: F, picture_bottom: f64) -> Option<f64>
where
    F: IntoIterator<Item = R>,
    R: IntoIterator<Item = f64>,
{
    let lows: Vec<f64> = frames
        .into_iter()
        .map(|rows| {
            rows.into_iter()
                .filter(|&y| y < picture_bottom)
                .fold(f64::MIN, f64::max)
        })
        .filter(|v| v.is_finite() && *v > f64::MIN)
        .collect();
    crate::base::stats::median(&lows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn black_side_bars_give_the_pictures_width() {
        use opencv::core::{Mat, Rect, Scalar, Vec3b, CV_8UC3};
        use opencv::prelude::*;
        // A 200x100 frame: a grey picture over columns 30-168, video black (16) beside it: 30
        // columns at the left, 31 at the right; a coder's ringing (25) inside the left bar.
        let mut m = Mat::new_rows_cols_with_default(100, 200, CV_8UC3, Scalar::all(16.0)).unwrap();
        Mat::roi_mut(&mut m, Rect::new(30, 0, 139, 100))
            .unwrap()
            .set_to_def(&Scalar::all(90.0))
            .unwrap();
        *m.at_2d_mut::<Vec3b>(50, 5).unwrap() = [25, 25, 25].into();
        let bars = |m: &Mat| side_bars(&BgrFrame::new(m.clone()).unwrap());
        assert_eq!(bars(&m), (30, 31));
        // One brighter pixel in a column (a lit roadside at night) ends the bar there.
        *m.at_2d_mut::<Vec3b>(99, 29).unwrap() = [16, 40, 16].into();
        assert_eq!(bars(&m), (29, 31));
        // Every frame has them: the picture between the narrowest.
        let pw = picture_width([(30, 31), (32, 31)].into_iter(), 200).unwrap();
        assert!((pw - 139.0).abs() < 1e-9, "{pw}");
        // One frame without a bar, bars on one side only, or off-centre by over 2%: none.
        assert_eq!(picture_width([(30, 31), (0, 31)].into_iter(), 200), None);
        assert_eq!(picture_width([(30, 0)].into_iter(), 200), None);
        assert_eq!(picture_width([(30, 20)].into_iter(), 200), None);
        assert_eq!(picture_width(std::iter::empty(), 200), None);
    }

    #[test]
    fn a_black_bar_with_text_at_the_bottom_is_a_bar_and_a_dark_hood_is_not() {
        use opencv::core::{Mat, Rect, Scalar, CV_8UC3};
        use opencv::prelude::*;
        // A 200x100 frame: grey picture over rows 0-79, video black below; in the bar, white
        // text over 40% of rows 85-94, and a margin of black rows 80-84 above it.
        let mut m = Mat::new_rows_cols_with_default(100, 200, CV_8UC3, Scalar::all(90.0)).unwrap();
        Mat::roi_mut(&mut m, Rect::new(0, 80, 200, 20))
            .unwrap()
            .set_to_def(&Scalar::all(16.0))
            .unwrap();
        Mat::roi_mut(&mut m, Rect::new(10, 85, 80, 10))
            .unwrap()
            .set_to_def(&Scalar::all(235.0))
            .unwrap();
        let bar = |m: &Mat| bottom_bar(&BgrFrame::new(m.clone()).unwrap());
        assert_eq!(bar(&m), 20);
        // Every frame's bar, when at least 1% of the height.
        assert_eq!(bottom_bar_rows([20, 22].into_iter(), 100), 20);
        assert_eq!(bottom_bar_rows([20, 0].into_iter(), 100), 0);
        // Text down to the bar's top, with no black margin: the bar ends below the text.
        Mat::roi_mut(&mut m, Rect::new(10, 80, 80, 15))
            .unwrap()
            .set_to_def(&Scalar::all(235.0))
            .unwrap();
        assert_eq!(bar(&m), 5);
        // A dark hood, 45% black in every row (reflections): no bar.
        let mut hood =
            Mat::new_rows_cols_with_default(100, 200, CV_8UC3, Scalar::all(90.0)).unwrap();
        Mat::roi_mut(&mut hood, Rect::new(0, 70, 90, 30))
            .unwrap()
            .set_to_def(&Scalar::all(10.0))
            .unwrap();
        Mat::roi_mut(&mut hood, Rect::new(90, 70, 110, 30))
            .unwrap()
            .set_to_def(&Scalar::all(40.0))
            .unwrap();
        assert_eq!(bar(&hood), 0);
    }

    /// A 30-row "bar" of a 100-row frame that the lane's lines run into (a night road dark
    /// enough to pass for black) is road; lines that end above it, or marks only in its text
    /// rows, leave it a bar.
    #[test]
    fn a_bar_the_lines_run_into_is_dark_road() {
        let bars = || [30u32, 31].into_iter();
        // Two frames' dashes, rows 60-79 and 78-92: the bar's top third (rows 70-79) covered.
        let run_in = vec![
            (60..80).map(f64::from).collect::<Vec<_>>(),
            (78..93).map(f64::from).collect(),
        ];
        assert_eq!(bottom_bar_below_road(bars(), run_in, 100), 0);
        // Lines ending at row 68 (a hood's edge above the bar): a bar.
        let above = vec![(40..69).map(f64::from).collect::<Vec<_>>()];
        assert_eq!(bottom_bar_below_road(bars(), above, 100), 30);
        // Marks only in the text rows 76-86 under a black margin (glyphs where a line's
        // extension crosses the bar): rows 76-79 are 4 of its top third's 10; a bar.
        let text = vec![(40..69).chain(76..87).map(f64::from).collect::<Vec<_>>()];
        assert_eq!(bottom_bar_below_road(bars(), text, 100), 30);
        // No bar: nothing to undo.
        assert_eq!(
            bottom_bar_below_road([0u32].into_iter(), Vec::<Vec<f64>>::new(), 100),
            0
        );
    }
}
