//! Frames of one view: the frames of a car standing still (at a light, in a queue) told apart
//! from frames of distinct views, so that combining frames gives one vote per view
//! ([`view_groups`]). A median is robust only over independent samples: four or six frames of
//! one stop repeat one pick (right or wrong) and outvote the rest, on any camera.
//!
//! Two frames are one view when the fine structure of their luma grids (`lane::shot`'s every
//! 8th pixel of every 8th row, minus the mean of its 3x3 neighbours) correlates at least
//! [`SAME_VIEW_MIN_CORRELATION`] over the rows above the road's lowest marking, and, when both
//! frames' times are known, they are at least [`SAME_VIEW_MIN_GAP_S`] apart.
//!
//! Why the structure and not the mean absolute luma difference: a standing camera's frames
//! keep every edge in place while the exposure changes and traffic passes; a moving camera's
//! edges move, while the sky, smooth asphalt and a car's brightness stay. Measured on the
//! frames the estimate combined (CULane driver_161's two stops, 12-60 s apart; the 8 shared
//! clips' self-calibration samples; TuSimple, Udacity and other stills): the stopped pairs
//! differ by 0.016-0.045 of full scale, the moving ones by 0.021 and more (two samples of
//! `solidWhiteRight` 0.36 s apart), so no luma threshold separates them; the structure
//! correlates 0.79 and more on the stopped pairs, at most 0.62 on the moving ones.
//! The rows below the lowest marking are the car's own hood or dashboard, which moves with the
//! camera (on the LA clip it raised a moving pair 1 s apart from 0.63 to 0.72).
//!
//! Why the time gap: frames of a moving car a fraction of a second apart are nearly the same
//! picture (over every pair of frames of the 8 clips: up to 0.80 within 1 s, at most 0.65 at
//! 1 s and more, the LA clip's re-shown footage aside), and a stop long enough to outvote the
//! other frames lasts seconds (CULane's: 36 and 60 s). Frames without a time (stills) are
//! compared by their pictures alone.

use crate::lane::shot::{LumaSample, SAMPLE_STEP};

/// What a frame showed and when: what tells frames of one view apart.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// The frame's luma grid.
    pub luma: LumaSample,
    /// The frame's time in its video, seconds (`None` for a still).
    pub at_s: Option<f64>,
    /// The lowest row with marking pixels of either ego line: below it lies the car's hood or
    /// dashboard, which moves with the camera.
    pub road_bottom: f64,
}

/// The least correlation of two frames' fine structure for one view: 0.72, midway between
/// the moving car's pairs at least [`SAME_VIEW_MIN_GAP_S`] apart (at most 0.65 over every
/// such pair of the 8 shared clips) and the stopped car's (0.79 and more on CULane's two
/// stops); r^2 = 0.52, half of the structure shared.
pub const SAME_VIEW_MIN_CORRELATION: f64 = 0.72;

/// The least time between two frames of a video that may be one view, seconds: 1. Within it a
/// moving car's frames are nearly the same picture; at 10 km/h the car moves 2.8 m in it.
pub const SAME_VIEW_MIN_GAP_S: f64 = 1.0;

/// The grid's fine structure: each value minus the mean of its 3x3 neighbours (the edge rows
/// and columns repeated); `None` when the grid's size is not `cols` whole columns.
fn fine_structure(s: &LumaSample, cols: usize) -> Option<Vec<f64>> {
    if cols == 0 || s.values.is_empty() || !s.values.len().is_multiple_of(cols) {
        return None;
    }
    let rows = s.values.len() / cols;
    let at = |r: usize, c: usize| s.values[r * cols + c] as f64;
    let mut out = Vec::with_capacity(s.values.len());
    for r in 0..rows {
        for c in 0..cols {
            let mut sum = 0.0;
            for rr in [r.saturating_sub(1), r, (r + 1).min(rows - 1)] {
                for cc in [c.saturating_sub(1), c, (c + 1).min(cols - 1)] {
                    sum += at(rr, cc);
                }
            }
            out.push(at(r, c) - sum / 9.0);
        }
    }
    Some(out)
}

/// A grid's fine structure, once per frame: what frames are compared by.
struct Structure {
    size: (i32, i32),
    cols: usize,
    values: Vec<f64>,
}

impl Structure {
    fn of(s: &LumaSample) -> Option<Self> {
        let cols = (s.size.0.max(0) as usize).div_ceil(SAMPLE_STEP);
        Some(Self {
            size: s.size,
            cols,
            values: fine_structure(s, cols)?,
        })
    }

