//! Perspective warp to the bird's-eye view and back: a `Perspective` holds M and its inverse,
//! and a `BirdseyeRemap` composes undistortion and warp into one remap from the raw frame.
//!
//! `perspective`: the homography maths; `remap`: the one-pass remap and its column bands;
//! `kernel`: the fixed-point bilinear sampling (SSE4.1 or AVX2 where the CPU has it) they run
//! on.

mod kernel;
mod perspective;
mod remap;

pub use perspective::Perspective;
pub use remap::{BirdseyeRemap, ColumnBands, RowPlan, Span};

#[cfg(test)]
mod tests {
    use super::kernel::*;
    use super::perspective::*;
    use super::remap::*;
    use crate::base::camera::Camera;
    use crate::base::config::PerspectiveConfig;
    use crate::base::error::Error;
    use crate::base::frame::BgrFrame;

    use opencv::core::{self, Mat};

    use opencv::prelude::*;

    #[test]
    fn default_quad_maps_src_corners_to_dst_corners() {
        let c = PerspectiveConfig::default();
        let p = Perspective::from_config(&c, 1280, 720).unwrap();
        for i in 0..4 {
            let (x, y) = p.to_birdseye(c.src[i][0], c.src[i][1]);
            assert!(
                (x - c.dst[i][0]).abs() < 1e-3 && (y - c.dst[i][1]).abs() < 1e-3,
                "{i}: {x},{y}"
            );
        }
    }

    #[test]
    fn warp_then_unwarp_is_identity_within_a_pixel() {
        let c = PerspectiveConfig::default();
        let p = Perspective::from_config(&c, 1280, 720).unwrap();
        for &(x, y) in &[
            (300.0, 700.0),
            (640.0, 500.0),
            (1000.0, 650.0),
            (600.0, 470.0),
        ] {
            let (bx, by) = p.to_birdseye(x, y);
            let (rx, ry) = p.from_birdseye(bx, by);
            assert!((rx - x).abs() < 1.0 && (ry - y).abs() < 1.0);
        }
    }

    /// The fixed-point maps written directly are `convertMaps`' own: ties at 1/64 px, both
    /// signs, the edges of 16 bits and the out-of-frame marker, and a real view's positions.
    #[test]
    fn fixed_point_maps_are_what_convert_maps_gives() {
        let mut vals: Vec<f32> = vec![-1.0e5, -32768.5, -32769.0, 32767.97, 40000.0, -0.0, 0.0];
        for k in -200..200 {
            vals.push(k as f32 / 64.0);
            vals.push(k as f32 / 64.0 + 640.0);
            vals.push(k as f32 * 0.0371 - 3.0);
        }
        let p = Perspective::from_config(&PerspectiveConfig::default(), 1280, 720).unwrap();
        for v in (0..720).step_by(37) {
            for u in (0..1280).step_by(53) {
                let (x, y) = p.from_birdseye(u as f64, v as f64);
                vals.extend([x as f32, y as f32]);
            }
        }
        let n = vals.len();
        let pairs: Vec<core::Vec2f> = (0..n)
            .map(|i| core::Vec2f::from([vals[i], vals[(i * 7 + 3) % n]]))
            .collect();
        let map = Mat::from_slice(&pairs).unwrap();
        let (mut m1, mut m2) = (Mat::default(), Mat::default());
        opencv::imgproc::convert_maps(
            &map,
            &Mat::default(),
            &mut m1,
            &mut m2,
            core::CV_16SC2,
            false,
        )
        .unwrap();
        let ints: &[core::Vec2s] = m1.data_typed().unwrap();
        let fracs: &[u16] = m2.data_typed().unwrap();
        for (i, p) in pairs.iter().enumerate() {
            assert_eq!(fixed_point(p[0], p[1]), (ints[i], fracs[i]), "{p:?}");
        }
    }

