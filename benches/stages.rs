//! Criterion benches: one group per stage at 1280x720, plus the reference-style path (full-size
//! `warp_perspective` then OpenCV HLS and Lab conversions) measured in the same run; a ratio
//! table is printed at the end.

use criterion::{black_box, Criterion, Throughput};
use lanes::base::config::Config;
use lanes::base::frame::BgrFrame;
use lanes::lane::fit::{self, Poly2};
use lanes::lane::judge::scaled_search;
use lanes::lane::pipeline::Pipeline;
use lanes::lane::threshold;
use opencv::core::{self, Mat};
use opencv::imgproc;

use std::path::PathBuf;
use std::time::Instant;

fn frame() -> BgrFrame {
    let root = std::env::var_os("LANES_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let p = root.join("udacity/test_images/test2.jpg");
    match BgrFrame::read(&p) {
        Ok(f) => f,
        Err(_) => {
            eprintln!(
                "bench: {} not found; using a synthetic gray frame",
                p.display()
            );
            let m =
                Mat::new_rows_cols_with_default(720, 1280, core::CV_8UC3, core::Scalar::all(90.0))
                    .unwrap();
            BgrFrame::new(m).unwrap()
        }
    }
}

fn camera() -> Option<lanes::base::camera::Camera> {
    lanes::base::camera::Camera::load(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("calibration/udacity.yml"),
    )
    .ok()
}

fn time_ms(mut f: impl FnMut(), iters: usize) -> f64 {
    f();
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_secs_f64() * 1e3 / iters as f64
}

fn main() {
    let raw = frame();
    let cfg = Config::default();
    let cam = camera();
    let pipe = Pipeline::new(cfg.clone(), cam.as_ref(), 1280, 720).unwrap();
    let full = Pipeline::new(
        Config {
            perspective: lanes::base::config::PerspectiveConfig {
                birdseye_scale_x: 1.0,
                birdseye_scale_y: 1.0,
                ..cfg.perspective
            },
            ..cfg.clone()
        },
        cam.as_ref(),
        1280,
        720,
    )
    .unwrap();
    let a = pipe.analyze(&raw, None).unwrap();
    let (l, r) = (
        a.fit.left.unwrap_or(Poly2::new(0.0, 0.0, 450.0)),
        a.fit.right.unwrap_or(Poly2::new(0.0, 0.0, 830.0)),
    );
    let s = cfg.perspective.scale();
    let scfg = scaled_search(&cfg.search, s);
    let pixels = 1280u64 * 720;

    let mut c = Criterion::default().configure_from_args().sample_size(30);
    {
        let mut g = c.benchmark_group("warp");
        g.throughput(Throughput::Elements(pixels));
        g.bench_function("lanes_birdseye_remap", |b| {
            b.iter(|| black_box(pipe.birdseye(&raw).unwrap()))
        });
        g.bench_function("reference_undistort_then_warp_full", |b| {
            b.iter(|| {
                let u = full.undistort(&raw).unwrap();
                black_box(full.persp.warp(&u).unwrap())
            })
        });
        g.finish();
    }
    {
        let bird = pipe.birdseye(&raw).unwrap();
        let bird_full = full.birdseye(&raw).unwrap();
        let mut g = c.benchmark_group("threshold");
        g.throughput(Throughput::Elements(pixels));
        g.bench_function("lanes_threshold", |b| {
            b.iter(|| black_box(threshold::threshold(&bird, &cfg.threshold).unwrap()))
        });
        g.bench_function("reference_cvtcolor_hls_lab_full", |b| {
            b.iter(|| {
                let mut hls = Mat::default();
                let mut lab = Mat::default();
                imgproc::cvt_color_def(bird_full.mat(), &mut hls, imgproc::COLOR_BGR2HLS).unwrap();
                imgproc::cvt_color_def(bird_full.mat(), &mut lab, imgproc::COLOR_BGR2Lab).unwrap();
                black_box((hls, lab))
            })
        });
        g.finish();
    }
    {
        let mut g = c.benchmark_group("search_fit");
        g.throughput(Throughput::Elements(pixels));
        let mask = &a.thresholded.mask().unwrap();
        g.bench_function("sliding_window", |b| {
            b.iter(|| black_box(fit::sliding_window_search(mask, &scfg).unwrap()))
        });
        g.bench_function("prior_search", |b| {
            b.iter(|| {
                black_box(
                    fit::prior_search(mask, &l.to_scaled(s), &r.to_scaled(s), scfg.prior_margin)
                        .unwrap(),
                )
            })
        });
        let sr = fit::sliding_window_search(mask, &scfg).unwrap();
        g.bench_function("poly_fit", |b| {
            b.iter(|| black_box(fit::fit_lines(&sr, &scfg)))
        });
        g.finish();
    }
    {
        let mut g = c.benchmark_group("render");
        g.throughput(Throughput::Elements(pixels));
        g.bench_function("undistort_full_frame", |b| {
            b.iter(|| black_box(pipe.undistort(&raw).unwrap()))
        });
        let m = pipe.measure(&l, &r);
        g.bench_function("overlay_in_place", |b| {
            b.iter_batched(
                || raw.clone(),
                |f| {
                    black_box(
                        lanes::lane::present::overlay_undistorted(
                            &pipe,
                            f,
                            Some((&l, &r)),
                            0.0,
                            Some(&m),
                            lanes::lane::confidence::LaneStatus::Both,
                        )
                        .unwrap(),
                    )
                },
                criterion::BatchSize::LargeInput,
            )
        });
        g.finish();
    }
    {
        let mut g = c.benchmark_group("pipeline");
        g.throughput(Throughput::Elements(1));
        g.bench_function("analyze_frame", |b| {
            b.iter(|| black_box(pipe.analyze(&raw, Some((l, r))).unwrap()))
        });
        let whole = Pipeline::new(
            Config {
                search: lanes::base::config::SearchConfig {
                    band_only: false,
                    ..cfg.search
                },
                ..cfg.clone()
            },
            cam.as_ref(),
            1280,
            720,
        )
        .unwrap();
        g.bench_function("analyze_frame_whole_view", |b| {
            b.iter(|| black_box(whole.analyze(&raw, Some((l, r))).unwrap()))
        });
        g.bench_function("analyze_frame_full_scale", |b| {
            b.iter(|| black_box(full.analyze(&raw, Some((l, r))).unwrap()))
        });
        g.finish();
    }
    c.final_summary();

    // Ratios measured in this run (plain timing loops, same inputs).
    let n = 40;
    let ours = time_ms(
        || drop(black_box(pipe.analyze(&raw, Some((l, r))).unwrap())),
        n,
    );
    let refr = time_ms(
        || {
            let u = full.undistort(&raw).unwrap();
            let w = full.persp.warp(&u).unwrap();
            let mut hls = Mat::default();
            let mut lab = Mat::default();
            imgproc::cvt_color_def(w.mat(), &mut hls, imgproc::COLOR_BGR2HLS).unwrap();
            imgproc::cvt_color_def(w.mat(), &mut lab, imgproc::COLOR_BGR2Lab).unwrap();
            black_box((hls, lab));
        },
        n,
    );
    println!();
    println!("ratio table (ms per 1280x720 frame, this run)");
    println!(
        "  lanes analysis (remap+threshold+prior search+fit): {ours:.2} ms = {:.0} frames/s",
        1e3 / ours
    );
    println!("  reference-style front end (undistort, warp, HLS, Lab only): {refr:.2} ms");
    println!("  speed-up: {:.1}x", refr / ours);
}
