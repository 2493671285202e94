//! A photo's field of view from its EXIF: `FocalLengthIn35mmFilm` (EXIF 2.3, CIPA DC-008), the
//! focal length a camera on 35 mm film (36 x 24 mm) would need for the same angle of view
//! across the picture's diagonal. Phones and cameras write it into every photo, so stills
//! that carry it need no `--fov`; frames extracted from a video, and most files that went
//! through an editor or a website, do not carry it.

use std::path::Path;

/// The diagonal of a 35 mm film frame (36 x 24 mm), millimetres.
pub const FILM_DIAGONAL_MM: f64 = 43.266_615_305_567_87;

/// The 35 mm-equivalent focal length in a still's EXIF, millimetres; `None` when the file has
/// no EXIF, lacks the tag, or gives 0 (the standard's "unknown").
pub fn focal_35mm(path: &Path) -> Option<u32> {
    let file = std::fs::File::open(path).ok()?;
    let mut reader = std::io::BufReader::new(file);
    let exif = exif::Reader::new().read_from_container(&mut reader).ok()?;
    let field = exif.get_field(exif::Tag::FocalLengthIn35mmFilm, exif::In::PRIMARY)?;
    field.value.get_uint(0).filter(|&v| v > 0)
}

/// The horizontal field of view, degrees, of a `width` x `height` picture (square pixels, as
/// shown) whose 35 mm-equivalent focal length is `f35_mm`: the equivalence holds over the
/// diagonal, so the picture's width spans the film diagonal's share along it.
pub fn hfov_deg(f35_mm: f64, width: f64, height: f64) -> f64 {
    let across = FILM_DIAGONAL_MM * width / width.hypot(height);
    (2.0 * (across / (2.0 * f35_mm)).atan()).to_degrees()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_3_by_2_picture_spans_the_film_width() {
        // On a 3:2 picture the diagonal's share across is the film's 36 mm: 2 atan(18 / f).
        let f = 50.0;
        let want = (2.0 * (18.0f64 / f).atan()).to_degrees();
        assert!((hfov_deg(f, 6000.0, 4000.0) - want).abs() < 1e-9);
        // A phone's 26 mm: 67.3 degrees across a 4:3 photo, 71.9 across a 16:9 one.
        assert!((hfov_deg(26.0, 4032.0, 3024.0) - 67.3).abs() < 0.05);
        assert!((hfov_deg(26.0, 1920.0, 1080.0) - 71.9).abs() < 0.05);
    }

    #[test]
    fn a_file_without_exif_has_no_focal_length() {
        let dir = std::env::temp_dir().join(format!("lanes-exif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("plain.jpg");
        // A JPEG's start and end markers only: no APP1 segment.
        std::fs::write(&p, [0xFF, 0xD8, 0xFF, 0xD9]).unwrap();
        assert_eq!(focal_35mm(&p), None);
        assert_eq!(focal_35mm(&dir.join("missing.jpg")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
