//! A wide-angle dashcam lens (94 degrees across, barrel distortion k1 = -0.30), synthetic: a
//! 640x360 drive on a 250 m bend through it (`lanes synth video --camera`). With no set-up the
//! geometry is found and both lines are drawn on every frame although the frames are not
//! undistorted; the along-road scale then comes from the assumed 58-degree field of view and is
//! off by the focal lengths' ratio (so the radius reads several times too large: the limit
//! docs/any-camera.md states). Its camera file gives the radius; `--fov` alone comes nearer.

use super::selfcal::run_clip;
use super::*;

/// Focal length, px, and distortion (k1, k2) of the lens at 640x360: 2 atan(320/300) = 93.7
/// degrees across, bending straight lines by about 6 px at the frame's corners.
const FOCAL: f64 = 300.0;
const K1_K2: (f64, f64) = (-0.30, 0.08);
/// The radius of the synthetic road, m.
const RADIUS_M: f64 = 250.0;

#[test]
fn a_wide_angle_lens_is_calibrated_and_its_camera_file_gives_the_radius() {
    let d = tmp();
    let dir = d.path();
    let (w, h) = (640, 360);
    let cam = dir.join("wide.yml");
    write_camera(&cam, w, h, FOCAL, [K1_K2.0, K1_K2.1, 0.0, 0.0, 0.0]);
    let radius = RADIUS_M.to_string();
    synth_through(
        dir,
        &cam,
        &[
            "--seconds",
            "4",
            "--radius",
            &radius,
            "--camera-height",
            "1.3",
            "--pitch",
            "3",
            "--supersample",
            "1",
        ],
    );
    let clip = dir.join("synthetic_drive.mp4");
    let ym_of = |sub: &str| {
        lanes::base::config::Config::load(&dir.join(sub).join("geometry.toml"))
            .unwrap()
            .units
            .ym_per_px
    };
    let run = |sub: &str, extra: &[&str]| {
        let out = dir.join(sub);
        std::fs::create_dir_all(&out).unwrap();
        run_clip(&clip, extra, &out).0
    };
    // No set-up (measured 2026-12-04: both lines on 100 of 100 frames, width 3.69 m median).
    let plain = run("plain", &[]);
    assert_eq!(plain.frames, 100);
    assert!(plain.both >= 0.95, "both lines on {:.3}", plain.both);
    assert!(
        plain.width_in >= 0.95,
        "width 2.7-4.3 m on {:.3}",
        plain.width_in
    );
    // With the camera file: undistorted, the calibrated focal length (measured: radius median
    // 259 m on the 250 m bend).
    let cam_s = cam.to_str().unwrap();
    let calibrated = run("camera", &["--camera", cam_s]);
    assert!(
        calibrated.both >= 0.95,
        "both lines on {:.3}",
        calibrated.both
    );
    assert!(
        (calibrated.radius_median / RADIUS_M - 1.0).abs() <= 0.10,
        "radius median {:.0} m with the camera file, truth {RADIUS_M} m",
        calibrated.radius_median
    );
    // The assumed 58 degrees (a focal length of 577.3 px at this width): the along-road scale
    // is the calibrated one times the focal lengths' ratio, 577.3 / 300 = 1.92 (measured
    // 0.0292 against 0.0149 m/px: 1.96), and the radius is several times too large (measured
    // 1289 m).
    let assumed_focal = 320.0 / 29f64.to_radians().tan();
    let ratio = ym_of("plain") / ym_of("camera");
    assert!(
        (ratio / (assumed_focal / FOCAL) - 1.0).abs() <= 0.05,
        "scale ratio {ratio:.3}, focal lengths' ratio {:.3}",
        assumed_focal / FOCAL
    );
    assert!(
        plain.radius_median > 2.5 * RADIUS_M,
        "{}",
        plain.radius_median
    );
    // The lens's field of view given without the distortion: the pinhole scale (measured
    // 0.0152 m/px) and a radius far nearer the truth than the assumed one (measured 332 m: the
    // bent far range reads straighter).
    let hfov = format!("{:.3}", 2.0 * (320.0 / FOCAL).atan().to_degrees());
    let given = run("fov", &["--fov", &hfov]);
    assert!(
        (ym_of("fov") / ym_of("camera") - 1.0).abs() <= 0.05,
        "--fov scale {:.4} against {:.4}",
        ym_of("fov"),
        ym_of("camera")
    );
    assert!(
        (given.radius_median / RADIUS_M - 1.0).abs() < 0.5,
        "radius median {:.0} m with --fov {hfov}",
        given.radius_median
    );
}
