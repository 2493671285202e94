//! The report's plots against time, drawn with `plotters` into SVG strings: offset with lane
//! and car edges, signed curvature, lane width, status/confidence band, search mode, and an
//! event strip. Events are shaded in every plot.

use crate::base::error::{Error, Result};
use crate::base::telemetry::FrameRecord;
use crate::drive::events::{self, Event};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Plot size in SVG pixels.
pub const WIDTH: u32 = 1100;
const HEIGHT: u32 = 230;

/// The colour of an event kind (also used by the page's table).
pub fn kind_colour(kind: &str) -> RGBColor {
    match kind {
        "lane_lost" => RGBColor(214, 39, 40),
        "lane_change" => RGBColor(31, 119, 180),
        "lane_departure" => RGBColor(255, 127, 14),
        _ => RGBColor(148, 103, 189),
    }
}

/// The colour of a drawn status.
pub fn status_colour(status: &str) -> RGBColor {
    match status {
        "both" => RGBColor(44, 160, 44),
        "left_only" | "right_only" => RGBColor(188, 189, 34),
        "predicted" => RGBColor(23, 190, 207),
        _ => RGBColor(214, 39, 40),
    }
}

/// What every plot shares: the time axis and the events.
pub struct Timeline<'a> {
    pub records: &'a [FrameRecord],
    pub events: &'a [Event],
    pub t0: f64,
    pub t1: f64,
    pub car_width_m: f64,
}

impl<'a> Timeline<'a> {
    pub fn new(records: &'a [FrameRecord], events: &'a [Event], fps: f64, car: f64) -> Self {
        let t0 = records.first().map_or(0.0, |r| r.time_s);
        let t1 = records.last().map_or(1.0, |r| r.time_s) + 1.0 / fps.max(1e-3);
        Self {
            records,
            events,
            t0,
            t1: if t1 > t0 { t1 } else { t0 + 1.0 },
            car_width_m: car,
        }
    }
}

fn plot_err(plot: &str) -> impl Fn(String) -> Error + '_ {
    move |message| Error::Plot {
        plot: plot.to_string(),
        message,
    }
}

