//! Integration tests: the analysis reads the decoder's own 4:2:0 planes (issue 23, item 1). On
//! real frames of the shared clips, the bird's-eye pixels sampled from the planes equal those of
//! the BGR path (the whole frame converted by OpenCV, then remapped) within one grey level,
//! except where a pixel's four taps straddle the conversion's clamps; the thresholds' L, B and
//! mask agree accordingly. Drawing or not, `lanes video` analyses the same pixels (the
//! telemetry of an overlay run and of `--no-render` are the same bytes: see
//! `video::threaded_and_single_threaded_telemetry_are_identical...`).

use super::*;
use lanes::base::config::{Config, Scale};
use lanes::base::planes::RawFrame;
use lanes::lane::threshold::threshold_bands;
use lanes::lane::warp::{BirdseyeRemap, ColumnBands, Perspective, RowPlan};
use lanes::video::VideoSource;

/// Per-channel differences between the two paths over every pixel of the bird's-eye view of
/// every `step`-th frame of `clip`, and how the thresholds compare.
#[derive(Default, Debug)]
struct Compared {
    pixels: usize,
    /// Pixels with a channel more than one grey level apart.
    beyond_one: usize,
    /// Pixels with a tap on a clipped source pixel (one whose BT.601 conversion leaves 0..255
    /// in some channel), where the BGR path interpolates clipped values.
    clipped_taps: usize,
    /// The largest difference at pixels without clipped taps, and at all pixels.
    max_diff_unclipped: u8,
    max_diff: u8,
    mask_pixels: usize,
    mask_differ: usize,
    l_beyond_one: usize,
    b_beyond_one: usize,
}

fn compare_clip(clip: &Path, step: usize, max_frames: usize) -> Compared {
    let mut src = VideoSource::open(clip).unwrap();
    let (w, h) = (src.width, src.height);
    let cfg = Config::default();
    // The Udacity quad scaled to the frame: any remap samples the frame the same way.
    let mut pc = cfg.perspective;
    let (sx, sy) = (w as f64 / 1280.0, h as f64 / 720.0);
    for p in pc.src.iter_mut().chain(pc.dst.iter_mut()) {
        p[0] *= sx;
        p[1] *= sy;
    }
    let persp = Perspective::from_config(&pc, w, h).unwrap();
    let remap = BirdseyeRemap::new(&persp, None, Scale { x: 1.0, y: 0.5 }).unwrap();
    let plan = std::sync::Arc::new(RowPlan::every(remap.height, 1));
    let centre = lanes::base::poly::Poly2::new(0.0, 0.0, remap.width as f64 / 2.0);
    let all = || {
        ColumnBands::around(
            &[centre],
            remap.width as u32,
            remap.width,
            remap.height,
            &plan,
        )
    };
    let mut c = Compared::default();
    let mut frames = 0;
    let mut i = 0usize;
    while frames < max_frames {
        let Some(f) = src.read_frame().unwrap() else {
            break;
        };
        i += 1;
        if !(i - 1).is_multiple_of(step) {
            continue;
        }
        frames += 1;
        let planes = match f.raw().unwrap() {
            RawFrame::Yuv(p) => p,
            RawFrame::Bgr(_) => panic!("{}: frame {i} was not kept as planes", clip.display()),
        };
        let bgr = planes.to_bgr().unwrap();
        let clipped = clipped_neighbourhood(&planes);
        let bands = all();
        let collect = |raw: RawFrame| {
            let mut v = vec![[0u8; 3]; bands.rows() * bands.packed_width()];
            remap
                .visit_band_runs(raw, &bands, |a, run| {
                    v[a..a + run.len()].copy_from_slice(run)
                })
                .unwrap();
            v
        };
        let (a, b) = (collect(RawFrame::Yuv(planes)), collect(RawFrame::Bgr(&bgr)));
        let near_clip = collect(RawFrame::Bgr(&clipped));
        for ((pa, pb), nc) in a.iter().zip(b.iter()).zip(near_clip.iter()) {
            c.pixels += 1;
            let d = (0..3).map(|ch| pa[ch].abs_diff(pb[ch])).max().unwrap();
            c.max_diff = c.max_diff.max(d);
            c.beyond_one += (d > 1) as usize;
            if nc[0] > 0 {
                c.clipped_taps += 1;
            } else {
                c.max_diff_unclipped = c.max_diff_unclipped.max(d);
            }
        }
        let th = |raw: RawFrame| threshold_bands(raw, &remap, all(), &cfg.threshold).unwrap();
        let (ta, tb) = (th(RawFrame::Yuv(planes)), th(RawFrame::Bgr(&bgr)));
        let bytes = |m: &opencv::core::Mat| m.data_bytes().unwrap().to_vec();
        let (ma, mb) = (ta.mask().unwrap(), tb.mask().unwrap());
        let (ma, mb) = (bytes(ma.mat()), bytes(mb.mat()));
        c.mask_pixels += ma.len();
        c.mask_differ += ma.iter().zip(mb.iter()).filter(|(x, y)| x != y).count();
        for (ga, gb, n) in [
            (
                ta.l_scaled().unwrap(),
                tb.l_scaled().unwrap(),
                &mut c.l_beyond_one,
            ),
            (
                ta.b_scaled().unwrap(),
                tb.b_scaled().unwrap(),
                &mut c.b_beyond_one,
            ),
        ] {
            let (x, y) = (bytes(ga.mat()), bytes(gb.mat()));
            *n += x
                .iter()
                .zip(y.iter())
                .filter(|(p, q)| p.abs_diff(**q) > 1)
                .count();
        }
    }
    assert!(frames > 0, "{}: no frame read", clip.display());
    c
}

