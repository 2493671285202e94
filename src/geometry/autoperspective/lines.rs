//! Straight lane lines on the perspective frame: Hough segments on the candidate mask, the
//! vanishing point they vote for, the two ego-lane lines nearest the camera's path, and a
//! least-squares refit of each on the candidate pixels along it.

use crate::base::error::Result;
use crate::base::frame::BinaryMask;
use opencv::core::{Vec4i, Vector};
use opencv::imgproc;

/// A straight image line `x = m*y + c` (pixels of the undistorted frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageLine {
    pub m: f64,
    pub c: f64,
}

impl ImageLine {
    /// x at row y.
    pub fn x_at(&self, y: f64) -> f64 {
        self.m * y + self.c
    }
    /// The line through two points (not horizontal).
    pub fn through(p: (f64, f64), q: (f64, f64)) -> Option<Self> {
        let dy = q.1 - p.1;
        if dy.abs() < 1e-9 {
            return None;
        }
        let m = (q.0 - p.0) / dy;
        Some(Self {
            m,
            c: p.0 - m * p.1,
        })
    }
    /// Intersection with another line; `None` when (nearly) parallel.
    pub fn intersect(&self, o: &ImageLine) -> Option<(f64, f64)> {
        let dm = self.m - o.m;
        if dm.abs() < 1e-9 {
            return None;
        }
        let y = (o.c - self.c) / dm;
        Some((self.x_at(y), y))
    }
}

/// A Hough segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub p: (f64, f64),
    pub q: (f64, f64),
}

impl Segment {
    pub fn len(&self) -> f64 {
        ((self.q.0 - self.p.0).powi(2) + (self.q.1 - self.p.1).powi(2)).sqrt()
    }
    pub fn mid(&self) -> (f64, f64) {
        ((self.p.0 + self.q.0) / 2.0, (self.p.1 + self.q.1) / 2.0)
    }
    /// dx/dy (infinite for horizontal segments).
    pub fn slope(&self) -> f64 {
        let dy = self.q.1 - self.p.1;
        if dy.abs() < 1e-9 {
            f64::INFINITY
        } else {
            (self.q.0 - self.p.0) / dy
        }
    }
    /// Perpendicular distance from a point to the segment's infinite line.
    pub fn distance_to_line(&self, pt: (f64, f64)) -> f64 {
        let (dx, dy) = (self.q.0 - self.p.0, self.q.1 - self.p.1);
        let l = (dx * dx + dy * dy).sqrt().max(1e-9);
        ((pt.0 - self.p.0) * dy - (pt.1 - self.p.1) * dx).abs() / l
    }
}

/// Hough parameters, scaled to the frame size by [`HoughParams::for_size`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HoughParams {
    /// Accumulator votes needed for a segment.
    pub votes: i32,
    /// Shortest segment kept, px.
    pub min_length: f64,
    /// Largest gap bridged inside a segment, px.
    pub max_gap: f64,
    /// Segments whose |dx/dy| lies outside this range are dropped (near-horizontal edges of the
    /// hood, cars and shadows; near-vertical poles and car sides).
    pub slope_range: (f64, f64),
}

impl HoughParams {
    /// Defaults for a frame `height` pixels tall (values for 720 rows: 20 votes, 20 px, 10 px).
    pub fn for_size(height: i32) -> Self {
        let s = height as f64 / 720.0;
        Self {
            votes: (20.0 * s).round().max(8.0) as i32,
            min_length: (20.0 * s).max(8.0),
            max_gap: (10.0 * s).max(4.0),
            slope_range: (0.12, 8.0),
        }
    }
}

/// Probabilistic Hough segments of the mask, filtered by slope.
pub fn hough_segments(mask: &BinaryMask, p: &HoughParams) -> Result<Vec<Segment>> {
    let mut raw: Vector<Vec4i> = Vector::new();
    imgproc::hough_lines_p(
        mask.mat(),
        &mut raw,
        1.0,
        std::f64::consts::PI / 180.0,
        p.votes,
        p.min_length,
        p.max_gap,
    )?;
    let mut out = Vec::with_capacity(raw.len());
    for s in raw.iter() {
        let seg = Segment {
            p: (s[0] as f64, s[1] as f64),
            q: (s[2] as f64, s[3] as f64),
        };
        let m = seg.slope().abs();
        if m >= p.slope_range.0 && m <= p.slope_range.1 {
            out.push(seg);
        }
    }
    Ok(out)
}

/// Whether a segment's line passes within `tol_deg` (seen from the segment) of a point, with a
/// floor of `floor_px` pixels.
fn passes_near(s: &Segment, pt: (f64, f64), tol_deg: f64, floor_px: f64) -> bool {
    let (mx, my) = s.mid();
    let dist_mid = ((pt.0 - mx).powi(2) + (pt.1 - my).powi(2)).sqrt();
    s.distance_to_line(pt) <= (dist_mid * tol_deg.to_radians().sin()).max(floor_px)
}

