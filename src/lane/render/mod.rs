//! Drawing: the lane overlay (polygon warped back by its vertices, blended, with text) and the
//! search picture (windows, line pixels, fitted curves, histogram).
//!
//! `overlay`: the lane overlay; `text`: text stamped from glyphs rasterised once;
//! `diagnostic`: the search picture and the diagnostic composite.

mod diagnostic;
mod overlay;
mod text;

pub use diagnostic::{diagnostic, search_picture, DiagInfo};
pub use overlay::{
    draw_poly, fill_polygon_blended, lane_polygon_birdseye, lane_polygon_frame, offset_text,
    overlay, points_from_f64, radius_text, LaneToDraw,
};
pub use text::{draw_text_lines, draw_text_lines_squeezed, TextStamp};

#[cfg(test)]
mod tests {
    use super::*;

    use opencv::core::{self, Mat, Point, Scalar};
    use opencv::imgproc;
    use opencv::prelude::*;

    #[test]
    fn text_stamp_matches_put_text() {
        for (font, scale, thick) in [
            (imgproc::FONT_HERSHEY_DUPLEX, 1.2, 2),
            (imgproc::FONT_HERSHEY_SIMPLEX, 0.55, 1),
        ] {
            let mut a = Mat::new_rows_cols_with_default(120, 700, core::CV_8UC3, Scalar::all(60.0))
                .unwrap();
            let mut b = a.clone();
            let t = "Curve radius: 885 m  0.14 m left (g,y)";
            imgproc::put_text(
                &mut a,
                t,
                Point::new(20, 60),
                font,
                scale,
                Scalar::all(255.0),
                thick,
                imgproc::LINE_AA,
                false,
            )
            .unwrap();
            TextStamp::new(font, scale, thick)
                .unwrap()
                .draw(&mut b, t, Point::new(20, 60), Scalar::all(255.0))
                .unwrap();
            let mut d = Mat::default();
            core::absdiff(&a, &b, &mut d).unwrap();
            let diff = core::mean(&d, &core::no_array()).unwrap()[0];
            // Ink: the total brightness above the background (coverage, whatever the sub-pixel
            // phase of each glyph).
            let ink = |m: &Mat| -> u64 {
                m.data_bytes()
                    .unwrap()
                    .iter()
                    .map(|v| (*v as u64).saturating_sub(60))
                    .sum()
            };
            let (ia, ib) = (ink(&a) as f64, ink(&b) as f64);
            // Same glyphs within half a pixel: the mean difference is a small fraction of the
            // ink's (about 8 gray levels on average for this text), and the ink agrees to 5%.
            assert!(diff < 2.0, "font {font}: mean abs diff {diff:.2}");
            assert!((ia - ib).abs() / ia < 0.05, "font {font}: ink {ia} vs {ib}");
        }
    }

    /// On an anamorphic video's frames (pixels 4/3 as wide as tall, shown wider than stored)
    /// the text and its box are narrowed by 3/4 as stored: shown, they have the shape they
    /// have on square pixels. Before, the text was drawn as on square pixels and shown 4/3 as
    /// wide.
    #[test]
    fn text_on_anamorphic_frames_is_narrowed_by_the_pixel_aspect() {
        let extent = |x_scale: f64| -> (i32, i32, i32, i32) {
            let mut m =
                Mat::new_rows_cols_with_default(200, 900, core::CV_8UC3, Scalar::all(128.0))
                    .unwrap();
            let lines = vec!["Curve radius: 947 m".to_string(), "0.01 m left".to_string()];
            draw_text_lines_squeezed(&mut m, &lines, (40, 60), (1.2, x_scale), Scalar::all(255.0))
                .unwrap();
            // Columns and rows of the text's white ink, and of the box's darkening.
            let (mut ink, mut dark) = ((i32::MAX, 0, i32::MAX, 0), (i32::MAX, 0));
            for y in 0..m.rows() {
                for x in 0..m.cols() {
                    let v = m.at_2d::<core::Vec3b>(y, x).unwrap()[0];
                    if v > 200 {
                        ink = (ink.0.min(x), ink.1.max(x), ink.2.min(y), ink.3.max(y));
                    }
                    if v < 100 {
                        dark = (dark.0.min(x), dark.1.max(x));
                    }
                }
            }
            (ink.1 - ink.0, ink.3 - ink.2, dark.1 - dark.0, ink.0)
        };
        let (w1, h1, b1, _) = extent(1.0);
        let (w, h, b, x0) = extent(0.75);
        assert_eq!(h, h1, "text height");
        for (narrow, square) in [(w, w1), (b, b1)] {
            let r = narrow as f64 / square as f64;
            assert!(
                (r - 0.75).abs() < 0.02,
                "width {narrow} of {square}: {r:.3}"
            );
        }
        assert!(x0 >= 40, "text starts at the origin: {x0}");
    }
}
