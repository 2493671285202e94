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
pub use text::{draw_text_lines, TextStamp};

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
}