/// The vanishing point most segments point at, found by voting over intersections of pairs of
/// opposite-sloped segments, then refined by a length-weighted least-squares intersection of
/// its inliers. Returns the point and the inlier indices; `None` with fewer than two inliers.
pub fn vanishing_point(
    segs: &[Segment],
    width: i32,
    height: i32,
    tol_deg: f64,
) -> Option<((f64, f64), Vec<usize>)> {
    // Longest segments first; at most 250 take part in the vote.
    let mut idx: Vec<usize> = (0..segs.len()).collect();
    idx.sort_by(|a, b| segs[*b].len().total_cmp(&segs[*a].len()));
    idx.truncate(250);
    let (w, h) = (width as f64, height as f64);
    let floor = 2.0;
    let score = |pt: (f64, f64)| -> f64 {
        idx.iter()
            .filter(|&&k| passes_near(&segs[k], pt, tol_deg, floor))
            .map(|&k| segs[k].len())
            .sum()
    };
    let mut best: Option<((f64, f64), f64)> = None;
    for (ii, &i) in idx.iter().enumerate() {
        for &j in &idx[ii + 1..] {
            let (a, b) = (&segs[i], &segs[j]);
            if a.slope().signum() == b.slope().signum() {
                continue;
            }
            let (Some(la), Some(lb)) = (ImageLine::through(a.p, a.q), ImageLine::through(b.p, b.q))
            else {
                continue;
            };
            let Some(pt) = la.intersect(&lb) else {
                continue;
            };
            let top = a.p.1.min(a.q.1).min(b.p.1).min(b.q.1);
            if !(pt.1 < top && pt.1 > -h && pt.0 > -0.25 * w && pt.0 < 1.25 * w) {
                continue;
            }
            let s = score(pt);
            if best.map(|(_, bs)| s > bs).unwrap_or(true) {
                best = Some((pt, s));
            }
        }
    }
    let (mut pt, _) = best?;
    // Refine: weighted least squares of the inlier lines (normal form n.p = d), twice.
    let mut inliers = Vec::new();
    for _ in 0..2 {
        inliers = idx
            .iter()
            .copied()
            .filter(|&k| passes_near(&segs[k], pt, tol_deg, floor))
            .collect();
        let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &k in &inliers {
            let s = &segs[k];
            let (dx, dy) = (s.q.0 - s.p.0, s.q.1 - s.p.1);
            let l = (dx * dx + dy * dy).sqrt().max(1e-9);
            let (nx, ny) = (dy / l, -dx / l);
            let d = nx * s.p.0 + ny * s.p.1;
            let wgt = l;
            a11 += wgt * nx * nx;
            a12 += wgt * nx * ny;
            a22 += wgt * ny * ny;
            b1 += wgt * nx * d;
            b2 += wgt * ny * d;
        }
        let det = a11 * a22 - a12 * a12;
        if det.abs() < 1e-9 {
            break;
        }
        pt = ((a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det);
    }
    if inliers.len() < 2 {
        return None;
    }
    Some((pt, inliers))
}

/// A group of segments through the vanishing point that meet the bottom row near one x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineCluster {
    /// x where the line through the vanishing point meets the bottom row (length-weighted mean).
    pub x_bottom: f64,
    /// Total segment length, px.
    pub support: f64,
}

/// Cluster the segments through `vp` by the x at which they meet row `y_bottom`. Clusters are
/// sorted by `x_bottom`; segments closer than `gap` px at the bottom row join one cluster.
pub fn clusters_through(
    segs: &[Segment],
    inliers: &[usize],
    vp: (f64, f64),
    y_bottom: f64,
    gap: f64,
) -> Vec<LineCluster> {
    let mut xs: Vec<(f64, f64)> = inliers
        .iter()
        .filter_map(|&k| {
            let s = &segs[k];
            let (mx, my) = s.mid();
            if my - vp.1 < 1.0 {
                return None;
            }
            Some((
                vp.0 + (y_bottom - vp.1) * (mx - vp.0) / (my - vp.1),
                s.len(),
            ))
        })
        .collect();
    xs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<LineCluster> = Vec::new();
    let mut last_x = f64::NEG_INFINITY;
    let mut acc = (0.0, 0.0);
    for (x, l) in xs {
        if x - last_x > gap && acc.1 > 0.0 {
            out.push(LineCluster {
                x_bottom: acc.0 / acc.1,
                support: acc.1,
            });
            acc = (0.0, 0.0);
        }
        acc.0 += x * l;
        acc.1 += l;
        last_x = x;
    }
    if acc.1 > 0.0 {
        out.push(LineCluster {
            x_bottom: acc.0 / acc.1,
            support: acc.1,
        });
    }
    out
}

/// The ego lane's clusters: on each side of the vanishing point's column, the cluster nearest to
/// it whose support is at least `min_support`.
pub fn ego_clusters(
    clusters: &[LineCluster],
    vp_x: f64,
    min_support: f64,
) -> (Option<LineCluster>, Option<LineCluster>) {
    let left = clusters
        .iter()
        .filter(|c| c.x_bottom < vp_x && c.support >= min_support)
        .max_by(|a, b| a.x_bottom.total_cmp(&b.x_bottom))
        .copied();
    let right = clusters
        .iter()
        .filter(|c| c.x_bottom > vp_x && c.support >= min_support)
        .min_by(|a, b| a.x_bottom.total_cmp(&b.x_bottom))
        .copied();
    (left, right)
}

