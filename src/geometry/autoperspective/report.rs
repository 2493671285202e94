//! What `lanes perspective` writes besides the estimate: the config file's text, the pictures
//! of every frame and their unique names.

use super::estimate::Estimate;
use super::frame::{FrameOutcome, LaneLines, Rejection, L_CONTRASTS};
use super::ground::GroundScale;
use super::options::Options;
use super::pictures::{birdseye_picture, frame_picture};
use crate::base::config::{Config, PerspectiveConfig};
use crate::base::error::Result;
use crate::base::frame::BgrFrame;
use crate::lane::warp::Perspective;
use std::collections::HashSet;
use std::path::Path;

/// "2.10 deg down" / "1.56 deg up".
pub fn pitch_text(deg: f64) -> String {
    if deg >= 0.0 {
        format!("{deg:.2} deg down")
    } else {
        format!("{:.2} deg up", -deg)
    }
}

/// "geometry: camera height 1.25 m, pitch 1.39 deg up, yaw -1.28 deg, quad 26.7 m long from
/// 5.5 m ahead -> ym_per_px 0.03705" (printed, and as a comment in the written config).
pub fn geometry_text(est: &Estimate, g: &GroundScale) -> String {
    format!(
        "geometry{}: camera height {:.2} m, pitch {}, yaw {:+.2} deg, quad {:.1} m long from {:.1} m ahead -> ym_per_px {:.5}",
        est.focal_note()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default(),
        g.camera_height_m,
        pitch_text(g.pitch_deg),
        g.yaw_deg,
        g.quad_length_m,
        g.near_m,
        g.ym_per_px
    )
}

/// Round a quad to 0.01 px for a readable config file.
fn round_quad(q: [[f64; 2]; 4]) -> [[f64; 2]; 4] {
    q.map(|p| p.map(|v| (v * 100.0).round() / 100.0))
}

/// One input frame after detection.
pub struct FrameResult {
    pub name: String,
    pub undistorted: BgrFrame,
    pub lines: Option<LaneLines>,
    /// Why the frame is not used (None when usable).
    pub problem: Option<String>,
    pub rejection: Option<Rejection>,
}

/// A picture-name stem unique among the frames: the file stem, with its folder name when two
/// frames share a stem.
pub fn unique_name(path: &Path, used: &mut HashSet<String>) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "frame".into());
    let mut name = stem.clone();
    if used.contains(&name) {
        let parent = path
            .parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        name = format!("{parent}_{stem}");
        let mut i = 2;
        while used.contains(&name) {
            name = format!("{parent}_{stem}_{i}");
            i += 1;
        }
    }
    used.insert(name.clone());
    name
}

/// Pictures of every frame, even unusable ones (they show what was found):
/// `<out_stem>_<name>_quad.jpg`, and `<out_stem>_<name>_birdseye.jpg` for used frames once the
/// quad is known.
pub fn write_frame_pictures(
    results: &[FrameResult],
    quad: Option<&PerspectiveConfig>,
    persp: Option<&Perspective>,
    out_dir: &Path,
    out_stem: &str,
) -> Result<()> {
    for r in results {
        let caption = match &r.problem {
            None => format!("{}: used", r.name),
            Some(p) => format!("{}: NOT USED: {p}", r.name),
        };
        let pic = match (&r.lines, &r.rejection) {
            (Some(l), _) => frame_picture(
                &r.undistorted,
                Some(&l.mask),
                Some(&l.left.line),
                Some(&l.right.line),
                Some(l.vp),
                quad,
                &caption,
            )?,
            (None, Some(rej)) => frame_picture(
                &r.undistorted,
                None,
                rej.left.as_ref(),
                rej.right.as_ref(),
                rej.vp,
                None,
                &caption,
            )?,
            (None, None) => frame_picture(&r.undistorted, None, None, None, None, None, &caption)?,
        };
        pic.write(&out_dir.join(format!("{out_stem}_{}_quad.jpg", r.name)))?;
        if let (Some(q), Some(p), None) = (quad, persp, &r.problem) {
            birdseye_picture(&r.undistorted, p, q)?
                .write(&out_dir.join(format!("{out_stem}_{}_birdseye.jpg", r.name)))?;
        }
    }
    Ok(())
}

