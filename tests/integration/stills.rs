//! Integration tests: corrupt, converted and oversized stills through `lanes image` (each bad
//! file is a counted one-line error, the others go on, exit 1; conversions are reported).

use super::*;
use lanes::base::config::Config;
use serde_json::Value;

/// A copy of `bytes` with `n` bytes (from `seed`) inverted after the first `skip`.
fn flipped(bytes: &[u8], n: usize, skip: usize, seed: u64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let mut s = seed;
    for _ in 0..n {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let k = skip + (s >> 33) as usize % (b.len() - skip - 2);
        b[k] ^= 0xff;
    }
    b
}

#[test]
fn truncated_and_flipped_jpegs_are_corrupt_and_the_good_image_goes_on() {
    let Some(img) = data("udacity/test_images/test1.jpg") else {
        return;
    };
    let dir = tmp();
    let bytes = std::fs::read(&img).unwrap();
    let cut = dir.path().join("cut.jpg");
    std::fs::write(&cut, &bytes[..5000]).unwrap();
    let mut args = vec![
        "image".to_string(),
        img.to_string_lossy().to_string(),
        cut.to_string_lossy().to_string(),
    ];
    // A few hundred bytes inverted after the headers, five ways. (A flip of a byte or two can
    // leave a valid bitstream that no decoder can tell from the original; not tested.)
    for (i, n) in [(0, 300), (1, 300), (2, 200), (3, 200), (4, 100)] {
        let p = dir.path().join(format!("flip{i}.jpg"));
        std::fs::write(&p, flipped(&bytes, n, 1000, 7 + i)).unwrap();
        args.push(p.to_string_lossy().to_string());
    }
    let out = dir.path().join("out");
    args.extend([
        "-o".into(),
        out.to_string_lossy().to_string(),
        "--json".into(),
    ]);
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let o = lanes(&args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("cut.jpg: corrupt image ("), "{err}");
    for i in 0..5 {
        assert!(
            err.contains(&format!("flip{i}.jpg: corrupt image (")),
            "flip{i}: {err}"
        );
    }
    // No libjpeg chatter besides our lines.
    assert!(!err.lines().any(|l| l.starts_with("Corrupt JPEG")), "{err}");
    assert!(
        err.contains("1 processed") && err.contains("6 failed"),
        "{err}"
    );
    let recs: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["status"], "both");
    assert!(recs[0]["converted"].is_null());
    assert!(out.join("test1_overlay.jpg").exists());
    assert!(!out.join("cut_overlay.jpg").exists());
}

#[test]
fn gray_rgba_and_16_bit_pngs_are_converted_and_reported_and_huge_headers_refused() {
    let Some(img) = data("udacity/test_images/test1.jpg") else {
        return;
    };
    let dir = tmp();
    let rgb = ::image::open(&img).unwrap().to_rgb8();
    let gray = ::image::DynamicImage::ImageRgb8(rgb.clone()).to_luma8();
    let rgba = ::image::DynamicImage::ImageRgb8(rgb.clone()).to_rgba8();
    let rgb16 = ::image::DynamicImage::ImageRgb8(rgb.clone()).to_rgb16();
    gray.save(dir.path().join("gray.png")).unwrap();
    rgba.save(dir.path().join("rgba.png")).unwrap();
    rgb16.save(dir.path().join("rgb16.png")).unwrap();
    rgb.save(dir.path().join("rgb.png")).unwrap();
    // A 1x1 PNG whose header claims 16000x16000 (CRC fixed: only the size is wrong).
    let mut tiny = Vec::new();
    ::image::RgbImage::from_pixel(1, 1, ::image::Rgb([1, 2, 3]))
        .write_to(
            &mut std::io::Cursor::new(&mut tiny),
            ::image::ImageFormat::Png,
        )
        .unwrap();
    tiny[16..20].copy_from_slice(&16000u32.to_be_bytes());
    tiny[20..24].copy_from_slice(&16000u32.to_be_bytes());
    let crc = crc32fast::hash(&tiny[12..29]);
    tiny[29..33].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(dir.path().join("huge.png"), &tiny).unwrap();
    let out = dir.path().join("out");
    let names = ["rgb", "gray", "rgba", "rgb16", "huge"];
    let mut args = vec!["image".to_string()];
    for n in names {
        args.push(
            dir.path()
                .join(format!("{n}.png"))
                .to_string_lossy()
                .to_string(),
        );
    }
    args.extend([
        "-o".into(),
        out.to_string_lossy().to_string(),
        "--json".into(),
    ]);
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let t = std::time::Instant::now();
    let o = lanes(&args);
    let secs = t.elapsed().as_secs_f64();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "huge.png: image is 16000x16000, 256.0 megapixels, over the limit of 64 megapixels"
        ),
        "{err}"
    );
    assert!(
        secs < 10.0,
        "refused from the header, not decoded: {secs} s"
    );
    let recs: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 4, "{err}");
    let by = |n: &str| {
        recs.iter()
            .find(|r| r["file"].as_str().unwrap().ends_with(&format!("/{n}.png")))
            .unwrap()
    };
    assert!(by("rgb")["converted"].is_null());
    assert_eq!(by("gray")["converted"], "gray to BGR");
    assert_eq!(by("rgba")["converted"], "RGBA to BGR, alpha dropped");
    assert_eq!(
        by("rgb16")["converted"],
        "16-bit RGB to 8-bit (scaled by 1/256) BGR"
    );
    // Alpha dropped and 16 bits scaled back give the colour file's own lane, to the pixel.
    for n in ["rgba", "rgb16"] {
        assert_eq!(by(n)["left_fit"], by("rgb")["left_fit"], "{n}");
        assert_eq!(by(n)["right_fit"], by("rgb")["right_fit"], "{n}");
    }
    assert_eq!(by("rgb")["status"], "both");
}