/// A line refitted on mask pixels, with the pixels it used.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedLine {
    pub line: ImageLine,
    /// The pixels within the final band, `(x, y)`.
    pub pixels: Vec<(f64, f64)>,
    /// Root-mean-square horizontal residual, px.
    pub rms: f64,
    /// Number of distinct rows holding pixels.
    pub rows: usize,
    /// First and last row holding pixels.
    pub span: (i32, i32),
}

/// Weighted least-squares fit of `x = m*y + c`.
fn fit_line(pts: &[(f64, f64)]) -> Option<ImageLine> {
    let n = pts.len() as f64;
    if pts.len() < 2 {
        return None;
    }
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let (mut syy, mut sxy) = (0.0, 0.0);
    for p in pts {
        syy += (p.1 - my) * (p.1 - my);
        sxy += (p.1 - my) * (p.0 - mx);
    }
    if syy < 1e-9 {
        return None;
    }
    let m = sxy / syy;
    Some(ImageLine { m, c: mx - m * my })
}

/// Refit a line on the mask pixels within a band around it, over rows `[y0, y1)`. The band's
/// half-width at row y is `band_frac * |x(y) - vp_x| + 3` px (it narrows towards the vanishing
/// point as the markings do); three passes with the band shrinking.
pub fn refine_line(
    mask: &BinaryMask,
    initial: ImageLine,
    vp_x: f64,
    rows: (i32, i32),
    band_frac: f64,
) -> Result<Option<FittedLine>> {
    let (w, h) = (mask.width(), mask.height());
    let data = mask.bytes()?;
    let y0 = rows.0.max(0);
    let y1 = rows.1.min(h);
    let mut line = initial;
    let mut pixels = Vec::new();
    for pass in 0..3 {
        let frac = band_frac * [1.0, 0.7, 0.5][pass];
        pixels.clear();
        for y in y0..y1 {
            let xc = line.x_at(y as f64);
            let half = frac * (xc - vp_x).abs() + 3.0;
            let xa = ((xc - half).floor() as i32).max(0);
            let xb = ((xc + half).ceil() as i32).min(w - 1);
            let off = (y * w) as usize;
            for x in xa..=xb {
                if data[off + x as usize] != 0 {
                    pixels.push((x as f64, y as f64));
                }
            }
        }
        match fit_line(&pixels) {
            Some(l) => line = l,
            None => return Ok(None),
        }
    }
    let rms = (pixels
        .iter()
        .map(|p| (p.0 - line.x_at(p.1)).powi(2))
        .sum::<f64>()
        / pixels.len().max(1) as f64)
        .sqrt();
    let mut rows_seen: Vec<i32> = pixels.iter().map(|p| p.1 as i32).collect();
    rows_seen.dedup();
    let span = (
        rows_seen.first().copied().unwrap_or(0),
        rows_seen.last().copied().unwrap_or(0),
    );
    Ok(Some(FittedLine {
        line,
        rows: rows_seen.len(),
        span,
        pixels,
        rms,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersection_of_two_lines() {
        let a = ImageLine::through((100.0, 700.0), (400.0, 400.0)).unwrap();
        let b = ImageLine::through((1100.0, 700.0), (800.0, 400.0)).unwrap();
        let (x, y) = a.intersect(&b).unwrap();
        assert!((x - 600.0).abs() < 1e-9 && (y - 200.0).abs() < 1e-9);
    }

    #[test]
    fn vanishing_point_of_segments_on_four_lines_ignores_a_stray_one() {
        let vp = (640.0, 400.0);
        let mut segs = Vec::new();
        for xb in [100.0, 350.0, 900.0, 1200.0] {
            let l = ImageLine::through(vp, (xb, 720.0)).unwrap();
            for (ya, yb) in [(450.0, 500.0), (550.0, 620.0), (650.0, 710.0)] {
                segs.push(Segment {
                    p: (l.x_at(ya), ya),
                    q: (l.x_at(yb), yb),
                });
            }
        }
        segs.push(Segment {
            p: (200.0, 500.0),
            q: (260.0, 560.0),
        });
        let (pt, inl) = vanishing_point(&segs, 1280, 720, 1.0).unwrap();
        assert!(
            (pt.0 - 640.0).abs() < 0.5 && (pt.1 - 400.0).abs() < 0.5,
            "{pt:?}"
        );
        assert_eq!(inl.len(), 12);
        let cl = clusters_through(&segs, &inl, pt, 720.0, 20.0);
        assert_eq!(cl.len(), 4);
        let (l, r) = ego_clusters(&cl, pt.0, 1.0);
        assert!((l.unwrap().x_bottom - 350.0).abs() < 1.0);
        assert!((r.unwrap().x_bottom - 900.0).abs() < 1.0);
    }
}