    /// The correlation with `other` over the rows above image row `bottom`; `None` for
    /// frames of different sizes or with no structure there.
    fn correlation(&self, other: &Self, bottom: f64) -> Option<f64> {
        if self.size != other.size || self.values.len() != other.values.len() {
            return None;
        }
        // Grid row r is image row 8r.
        let rows = ((bottom.max(0.0) / SAMPLE_STEP as f64).ceil() as usize)
            .min(self.values.len() / self.cols);
        let n = rows * self.cols;
        if n < 2 {
            return None;
        }
        let (fa, fb) = (&self.values[..n], &other.values[..n]);
        let (ma, mb) = (
            fa.iter().sum::<f64>() / n as f64,
            fb.iter().sum::<f64>() / n as f64,
        );
        let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
        for (x, y) in fa.iter().zip(fb) {
            let (dx, dy) = (x - ma, y - mb);
            sab += dx * dy;
            saa += dx * dx;
            sbb += dy * dy;
        }
        (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
    }
}

/// Whether two frames, with their structure computed, are one view: their fine structure
/// correlates at least [`SAME_VIEW_MIN_CORRELATION`] above the higher of their road bottoms,
/// and their times, when both are known, are at least [`SAME_VIEW_MIN_GAP_S`] apart.
fn one_view((a, sa): (&View, &Structure), (b, sb): (&View, &Structure)) -> bool {
    if let (Some(ta), Some(tb)) = (a.at_s, b.at_s) {
        // A time that is not a number is not a gap either.
        let apart = (ta - tb).abs() >= SAME_VIEW_MIN_GAP_S;
        if !apart {
            return false;
        }
    }
    sa.correlation(sb, a.road_bottom.min(b.road_bottom))
        .is_some_and(|r| r >= SAME_VIEW_MIN_CORRELATION)
}

/// The frames grouped by view: frames one view with each other, directly or through other
/// frames of the group, in one group; a frame without a view (or without structure) alone.
/// Groups in the order of their first frame, frames ascending.
pub fn view_groups(views: &[Option<&View>]) -> Vec<Vec<usize>> {
    let n = views.len();
    let frames: Vec<Option<(&View, Structure)>> = views
        .iter()
        .map(|v| v.and_then(|v| Some((v, Structure::of(&v.luma)?))))
        .collect();
    let mut group: Vec<Option<usize>> = vec![None; n];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for start in 0..n {
        if group[start].is_some() {
            continue;
        }
        let g = groups.len();
        group[start] = Some(g);
        let mut members = vec![start];
        let mut next = 0;
        while next < members.len() {
            let i = members[next];
            next += 1;
            let Some((vi, si)) = &frames[i] else { continue };
            for j in 0..n {
                let joins = group[j].is_none()
                    && frames[j]
                        .as_ref()
                        .is_some_and(|(vj, sj)| one_view((vi, si), (vj, sj)));
                if joins {
                    group[j] = Some(g);
                    members.push(j);
                }
            }
        }
        members.sort_unstable();
        groups.push(members);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The correlation of two luma grids' fine structure over their rows above image row
    /// `bottom`; `None` for grids of different frame sizes or with no structure there.
    fn structure_correlation(a: &LumaSample, b: &LumaSample, bottom: f64) -> Option<f64> {
        Structure::of(a)?.correlation(&Structure::of(b)?, bottom)
    }

    /// Whether two frames are one view (`one_view` on their structures).
    fn same_view(a: &View, b: &View) -> bool {
        match (Structure::of(&a.luma), Structure::of(&b.luma)) {
            (Some(sa), Some(sb)) => one_view((a, &sa), (b, &sb)),
            _ => false,
        }
    }

    /// The luma grid of a scene: shading down the rows plus edges at pseudo-random places.
    fn scene(seed: u64, size: (i32, i32)) -> LumaSample {
        let cols = (size.0 as usize).div_ceil(SAMPLE_STEP);
        let rows = (size.1 as usize).div_ceil(SAMPLE_STEP);
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let values = (0..rows * cols)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let shade = 40 + (i / cols) as u64;
                (shade + (x >> 59) * 4).min(255) as u8
            })
            .collect();
        LumaSample { size, values }
    }

    fn view(luma: LumaSample, at_s: Option<f64>) -> View {
        let road_bottom = luma.size.1 as f64;
        View {
            luma,
            at_s,
            road_bottom,
        }
    }

