//! Sensor noise (`lane::denoise`): a dashcam at night or at high gain fills the frame with
//! noise that passes the contrast rule for markings. The Udacity clip with strong temporal
//! noise added by ffmpeg (`noise=alls=25:allf=t`, about 12 grey levels measured after x264):
//! smoothed before the analysis, both lines on every frame; with `threshold.smooth_noise` off,
//! the same run finds them on 18 of 200 frames (and the build before smoothing refused the
//! clip's geometry: its 11 usable frames' horizons 40 px apart).

use super::selfcal::{run_clip, udacity_clip_through};
use super::*;

#[test]
fn a_noisy_drive_is_smoothed_and_its_lane_found() {
    let Some((d, clean, clip)) =
        udacity_clip_through("noise=alls=25:allf=t", &["-preset", "veryfast"])
    else {
        return;
    };
    let (s, err) = run_clip(&clip, &[], d.path());
    assert_eq!(s.frames, 200);
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
    assert!(
        err.contains("200 of 200 frames were smoothed before the analysis"),
        "{err}"
    );
    let level: f64 = selfcal::number_after(&err, "(median ", " grey levels)");
    assert!((8.0..20.0).contains(&level), "{err}");
    // Off: the mask fills with speckle and most frames lose a line.
    let cfg = d.path().join("off.toml");
    std::fs::write(&cfg, "[threshold]\nsmooth_noise = false\n").unwrap();
    let (off, err) = run_clip(&clip, &["--config", cfg.to_str().unwrap()], d.path());
    assert!(off.both < 0.5, "{err}");
    assert!(!err.contains("smoothed"), "{err}");
    // The clip as recorded (noise about 0.5 grey levels) is analysed as it is.
    let (_, err) = run_clip(&clean, &[], d.path());
    assert!(!err.contains("smoothed"), "{err}");
    // A still of each: `lanes image --json` says which was smoothed, and by how much noise.
    let still = |from: &Path, name: &str| {
        let p = d.path().join(name);
        ffmpeg(&[
            "-ss".as_ref(),
            "2".as_ref(),
            "-i".as_ref(),
            from.as_os_str(),
            "-frames:v".as_ref(),
            "1".as_ref(),
            p.as_os_str(),
        ]);
        p
    };
    let (noisy, plain) = (still(&clip, "noisy.png"), still(&clean, "plain.png"));
    let out = d.path().join("stills");
    let o = lanes(&[
        "image",
        noisy.to_str().unwrap(),
        plain.to_str().unwrap(),
        "--config",
        "calibration/udacity.toml",
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 2);
    let n = recs[0]["noise_smoothed"].as_f64().unwrap();
    assert!((8.0..20.0).contains(&n), "{:?}", recs[0]);
    assert_eq!(recs[0]["status"], "both", "{:?}", recs[0]);
    assert!(recs[1]["noise_smoothed"].is_null(), "{:?}", recs[1]);
}

/// Noise of a quarter of the contrast margin (`denoise::SMOOTH_FROM`): the Autobahn clip
/// darkened, with noise of about 4.5 grey levels after x264 (under the gate of 5, over 3.75).
/// Plain road stays clean there, but the faint dashed line falls apart into speckle: not
/// smoothed (the build before, or `smooth_noise` off), both lines on 74% of the frames; with
/// the narrowest blur, 98%.
#[test]
fn a_dim_drive_with_faint_noise_is_smoothed_and_its_dashed_line_kept() {
    let Some((d, _, clip)) = super::selfcal::clip_through(
        "videos/anycam/de_autobahn_akin.mp4",
        "eq=brightness=-0.25:gamma=0.7,noise=alls=12:allf=t",
        &["-c:v", "libx264", "-preset", "veryfast", "-crf", "20"],
    ) else {
        return;
    };
    let (s, err) = run_clip(&clip, &[], d.path());
    let level: f64 = selfcal::number_after(&err, "(median ", " grey levels)");
    assert!((3.75..5.0).contains(&level), "{err}");
    assert!(
        s.both >= 0.90 && s.width_in >= 0.95,
        "both {:.3}: {err}",
        s.both
    );
    let cfg = d.path().join("off.toml");
    std::fs::write(&cfg, "[threshold]\nsmooth_noise = false\n").unwrap();
    let (off, err) = run_clip(&clip, &["--config", cfg.to_str().unwrap()], d.path());
    assert!(off.both < 0.85, "both {:.3} unsmoothed: {err}", off.both);
}