/// Polyline pieces of `f` over the records (broken where it is `None`).
fn pieces(
    records: &[FrameRecord],
    f: impl Fn(&FrameRecord) -> Option<f64>,
) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur = Vec::new();
    for r in records {
        match f(r).filter(|v| v.is_finite()) {
            Some(v) => cur.push((r.time_s, v)),
            None => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn range_of(p: &[Vec<(f64, f64)>], lo: f64, hi: f64) -> (f64, f64) {
    let (mut a, mut b) = (lo, hi);
    for v in p.iter().flatten() {
        a = a.min(v.1);
        b = b.max(v.1);
    }
    let pad = 0.05 * (b - a).max(1e-6);
    (a - pad, b + pad)
}

type Chart<'b> = ChartContext<
    'b,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Build a chart on `root` with the time axis, shade the events, and let `draw` add series.
fn chart(
    tl: &Timeline,
    name: &str,
    caption: &str,
    y_desc: &str,
    (y0, y1): (f64, f64),
    height: u32,
    draw: impl FnOnce(&mut Chart) -> Result<(), String>,
) -> Result<String> {
    let y_numbers = !y_desc.is_empty();
    let e = plot_err(name);
    let mut buf = String::new();
    {
        let root: DrawingArea<SVGBackend, Shift> =
            SVGBackend::with_string(&mut buf, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let mut c = ChartBuilder::on(&root)
            .margin(6)
            .margin_right(24)
            .caption(caption, ("sans-serif", 15))
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(tl.t0..tl.t1, y0..y1)
            .map_err(|x| e(x.to_string()))?;
        let mut mesh = c.configure_mesh();
        mesh.x_desc("time (s)")
            .y_desc(y_desc)
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(("sans-serif", 11));
        if !y_numbers {
            mesh.y_labels(0);
        }
        mesh.draw().map_err(|x| e(x.to_string()))?;
        let min_w = (tl.t1 - tl.t0) / 500.0;
        c.draw_series(tl.events.iter().map(|ev| {
            let col = kind_colour(ev.kind()).mix(0.15);
            Rectangle::new(
                [(ev.start_s, y0), (ev.end_s.max(ev.start_s + min_w), y1)],
                col.filled(),
            )
        }))
        .map_err(|x| e(x.to_string()))?;
        draw(&mut c).map_err(&e)?;
        root.present().map_err(|x| e(x.to_string()))?;
    }
    Ok(buf)
}

fn lines(
    c: &mut Chart,
    p: Vec<Vec<(f64, f64)>>,
    colour: RGBColor,
    width: u32,
    label: &str,
) -> Result<(), String> {
    let mut first = true;
    for piece in p {
        let s = c
            .draw_series(LineSeries::new(piece, colour.stroke_width(width)))
            .map_err(|x| x.to_string())?;
        if first && !label.is_empty() {
            s.label(label.to_string()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
            });
            first = false;
        }
    }
    Ok(())
}

fn legend(c: &mut Chart) -> Result<(), String> {
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(("sans-serif", 11))
        .draw()
        .map_err(|x| x.to_string())
}

/// Vehicle position in the lane (the offset) with the lane edges (+-width/2) and the car's
/// edges (offset +- car width / 2).
pub fn offset(tl: &Timeline) -> Result<String> {
    let r = tl.records;
    let half_car = tl.car_width_m / 2.0;
    let off = pieces(r, |r| r.offset_m);
    let left = pieces(r, |r| r.lane_width_m.map(|w| -w / 2.0));
    let right = pieces(r, |r| r.lane_width_m.map(|w| w / 2.0));
    let car_l = pieces(r, |r| r.offset_m.map(|o| o - half_car));
    let car_r = pieces(r, |r| r.offset_m.map(|o| o + half_car));
    let mut all = off.clone();
    all.extend(left.iter().cloned());
    all.extend(right.iter().cloned());
    all.extend(car_l.iter().cloned());
    all.extend(car_r.iter().cloned());
    let yr = range_of(&all, -2.2, 2.2);
    chart(
        tl,
        "offset",
        "Position in the lane (offset, + = right of the lane centre)",
        "m",
        yr,
        HEIGHT + 40,
        |c| {
            lines(c, left, RGBColor(90, 90, 90), 2, "lane edges")?;
            lines(c, right, RGBColor(90, 90, 90), 2, "")?;
            lines(c, car_l, RGBColor(255, 127, 14), 1, "car edges")?;
            lines(c, car_r, RGBColor(255, 127, 14), 1, "")?;
            lines(c, off, RGBColor(31, 119, 180), 2, "offset")?;
            legend(c)
        },
    )
}

/// Signed curvature 1/R in 1/km (positive = bends left; straight = 0).
pub fn curvature(tl: &Timeline) -> Result<String> {
    let k = pieces(tl.records, |r| {
        events::signed_curvature_per_m(r).map(|k| k * 1000.0)
    });
    let yr = range_of(&k, -1.0, 1.0);
    chart(
        tl,
        "curvature",
        "Signed curvature 1/R (+ = bends left)",
        "1/km",
        yr,
        HEIGHT,
        |c| {
            c.draw_series(LineSeries::new(
                [(tl.t0, 0.0), (tl.t1, 0.0)],
                RGBColor(160, 160, 160).stroke_width(1),
            ))
            .map_err(|x| x.to_string())?;
            lines(c, k, RGBColor(148, 103, 189), 2, "1/R")
        },
    )
}

/// Lane width, m.
pub fn lane_width(tl: &Timeline) -> Result<String> {
    let w = pieces(tl.records, |r| r.lane_width_m);
    let yr = range_of(&w, 3.0, 4.2);
    chart(tl, "lane_width", "Lane width", "m", yr, HEIGHT, |c| {
        lines(c, w, RGBColor(44, 160, 44), 2, "lane width")
    })
}

/// The camera's pitch relative to the road that the measurements used (`tracking.online_pitch`),
/// degrees down; `None` when the telemetry has none (online pitch off, or older telemetry).
pub fn pitch(tl: &Timeline) -> Result<Option<String>> {
    let p = pieces(tl.records, |r| r.pitch_deg);
    if p.is_empty() {
        return Ok(None);
    }
    let (lo, hi) = range_of(&p, f64::INFINITY, f64::NEG_INFINITY);
    let mid = (lo + hi) / 2.0;
    // At least a degree of range: a steady pitch is drawn flat, not magnified noise.
    let yr = (lo.min(mid - 0.5), hi.max(mid + 0.5));
    chart(
        tl,
        "pitch",
        "Camera pitch relative to the road (online estimate, + = down)",
        "deg",
        yr,
        HEIGHT,
        |c| lines(c, p, RGBColor(140, 86, 75), 2, "pitch"),
    )
    .map(Some)
}

/// Runs of equal `key` over the records: (start time, end time, key).
fn bands<'r>(
    tl: &Timeline<'r>,
    key: impl Fn(&'r FrameRecord) -> &'r str,
) -> Vec<(f64, f64, &'r str)> {
    let r = tl.records;
    let mut out: Vec<(f64, f64, &str)> = Vec::new();
    for (i, rec) in r.iter().enumerate() {
        let end = r.get(i + 1).map_or(tl.t1, |n| n.time_s);
        let k = key(rec);
        match out.last_mut() {
            Some(last) if last.2 == k && (last.1 - rec.time_s).abs() < 1e-9 => last.1 = end,
            _ => out.push((rec.time_s, end, k)),
        }
    }
    out
}

/// The drawn status as a coloured band (bottom) with the drawn lane's confidence over it.
pub fn status(tl: &Timeline) -> Result<String> {
    let b = bands(tl, |r| r.status.as_str());
    let conf = pieces(tl.records, |r| Some(r.confidence));
    chart(
        tl,
        "status",
        "Status (band: both / one line / predicted / none) and confidence",
        "confidence",
        (-0.3, 1.05),
        HEIGHT,
        |c| {
            c.draw_series(b.iter().map(|(a, z, s)| {
                Rectangle::new([(*a, -0.28), (*z, -0.05)], status_colour(s).filled())
            }))
            .map_err(|x| x.to_string())?;
            for (s, l) in [
                ("both", "both"),
                ("left_only", "one line"),
                ("predicted", "predicted"),
                ("none", "none"),
            ] {
                let col = status_colour(s);
                c.draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
                    .map_err(|x| x.to_string())?
                    .label(l)
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], col.filled())
                    });
            }
            lines(c, conf, RGBColor(0, 0, 0), 1, "confidence")?;
            legend(c)
        },
    )
}

