//! Finding the events in a drive's records (the definitions are in the module's docs).

use super::kinds::{Detail, Event, Side};
use crate::base::config::EventsConfig;
use crate::base::telemetry::FrameRecord;
use crate::lane::measure::RADIUS_CAP_M;

/// Frame rate of a record list from its times (median period over consecutive records);
/// `fallback` when the times say nothing (fewer than two records, or equal times).
pub fn fps_of(records: &[FrameRecord], fallback: f64) -> f64 {
    let mut periods: Vec<f64> = records
        .windows(2)
        .filter_map(|w| {
            let df = w[1].frame.checked_sub(w[0].frame)? as f64;
            let dt = w[1].time_s - w[0].time_s;
            (df > 0.0 && dt > 0.0 && dt.is_finite()).then_some(dt / df)
        })
        .collect();
    if periods.is_empty() {
        return fallback;
    }
    periods.sort_by(|a, b| a.total_cmp(b));
    let p = periods[periods.len() / 2];
    if p > 0.0 && (1.0 / p).is_finite() {
        1.0 / p
    } else {
        fallback
    }
}

/// Signed curvature of the drawn lane, 1/m: `1 / radius_m`, positive when the road bends left
/// (the drawn fits' mean `a` is negative: x shrinks towards the top of the bird's-eye view).
/// `None` without a radius; 0 on a straight road.
pub fn signed_curvature_per_m(r: &FrameRecord) -> Option<f64> {
    let radius = r.radius_m.filter(|v| v.is_finite() && *v > 0.0)?;
    if radius >= RADIUS_CAP_M {
        return Some(0.0);
    }
    let a: f64 = [r.left_fit, r.right_fit]
        .iter()
        .flatten()
        .map(|p| p.a)
        .sum();
    let sign = if a > 0.0 { -1.0 } else { 1.0 };
    Some(sign / radius)
}

/// The lane (offset, width) of a record, when one is drawn.
fn lane(r: &FrameRecord) -> Option<(f64, f64)> {
    if r.status == "none" {
        return None;
    }
    let o = r.offset_m.filter(|v| v.is_finite())?;
    let w = r.lane_width_m.filter(|v| v.is_finite() && *v > 0.0)?;
    Some((o, w))
}

fn span(records: &[FrameRecord], i: usize, j: usize, fps: f64, detail: Detail) -> Event {
    let (a, b) = (&records[i], &records[j]);
    let n = (b.frame + 1).saturating_sub(a.frame);
    Event {
        detail,
        start_frame: a.frame,
        end_frame: b.frame,
        start_s: a.time_s,
        end_s: b.time_s + 1.0 / fps,
        duration_s: n as f64 / fps,
    }
}

/// Runs of consecutive records (by index) where `pred` holds; `[start, end]` inclusive.
fn runs(records: &[FrameRecord], pred: impl Fn(&FrameRecord) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, r) in records.iter().enumerate() {
        match (pred(r), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i - 1));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, records.len() - 1));
    }
    out
}

fn long_enough(records: &[FrameRecord], (i, j): (usize, usize), fps: f64, min_s: f64) -> bool {
    let n = (records[j].frame + 1).saturating_sub(records[i].frame);
    n as f64 / fps >= min_s - 1e-9
}

/// A lane change between record indices `before` and `after`.
struct Change {
    before: usize,
    after: usize,
    direction: Side,
}

fn lane_changes(records: &[FrameRecord], fps: f64, cfg: &EventsConfig) -> Vec<Change> {
    let with_lane: Vec<(usize, f64, f64)> = records
        .iter()
        .enumerate()
        .filter_map(|(i, r)| lane(r).map(|(o, w)| (i, o, w)))
        .collect();
    let mut out = Vec::new();
    for p in with_lane.windows(2) {
        let ((i, oi, wi), (j, oj, wj)) = (p[0], p[1]);
        let gap_s = (records[j].frame.saturating_sub(records[i].frame)) as f64 / fps;
        if gap_s > cfg.lane_change_max_gap_s + 1.0 / fps + 1e-9 {
            continue;
        }
        let w = (wi + wj) / 2.0;
        let jump = oj - oi;
        if oi * oj < 0.0
            && jump.abs() >= cfg.lane_change_min_jump * w
            && jump.abs() <= cfg.lane_change_max_jump * w
        {
            out.push(Change {
                before: i,
                after: j,
                direction: if jump < 0.0 { Side::Right } else { Side::Left },
            });
        }
    }
    out
}

/// Least-squares slope of the offset over records `lo..=hi` that have one (m/s).
fn offset_slope(records: &[FrameRecord], lo: usize, hi: usize) -> Option<f64> {
    let pts: Vec<(f64, f64)> = records[lo..=hi]
        .iter()
        .filter_map(|r| lane(r).map(|(o, _)| (r.time_s, o)))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let mt = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let mo = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mt) * (p.0 - mt)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mt) * (p.1 - mo)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Every event in a drive's records (in frame order), sorted by start time then kind.
