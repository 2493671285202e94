//! Issue "any dashcam, zero set-up": `lanes video` with no `--config` finds the road geometry
//! in the video itself. Each shared clip of another camera with its floor (the targets
//! where they are met; the measured value where they are not, so a regression fails), the saved
//! geometry scored on the hand labels, and a quad that does not fit refused before any frame.

use super::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Telemetry shares of one self-calibrated run.
pub(super) struct Shares {
    pub(super) frames: usize,
    pub(super) both: f64,
    pub(super) width_in: f64,
    pub(super) radius_median: f64,
}

/// `lanes video CLIP --no-render EXTRA` with telemetry and `--save-geometry` into `out`
/// (asserted to succeed with a geometry found): its shares and stderr.
pub(super) fn run_clip(clip: &Path, extra: &[&str], out: &Path) -> (Shares, String) {
    let t = out.join("t.jsonl");
    let g = out.join("geometry.toml");
    let mut args = vec!["video", clip.to_str().unwrap(), "--no-render"];
    args.extend_from_slice(extra);
    args.extend(["--telemetry", t.to_str().unwrap()]);
    args.extend(["--save-geometry", g.to_str().unwrap()]);
    let o = lanes(&args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("geometry found in"), "{err}");
    assert!(g.exists(), "--save-geometry wrote nothing: {err}");
    let recs = read_jsonl(&t);
    let both: Vec<&Value> = recs.iter().filter(|r| r["status"] == "both").collect();
    let width_in = both
        .iter()
        .filter(|r| {
            r["lane_width_m"]
                .as_f64()
                .is_some_and(|w| (2.7..=4.3).contains(&w))
        })
        .count();
    let mut radii: Vec<f64> = recs.iter().filter_map(|r| r["radius_m"].as_f64()).collect();
    radii.sort_by(|a, b| a.total_cmp(b));
    let s = Shares {
        frames: recs.len(),
        both: both.len() as f64 / recs.len().max(1) as f64,
        width_in: width_in as f64 / both.len().max(1) as f64,
        radius_median: radii.get(radii.len() / 2).copied().unwrap_or(f64::NAN),
    };
    eprintln!(
        "{}: {} frames, both lines {:.3}, width 2.7-4.3 m {:.3}, radius median {:.0} m; {}",
        clip.display(),
        s.frames,
        s.both,
        s.width_in,
        s.radius_median,
        err.lines().next().unwrap_or("")
    );
    (s, err)
}

/// `lanes batch INPUT ARGS --render none -o OUT` (asserted to succeed): the first video's note
/// in `batch.json`.
fn batch_note(input: &Path, args: &[&str], out: &Path) -> String {
    let mut all = vec!["batch", input.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend(["--render", "none", "-o", out.to_str().unwrap()]);
    let o = lanes(&all);
    assert_eq!(o.status.code(), Some(0), "batch: {}", stderr(&o));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("batch.json")).unwrap()).unwrap();
    report["videos"][0]["note"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The number in `text` between the first `marker` and the `end` after it.
pub(super) fn number_after<T: std::str::FromStr>(text: &str, marker: &str, end: &str) -> T {
    text.split(marker)
        .nth(1)
        .and_then(|t| t.split(end).next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no number after {marker:?}: {text}"))
}

/// The Udacity project clip through an ffmpeg video filter (with `opts` before the output,
/// audio dropped), written in a new temporary folder: (the folder, the clip, the new one).
pub(super) fn udacity_clip_through(
    filter: &str,
    opts: &[&str],
) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    clip_through("videos/hortovanyi/project_video_short.mp4", filter, opts)
}

/// The shared clip `rel` through an ffmpeg video filter, as `udacity_clip_through`.
pub(super) fn clip_through(
    rel: &str,
    filter: &str,
    opts: &[&str],
) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let clip = data(rel)?;
    let d = tmp();
    let out = d.path().join("filtered.mp4");
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "-i".as_ref(),
        clip.as_os_str(),
        "-vf".as_ref(),
        filter.as_ref(),
    ];
    args.extend(opts.iter().map(std::ffi::OsStr::new));
    args.extend(["-an".as_ref(), out.as_os_str()]);
    ffmpeg(&args);
    Some((d, clip, out))
}

/// `lanes perspective CLIP -o CFG`.
fn perspective_to(clip: &Path, cfg: &Path) -> std::process::Output {
    lanes(&[
        "perspective",
        clip.to_str().unwrap(),
        "-o",
        cfg.to_str().unwrap(),
    ])
}

#[test]
fn p1_solid_white_right_with_no_setup() {
    let Some(clip) = data("lanelines_p1/test_videos/solidWhiteRight.mp4") else {
        return;
    };
    let d = tmp();
    let report = d.path().join("report.html");
    let (s, err) = run_clip(&clip, &["--report", report.to_str().unwrap()], d.path());
    assert_eq!(s.frames, 221);
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "issue target");
    // The report says where the geometry came from: the line the run printed.
    let html = std::fs::read_to_string(&report).unwrap();
    let line = err.lines().next().unwrap();
    let at = line
        .find("geometry found in")
        .unwrap_or_else(|| panic!("{line}"));
    let found = &line[at..];
    assert!(
        html.contains(&format!("<td>road geometry</td><td>{found}</td>")),
        "{found}"
    );
}