/// The configuration `lanes perspective` writes: the estimate's perspective and units, the
/// tracker's lane-width check following the destination rectangle.
pub fn config_from_estimate(est: &Estimate) -> Result<Config> {
    let mut cfg = Config {
        perspective: est.perspective,
        units: est.units,
        ..Config::default()
    };
    cfg.perspective.src = round_quad(cfg.perspective.src);
    // A given field of view goes with the geometry (the online pitch uses the same focal length).
    cfg.camera.hfov_deg = est.focal.given_hfov();
    // The tracker's lane-width check is in bird's-eye pixels: follow the destination rectangle,
    // keeping the default tolerance's proportion (100 of 350 px).
    let defaults = Config::default().tracking;
    cfg.tracking.lane_width_px = est.lane_width_px;
    cfg.tracking.lane_width_tolerance_px =
        (est.lane_width_px * defaults.lane_width_tolerance_px / defaults.lane_width_px).round();
    cfg.validate()?;
    Ok(cfg)
}

/// The config file's text: a comment header (frames used, horizon, scale sources) and the TOML.
pub fn config_file_text(
    est: &Estimate,
    opts: &Options,
    cfg: &Config,
    used: usize,
    total: usize,
    (w, h): (i32, i32),
) -> String {
    let mut header = vec![
        format!(
            "# lanes configuration written by `lanes perspective` from {} of {} frames ({w}x{h}).",
            used, total
        ),
        format!(
            "# Horizon at row {:.1}; vanishing point x {:.1}. Lane width {} m, dash length {} m.",
            est.lines.vp.1, est.lines.vp.0, opts.lane_width_m, opts.dash_length_m
        ),
        format!("# ym_per_px from {}.", est.ym_from),
    ];
    if let Some(g) = &est.ground {
        header.push(format!("# {}.", geometry_text(est, g)));
    }
    if let Some(ds) = &est.dashes {
        header.push(format!(
            "# Dashes: {} measured, {} in the densest cluster, its median {:.1} px; ym_per_px {:.5}.",
            ds.lengths_px.len(),
            ds.cluster_count,
            ds.median_px,
            ds.ym_per_px
        ));
    }
    // The frame size the quad is in the pixels of: a video of another size is refused.
    let mut cfg = cfg.clone();
    cfg.perspective.frame = Some([w, h]);
    format!("{}\n{}", header.join("\n"), cfg.to_toml())
}

/// The line `lanes perspective` prints for a usable frame (after its name): horizon, vanishing
/// point, the lines at the bottom row and their bird's-eye angles; `None` for a frame not used.
pub fn frame_ok_text(o: &FrameOutcome, height: i32) -> Option<String> {
    let (Some(l), Some(c), true) = (&o.lines, &o.check, o.usable()) else {
        return None;
    };
    let h = height as f64;
    let faint = if o.l_contrast == L_CONTRASTS[0] {
        String::new()
    } else {
        format!("; faint paint, contrast {}", o.l_contrast)
    };
    Some(format!(
        "ok: horizon at row {:.1}, vanishing point x {:.1}; lines at bottom row x = {:.1} and {:.1}; bird's-eye angles left {:+.2}/{:+.2}/{:+.2}, right {:+.2}/{:+.2}/{:+.2} deg (top/middle/bottom){faint}",
        l.vp.1,
        l.vp.0,
        l.left.line.x_at(h),
        l.right.line.x_at(h),
        c.angles[0][0],
        c.angles[0][1],
        c.angles[0][2],
        c.angles[1][0],
        c.angles[1][1],
        c.angles[1][2],
    ))
}