pub fn detect(records: &[FrameRecord], fps: f64, cfg: &EventsConfig) -> Vec<Event> {
    let mut out = Vec::new();
    if records.is_empty() || !(fps.is_finite() && fps > 0.0) {
        return out;
    }
    let changes = lane_changes(records, fps, cfg);
    for c in &changes {
        let (before, after) = (&records[c.before], &records[c.after]);
        let (ob, wb) = lane(before).unwrap_or((0.0, 0.0));
        let (oa, wa) = lane(after).unwrap_or((0.0, 0.0));
        // The centre over the line: frames before the jump whose offset (measured or
        // predicted by the tracker) is past the line towards the change.
        let towards = if c.direction == Side::Right {
            1.0
        } else {
            -1.0
        };
        let over = |r: &FrameRecord| lane(r).is_some_and(|(o, w)| towards * o > w / 2.0);
        let mut k = c.before + 1;
        while k > 0 && over(&records[k - 1]) {
            k -= 1;
        }
        let (i, j) = if k <= c.before || c.after > c.before + 1 {
            (k, c.after - 1)
        } else {
            (c.after, c.after)
        };
        out.push(span(
            records,
            i,
            j,
            fps,
            Detail::LaneChange {
                direction: c.direction,
                offset_before_m: ob,
                offset_after_m: oa,
                lane_width_m: (wb + wa) / 2.0,
            },
        ));
    }
    // Lane lost.
    for (i, j) in runs(records, |r| r.status == "none") {
        let inside_change = changes.iter().any(|c| c.before < i && j < c.after);
        if !inside_change && long_enough(records, (i, j), fps, cfg.lost_min_s) {
            out.push(span(
                records,
                i,
                j,
                fps,
                Detail::LaneLost { frames: j - i + 1 },
            ));
        }
    }
    // Lane departure, per side.
    let grace_frames = cfg.lane_change_grace_s * fps + 1e-6;
    for side in [Side::Left, Side::Right] {
        let excess = |r: &FrameRecord| {
            lane(r).map(|(o, w)| {
                let towards = if side == Side::Right { o } else { -o };
                towards + cfg.car_width_m / 2.0 - w / 2.0
            })
        };
        let over = |r: &FrameRecord| excess(r).is_some_and(|e| e > cfg.departure_margin_m);
        for (i, j) in runs(records, over) {
            if !long_enough(records, (i, j), fps, cfg.departure_min_s) {
                continue;
            }
            let part_of_change = changes.iter().any(|c| {
                let into = c.direction == side
                    && c.before >= j
                    && (records[c.before].frame - records[j].frame) as f64 <= grace_frames;
                let out_of = c.direction != side
                    && i >= c.after
                    && (records[i].frame - records[c.after].frame) as f64 <= grace_frames;
                into || out_of
            });
            if part_of_change {
                continue;
            }
            let max_excess = records[i..=j]
                .iter()
                .filter_map(excess)
                .fold(f64::MIN, f64::max);
            let (o, w) = lane(&records[i]).unwrap_or((0.0, 0.0));
            let t0 = records[i].time_s - cfg.lateral_speed_window_s - 1e-9;
            let lo = records[..=i]
                .iter()
                .rposition(|r| r.time_s < t0)
                .map_or(0, |k| k + 1);
            let towards = if side == Side::Right { 1.0 } else { -1.0 };
            let speed = offset_slope(records, lo, i).map(|v| v * towards);
            let tlc = speed
                .filter(|v| *v > 1e-6)
                .map(|v| (w / 2.0 - towards * o).max(0.0) / v);
            out.push(span(
                records,
                i,
                j,
                fps,
                Detail::LaneDeparture {
                    side,
                    max_excess_m: max_excess,
                    offset_m: o,
                    lane_width_m: w,
                    lateral_speed_mps: speed,
                    tlc_s: tlc,
                },
            ));
        }
    }
    // Tight bends: runs with a tight radius measured on both lines, the same direction and
    // less than `tight_merge_gap_s` between them are one bend, which must last `tight_min_s`.
    // A radius from one line or a prediction is not checked against a second line: during a
    // lane change the car's yaw bends a single line's fit (a straight LA freeway read 76 m).
    // Nor is a radius read while the car crosses a line or in the `lane_change_grace_s` after
    // (the lane the track moved to is fitted from its first frames while the car still turns
    // back: the LA freeway's versions read 29-175 m there): a bend that goes on past it is
    // reported from there.
    let settling = |r: &FrameRecord| {
        changes.iter().any(|c| {
            r.frame >= records[c.before].frame
                && r.frame as f64 <= records[c.after].frame as f64 + grace_frames
        })
    };
    let tight = |r: &FrameRecord| {
        !settling(r)
            && r.status == "both"
            && r.radius_m
                .is_some_and(|v| v.is_finite() && v < cfg.tight_radius_m)
    };
    let direction = |i: usize, j: usize| {
        let k: f64 = records[i..=j]
            .iter()
            .filter(|r| tight(r))
            .filter_map(signed_curvature_per_m)
            .sum();
        if k >= 0.0 {
            Side::Left
        } else {
            Side::Right
        }
    };
    let mut bends: Vec<(usize, usize, Side)> = Vec::new();
    for (i, j) in runs(records, tight) {
        let side = direction(i, j);
        if let Some(last) = bends.last_mut() {
            let gap = records[i].time_s - (records[last.1].time_s + 1.0 / fps);
            if last.2 == side && gap < cfg.tight_merge_gap_s - 1e-9 {
                last.1 = j;
                continue;
            }
        }
        bends.push((i, j, side));
    }
    for (i, j, side) in bends {
        if !long_enough(records, (i, j), fps, cfg.tight_min_s) {
            continue;
        }
        let min_radius = records[i..=j]
            .iter()
            .filter(|r| tight(r))
            .filter_map(|r| r.radius_m)
            .fold(f64::MAX, f64::min);
        out.push(span(
            records,
            i,
            j,
            fps,
            Detail::TightBend {
                direction: side,
                min_radius_m: min_radius,
            },
        ));
    }
    out.sort_by(|a, b| a.start_s.total_cmp(&b.start_s).then(a.kind().cmp(b.kind())));
    out
}