#[test]
fn anycam_clips_with_no_setup() {
    // (clip, floor of frames with both lines, floor of those with a 2.7-4.3 m width). Measured
    // 2026-12-05: Autobahn 0.987 (1.000 since 2026-12-06: its left line's near half a gap
    // between dashes, a free fit through a far dash was gated out on 5 frames; now placed by
    // the dash with the tracked shape), forest 1.000, LA 0.779 (0.741 before a tracked line
    // could come within 0.15 m of the camera, not 0.3 m, 2026-12-07; 0.724 before the line a lane
    // change crosses counted as the new lane's other line where the lagging track still held
    // it as the old lane's, 2026-12-07; 0.713 before a missing line
    // placed with its partner's shape had the tracked lines' difference in heading added,
    // 2026-12-06; 0.706 before the tracking restarted
    // at the clip's two cuts, around a zoomed replay, 0.723 before lone lines waited for a
    // pair in a shot after a cut; widths all in range; 0.685 before a
    // gap over a tracked line was bridged twice as long, 0.510 before a tracked line could
    // come within 0.3 m of the camera in a lane change, 0.371 before the tracked lane
    // confirmed lines seen as one dash each). The LA freeway (hood, windshield
    // reflections, lane changes) is short of the 0.85: its floor is a little under
    // what is measured today, so a regression still fails.
    // The Autobahn and the LA freeway are straight roads (seen on their frames): no tight bend
    // may be reported on them. The LA clip's lane changes (four, at about 6, 10, 13 and 18 s)
    // once read as bends of 111 m and 76 m from single-line and predicted frames.
    for (rel, both, width, straight) in [
        ("videos/anycam/de_autobahn_akin.mp4", 0.99, 0.85, true),
        ("videos/anycam/forest_road_gaurav.mp4", 0.85, 0.85, false),
        (
            "videos/anycam/us_la_freeway_hood_kartikey.mp4",
            0.77,
            0.85,
            true,
        ),
    ] {
        let Some(clip) = data(rel) else { return };
        let d = tmp();
        let (s, _) = run_clip(&clip, &[], d.path());
        assert!(s.both >= both, "{rel}: both {:.3} < {both}", s.both);
        assert!(
            s.width_in >= width,
            "{rel}: width {:.3} < {width}",
            s.width_in
        );
        let t = d.path().join("t.jsonl");
        let o = lanes(&["events", t.to_str().unwrap(), "--json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let ev: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
        let kinds: Vec<&str> = ev.iter().filter_map(|e| e["kind"].as_str()).collect();
        eprintln!("{rel}: events {kinds:?}");
        if straight {
            assert!(!kinds.contains(&"tight_bend"), "{rel}: {ev:?}");
        }
    }
}

/// The P1 challenge camera: both lines on >= 90% of frames with the geometry found in the
/// clip, and that geometry scored on the hand labels of its frames.
#[test]
fn p1_challenge_geometry_scores_on_its_hand_labels() {
    let (Some(clip), Some(labels)) = (
        data("lanelines_p1/test_videos/challenge_720x576_transcoded.mp4"),
        data("labelled/udacity_hard_ego/labels_p1_challenge.json"),
    ) else {
        return;
    };
    let d = tmp();
    let (s, _) = run_clip(&clip, &[], d.path());
    assert!(s.both >= 0.90, "both {:.3}", s.both);
    let g = d.path().join("geometry.toml");
    let o = lanes(&[
        "eval",
        labels.to_str().unwrap(),
        "--config",
        g.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let p1 = &v["tusimple"]["subsets"]["p1"];
    eprintln!("p1 labels with the self-found geometry: {p1}");
    assert!(
        p1["labelled_rows_accuracy"].as_f64().unwrap() >= 0.85,
        "{p1}"
    );
    assert!(p1["labelled_rows_fp"].as_f64().unwrap() <= 0.05, "{p1}");
}

/// The Udacity camera with its camera file and no config: every frame of the project clip, and
/// its saved geometry on the hand labels (easy subsets >= 0.95; the hard ones reported).
#[test]
fn udacity_project_clip_geometry_scores_on_the_hard_ego_labels() {
    let (Some(clip), Some(labels)) = (
        data("videos/hortovanyi/project_video_short.mp4"),
        data("labelled/udacity_hard_ego/labels.json"),
    ) else {
        return;
    };
    let d = tmp();
    let (s, _) = run_clip(&clip, &["--camera", "calibration/udacity.yml"], d.path());
    assert_eq!(s.frames, 200);
    assert!(s.both >= 1.0, "both {:.3}", s.both);
    let g = d.path().join("geometry.toml");
    let o = lanes(&[
        "eval",
        labels.to_str().unwrap(),
        "--camera",
        "calibration/udacity.yml",
        "--config",
        g.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let subs = &v["tusimple"]["subsets"];
    eprintln!("hard-ego labels with the self-found Udacity geometry: {subs}");
    let acc = |k: &str| subs[k]["labelled_rows_accuracy"].as_f64().unwrap();
    assert!(acc("project") >= 0.95, "{subs}");
    // Measured 0.978 and 0.789 (the shipped fixed config: 0.943 and 0.831).
    assert!(acc("challenge") >= 0.90, "{subs}");
    assert!(acc("harder") >= 0.70, "{subs}");
}

/// A video of a lavfi source `grey` (a flat view off the road) followed by the road `clip`,
/// joined by `filter` (whose output is `[v]`), x264 ultrafast, yuv420p.
fn grey_then_road(grey: &str, clip: &Path, filter: &str, out: &Path) {
    ffmpeg(&[
        "-f".as_ref(),
        "lavfi".as_ref(),
        "-i".as_ref(),
        grey.as_ref(),
        "-i".as_ref(),
        clip.as_os_str(),
        "-filter_complex".as_ref(),
        filter.as_ref(),
        "-map".as_ref(),
        "[v]".as_ref(),
        "-c:v".as_ref(),
        "libx264".as_ref(),
        "-preset".as_ref(),
        "ultrafast".as_ref(),
        "-pix_fmt".as_ref(),
        "yuv420p".as_ref(),
        out.as_os_str(),
    ]);
}

/// From a telemetry file whose first `grey` frames are off the road: the frames among them
/// with any lane, and the road frames with both lines (printed).
fn grey_and_road(telemetry: &Path, grey: usize) -> (usize, usize) {
    let recs: Vec<Value> = std::fs::read_to_string(telemetry)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let grey_lanes = recs[..grey]
        .iter()
        .filter(|r| r["status"] != "none")
        .count();
    let road_both = recs[grey..]
        .iter()
        .filter(|r| r["status"] == "both")
        .count();
    eprintln!(
        "lanes on {grey_lanes} of {grey} grey frames, both lines on {road_both} of {} road frames",
        recs.len() - grey
    );
    (grey_lanes, road_both)
}

/// A drive that opens off the road (32 s of a flat grey view, then the Udacity clip): the
/// opening 30 s show no lane, so the search goes on to the next 30 s and finds the geometry
/// there; no lane is drawn on the grey frames, both lines on the road's, and the "no lane
/// found" warning (counted from the frames the geometry was found in) stays silent.
#[test]
fn a_drive_that_opens_off_the_road_is_calibrated_further_on() {
    let Some(clip) = data("videos/hortovanyi/project_video_short.mp4") else {
        return;
    };
    let d = tmp();
    let v = d.path().join("park_then_road.mp4");
    grey_then_road(
        "color=c=0x505050:s=1280x720:r=25:d=32",
        &clip,
        "[0:v][1:v]concat=n=2:v=1:a=0[v]",
        &v,
    );
    let (s, err) = run_clip(&v, &[], d.path());
    assert_eq!(s.frames, 1000);
    assert!(!err.contains("no lane found"), "{err}");
    // It says where the geometry was found: past the opening 30 s (frame 750).
    let from: usize = number_after(&err, "found from frame ", " ");
    assert!((800..1000).contains(&from), "{err}");
    let (grey_lanes, road_both) = grey_and_road(&d.path().join("t.jsonl"), 800);
    assert_eq!(grey_lanes, 0);
    assert!(road_both >= 190, "{road_both}");
}

/// A long drive that opens with 4 minutes off the road (a flat grey view, then the forest
/// road clip, both 640x360 at 10 fps): the 2 minutes searched in order show no lane, so the
/// rest of the drive is sampled, each sample reached by seeking (71 frames apart), and the
/// geometry found on the road holds for the whole video. Before, the video was refused ("0 of
/// 96 sampled frames show the ego lane's two lines"). The same as MPEG-TS, and as a raw H.264
/// stream once remuxed as its refusal says.
#[test]
fn a_long_drive_that_reaches_the_road_after_two_minutes_is_calibrated_there() {
    let Some(clip) = data("videos/anycam/forest_road_gaurav.mp4") else {
        return;
    };
    let d = tmp();
    let v = d.path().join("town_then_road.mp4");
    grey_then_road(
        "color=c=0x505050:s=640x360:r=10:d=250",
        &clip,
        "[1:v]fps=10,setsar=1[r];[0:v]setsar=1[g];[g][r]concat=n=2:v=1:a=0[v]",
        &v,
    );
    // The same as MPEG-TS (no index: a seek by bytes lands past the frame asked for, on the
    // next keyframe, and is tried again from further back; before, several samples were one
    // keyframe, "2 distinct views", and the video was refused).
    let copy = |from: &Path, extra: &[&str], to: &Path| {
        let mut args: Vec<&std::ffi::OsStr> = vec!["-i".as_ref(), from.as_os_str()];
        args.extend(["-c", "copy"].iter().chain(extra).map(std::ffi::OsStr::new));
        args.push(to.as_os_str());
        ffmpeg(&args);
    };
    let ts = d.path().join("town_then_road.ts");
    copy(&v, &[], &ts);
    // As a raw H.264 stream, which announces no length: refused in one line that says only
    // the first 2 minutes were searched and gives the remux, which is then found.
    let raw = d.path().join("town_then_road.h264");
    copy(&v, &["-bsf:v", "h264_mp4toannexb", "-f", "h264"], &raw);
    let o = lanes(&["video", raw.to_str().unwrap(), "--no-render"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("only its first 120 s were searched: the stream announces no length (remux it, e.g. `ffmpeg -i "),
        "{err}"
    );
    let remuxed = d.path().join("drive.mp4");
    copy(&raw, &[], &remuxed);
    for (i, video) in [v, ts, remuxed].iter().enumerate() {
        let out = d.path().join(format!("run{i}"));
        std::fs::create_dir_all(&out).unwrap();
        let (s, err) = run_clip(video, &[], &out);
        let road = s.frames - 2500;
        assert!((400..=420).contains(&road), "{err}");
        assert!(
            err.contains("too few usable frames in the opening 120 s"),
            "{err}"
        );
        let from: usize = number_after(&err, "found from frame ", " ");
        assert!((2500..s.frames).contains(&from), "{err}");
        let (grey_lanes, road_both) = grey_and_road(&out.join("t.jsonl"), 2500);
        assert_eq!(grey_lanes, 0);
        assert!(road_both as f64 >= 0.9 * road as f64, "{road_both}");
    }
}

/// `--fov` on real footage: the Udacity clip cropped to its centre 960x540 keeps the camera's
/// focal length (1156.9 px), so its frames have a 45.06 degree field of view. Given that, the
/// radius found without a camera file is the whole frame's (with its camera file) within 15%;
/// with the assumed 58 degrees it is off by more than a quarter (measured 2026-12-04: 860 m,
/// 481 m, 839 m).
#[test]
fn a_given_field_of_view_gives_the_calibrated_radius() {
    let Some((d, clip, crop)) = udacity_clip_through("crop=960:540:160:120", &[]) else {
        return;
    };
    let run = |c: &Path, extra: &[&str], name: &str| {
        let out = d.path().join(name);
        std::fs::create_dir_all(&out).unwrap();
        run_clip(c, extra, &out).0.radius_median
    };
    let whole = run(&clip, &["--camera", "calibration/udacity.yml"], "whole");
    let given = run(&crop, &["--fov", "45.06"], "given");
    let assumed = run(&crop, &[], "assumed");
    eprintln!("radius median: {given:.0} m with --fov 45.06, {assumed:.0} m assumed, {whole:.0} m on the whole frame");
    assert!(
        (given / whole - 1.0).abs() <= 0.15,
        "--fov: {given:.0} vs {whole:.0}"
    );
    assert!(
        (assumed / whole - 1.0).abs() >= 0.25,
        "assumed: {assumed:.0} vs {whole:.0}"
    );
}

/// Frames taller than 480 rows are analysed shrunk and the geometry scaled back: the Udacity
/// clip at 1920x1080 (H.264, made here) gives the 1280x720 clip's quad times 1.5 within 1% of
/// the height, the same metres per pixel within 3%, and both lines on every frame.
#[test]
fn a_1080p_video_gives_the_geometry_of_its_720p_original() {
    let Some((d, clip, big)) = udacity_clip_through(
        "scale=1920:1080",
        &["-c:v", "libx264", "-preset", "veryfast"],
    ) else {
        return;
    };
    let run = |c: &Path, name: &str| {
        let out = d.path().join(name);
        std::fs::create_dir_all(&out).unwrap();
        let (s, _) = run_clip(c, &[], &out);
        let cfg = lanes::base::config::Config::load(&out.join("geometry.toml")).unwrap();
        (s, cfg)
    };
    let (s720, g720) = run(&clip, "720");
    let (s1080, g1080) = run(&big, "1080");
    assert_eq!((s720.frames, s1080.frames), (200, 200));
    assert!(
        s720.both >= 1.0 && s1080.both >= 1.0,
        "{} {}",
        s720.both,
        s1080.both
    );
    for (a, b) in g720.perspective.src.iter().zip(&g1080.perspective.src) {
        for k in 0..2 {
            let d = (a[k] * 1.5 - b[k]).abs();
            eprintln!(
                "quad corner {k}: {:.1} (720p x 1.5) vs {:.1} (1080p)",
                a[k] * 1.5,
                b[k]
            );
            assert!(d <= 0.01 * 1080.0, "{a:?} x 1.5 vs {b:?}");
        }
    }
    let r = g1080.units.ym_per_px / g720.units.ym_per_px;
    assert!((r - 1.0).abs() <= 0.03, "ym_per_px {r:.3}");
}

/// `clip` through an ffmpeg video filter, encoded with libx264 at `crf` (audio dropped) to `out`.
fn x264_through(clip: &Path, filter: &str, crf: &str, out: &Path) {
    ffmpeg(&[
        "-i".as_ref(),
        clip.as_os_str(),
        "-vf".as_ref(),
        filter.as_ref(),
        "-c:v".as_ref(),
        "libx264".as_ref(),
        "-crf".as_ref(),
        crf.as_ref(),
        "-an".as_ref(),
        out.as_os_str(),
    ]);
}

/// The LA freeway (hood, reflections) at other sizes, as other cameras would give it.
/// - 640x360 (crf 26): its frames are searched enlarged to the 480 rows the search's pixel
///   sizes were chosen at. Analysed at 360 rows its lines at the bottom row were found 32%
///   too far apart (a 4.9 m lane): both lines on 0.41 of the frames and 0.66 of the widths
///   in 2.7-4.3 m; enlarged, 0.61 and 1.00.
/// - 960x540: the whole-view search found the right pair frame after frame while the tracker,
///   with no line on the frame before, gated it out and predicted a drifting lane: 0.581;
///   such a pair now starts the track again, 0.673.
///
/// Measured 2026-12-05; the 854x480 original gives 0.71 (0.72 since 2026-12-06). Since a line
/// the tracker would gate out is placed by its own pixels with the tracked shape
/// (`lane::judge`) and a missing line placed with its partner's shape has the tracked lines'
/// difference in heading added (2026-12-06): 640x360 0.615 -> 0.632, 960x540 0.673 -> 0.614.
/// The 960x540 loss is one lane change (frames
/// 298-345): a pair confirmed at frame 272 moved the coasting track's drift by a centimetre a
/// frame, the track crossed into the next lane two frames later than before, missed the fresh
/// pair that restarted it, and the whole-view search found no base for 45 frames. Six other
/// versions of the clip gained (800x450 +17 frames, 854x480 re-encoded +14, 1280x720 +61,
/// crf 30 +33, darkened +40, 640x360 crf 23 +19 of 590), and none of the other clips lost a
/// frame.
///
/// The 960x540 clip's geometry comes from 3 of its 15 sampled frames (low confidence), and
/// its horizon moves with the encoder's noise: on Debian's ffmpeg 5.1.9 (2026-12-07) crf 21 /
/// 23 / 25 put it at rows 280.7 / 288.8 / 280.5 and gave both lines on 0.697 / 0.439 / 0.656
/// of the frames (the test's single crf 23 encode had given 0.614 with an earlier build of the
/// encoder). So 960x540 is held over three encodes: the median at the floor, none under 0.40.
#[test]
fn the_la_clip_at_other_sizes() {
    let Some(clip) = data("videos/anycam/us_la_freeway_hood_kartikey.mp4") else {
        return;
    };
    let d = tmp();
    for (scale, crfs, both) in [
        ("640:360", &["26"][..], 0.60),
        ("960:540", &["21", "23", "25"][..], 0.59),
    ] {
        let mut shares = Vec::new();
        for crf in crfs {
            let out = d.path().join(format!("{}_{crf}", scale.replace(':', "x")));
            std::fs::create_dir_all(&out).unwrap();
            let v = out.join("la.mp4");
            x264_through(&clip, &format!("scale={scale}"), crf, &v);
            let (s, _) = run_clip(&v, &[], &out);
            assert!(
                s.width_in >= 0.95,
                "{scale} crf {crf}: width {:.3}",
                s.width_in
            );
            assert!(s.both >= 0.40, "{scale} crf {crf}: both {:.3}", s.both);
            shares.push(s.both);
        }
        shares.sort_by(f64::total_cmp);
        let median = shares[shares.len() / 2];
        eprintln!("{scale}: both lines {shares:?}, median {median:.3}");
        assert!(median >= both, "{scale}: both {shares:?}, median < {both}");
    }
}

/// A geometry the first round of samples gives from fewer than 8 usable frames (medium or low
/// confidence) is firmed up by a second round between them (`selfcal::find_on`). The LA
/// freeway's opening 12 s (before its replay: one shot), re-encoded at crf 12 and scaled to
/// 640x360 (crf 23): with one round their geometries came from 3 of 24 and 4 of 24 samples,
/// horizons at rows 239.4 and 177.2 (236.3 at 480 rows), both lines on 98 and 61 of 362
/// frames; with the second round (2026-12-07) from 12 and 13 of 47, rows 244.8 and 185.6
/// (247.5), both lines on 322 and 316. Held: the second round ran, the horizon within 1% of
/// the height of the whole clip's (found from 5 of 15 samples, row 243.5), both lines on at
/// least 80% of the frames.
#[test]
fn a_geometry_from_few_frames_is_firmed_up_by_a_second_round() {
    let Some(clip) = data("videos/anycam/us_la_freeway_hood_kartikey.mp4") else {
        return;
    };
    let d = tmp();
    let whole = d.path().join("whole");
    std::fs::create_dir_all(&whole).unwrap();
    run_clip(&clip, &[], &whole);
    let g = lanes::base::config::Config::load(&whole.join("geometry.toml")).unwrap();
    let reference = horizon_of(&g.perspective.src) / 480.0;
    let opening = "trim=end_frame=362,setpts=PTS-STARTPTS";
    for (name, filter, crf, h) in [
        ("hq", opening.to_string(), "12", 480.0),
        ("360", format!("{opening},scale=640:360"), "23", 360.0),
    ] {
        let out = d.path().join(name);
        std::fs::create_dir_all(&out).unwrap();
        let v = out.join("la.mp4");
        x264_through(&clip, &filter, crf, &v);
        let (s, err) = run_clip(&v, &[], &out);
        let g = lanes::base::config::Config::load(&out.join("geometry.toml")).unwrap();
        let hz = horizon_of(&g.perspective.src);
        eprintln!(
            "{name}: horizon {hz:.1} (the whole clip's {:.1}), both lines {:.3}; {}",
            reference * h,
            s.both,
            err.lines().next().unwrap_or("")
        );
        assert!(err.contains(" of 47 sampled frames"), "{name}: {err}");
        assert!(s.both >= 0.80, "{name}: both {:.3}", s.both);
        assert!(
            (hz / h - reference).abs() <= 0.01,
            "{name}: horizon {hz:.1}"
        );
    }
}

/// The LA freeway darkened (`eq=brightness=-0.15:gamma=0.7`, dusk): of its 15 sampled frames
/// 4 were usable, one with lines on another lane's line and a barrier, its horizon 13% of the
/// height below the others'. Voting, it moved the median horizon 6 px (both lines on 0.507 of
/// the frames); left out (`autoperspective::disagrees`), 0.639 (measured 2026-12-05; the
/// clip as shot: 0.713).
#[test]
fn a_frame_whose_horizon_disagrees_does_not_vote() {
    let Some(clip) = data("videos/anycam/us_la_freeway_hood_kartikey.mp4") else {
        return;
    };
    let d = tmp();
    let dark = d.path().join("la_dark.mp4");
    x264_through(&clip, "eq=brightness=-0.15:gamma=0.7", "23", &dark);
    let (s, err) = run_clip(&dark, &[], d.path());
    assert!(err.contains("found in 3 of 15 sampled frames"), "{err}");
    assert!(s.both >= 0.60, "both {:.3}", s.both);
    assert!(s.width_in >= 0.95, "width {:.3}", s.width_in);
}

/// A frame whose centre is not the lens's (the lower right part of the Udacity frames, as a clip
/// cut from a wider one): the lines meet 11 degrees to the side at the assumed 58-degree field
/// of view, but only 8 at the narrowest one the check allows for (45, the crop's own), so the
/// geometry is found (it was refused before) and both lines are on every frame. The left line
/// leaves the frame 3 px before the quad's bottom row: the saved geometry is a config that the
/// same video accepts (it was refused as "made for another camera"), and no note says so.
#[test]
fn an_off_centre_crop_is_not_taken_for_a_camera_facing_sideways() {
    let Some((d, _, crop)) = udacity_clip_through("crop=960:540:320:180", &[]) else {
        return;
    };
    let (s, err) = run_clip(&crop, &[], d.path());
    assert_eq!(s.frames, 200);
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
    let yaw: f64 = number_after(&err, "yaw ", " deg");
    assert!(yaw < -10.0, "yaw {yaw}: {err}");
    assert!(!err.contains("lies outside"), "{err}");
    let g = d.path().join("geometry.toml");
    let saved = lanes::base::config::Config::load(&g).unwrap();
    assert!(
        saved.perspective.src[2][0] < 0.0,
        "{:?}",
        saved.perspective.src
    );
    let o = lanes(&[
        "video",
        crop.to_str().unwrap(),
        "--no-render",
        "--config",
        g.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("200 frames read, 200 with a lane drawn"),
        "{}",
        stderr(&o)
    );
}

/// A drive that opens waiting at a light (the Udacity clip after 6 s of its first frame,
/// `tpad`): the stop's samples are one view, so the search reads on into the drive instead of
/// ending on eight frames of one view (refused before: "the 8 usable of 8 sampled frames show
/// one view"), and both lines are on every frame, the stop's included.
#[test]
fn a_drive_that_opens_at_a_standstill_is_calibrated_on_the_move() {
    let Some((d, _, stopped)) = udacity_clip_through(
        "tpad=start_duration=6:start_mode=clone",
        &["-preset", "veryfast"],
    ) else {
        return;
    };
    let (s, err) = run_clip(&stopped, &[], d.path());
    assert_eq!(s.frames, 350);
    let views: usize = number_after(&err, "x720, ", " distinct views");
    assert!(views >= 8, "{views} views: {err}");
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
}

/// A short clip seen in glimpses (the Udacity clip greyed out but for 5 frames each second, at
/// a phase the first round of 24 samples misses): a second round between the first's finds the
/// geometry (refused before: "0 of 24 sampled frames"), within 2% of the frame of the clean
/// clip's quad, and both lines on the road frames.
#[test]
fn a_short_clip_seen_in_glimpses_is_searched_again_between_the_samples() {
    let Some((d, clip, glimpses)) = udacity_clip_through(
        "drawbox=x=0:y=0:w=iw:h=ih:color=gray:t=fill:enable='gt(abs(mod(n,25)-7),2)'",
        &[],
    ) else {
        return;
    };
    let cam = ["--camera", "calibration/udacity.yml"];
    let run = |c: &Path, name: &str| {
        let out = d.path().join(name);
        std::fs::create_dir_all(&out).unwrap();
        let (s, err) = run_clip(c, &cam, &out);
        let cfg = lanes::base::config::Config::load(&out.join("geometry.toml")).unwrap();
        (s, err, cfg)
    };
    let (_, _, clean) = run(&clip, "clean");
    let (s, err, found) = run(&glimpses, "glimpses");
    assert!(err.contains("of 48 sampled frames"), "{err}");
    // Found from 4 frames: low confidence, and the user is told what to do about it.
    assert!(err.contains("low confidence"), "{err}");
    assert!(
        err.contains("warning: ") && err.contains("give it with --config"),
        "{err}"
    );
    for (a, b) in clean.perspective.src.iter().zip(&found.perspective.src) {
        assert!(
            (a[0] - b[0]).abs() <= 0.02 * 1280.0 && (a[1] - b[1]).abs() <= 0.02 * 720.0,
            "{a:?} vs {b:?}"
        );
    }
    // 40 road frames of 200 (5 a second); every one with both lines.
    assert!(s.both >= 0.19, "both {:.3}", s.both);
    // `lanes batch` keeps the warning in the video's note (summary.json, batch.json).
    let note = batch_note(&glimpses, &cam, &d.path().join("batch"));
    assert!(
        note.starts_with("geometry found in 4 of 48")
            && note.contains("; warning: the geometry is of low confidence"),
        "{note}"
    );
}

/// A config whose quad does not fit the video is refused when the video is opened, with the
/// fix in the one-line message, and nothing is written.
#[test]
fn a_quad_for_another_camera_is_refused_before_any_frame() {
    let Some(clip) = data("lanelines_p1/test_videos/solidWhiteRight.mp4") else {
        return;
    };
    let d = tmp();
    let out = d.path().join("o.mp4");
    // `lanes video VIDEO --config CFG -o OUT`: refused in one line holding `needle` and the
    // command that makes a config, and nothing written.
    let refused = |video: &Path, cfg: &str, needle: &str| {
        let o = lanes(&[
            "video",
            video.to_str().unwrap(),
            "--config",
            cfg,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_one_line_error(&o, needle);
        assert!(stderr(&o).contains("lanes perspective"), "{}", stderr(&o));
        assert!(!out.exists());
    };
    // 30 frames of the P1 clip without rendering, with `extra` options.
    let p1_run = |extra: &[&str]| {
        let mut args = vec![
            "video",
            clip.to_str().unwrap(),
            "--no-render",
            "--frames",
            "30",
        ];
        args.extend_from_slice(extra);
        let o = lanes(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    refused(
        &clip,
        "calibration/udacity.toml",
        "lies outside the video's 960x540 frames",
    );
    // The other way round: the geometry found in the 960x540 clip, saved, lies inside the
    // Udacity clip's 1280x720 frames, but it was found on 960x540 ones (`perspective.frame`,
    // written with it): refused too. Before, the run went on and drew no lane on any of the
    // 200 frames, with a warning after the first 100.
    let Some(udacity) = data("videos/hortovanyi/project_video_short.mp4") else {
        return;
    };
    let g = d.path().join("p1.toml");
    p1_run(&["--save-geometry", g.to_str().unwrap()]);
    let text = std::fs::read_to_string(&g).unwrap();
    assert!(text.contains("frame = [960, 540]"), "{text}");
    refused(
        &udacity,
        g.to_str().unwrap(),
        "the config's [perspective] was found on 960x540 frames, not the video's 1280x720 ones",
    );
    // On the clip it was found on, the saved geometry is used as given.
    let err = p1_run(&["--config", g.to_str().unwrap()]);
    assert!(
        err.contains("30 frames read, 30 with a lane drawn"),
        "{err}"
    );
}

/// A video with no road: one line saying no geometry was found, exit 2, nothing written.
#[test]
fn a_video_without_a_road_says_so() {
    let d = tmp();
    let clip = d.path().join("board.mp4");
    let src = "testsrc2=size=640x360:rate=25:duration=2";
    ffmpeg(&[
        "-f".as_ref(),
        "lavfi".as_ref(),
        "-i".as_ref(),
        src.as_ref(),
        "-pix_fmt".as_ref(),
        "yuv420p".as_ref(),
        clip.as_os_str(),
    ]);
    let out = d.path().join("o.mp4");
    let o = lanes(&["video", clip.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_one_line_error(&o, "no road geometry found");
    assert!(!out.exists());
}

/// The Udacity clip shrunk to 720x405 and padded with black bars to 1280x720 (pillar- and
/// letterboxed, as a 4:3 or a cropped dashcam clip re-uploaded at 16:9): the assumed 58-degree
/// field of view spans the picture between the bars, not the frame. Before, it spanned the
/// frame: the focal length was 1.78x too long and the radius median 2635 m against 856 m for
/// the same 6 s unpadded; now within 15% of it, and the line says so.
#[test]
fn a_pillarboxed_video_gives_the_radius_of_its_picture() {
    let Some((d, _, plain)) = udacity_clip_through("null", &["-t", "6"]) else {
        return;
    };
    let (_kept, _, boxed) =
        udacity_clip_through("scale=720:405,pad=1280:720:280:157:black", &["-t", "6"]).unwrap();
    let (p, perr) = run_clip(&plain, &[], d.path());
    let out = d.path().join("boxed");
    std::fs::create_dir_all(&out).unwrap();
    let (b, berr) = run_clip(&boxed, &[], &out);
    assert!(!perr.contains("black bars"), "{perr}");
    let pw: f64 = number_after(&berr, "over the ", "-px-wide picture between black bars");
    assert!((pw - 720.0).abs() <= 8.0, "{berr}");
    assert!(b.both >= 0.95 && p.both >= 0.95, "{berr}");
    radius_as_plain(&b, &p, "boxed", &berr);
}

/// The radius median of a changed clip's run `s` within 15% of the plain clip's `p`.
fn radius_as_plain(s: &Shares, p: &Shares, changed: &str, err: &str) {
    let ratio = s.radius_median / p.radius_median;
    assert!(
        (0.85..=1.15).contains(&ratio),
        "radius median {:.0} m {changed} against {:.0} m plain: {err}",
        s.radius_median,
        p.radius_median
    );
}

/// A large hood over the bottom fifth of the frame (the Udacity clip with a dark, curved hood
/// drawn from row 560 at the centre down): in most sampled frames the default fitting range
/// lay on the hood, and over the whole range the bend far ahead failed the straightness check,
/// so 3 of 24 sampled frames were usable (low confidence). Each frame's lines are now fitted
/// and checked over the road that is visible: 12 of 16, high confidence, and the radius as on
/// the plain clip.
#[test]
fn a_large_hood_leaves_the_visible_road_to_calibrate_on() {
    // Drawn on the bottom 160 rows only (geq is slow), then laid back over the frame.
    let hood = "gt(Y,0.00025*(X-640)*(X-640))";
    let filter = format!(
        "split[a][b];[b]crop=1280:160:0:560,format=yuv444p,geq=lum='if({hood},45+8*sin(X/40),lum(X,Y))':cb='if({hood},128,cb(X,Y))':cr='if({hood},128,cr(X,Y))',format=yuv420p[h];[a][h]overlay=0:560"
    );
    let Some((d, plain, clip)) = udacity_clip_through(&filter, &["-preset", "veryfast"]) else {
        return;
    };
    let (s, err) = run_clip(&clip, &[], d.path());
    assert!(err.contains("(hood below)"), "{err}");
    assert!(err.contains("high confidence"), "{err}");
    let bottom: f64 = number_after(&err, "road up to row ", " (");
    assert!((540.0..580.0).contains(&bottom), "{err}");
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
    let (p, _) = run_clip(&plain, &[], d.path());
    radius_as_plain(&s, &p, "under the hood", &err);
    // `lanes perspective` ends its quad above the hood too, as the video search does (it
    // reached row 684, on the hood, and a portrait crop's quad left the frame, so that `lanes
    // video --config` refused the config `lanes perspective` had just written).
    let cfg = d.path().join("p.toml");
    let o = perspective_to(&clip, &cfg);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("no marking below row"),
        "{}",
        stdout(&o)
    );
    let row = lanes::base::config::Config::load(&cfg)
        .unwrap()
        .perspective
        .src[2][1];
    assert!((540.0..580.0).contains(&row), "{row}");
    let o = lanes(&[
        "video",
        clip.to_str().unwrap(),
        "--no-render",
        "--config",
        cfg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A phone filming upright: the Autobahn clip cropped to 9:16 (304x540). The assumed field of
/// view spans the frame's longer side, as a lens's is quoted: across the width it is then 35
/// degrees, not 58. Before, 58 across its 304 columns made the focal length a third of the
/// crop's own (in truth 18 degrees across), the yaw 9.6 degrees, the radius median 147 m and
/// two tight-bend events (down to 59 m) on a straight Autobahn.
///
/// The crop shows the lane's lines only between the horizon and row 338 (below, they leave the
/// picture's sides), so its curvature rests on 90 rows and moves with the encoder's noise: on
/// Debian's ffmpeg 5.1.9 (2026-12-07) libx264 crf 20 / 23 / 26 (veryfast) gave radius medians
/// 410 / 645 / 976 m and tight bends down to 126 and 195 m on two of the three (the test
/// asserted no tight bend on one encode of an earlier build of the encoder). Each encode is held
/// to what tells the fix from the bug: yaw under 7 degrees, radius median over 350 m, no
/// tight bend under 100 m.
#[test]
fn a_portrait_frame_s_assumed_field_of_view_spans_its_height() {
    let Some(clip) = data("videos/anycam/de_autobahn_akin.mp4") else {
        return;
    };
    let d = tmp();
    for crf in ["20", "23", "26"] {
        let out = d.path().join(crf);
        std::fs::create_dir_all(&out).unwrap();
        let crop = out.join("crop.mp4");
        ffmpeg(&[
            "-i".as_ref(),
            clip.as_os_str(),
            "-vf".as_ref(),
            "crop=304:540".as_ref(),
            "-preset".as_ref(),
            "veryfast".as_ref(),
            "-crf".as_ref(),
            crf.as_ref(),
            "-an".as_ref(),
            crop.as_os_str(),
        ]);
        let (s, err) = run_clip(&crop, &[], &out);
        assert!(
            s.radius_median >= 350.0,
            "crf {crf}: radius median {:.0} m: {err}",
            s.radius_median
        );
        let yaw: f64 = number_after(&err, "yaw ", " deg");
        assert!(yaw.abs() < 7.0, "crf {crf}: {err}");
        let t = out.join("t.jsonl");
        let o = lanes(&["events", t.to_str().unwrap(), "--json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let ev: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
        let tightest = ev
            .iter()
            .filter(|e| e["kind"] == "tight_bend")
            .filter_map(|e| e["min_radius_m"].as_f64())
            .fold(f64::INFINITY, f64::min);
        eprintln!(
            "crf {crf}: yaw {yaw} deg, radius median {:.0} m, tightest bend {tightest:.0} m",
            s.radius_median
        );
        assert!(tightest >= 100.0, "crf {crf}: {ev:?}");
    }
}

/// A night road dark enough to pass for a black bar (the Udacity clip darkened, gamma 0.6, with
/// sensor noise: the asphalt of its bottom third is 90% "black" in every row): the lane's lines
/// run on into those rows, so they are road, not a dashcam's info bar. Before, the quad ended
/// at row 465 above a "246-row black bar" and both lines were found on 42 of the 200 frames.
#[test]
fn a_night_road_the_lines_run_into_is_no_info_bar() {
    let filter = "eq=brightness=-0.25:gamma=0.6,noise=alls=12:allf=t";
    let Some((d, _, clip)) = udacity_clip_through(filter, &["-preset", "veryfast"]) else {
        return;
    };
    let (s, err) = run_clip(&clip, &[], d.path());
    assert!(!err.contains("black bar"), "{err}");
    let bottom: f64 = number_after(&err, "road up to row ", ",");
    assert!(bottom > 660.0, "{err}");
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
}

/// A dashcam's info bar (the Udacity clip squeezed into the top 660 rows, a 60-row black bar
/// below with white glyph-sized blocks over 39% of its text rows, as a date, speed and position
/// line): the quad ends above the bar. Before, the blocks were taken for the lines' lowest
/// marking pixels, the hood test saw markings to the frame's bottom, and the quad reached row
/// 684, in the bar, where the lane was drawn over the text.
#[test]
fn a_dashcam_info_bar_is_below_the_road() {
    let glyphs: Vec<String> = (0..21)
        .map(|k| {
            format!(
                "drawbox=x={}:y=675:w=24:h=30:color=white:t=fill",
                20 + 40 * k
            )
        })
        .collect();
    let filter = format!("scale=1280:660,pad=1280:720:0:0:black,{}", glyphs.join(","));
    let Some((d, _, clip)) = udacity_clip_through(&filter, &["-preset", "veryfast"]) else {
        return;
    };
    let (s, err) = run_clip(&clip, &[], d.path());
    assert!(err.contains("(a 60-row black bar below)"), "{err}");
    let bottom: f64 = number_after(&err, "road up to row ", " (");
    assert!((600.0..660.0).contains(&bottom), "{err}");
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
    // `lanes perspective` ends its quad above the bar too (it was at its default row 684).
    let p = d.path().join("p.toml");
    let o = perspective_to(&clip, &p);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("a 60-row black bar at the bottom of every frame"));
    let cfg = lanes::base::config::Config::load(&p).unwrap();
    let row = cfg.perspective.src[2][1];
    assert!((600.0..660.0).contains(&row), "{row}");
}

/// Two pictures one above the other, the road in the lower one (here the Udacity clip under a
/// blurred, upturned copy of itself): the lower picture's lines are found and drawn, but the
/// horizon lies far below the frame's centre and the camera would look about 20 degrees up.
/// The run warns that the metres are off and gives the crop (no such warning on any shared
/// clip: their cameras look 3.6 up to 6.6 down).
#[test]
fn two_pictures_one_above_the_other_are_warned_of() {
    let Some((_d, _, clip)) = udacity_clip_through(
        "split[a][b];[b]vflip,boxblur=20[c];[c][a]vstack",
        &["-preset", "veryfast"],
    ) else {
        return;
    };
    let o = lanes(&["video", clip.to_str().unwrap(), "--no-render"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let up: f64 = number_after(&err, "the camera would look ", " deg up");
    assert!((15.0..30.0).contains(&up), "{err}");
    assert!(err.contains("crop=iw:ih/2:0:ih/2"), "{err}");
}

/// A two-camera dashcam's merged file: the front view and the rear one side by side in
/// 2560x720 frames (here the Udacity clip and its mirror image). The whole frame's lines meet
/// far to the side of its centre: refused as before, and now the message says which half shows
/// the road and gives the ffmpeg command that cuts it out; the file it writes is calibrated
/// like the clip itself.
#[test]
fn two_pictures_side_by_side_are_named_with_the_crop_that_parts_them() {
    let Some((d, _, clip)) = udacity_clip_through(
        "split[a][b];[b]hflip[c];[a][c]hstack",
        &["-preset", "veryfast"],
    ) else {
        return;
    };
    let o = lanes(&["video", clip.to_str().unwrap(), "--no-render"]);
    assert_one_line_error(&o, "its 2560x720 frames hold two pictures side by side");
    let err = stderr(&o);
    let shown: usize = number_after(
        &err,
        "the left one shows the ego lane's two lines in ",
        " of 12",
    );
    assert!(shown >= 6, "{err}");
    assert!(
        err.contains("-vf crop=iw/2:ih:0:0 -c:a copy left.mp4`, then `lanes video left.mp4`"),
        "{err}"
    );
    let left = d.path().join("left.mp4");
    ffmpeg(&[
        "-i".as_ref(),
        clip.as_os_str(),
        "-vf".as_ref(),
        "crop=iw/2:ih:0:0".as_ref(),
        "-c:a".as_ref(),
        "copy".as_ref(),
        left.as_os_str(),
    ]);
    let (s, err) = run_clip(&left, &[], d.path());
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
}

/// The Udacity clip upside down (a dashcam hung from the mirror with its flip setting off):
/// no geometry is found (the search looks for the road below the horizon), and the error says
/// that the frames turned 180 degrees show the lane, with the command that marks the file
/// turned without re-encoding; the file so marked is then processed as recorded the right way
/// up (the decoder honours the rotation). An upright recording whose file flags it turned 180
/// degrees gets the command that sets the flag to 0.
#[test]
fn an_upside_down_video_is_named_with_the_fix() {
    let Some((d, _, clip)) = udacity_clip_through("hflip,vflip", &["-preset", "veryfast"]) else {
        return;
    };
    let o = lanes(&["video", clip.to_str().unwrap(), "--no-render"]);
    assert_one_line_error(&o, "the camera records upside down");
    let err = stderr(&o);
    let shown: usize = number_after(&err, "turned 180 degrees, ", " of 12 sampled");
    assert!(shown >= 6, "{err}");
    assert!(err.contains("-c copy -metadata:s:v:0 rotate=180"), "{err}");
    // `lanes perspective` on it says the same.
    let cfg = d.path().join("up.toml");
    let o = perspective_to(&clip, &cfg);
    assert!(!o.status.success() && !cfg.exists());
    assert!(
        stderr(&o).contains("the camera records upside down"),
        "{}",
        stderr(&o)
    );
    let turned = d.path().join("turned.mp4");
    ffmpeg(&[
        "-i".as_ref(),
        clip.as_os_str(),
        "-c".as_ref(),
        "copy".as_ref(),
        "-metadata:s:v:0".as_ref(),
        "rotate=180".as_ref(),
        turned.as_os_str(),
    ]);
    let (s, err) = run_clip(&turned, &[], d.path());
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
    // The other way round: frames recorded upright, in a file whose rotation flag turns them
    // upside down. The fix sets the flag to 0, not to 180 (which it already is).
    let Some(upright) = data("videos/hortovanyi/project_video_short.mp4") else {
        return;
    };
    let flagged = d.path().join("flagged.mp4");
    let copy_with_flag = |src: &Path, deg: &str, dst: &Path| {
        let tag = format!("rotate={deg}");
        ffmpeg(&[
            "-i".as_ref(),
            src.as_os_str(),
            "-c".as_ref(),
            "copy".as_ref(),
            "-metadata:s:v:0".as_ref(),
            tag.as_ref(),
            dst.as_os_str(),
        ]);
    };
    copy_with_flag(&upright, "180", &flagged);
    let o = lanes(&["video", flagged.to_str().unwrap(), "--no-render"]);
    assert_one_line_error(
        &o,
        "the file's rotation flag (180 degrees) shows the road upside down",
    );
    assert!(
        stderr(&o).contains("-c copy -metadata:s:v:0 rotate=0"),
        "{}",
        stderr(&o)
    );
    let unflagged = d.path().join("unflagged.mp4");
    copy_with_flag(&flagged, "0", &unflagged);
    let (s, err) = run_clip(&unflagged, &[], d.path());
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
    // A phone clip stored turned a quarter counter-clockwise, its flag turning it a further
    // quarter the same way: the fix's tag is the one that shows it upright (270 with this
    // FFmpeg, whose tag is the display matrix's counter-clockwise angle). Before, the hint
    // gave back the file's own tag (90), and the file it made failed the same way.
    let stored = d.path().join("stored_ccw.mp4");
    ffmpeg(&[
        "-i".as_ref(),
        upright.as_os_str(),
        "-t".as_ref(),
        "3".as_ref(),
        "-vf".as_ref(),
        "transpose=2".as_ref(),
        "-preset".as_ref(),
        "ultrafast".as_ref(),
        stored.as_os_str(),
    ]);
    let quarter = d.path().join("quarter.mp4");
    copy_with_flag(&stored, "90", &quarter);
    let o = lanes(&["video", quarter.to_str().unwrap(), "--no-render"]);
    assert_one_line_error(&o, "shows the road upside down");
    assert!(
        stderr(&o).contains("-c copy -metadata:s:v:0 rotate=270"),
        "{}",
        stderr(&o)
    );
    let fixed = d.path().join("fixed.mp4");
    copy_with_flag(&stored, "270", &fixed);
    let (s, err) = run_clip(&fixed, &[], d.path());
    assert!(s.both >= 0.95 && s.width_in >= 0.95, "{err}");
}

/// The Udacity clip turned on its side (a phone clip whose rotation flag was lost): lines are
/// found in 4 of its 24 sampled frames (on the dashes, the barrier and the trees), but they imply
/// a camera 9.1 m above the road with a 3.7 m lane. `lanes video` refuses in one line naming
/// the height and writes nothing (before, it drew a lane over the verge on 74 of 75 frames);
/// `lanes perspective` writes no config.
#[test]
fn a_video_turned_on_its_side_gives_no_geometry() {
    let Some((d, _, clip)) = udacity_clip_through("transpose=1", &["-t", "3"]) else {
        return;
    };
    let out = d.path().join("o.mp4");
    let o = lanes(&["video", clip.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_one_line_error(&o, "on its side");
    let height: f64 = number_after(&stderr(&o), "imply a camera ", " m above");
    assert!(height > 6.0, "{}", stderr(&o));
    assert!(!out.exists());
    let cfg = d.path().join("side.toml");
    let o = perspective_to(&clip, &cfg);
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("no config written"), "{}", stderr(&o));
    assert!(!cfg.exists());
}

/// A synthetic drive drowned in noise (`ffmpeg -vf noise=alls=35:allf=t`, about 18 grey levels
/// measured after x264). Before noisy frames were smoothed (`lane::denoise`), the "lines" each
/// sampled frame found in the noise met at horizons about 120 px apart and the clip was
/// refused; smoothed, the rig's own geometry is found (horizon at row 325, camera 1.45 m high)
/// and the lane drawn.
#[test]
fn a_drive_drowned_in_noise_is_calibrated_smoothed() {
    let d = tmp();
    synth_drive(
        d.path(),
        (1280, 720, 1000.0),
        &["--seconds", "4", "--supersample", "1"],
    );
    let clip = d.path().join("noisy.mp4");
    let drive = d.path().join("synthetic_drive.mp4");
    ffmpeg(&[
        "-i".as_ref(),
        drive.as_os_str(),
        "-vf".as_ref(),
        "noise=alls=35:allf=t".as_ref(),
        "-c:v".as_ref(),
        "libx264".as_ref(),
        "-preset".as_ref(),
        "veryfast".as_ref(),
        clip.as_os_str(),
    ]);
    let (s, err) = run_clip(&clip, &[], d.path());
    let horizon: f64 = number_after(&err, "horizon at row ", " (");
    assert!((horizon - 325.0).abs() < 0.015 * 720.0, "{err}");
    let height: f64 = number_after(&err, "camera ", " m high");
    assert!((height - 1.45).abs() < 0.15, "{err}");
    assert!(s.both >= 0.9 && s.width_in >= 0.95, "{err}");
    assert!(err.contains("were smoothed before the analysis"), "{err}");
}

/// A video of noise alone (`ffmpeg -f lavfi -i color=gray`, `noise=alls=100:allf=t`: about 60
/// grey levels, beyond what smoothing brings under the contrast margin, so analysed as it is):
/// the "lines" each sampled frame finds meet at horizons far apart; refused in one line,
/// rather than lanes drawn from that guess.
#[test]
fn frames_whose_horizons_disagree_give_no_geometry() {
    let d = tmp();
    let clip = d.path().join("noise.mp4");
    ffmpeg(&[
        "-f".as_ref(),
        "lavfi".as_ref(),
        "-i".as_ref(),
        "color=gray:s=1280x720:r=25:d=4".as_ref(),
        "-vf".as_ref(),
        "noise=alls=100:allf=t".as_ref(),
        "-c:v".as_ref(),
        "libx264".as_ref(),
        "-preset".as_ref(),
        "veryfast".as_ref(),
        clip.as_os_str(),
    ]);
    let out = d.path().join("o.mp4");
    let o = lanes(&["video", clip.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_one_line_error(&o, "horizons of the");
    assert!(!out.exists());
}

/// The row where the quad's two sides meet (the horizon of the lines they lie on).
fn horizon_of(src: &[[f64; 2]; 4]) -> f64 {
    let ml = (src[2][0] - src[0][0]) / (src[2][1] - src[0][1]);
    let mr = (src[3][0] - src[1][0]) / (src[3][1] - src[1][1]);
    src[0][1] + (src[1][0] - src[0][0]) / (ml - mr)
}

/// `lanes synth video` through rigs of known height, pitch and focal length (two resolutions):
/// the geometry found in the video has the rig's horizon within 0.5% of the height, the lane's
/// width at the quad's bottom row within 2% of the truth quad's, and metres per pixel along the
/// road within 5% of the exact value for the rows it chose. Without the camera file, `--fov`
/// with the rig's field of view gives the camera file's scale within 1%.
#[test]
fn synthetic_rigs_give_their_horizon_and_scale() {
    let d = tmp();
    // (width, height, focal length, camera height m, pitch deg down)
    let rigs: [(i32, i32, f64, f64, f64); 2] =
        [(1280, 720, 1000.0, 1.5, 2.5), (640, 360, 420.0, 1.2, 1.0)];
    for (w, h, f, cam_h, pitch) in rigs {
        let dir = d.path().join(format!("rig{w}"));
        std::fs::create_dir_all(&dir).unwrap();
        let cy = h as f64 / 2.0;
        let (cam_h_s, pitch_s) = (cam_h.to_string(), pitch.to_string());
        let cam = synth_drive(
            &dir,
            (w, h, f),
            &[
                "--seconds",
                "1.2",
                "--camera-height",
                &cam_h_s,
                "--pitch",
                &pitch_s,
            ],
        );
        let clip = dir.join("synthetic_drive.mp4");
        let g = dir.join("g.toml");
        let o = lanes(&[
            "video",
            clip.to_str().unwrap(),
            "--camera",
            cam.to_str().unwrap(),
            "--no-render",
            "--save-geometry",
            g.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "video: {}", stderr(&o));
        let truth = lanes::base::config::Config::load(&dir.join("synthetic_drive.toml")).unwrap();
        let found = lanes::base::config::Config::load(&g).unwrap();
        let (t, s) = (truth.perspective.src, found.perspective.src);
        let exact_horizon = cy - f * pitch.to_radians().tan();
        let hz = horizon_of(&s);
        let (yt, yb) = (s[0][1], s[2][1]);
        let x =
            |a: [f64; 2], b: [f64; 2], y: f64| a[0] + (b[0] - a[0]) * (y - a[1]) / (b[1] - a[1]);
        let truth_width = x(t[1], t[3], yb) - x(t[0], t[2], yb);
        let width = s[3][0] - s[2][0];
        let exact_ym = (super::perspective::ground_distance(yt, f, cy, cam_h, pitch)
            - super::perspective::ground_distance(yb, f, cy, cam_h, pitch))
            / (found.perspective.dst[2][1] - found.perspective.dst[0][1]);
        let ym = found.units.ym_per_px;
        eprintln!(
            "rig {w}x{h} f {f} h {cam_h} pitch {pitch}: horizon {hz:.1} (exact {exact_horizon:.1}), bottom width {width:.1} px (truth {truth_width:.1}), ym_per_px {ym:.5} (exact {exact_ym:.5}); {}",
            stderr(&o).lines().next().unwrap_or("")
        );
        assert!((hz - exact_horizon).abs() <= 0.005 * h as f64, "horizon");
        assert!((width / truth_width - 1.0).abs() <= 0.02, "width");
        assert!((ym / exact_ym - 1.0).abs() <= 0.05, "ym_per_px");
        // Without the camera file: with the lens's field of view given (`--fov`) the scale is
        // the calibrated one within 1% and the config keeps it; with the assumed 58 degrees it
        // is off by the focal lengths' ratio (this rig's lenses are 65 and 75 degrees).
        let hfov = 2.0 * (w as f64 / 2.0 / f).atan().to_degrees();
        let fov_text = format!("{hfov:.3}");
        let scale_with = |extra: &[&str], name: &str| {
            let g = dir.join(name);
            let mut args = vec![
                "video",
                clip.to_str().unwrap(),
                "--no-render",
                "--save-geometry",
                g.to_str().unwrap(),
            ];
            args.extend_from_slice(extra);
            let o = lanes(&args);
            assert_eq!(o.status.code(), Some(0), "video: {}", stderr(&o));
            (lanes::base::config::Config::load(&g).unwrap(), stderr(&o))
        };
        let (given, err) = scale_with(&["--fov", &fov_text], "fov.toml");
        let (assumed, _) = scale_with(&[], "assumed.toml");
        eprintln!(
            "rig {w}x{h}: ym_per_px {:.5} with --fov {fov_text}, {:.5} assumed, {ym:.5} with the camera file; {}",
            given.units.ym_per_px,
            assumed.units.ym_per_px,
            err.lines().next().unwrap_or("")
        );
        assert!(err.contains("field of view given"), "{err}");
        // `lanes batch` reads the field of view from the config's `[camera]` section (a config
        // without `[perspective]`: the geometry is still found in each video).
        let cfg = dir.join("camera_only.toml");
        std::fs::write(&cfg, format!("[camera]\nhfov_deg = {fov_text}\n")).unwrap();
        let vids = dir.join("videos");
        std::fs::create_dir_all(&vids).unwrap();
        std::fs::copy(&clip, vids.join("drive.mp4")).unwrap();
        let note = batch_note(
            &vids,
            &["--config", cfg.to_str().unwrap()],
            &dir.join("batch_out"),
        );
        assert!(
            note.contains(&format!(
                "{}-deg field of view given",
                given.camera.hfov_deg.unwrap()
            )),
            "{note}"
        );
        assert!(
            (given.units.ym_per_px / ym - 1.0).abs() <= 0.01,
            "--fov scale"
        );
        assert_eq!(given.camera.hfov_deg, Some(fov_text.parse().unwrap()));
        assert!(
            (assumed.units.ym_per_px / ym - 1.0).abs() >= 0.1,
            "assumed scale"
        );
        assert_eq!(assumed.camera.hfov_deg, None);
    }
    // --fov with a camera file is refused (the file has the focal length), as is a field of
    // view no pinhole has.
    let clip = d.path().join("rig640").join("synthetic_drive.mp4");
    let cam = d.path().join("rig640").join("pin.yml");
    let o = lanes(&[
        "video",
        clip.to_str().unwrap(),
        "--camera",
        cam.to_str().unwrap(),
        "--fov",
        "70",
        "--no-render",
    ]);
    assert_one_line_error(&o, "--fov 70: the camera file");
    let o = lanes(&[
        "video",
        clip.to_str().unwrap(),
        "--fov",
        "200",
        "--no-render",
    ]);
    assert_one_line_error(&o, "camera.hfov_deg = 200");
}

/// A winding road with no straight stretch (the issue's eighth camera, "a winding road, no
/// straight frame", was refused by `lanes perspective`): a 100 m left bend turning into a
/// 100 m right bend over the whole drive, through two rigs. With no config the geometry is
/// found from the near-range tangents (a flat road's every direction vanishes on the horizon):
/// the horizon within 0.5% of the height of the rig's, both lines on at least 95% of the
/// frames, and the radius within 12% of the true one (median over the frames whose road bends
/// by more than 1/1500 m; measured 2026-12-07: 2.7% at 960x540, 6.9% at 640x360; horizons
/// 0.8 and 0.6 px from the rigs').
#[test]
fn a_winding_road_with_no_straight_frame_is_calibrated() {
    let d = tmp();
    // (width, height, focal length, camera height m, pitch deg down)
    let rigs: [(i32, i32, f64, f64, f64); 2] =
        [(960, 540, 750.0, 1.3, 1.5), (640, 360, 420.0, 1.2, 1.0)];
    for (w, h, f, cam_h, pitch) in rigs {
        let dir = d.path().join(format!("winding{w}"));
        std::fs::create_dir_all(&dir).unwrap();
        let (cam_h_s, pitch_s) = (cam_h.to_string(), pitch.to_string());
        let cam = synth_drive(
            &dir,
            (w, h, f),
            &[
                "--seconds",
                "8",
                "--radius",
                "100",
                "--direction",
                "left",
                "--radius-end",
                "100",
                "--direction-end",
                "right",
                "--transition",
                "170",
                "--shadows",
                "--supersample",
                "1",
                "--camera-height",
                &cam_h_s,
                "--pitch",
                &pitch_s,
            ],
        );
        let (shares, err) = run_clip(
            &dir.join("synthetic_drive.mp4"),
            &["--camera", cam.to_str().unwrap()],
            &dir,
        );
        let found = lanes::base::config::Config::load(&dir.join("geometry.toml")).unwrap();
        let exact_horizon = h as f64 / 2.0 - f * pitch.to_radians().tan();
        let hz = horizon_of(&found.perspective.src);
        let truth = synth_truth(&dir);
        let frames = truth["frames"].as_array().unwrap();
        let recs = read_jsonl(&dir.join("t.jsonl"));
        assert_eq!(recs.len(), frames.len(), "a telemetry record per frame");
        let straight = frames
            .iter()
            .filter(|t| t["curvature_per_m"].as_f64().unwrap().abs() < 1.0 / 1500.0)
            .count();
        let errors: Vec<f64> = frames
            .iter()
            .zip(&recs)
            .filter(|(t, r)| {
                r["status"] == "both"
                    && t["curvature_per_m"].as_f64().unwrap().abs() >= 1.0 / 1500.0
            })
            .filter_map(|(t, r)| {
                let truth_r = t["radius_m"].as_f64()?;
                Some((r["radius_m"].as_f64()? / truth_r - 1.0).abs())
            })
            .collect();
        let err_median = median(errors.clone());
        eprintln!(
            "winding {w}x{h}: horizon {hz:.1} (exact {exact_horizon:.1}), both lines {:.3}, radius error median {err_median:.3} over {} bent frames ({straight} of {} nearly straight); {}",
            shares.both,
            errors.len(),
            frames.len(),
            err.lines().next().unwrap_or("")
        );
        // The road bends in nearly every frame: a straight-road-only search had nothing.
        assert!(straight * 10 <= frames.len(), "the drive is not winding");
        assert!((hz - exact_horizon).abs() <= 0.005 * h as f64, "horizon");
        assert!(shares.both >= 0.95, "both lines");
        assert!(errors.len() * 10 >= frames.len() * 8, "radii measured");
        assert!(err_median <= 0.12, "radius");
    }
}