/// What `lanes perspective` prints about an estimate: the quad, the geometry, the dashes and
/// the scales, one line each.
pub fn estimate_text(est: &Estimate, opts: &Options) -> Vec<String> {
    let s = &est.perspective.src;
    let d = &est.perspective.dst;
    let mut out = vec![format!(
        "src ({:.1},{:.1}) ({:.1},{:.1}) ({:.1},{:.1}) ({:.1},{:.1}); dst ({:.0},{:.0}) ({:.0},{:.0}) ({:.0},{:.0}) ({:.0},{:.0})",
        s[0][0], s[0][1], s[1][0], s[1][1], s[2][0], s[2][1], s[3][0], s[3][1], d[0][0], d[0][1], d[1][0], d[1][1], d[2][0], d[2][1], d[3][0], d[3][1]
    )];
    out.push(match &est.ground {
        Some(g) => geometry_text(est, g),
        None => "geometry: degenerate, not used".into(),
    });
    out.push(match &est.dashes {
        Some(ds) => {
            let mut l = ds.lengths_px.clone();
            l.sort_by(|a, b| a.total_cmp(b));
            let list: Vec<String> = l.iter().map(|v| format!("{v:.0}")).collect();
            // Why the dashes' scale is not the one used: said where it is printed.
            let role = if est.ym_from == "geometry" {
                " (a cross-check only: dashes are 3 m long in the US and 6 m on German motorways; --ym-from dashes takes them at --dash-length)"
            } else {
                ""
            };
            format!(
                "dashes: {} measured ({} px), {} in the densest cluster, its median {:.1} px -> ym_per_px {:.5}{role}",
                ds.lengths_px.len(),
                list.join(", "),
                ds.cluster_count,
                ds.median_px,
                ds.ym_per_px
            )
        }
        None => "dashes: none measured".into(),
    });
    out.push(format!(
        "xm_per_px {:.6} ({} m over {:.0} px), ym_per_px {:.6} (from {})",
        est.units.xm_per_px, opts.lane_width_m, est.lane_width_px, est.units.ym_per_px, est.ym_from
    ));
    out
}

/// The sampled frames' problems, kind by kind with how many frames had each, most frequent
/// first ("; no vanishing point in 40 frames; neither lane line found in 5"), or "" for none. A
/// kind is a problem's text before its details (a colon or a parenthesis); kinds that differ
/// only in their numbers ("vanishing point row -6 is implausible") are one.
pub fn problem_counts<'a>(problems: impl Iterator<Item = &'a str>) -> String {
    let mut kinds: Vec<(String, String, usize)> = Vec::new();
    for p in problems {
        let text = p.split(':').next().unwrap_or("");
        let text = text.split(" (").next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let key: String = text
            .split_whitespace()
            .map(|t| {
                if t.chars().any(|c| c.is_ascii_digit()) {
                    "#"
                } else {
                    t
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        match kinds.iter_mut().find(|k| k.0 == key) {
            Some(k) => k.2 += 1,
            None => kinds.push((key, text.to_string(), 1)),
        }
    }
    // Stable: kinds as frequent keep the order they were first seen in.
    kinds.sort_by_key(|k| std::cmp::Reverse(k.2));
    kinds
        .iter()
        .enumerate()
        .map(|(i, (_, text, n))| match (i, n) {
            (0, 1) => format!("; {text} in 1 frame"),
            (0, n) => format!("; {text} in {n} frames"),
            (_, n) => format!("; {text} in {n}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusals_reasons_are_counted_by_kind() {
        let problems = [
            "no vanishing point (0 line segments found)",
            "neither lane line found",
            "no vanishing point (3 line segments found)",
            "vanishing point row -6 is implausible",
            "vanishing point row 12 is implausible: above the frame",
            "no vanishing point (1 line segments found)",
            "lane lines meet outside the plausible area (at x 1873, y -12)",
        ];
        assert_eq!(
            problem_counts(problems.into_iter()),
            "; no vanishing point in 3 frames; vanishing point row -6 is implausible in 2; neither lane line found in 1; lane lines meet outside the plausible area in 1"
        );
        assert_eq!(problem_counts([""].into_iter()), "");
    }
}
