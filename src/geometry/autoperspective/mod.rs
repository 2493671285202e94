//! Perspective quad and metres per pixel estimated from straight-road frames (`lanes perspective`).
//!
//! Per frame: candidate marking pixels ([`candidates`]), Hough segments and their vanishing
//! point, the ego lane's two lines, refitted ([`lines`]); a source trapezoid on those lines, a
//! straightness check in the bird's-eye view it gives, and whether they meet within
//! `max_yaw_deg` of the camera's axis. Over frames: the median vanishing point and bottom-row
//! line positions, one vote per view ([`views`]: a car standing still gives many frames of one
//! view), make one pair of lines and one quad. Scale: across the road from the lane width;
//! along the road from dash lengths ([`dashes`]) when dashes are measured, else from the
//! ground-plane geometry ([`ground`]).
//!
//! `options`: what the estimate is asked; `frame`: one frame's ego lines and checks;
//! `estimate`: the frames combined into a quad and scales; `views`: which frames are one view;
//! `pictures`: what it draws.

pub mod bars;
pub mod candidates;
pub mod dashes;
mod estimate;
mod frame;
pub mod ground;
pub mod lines;
mod options;
mod pictures;
pub mod report;
pub mod views;

pub use bars::{picture_width, side_bars};
pub use candidates::RIDGE_CUE;
pub use estimate::{
    combine, dash_cluster, estimate, frame_dashes, implausible_lines, no_two_agree, scale_warnings,
    CombinedLines, DashStats, Estimate, CAMERA_HEIGHT_RANGE_M, DASH_RANGE_M, SCALE_DISAGREEMENT,
};
pub use frame::{
    analyze_frame, birdseye_angles, check_straight, find_lane_lines, quad_on_lines, quad_rows,
    usable_views, FrameCheck, FrameOutcome, LaneLines, Rejection, L_CONTRASTS, NOMINAL_VIEW,
};
pub use options::{Options, YmSource};
pub use pictures::{birdseye_picture, frame_picture};
pub use views::View;

#[cfg(test)]
mod tests {
    use super::*;

    use super::options::*;

    use crate::base::config::PerspectiveConfig;

    use super::lines::ImageLine;
    use crate::lane::warp::Perspective;

    #[test]
    fn default_options_rebuild_the_udacity_quad_from_its_own_lines() {
        // The Udacity quad's edges as lines; its horizon is where they meet.
        let l = ImageLine::through((575.0, 464.0), (258.0, 682.0)).unwrap();
        let r = ImageLine::through((707.0, 464.0), (1049.0, 682.0)).unwrap();
        let vp = l.intersect(&r).unwrap();
        let q = quad_on_lines(&l, &r, vp.1, 720, &Options::default());
        let reference = PerspectiveConfig::default();
        // Rows 684 / 466 instead of 682 / 464: the corners sit on the same lines within 4 px.
        for i in 0..4 {
            assert!((q.src[i][1] - reference.src[i][1]).abs() < 3.0, "{q:?}");
            let line = if i % 2 == 0 { &l } else { &r };
            assert!((line.x_at(q.src[i][1]) - q.src[i][0]).abs() < 1e-9);
        }
        assert_eq!(q.dst, reference.dst);
    }

    #[test]
    fn dash_cluster_ignores_partial_and_merged_dashes() {
        let (n, m) = dash_cluster(&[36.0, 44.0, 80.0, 82.0, 84.0, 88.0, 90.0, 348.0]).unwrap();
        assert_eq!(n, 5);
        assert_eq!(m, 84.0);
        assert!(dash_cluster(&[]).is_none());
    }

    #[test]
    fn parallel_lines_are_vertical_in_their_own_birdseye_view() {
        let l = ImageLine::through((575.0, 464.0), (258.0, 682.0)).unwrap();
        let r = ImageLine::through((707.0, 464.0), (1049.0, 682.0)).unwrap();
        let vp = l.intersect(&r).unwrap();
        let q = quad_on_lines(&l, &r, vp.1, 720, &Options::default());
        let persp = Perspective::from_config(&q, 1280, 720).unwrap();
        let pixels: Vec<(f64, f64)> = (470..680).map(|y| (l.x_at(y as f64), y as f64)).collect();
        let a = birdseye_angles(&pixels, &persp, (q.src[0][1], q.src[2][1])).unwrap();
        assert!(a.iter().all(|d| d.abs() < 1e-3), "{a:?}"); // the quad goes through f32 in OpenCV
                                                            // A line bending away near the top is not.
        let bent: Vec<(f64, f64)> = (470..680)
            .map(|y| {
                (
                    l.x_at(y as f64) + 0.002 * (680.0 - y as f64).powi(2),
                    y as f64,
                )
            })
            .collect();
        let b = birdseye_angles(&bent, &persp, (q.src[0][1], q.src[2][1])).unwrap();
        assert!(b[0].abs() > 2.0, "{b:?}");
    }
}
