//! Integration tests: corrupt, converted and oversized stills through `lanes image` (each bad
//! file is a counted one-line error, the others go on, exit 1; conversions are reported).

use super::*;
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