    #[test]
    fn degenerate_quad_is_refused() {
        let src = [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]];
        let dst = PerspectiveConfig::default().dst;
        assert!(matches!(
            Perspective::new(&src, &dst, 1280, 720),
            Err(Error::SingularPerspective(_))
        ));
    }

    #[test]
    fn spans_and_gaps_cover_the_packed_image_exactly_once() {
        // Curves inside, across the left and right edges, entirely outside, and not finite.
        let curves = [
            crate::base::poly::Poly2::new(0.0, 0.0, 300.0),
            crate::base::poly::Poly2::new(0.0, 2.0, -100.0),
            crate::base::poly::Poly2::new(0.0, -1.5, 1000.0),
            crate::base::poly::Poly2::new(0.0, 0.0, 5000.0),
            crate::base::poly::Poly2::new(f64::NAN, 0.0, 0.0),
        ];
        for step in [1, 3] {
            let plan = std::sync::Arc::new(RowPlan::every(360, step));
            let bands = ColumnBands::around(&curves, 40, 640, 360, &plan);
            let mut seen = vec![0u8; bands.rows() * bands.packed_width()];
            let (mut in_spans, mut in_gaps) = (0, 0);
            for sp in bands.spans() {
                seen[sp.packed..sp.packed + sp.len]
                    .iter_mut()
                    .for_each(|v| *v += 1);
                in_spans += sp.len;
            }
            for g in bands.gaps() {
                in_gaps += g.len();
                seen[g].iter_mut().for_each(|v| *v += 1);
            }
            assert!(seen.iter().all(|v| *v == 1), "row step {step}");
            assert!(in_spans > 0 && in_gaps > 0, "{in_spans} {in_gaps}");
        }
    }

    #[test]
    fn band_pixels_equal_opencv_remap_everywhere() {
        // Every column of the view (the band spans it all), on a noise frame, through the
        // Udacity lens: inside, at the frame's edges (taps partly outside) and outside it.
        let cam = Camera::load(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("calibration/udacity.yml"),
        )
        .unwrap();
        let p = Perspective::from_config(&PerspectiveConfig::default(), 1280, 720).unwrap();
        let remap = BirdseyeRemap::new(
            &p,
            Some(&cam),
            crate::base::config::Scale { x: 1.0, y: 0.5 },
        )
        .unwrap();
        let mut raw =
            Mat::new_rows_cols_with_default(720, 1280, core::CV_8UC3, core::Scalar::all(0.0))
                .unwrap();
        let mut state = 12345u64;
        for v in raw.data_bytes_mut().unwrap() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *v = (state >> 56) as u8;
        }
        let raw = BgrFrame::new(raw).unwrap();
        let whole = remap.apply(&raw).unwrap();
        let centre = crate::base::poly::Poly2::new(0.0, 0.0, 640.0);
        let plan = std::sync::Arc::new(RowPlan::every(remap.height, 1));
        let bands = ColumnBands::around(&[centre], 641, remap.width, remap.height, &plan);
        let mut packed = vec![0u8; bands.rows() * bands.packed_width() * 3];
        remap
            .visit_band_runs((&raw).into(), &bands, |a, run| {
                for (i, px) in run.iter().enumerate() {
                    packed[(a + i) * 3..(a + i) * 3 + 3].copy_from_slice(px);
                }
            })
            .unwrap();
        let (wd, pd) = (whole.bytes().unwrap(), &packed);
        let (w, pw) = (remap.width as usize, bands.packed_width());
        let (mut n, mut black) = (0, 0);
        for r in 0..bands.rows() {
            let (rg, x) = bands.run(r, 0).unwrap();
            assert_eq!(rg.len(), w);
            for i in 0..rg.len() {
                let a = (r * w + x + i) * 3;
                let b = (r * pw + rg.start + i) * 3;
                assert_eq!(&wd[a..a + 3], &pd[b..b + 3], "row {r} column {}", x + i);
                n += 1;
                black += (wd[a..a + 3] == [0, 0, 0]) as usize;
            }
        }
        assert_eq!(n, 1280 * 360);
        assert!(
            black > 1000,
            "the view reaches outside the frame ({black} black pixels)"
        );
    }

    #[test]
    fn fast_sums_conversion_equals_opencv_s_pixel_conversion() {
        // Every Y, U, V triple as a sum of four equal taps (1024 units): the fast conversion
        // is OpenCV's within one grey level, and differs at all only where the exact value lies
        // within its 2^-14 coefficients' reach of a rounding tie (0.1% of the values here).
        let mut differ = 0usize;
        for y in 0..=255u8 {
            for u in 0..=255u8 {
                for v in 0..=255u8 {
                    let exact = crate::base::planes::yuv_to_bgr(y, u, v);
                    let fast = sums_to_bgr_fast(y as i32 * 1024, u as i32 * 1024, v as i32 * 1024);
                    for c in 0..3 {
                        let d = exact[c].abs_diff(fast[c]);
                        assert!(d <= 1, "{y} {u} {v}: {exact:?} {fast:?}");
                        differ += (d > 0) as usize;
                    }
                }
            }
        }
        assert!(
            differ < 3 * (1 << 24) / 500,
            "{differ} channel values differ by one"
        );
    }

    /// The AVX2 plane sampler gives exactly the scalar one's pixels: every sub-pixel index at
    /// points all over a frame of random planes (strides wider than the rows), on its last rows
    /// and columns, and outside it, in groups of eight that mix them and that do not.
    /// A small linear congruential generator: the same pseudo-random bytes on every run.
    fn lcg(seed: u64) -> impl FnMut() -> u32 {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        }
    }

    #[test]
    fn scalar_and_avx2_plane_sampling_agree_everywhere() {
        let (w, h) = (48usize, 34usize);
        let (ys, cs) = (w + 16, w / 2 + 8);
        let mut next = lcg(7);
        // Exactly the bytes `Yuv420Planes::new` requires: the smallest planes the sampler may be
        // given, so the bottom rows take the paths they take on the tightest real planes.
        let y: Vec<u8> = (0..(h - 1) * ys + w).map(|_| next() as u8).collect();
        let u: Vec<u8> = (0..(h / 2 - 1) * cs + w / 2)
            .map(|_| next() as u8)
            .collect();
        let v: Vec<u8> = (0..(h / 2 - 1) * cs + w / 2)
            .map(|_| next() as u8)
            .collect();
        let planes = crate::base::planes::Yuv420Planes::new(
            (w as i32, h as i32),
            (&y, ys),
            (&u, cs),
            (&v, cs),
        )
        .unwrap();
        let src = PlaneSource(planes);
        let n = 1024 * 8;
        let m1: Vec<core::Vec2s> = (0..n)
            .map(|k| {
                // Runs of eight inside the fast path's bounds, and runs anywhere.
                let (x, y) = if (k / 8) % 2 == 0 {
                    (next() % (w as u32 - 1), next() % (h as u32 - 3))
                } else {
                    (next() % (w as u32 + 4), next() % (h as u32 + 4))
                };
                let (x, y) = if (k / 8) % 2 == 0 {
                    (x as i16, y as i16)
                } else {
                    (x as i16 - 2, y as i16 - 2)
                };
                core::Vec2s::from([x, y])
            })
            .collect();
        let m2: Vec<u16> = (0..n)
            .map(|k| (k % 1024) as u16 | (next() as u16 & !1023))
            .collect();
        let mut a = vec![[0u8; 3]; n + 5];
        src.run(&m1, &m2, &mut a[..n]);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            for len in [n, n - 5, 7] {
                let mut b = vec![[1u8; 3]; len];
                // SAFETY: AVX2 was detected.
                unsafe { src.run_avx2(&m1[..len], &m2[..len], &mut b) };
                assert_eq!(a[..len], b[..], "{len} points");
            }
        } else {
            println!("no AVX2 on this machine: only the scalar path was run");
        }
        assert!(
            a[..n].contains(&[0, 0, 0]) && a.iter().filter(|p| **p != [0, 0, 0]).count() > n / 2
        );
    }

    #[test]
    fn scalar_and_sse41_bilinear_agree_on_every_sub_pixel_position() {
        let (w, h) = (40usize, 30usize);
        let mut next = lcg(99);
        let img: Vec<u8> = (0..w * h * 3).map(|_| next() as u8).collect();
        let src = Source {
            img: &img,
            width: w as i32,
            height: h as i32,
        };
        // Every sub-pixel index, at points inside, on the last row and column, and outside.
        let m1: Vec<core::Vec2s> = (0..1024)
            .map(|_| {
                let x = (next() % (w as u32 + 4)) as i16 - 2;
                let y = (next() % (h as u32 + 4)) as i16 - 2;
                core::Vec2s::from([x, y])
            })
            .collect();
        let m2: Vec<u16> = (0..1024).collect();
        let mut a = vec![[0u8; 3]; 1024];
        src.run(&m1, &m2, &mut a);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("sse4.1") {
            let mut b = vec![[1u8; 3]; 1024];
            // SAFETY: SSE4.1 was detected.
            unsafe { src.run_sse41(&m1, &m2, &mut b) };
            assert_eq!(a, b);
        } else {
            println!("no SSE4.1 on this machine: only the scalar path was run");
        }
        assert!(a.contains(&[0, 0, 0]) && a.iter().any(|p| *p != [0, 0, 0]));
    }
}