/// An EXIF APP1 segment holding only `FocalLengthIn35mmFilm` (tag 0xA405, SHORT, in the Exif
/// IFD that IFD0 points to), big-endian TIFF, as cameras write it.
fn exif_app1(focal_35mm: u16) -> Vec<u8> {
    let mut tiff: Vec<u8> = vec![b'M', b'M', 0, 42, 0, 0, 0, 8];
    // IFD0 at 8: one entry, the Exif IFD's offset (LONG, 26), then no next IFD.
    tiff.extend([0, 1, 0x87, 0x69, 0, 4, 0, 0, 0, 1, 0, 0, 0, 26, 0, 0, 0, 0]);
    // The Exif IFD at 26: one entry, the focal length (SHORT, left-justified), no next IFD.
    let [hi, lo] = focal_35mm.to_be_bytes();
    tiff.extend([0, 1, 0xA4, 0x05, 0, 3, 0, 0, 0, 1, hi, lo, 0, 0, 0, 0, 0, 0]);
    let mut seg = vec![0xFF, 0xE1];
    seg.extend(((2 + 6 + tiff.len()) as u16).to_be_bytes());
    seg.extend(b"Exif\0\0");
    seg.extend(tiff);
    seg
}

/// `jpeg` with `exif_app1(focal_35mm)` right after its start marker.
fn with_exif(jpeg: &[u8], focal_35mm: u16) -> Vec<u8> {
    let mut v = jpeg[..2].to_vec();
    v.extend(exif_app1(focal_35mm));
    v.extend(&jpeg[2..]);
    v
}