/// 255 where a source pixel or one of its 8 neighbours is clipped by the BT.601 conversion (a
/// channel outside 0..255 before the clamp, or Y below black, 16), else 0: remapped, a bird's-eye pixel is non-zero
/// exactly when one of its four bilinear taps may be clipped.
fn clipped_neighbourhood(p: &lanes::base::planes::Yuv420Planes) -> lanes::base::frame::BgrFrame {
    use lanes::base::planes::{CUB, CUG, CVG, CVR, CY, SHIFT};
    let (w, h) = (p.width as usize, p.height as usize);
    let mut clip = vec![false; w * h];
    for y in 0..h {
        for x in 0..w {
            let (yy, u, v) = (
                p.y[y * p.y_stride + x] as i64,
                p.u[(y / 2) * p.u_stride + x / 2] as i64 - 128,
                p.v[(y / 2) * p.v_stride + x / 2] as i64 - 128,
            );
            let l = (yy - 16).max(0) * CY + (1 << (SHIFT - 1));
            clip[y * w + x] = yy < 16
                || [l + CUB * u, l + CUG * u + CVG * v, l + CVR * v]
                    .iter()
                    .any(|s| !(0..256).contains(&(s >> SHIFT)));
        }
    }
    let mut m = opencv::core::Mat::new_rows_cols_with_default(
        h as i32,
        w as i32,
        opencv::core::CV_8UC3,
        opencv::core::Scalar::all(0.0),
    )
    .unwrap();
    let d = m.data_bytes_mut().unwrap();
    for y in 0..h {
        for x in 0..w {
            let near = (y.saturating_sub(1)..(y + 2).min(h))
                .any(|yy| (x.saturating_sub(1)..(x + 2).min(w)).any(|xx| clip[yy * w + xx]));
            if near {
                d[(y * w + x) * 3..(y * w + x) * 3 + 3].fill(255);
            }
        }
    }
    lanes::base::frame::BgrFrame::new(m).unwrap()
}

#[test]
fn band_pixels_from_the_planes_equal_the_bgr_path_within_one_grey_level() {
    let clips = [
        "videos/hortovanyi/project_video_short.mp4",
        "videos/hortovanyi/project_video_shadow.mp4",
        "videos/anycam/de_autobahn_akin.mp4",
        "videos/anycam/forest_road_gaurav.mp4",
        "videos/anycam/us_la_freeway_hood_kartikey.mp4",
    ];
    for rel in clips {
        let Some(clip) = data(rel) else {
            return;
        };
        let c = compare_clip(&clip, 40, 5);
        let share = |n: usize, of: usize| n as f64 / of as f64;
        eprintln!(
            "{rel}: {} pixels, {:.4}% beyond one grey level, max {}; {:.3}% with a clipped tap; \
             max {} elsewhere; max-scaled L beyond one {:.4}%, B {:.4}%; mask differs on {:.4}%",
            c.pixels,
            100.0 * share(c.beyond_one, c.pixels),
            c.max_diff,
            100.0 * share(c.clipped_taps, c.pixels),
            c.max_diff_unclipped,
            100.0 * share(c.l_beyond_one, c.mask_pixels),
            100.0 * share(c.b_beyond_one, c.mask_pixels),
            100.0 * share(c.mask_differ, c.mask_pixels),
        );
        assert!(c.pixels > 100_000, "{rel}");
        // Away from the clamps the two paths differ only in where they round.
        assert!(c.max_diff_unclipped <= 1, "{rel}: {c:?}");
        assert!(share(c.beyond_one, c.pixels) < 0.005, "{rel}: {c:?}");
        assert!(share(c.mask_differ, c.mask_pixels) < 0.002, "{rel}: {c:?}");
    }
}