/// Search mode: 1 = sliding windows (a fresh search), 0 = around the prior fit.
pub fn search(tl: &Timeline) -> Result<String> {
    let b = bands(tl, |r| r.search.as_str());
    chart(
        tl,
        "search",
        "Search mode (high: sliding windows, low: around the prior fit)",
        "",
        (-0.2, 1.2),
        HEIGHT - 70,
        |c| {
            let pts: Vec<(f64, f64)> = b
                .iter()
                .flat_map(|(a, z, s)| {
                    let y = if s.starts_with("prior") { 0.0 } else { 1.0 };
                    [(*a, y), (*z, y)]
                })
                .collect();
            c.draw_series(LineSeries::new(
                pts,
                RGBColor(127, 127, 127).stroke_width(2),
            ))
            .map_err(|x| x.to_string())?;
            Ok(())
        },
    )
}

/// One row per event kind with a mark for each event (the event markers on the time axis).
pub fn event_strip(tl: &Timeline) -> Result<String> {
    let n = events::KINDS.len() as f64;
    chart(
        tl,
        "events",
        "Events (rows: lane lost, lane change, departure, tight bend)",
        "",
        (0.0, n),
        HEIGHT - 50,
        |c| {
            let min_w = (tl.t1 - tl.t0) / 300.0;
            for (row, kind) in events::KINDS.iter().enumerate() {
                let y = n - row as f64 - 1.0;
                let col = kind_colour(kind);
                c.draw_series(tl.events.iter().filter(|e| e.kind() == *kind).map(|e| {
                    Rectangle::new(
                        [
                            (e.start_s, y + 0.15),
                            (e.end_s.max(e.start_s + min_w), y + 0.85),
                        ],
                        col.filled(),
                    )
                }))
                .map_err(|x| x.to_string())?
                .label(kind.to_string())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], col.filled()));
            }
            legend(c)
        },
    )
}