/// Photos carry their field of view: stills whose EXIF gives a 35 mm-equivalent focal length
/// get the geometry of that field of view without `--fov`. Frames of a synthetic drive through a
/// 1280x720 pinhole whose focal length (1018.26 px) is a 30 mm equivalent (a 64.3-degree lens;
/// the 35 mm equivalent is taken over the picture's diagonal), written as JPEG with that EXIF:
/// `lanes perspective` prints the field of view it read, writes it to the config, and its
/// along-road scale is the one `--fov` with the lens's field of view gives on the same frames
/// (within 1%: the EXIF holds whole millimetres) and within 5% of the exact value for the rows
/// chosen; the assumed 58 degrees is off by the two focal lengths' ratio (13%). `lanes image` on the same
/// stills reads it too; stills whose EXIF disagree (a zoom), or give a focal length no lens
/// has, keep the assumed field of view.
#[test]
fn photos_carry_their_field_of_view_in_exif() {
    let d = tmp();
    let (w, h, f, cam_h, pitch) = (1280, 720, 1018.26, 1.45, 2.0);
    synth_drive(
        d.path(),
        (w, h, f),
        &["--seconds", "4", "--camera-height", "1.45", "--pitch", "2"],
    );
    let clip = d.path().join("synthetic_drive.mp4");
    let plain = d.path().join("plain");
    let (exif, zoom) = (d.path().join("exif"), d.path().join("zoom"));
    // A focal length no lens has (1 mm: a 174-degree field of view across).
    let wrong = d.path().join("wrong");
    for p in [&plain, &exif, &zoom, &wrong] {
        std::fs::create_dir_all(p).unwrap();
    }
    ffmpeg(&[
        "-i".as_ref(),
        clip.as_os_str(),
        "-vf".as_ref(),
        "select=not(mod(n\\,12))".as_ref(),
        "-vsync".as_ref(),
        "vfr".as_ref(),
        "-q:v".as_ref(),
        "2".as_ref(),
        plain.join("f%02d.jpg").as_os_str(),
    ]);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&plain)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{} frames", names.len());
    for (i, p) in names.iter().enumerate() {
        let bytes = std::fs::read(p).unwrap();
        let name = p.file_name().unwrap();
        std::fs::write(exif.join(name), with_exif(&bytes, 30)).unwrap();
        let zoomed = with_exif(&bytes, if i % 2 == 0 { 30 } else { 60 });
        std::fs::write(zoom.join(name), zoomed).unwrap();
        std::fs::write(wrong.join(name), with_exif(&bytes, 1)).unwrap();
    }
    let hfov = 2.0 * (w as f64 / 2.0 / f).atan().to_degrees();
    let fov_text = format!("{hfov:.3}");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let perspective = |dir: &Path, extra: &[&str], name: &str| {
        let out = d.path().join(name);
        let mut args = vec!["perspective".to_string(), s(dir), "-o".into(), s(&out)];
        args.extend(extra.iter().map(|a| a.to_string()));
        let refs: Vec<&str> = args.iter().map(|a| a.as_str()).collect();
        let o = lanes(&refs);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        (
            Config::load(&out).unwrap(),
            format!("{}{}", stdout(&o), stderr(&o)),
        )
    };
    let (from_exif, said) = perspective(&exif, &[], "exif.toml");
    let (given, _) = perspective(&plain, &["--fov", &fov_text], "fov.toml");
    let (assumed, _) = perspective(&plain, &[], "assumed.toml");
    let (zoomed, said_zoom) = perspective(&zoom, &[], "zoom.toml");
    // The exact scale for the rows the EXIF config chose (as `synthetic_rigs_give_...`).
    let src = from_exif.perspective.src;
    let cy = h as f64 / 2.0;
    let exact = (super::perspective::ground_distance(src[0][1], f, cy, cam_h, pitch)
        - super::perspective::ground_distance(src[2][1], f, cy, cam_h, pitch))
        / (from_exif.perspective.dst[2][1] - from_exif.perspective.dst[0][1]);
    let ym = |c: &Config| c.units.ym_per_px;
    eprintln!(
        "ym_per_px: EXIF {:.5}, --fov {fov_text} {:.5}, assumed {:.5}, zoom {:.5}, exact {exact:.5}\n{said}",
        ym(&from_exif),
        ym(&given),
        ym(&assumed),
        ym(&zoomed)
    );
    let fov = from_exif
        .camera
        .hfov_deg
        .expect("the config keeps the field of view");
    assert!((fov - hfov).abs() < 0.6, "{fov} against {hfov}");
    assert!(
        said.contains(&format!(
            "{fov}-deg field of view across, from the 35 mm-equivalent focal length in their EXIF (30 mm)"
        )),
        "{said}"
    );
    assert!(
        (ym(&from_exif) / ym(&given) - 1.0).abs() <= 0.01,
        "EXIF against --fov"
    );
    assert!(
        (ym(&from_exif) / exact - 1.0).abs() <= 0.05,
        "EXIF against the exact scale"
    );
    // Along the road the scale goes as 1 / focal length: tan(half the field of view).
    let half_tan = |deg: f64| (deg / 2.0).to_radians().tan();
    let ratio = half_tan(hfov) / half_tan(58.0);
    assert!(
        (ym(&assumed) / ym(&from_exif) / ratio - 1.0).abs() <= 0.01,
        "the assumed 58 degrees: {ratio:.3}"
    );
    assert!(ratio > 1.1, "{ratio}");
    assert!(
        said_zoom.contains("different 35 mm-equivalent focal lengths (30, 60 mm)"),
        "{said_zoom}"
    );
    assert_eq!(zoomed.camera.hfov_deg, None);
    assert_eq!(ym(&zoomed), ym(&assumed));
    // The 1 mm focal length is named and not used.
    let (unused, said_wrong) = perspective(&wrong, &[], "wrong.toml");
    assert!(
        said_wrong
            .contains("EXIF (1 mm) gives a 173.9-deg field of view, outside 10-160: not used"),
        "{said_wrong}"
    );
    assert_eq!(unused.camera.hfov_deg, None);
    assert_eq!(ym(&unused), ym(&assumed));
    // `lanes image` finds the stills' geometry with the same field of view.
    let o = lanes(&["image", &s(&exif), "-o", &s(&d.path().join("out"))]);
    assert_eq!(o.status.code(), Some(0), "image: {}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{fov}-deg field of view across, from the 35 mm-equivalent focal length in their EXIF (30 mm)")),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(&format!("{fov}-deg field of view given")),
        "{}",
        stderr(&o)
    );
}