    /// `s` brighter by `gain` and `offset`, and `cells` cells (from `from`) another scene's:
    /// traffic that passed.
    fn relit(s: &LumaSample, gain: f64, offset: f64, from: usize, cells: usize) -> LumaSample {
        let traffic = scene(99, s.size);
        let mut out = s.clone();
        for (i, v) in out.values.iter_mut().enumerate() {
            *v = if (from..from + cells).contains(&i) {
                traffic.values[i]
            } else {
                (*v as f64 * gain + offset).clamp(0.0, 255.0) as u8
            };
        }
        out
    }

    #[test]
    fn a_standing_cars_frames_are_one_view_through_exposure_changes_and_some_traffic() {
        let a = scene(1, (512, 384));
        // Brighter by 15% and 5 levels, a tenth of the cells changed by passing traffic.
        let b = relit(&a, 1.15, 5.0, 1000, a.values.len() / 10);
        let r = structure_correlation(&a, &b, 384.0).unwrap();
        assert!(r >= SAME_VIEW_MIN_CORRELATION, "{r}");
        assert!(same_view(&view(a.clone(), None), &view(b.clone(), None)));
        // 12 s apart in a video: still one view.
        assert!(same_view(&view(a, Some(3.0)), &view(b, Some(15.0))));
    }

    #[test]
    fn the_frames_of_one_stop_are_one_vote() {
        // Four frames of one stop (12 s apart) and three of a moving car: the stop is one vote.
        let stop = scene(7, (512, 384));
        let mut views: Vec<View> = (0..4)
            .map(|i| view(relit(&stop, 1.0 + 0.05 * i as f64, 0.0, 0, 0), None))
            .collect();
        for seed in [11, 12, 13] {
            views.push(view(scene(seed, (512, 384)), None));
        }
        let refs: Vec<Option<&View>> = views.iter().map(Some).collect();
        assert_eq!(
            view_groups(&refs),
            vec![vec![0, 1, 2, 3], vec![4], vec![5], vec![6]]
        );
    }

    #[test]
    fn a_moving_cars_frames_are_not_one_view() {
        // The scene moved: every edge elsewhere (another draw of the scene) while the shading,
        // which the mean absolute difference mostly sees, stays.
        let (a, b) = (scene(3, (512, 384)), scene(4, (512, 384)));
        assert!(structure_correlation(&a, &b, 384.0).unwrap() < 0.3);
        assert!(!same_view(&view(a, None), &view(b, None)));
        // The same picture a fraction of a second apart in a video is not taken for a stop.
        let c = scene(5, (512, 384));
        assert!(!same_view(
            &view(c.clone(), Some(2.0)),
            &view(c.clone(), Some(2.5))
        ));
        assert!(same_view(&view(c.clone(), Some(2.0)), &view(c, Some(3.0))));
    }

    #[test]
    fn the_rows_below_the_road_are_left_out() {
        // Two different scenes above row 192 under one identical hood: not one view, though
        // the hood alone correlates perfectly.
        let (a, mut b) = (scene(21, (512, 384)), scene(22, (512, 384)));
        let cols = 512 / SAMPLE_STEP;
        let hood = 24 * cols;
        b.values[hood..].copy_from_slice(&a.values[hood..]);
        let whole = structure_correlation(&a, &b, 384.0).unwrap();
        let road = structure_correlation(&a, &b, 192.0).unwrap();
        assert!(road < 0.3 && whole > road + 0.2, "{road} {whole}");
        let (mut va, mut vb) = (view(a, None), view(b, None));
        va.road_bottom = 192.0;
        vb.road_bottom = 200.0;
        assert!(!same_view(&va, &vb));
    }

    #[test]
    fn frames_of_other_sizes_or_without_structure_are_not_compared() {
        let a = scene(1, (512, 384));
        assert_eq!(
            structure_correlation(&a, &scene(1, (256, 384)), 384.0),
            None
        );
        let flat = LumaSample {
            size: (512, 384),
            values: vec![90; a.values.len()],
        };
        assert_eq!(structure_correlation(&a, &flat, 384.0), None);
        // A frame with no view (lines found without `analyze_frame`) is a view of its own.
        let v = view(a, None);
        assert_eq!(
            view_groups(&[Some(&v), None, Some(&v)]),
            vec![vec![0, 2], vec![1]]
        );
    }
}
