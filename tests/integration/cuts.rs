//! Edited videos: a cut between two shots restarts the lane tracking (`tracking.restart_at_cuts`),
//! found where the picture changes at once and nowhere else; with the geometry found in the
//! video, each shot after a cut is analysed with its own.

use super::*;
use serde_json::Value;
use std::path::Path;

/// `lanes video CLIP --no-render ARGS --telemetry`: exit 0; the records and stderr.
fn records(clip: &Path, args: &[&str], dir: &Path) -> (Vec<Value>, String) {
    let t = dir.join("t.jsonl");
    let mut all = vec!["video", clip.to_str().unwrap(), "--no-render"];
    all.extend_from_slice(args);
    all.extend(["--telemetry", t.to_str().unwrap()]);
    let o = lanes(&all);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let recs = std::fs::read_to_string(&t)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (recs, err)
}

/// A shared clip through the ffmpeg `filter` (`selfcal::clip_through`), then `records` of it:
/// the folder holding it (kept while it lives), the records and stderr; `None` without the
/// data.
fn filtered_records(
    rel: &str,
    filter: &str,
    opts: &[&str],
) -> Option<(tempfile::TempDir, Vec<Value>, String)> {
    let (d, _, clip) = super::selfcal::clip_through(rel, filter, opts)?;
    let (recs, err) = records(&clip, &[], d.path());
    Some((d, recs, err))
}

/// The frames whose records say `"cut": true`.
fn cuts(recs: &[Value]) -> Vec<u64> {
    recs.iter()
        .filter(|r| r["cut"] == true)
        .map(|r| r["frame"].as_u64().unwrap())
        .collect()
}

/// Every clip of a compilation made here: 960x540 at 25 fps, timestamps from 0.
const FIT: &str = "scale=960:540,fps=25,setpts=PTS-STARTPTS";

/// How many of a shot's records have both lines, and their share of the shot.
fn both_lines(shot: &[Value]) -> (usize, f64) {
    let both = shot.iter().filter(|r| r["status"] == "both").count();
    (both, both as f64 / shot.len().max(1) as f64)
}

/// `inputs` joined by the ffmpeg `filter` (inputs `[0]`, `[1]`, ...) into `out`, H.264
/// (veryfast), no audio, with `extra` options before the output.
fn join(inputs: &[&Path], filter: &str, extra: &[&str], out: &Path) {
    use std::ffi::OsStr;
    let mut args: Vec<&OsStr> = Vec::new();
    for i in inputs {
        args.extend([OsStr::new("-i"), i.as_os_str()]);
    }
    let encode = [
        "-filter_complex",
        filter,
        "-an",
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
    ];
    args.extend(encode.iter().chain(extra).map(OsStr::new));
    args.push(out.as_os_str());
    ffmpeg(&args);
}

/// The shared clips `rels` joined by `filter` (`join`) into `joined.mp4` in a new temporary
/// folder; `None` when the data is missing (`data` says why).
fn joined_clips(
    rels: &[&str],
    filter: &str,
    extra: &[&str],
) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let clips = rels.iter().map(|r| data(r)).collect::<Option<Vec<_>>>()?;
    let d = tmp();
    let out = d.path().join("joined.mp4");
    let inputs: Vec<&Path> = clips.iter().map(|p| p.as_path()).collect();
    join(&inputs, filter, extra, &out);
    Some((d, out))
}

/// Two places of the Udacity drive joined (the project clip's first 100 frames, then the
/// shadow clip's): one cut, at frame 100, where the lane is searched afresh; with
/// `restart_at_cuts = false` none.
#[test]
fn a_cut_between_two_places_of_a_drive_restarts_the_tracking_there() {
    let Some((d, joined)) = joined_clips(&["videos/hortovanyi/project_video_short.mp4", "videos/hortovanyi/project_video_shadow.mp4"], "[0]trim=end_frame=100,setpts=PTS-STARTPTS[a];[1]trim=end_frame=100,setpts=PTS-STARTPTS[b];[a][b]concat=n=2", &[]) else {
        return;
    };
    let geometry = [
        "--camera",
        "calibration/udacity.yml",
        "--config",
        "calibration/udacity.toml",
    ];
    let (recs, err) = records(&joined, &geometry, d.path());
    assert_eq!(recs.len(), 200);
    assert_eq!(cuts(&recs), vec![100], "{err}");
    assert!(err.contains("an edited video: 1 cut at frame 100"), "{err}");
    // The tracker started again: the frame of the cut is searched with sliding windows (the
    // frames around it follow the lane found before them), and both shots keep their lane.
    assert_eq!(recs[100]["search"], "sliding");
    assert_eq!(recs[99]["search"], "prior");
    assert_eq!(recs[101]["search"], "prior");
    let both = recs.iter().filter(|r| r["status"] == "both").count();
    assert!(both >= 198, "{both} of 200 with both lines");
    // Turned off: no cut, and the frame after the join is searched around the old lane.
    let off = d.path().join("off.toml");
    let mut cfg = std::fs::read_to_string("calibration/udacity.toml").unwrap();
    cfg.push_str("\n[tracking]\nrestart_at_cuts = false\n");
    std::fs::write(&off, cfg).unwrap();
    let (recs, err) = records(
        &joined,
        &[
            "--camera",
            "calibration/udacity.yml",
            "--config",
            off.to_str().unwrap(),
        ],
        d.path(),
    );
    assert!(cuts(&recs).is_empty(), "{err}");
    assert!(!err.contains("edited video"), "{err}");
    assert_eq!(recs[100]["search"], "prior");
}

/// One camera cut (the Udacity project clip's first 100 frames, then the shadow clip's), no
/// config: the shot after the cut agrees with the run's geometry, which is kept there (12
/// frames searched, not 24: horizon 0.8% of the height off, vanishing point 1.8% of the width,
/// lane width 0.1%). The same second shot zoomed 1.5x about the frame's centre (a replay) does
/// not agree (horizon 3.6% off, lane 10% wider at the quad's bottom) and gets a geometry of its
/// own. (A zoom about the vanishing point leaves the lane's lines where they were: nothing
/// found from them, the shot's own search included, can tell it.)
#[test]
fn a_shot_of_the_same_camera_keeps_the_runs_geometry_and_a_zoomed_one_does_not() {
    let trim = "trim=end_frame=100,setpts=PTS-STARTPTS";
    for (zoom, holds) in [("", true), (",scale=1920:1080,crop=1280:720", false)] {
        let Some((d, joined)) = joined_clips(
            &[
                "videos/hortovanyi/project_video_short.mp4",
                "videos/hortovanyi/project_video_shadow.mp4",
            ],
            &format!("[0]{trim}[a];[1]{trim}{zoom}[b];[a][b]concat=n=2"),
            &[],
        ) else {
            return;
        };
        let (recs, err) = records(&joined, &[], d.path());
        assert_eq!(cuts(&recs), vec![100], "{err}");
        let line = err
            .lines()
            .find(|l| l.contains("shot at frame 100: "))
            .unwrap_or_else(|| panic!("no line for the shot: {err}"));
        eprintln!("{line}");
        assert_eq!(
            line.contains("the run's geometry holds: "),
            holds,
            "zoom {zoom:?}: {line}"
        );
        if !holds {
            assert!(line.contains("geometry found in"), "{line}");
        }
        for (name, shot) in [("opening", &recs[..100]), ("second", &recs[100..])] {
            let (both, share) = both_lines(shot);
            eprintln!(
                "zoom {zoom:?}, {name} shot: both lines on {both} of {}",
                shot.len()
            );
            assert!(
                share >= 0.95,
                "zoom {zoom:?}, {name} shot: {share:.3}: {err}"
            );
        }
    }
}

/// The Udacity project clip joined to itself five times by stream copy (the 1000-frame
/// speed clip, frame for frame), no config: at each cut the run's geometry holds (4 frames
/// searched, not 24), and every shot has both lines. Before, every shot was searched anew.
/// The opening shot alone gives a low-confidence geometry (4 of 6 sampled frames before the
/// first cut); the samples after the cut agree with it and are pooled with it (medium
/// confidence, no warning). Only a low-confidence opening is pooled: pooling every opening
/// with agreeing later samples was tried and not kept (on the LA clip at 640x360, whose
/// opening is of medium confidence, it added one frame and lane widths in range fell from
/// 509/513 to 488/504).
#[test]
fn a_clip_joined_to_itself_keeps_one_geometry() {
    let Some(clip) = data("videos/hortovanyi/project_video_short.mp4") else {
        return;
    };
    let d = tmp();
    let list = d.path().join("list.txt");
    let line = format!("file '{}'\n", clip.display());
    std::fs::write(&list, line.repeat(5)).unwrap();
    let joined = d.path().join("joined.mp4");
    let args = [
        "-f",
        "concat",
        "-safe",
        "0",
        "-i",
        list.to_str().unwrap(),
        "-c",
        "copy",
    ];
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    all.push(joined.as_os_str());
    ffmpeg(&all);
    let (recs, err) = records(&joined, &[], d.path());
    assert_eq!(cuts(&recs), vec![200, 400, 600, 800], "{err}");
    // The opening shot (8 s) gives few samples; the later shots agree with it, so their
    // samples are pooled with its own: no low-confidence warning on a clean clip.
    assert!(
        !err.contains("low confidence") && !err.contains("warning"),
        "{err}"
    );
    for f in [200, 400, 600, 800] {
        assert!(
            err.contains(&format!("shot at frame {f}: the run's geometry holds: ")),
            "{err}"
        );
    }
    for (i, w) in [0, 200, 400, 600, 800, 1000].windows(2).enumerate() {
        let (both, share) = both_lines(&recs[w[0]..w[1]]);
        eprintln!("shot {i}: both lines on {both} of 200");
        assert!(share >= 0.95, "shot {i}: {share:.3}: {err}");
    }
}

/// The shared dashcam clips: the Los Angeles clip's zoomed replay (frames 363-433, seen on
/// its frames: a crop of the view beside an SUV, hood and horizon elsewhere) is the only edit;
/// no other clip has a cut. The geometry found for the dashcam's own view is wrong in the
/// replay: no lane may be drawn there. Before cuts were found, the shot before's lane was
/// predicted into it (15 frames), then the SUV's lower edge was drawn as a lone left line (17
/// frames) and predicted on (19).
#[test]
fn the_shared_clips_cuts_are_found_and_nothing_else() {
    for (rel, want) in [
        (
            "videos/anycam/us_la_freeway_hood_kartikey.mp4",
            vec![363, 434],
        ),
        ("videos/anycam/de_autobahn_akin.mp4", vec![]),
        ("videos/anycam/forest_road_gaurav.mp4", vec![]),
        ("lanelines_p1/test_videos/solidWhiteRight.mp4", vec![]),
        (
            "lanelines_p1/test_videos/challenge_720x576_transcoded.mp4",
            vec![],
        ),
        ("videos/hortovanyi/project_video_shadow.mp4", vec![]),
    ] {
        let Some(clip) = data(rel) else { return };
        let d = tmp();
        let (recs, err) = records(&clip, &[], d.path());
        assert_eq!(cuts(&recs), want, "{rel}: {err}");
        for &f in &want {
            let r = &recs[f as usize];
            assert_eq!(r["frame"], f);
            assert_ne!(r["status"], "predicted", "{rel}: {r}");
        }
        if let Some((&a, &b)) = want.first().zip(want.get(1)) {
            let drawn: Vec<u64> = recs[a as usize..b as usize]
                .iter()
                .filter(|r| r["status"] != "none")
                .map(|r| r["frame"].as_u64().unwrap())
                .collect();
            assert!(
                drawn.is_empty(),
                "{rel}: a lane drawn in the replay: {drawn:?}"
            );
        }
    }
}

/// A compilation of three cameras (P1 solidWhiteRight, the Autobahn phone, the Udacity car), each
/// scaled to 960x540 at 25 fps and joined, no config: the opening geometry is the first
/// camera's, and each later shot finds its own in its frames. Before shots had geometries of
/// their own, the Autobahn shot had both lines on 6% of its frames (the first camera's quad on
/// another camera), and on 2% when it followed the Udacity clip.
#[test]
fn a_compilation_of_three_cameras_finds_each_shots_geometry() {
    let fit = FIT;
    let Some((d, joined)) = joined_clips(
        &[
            "lanelines_p1/test_videos/solidWhiteRight.mp4",
            "videos/anycam/de_autobahn_akin.mp4",
            "videos/hortovanyi/project_video_short.mp4",
        ],
        &format!("[0]{fit}[a];[1]{fit}[b];[2]{fit}[c];[a][b][c]concat=n=3"),
        &[],
    ) else {
        return;
    };
    let (recs, err) = records(&joined, &[], d.path());
    let cut_at = cuts(&recs);
    assert_eq!(cut_at.len(), 2, "{cut_at:?}: {err}");
    // The joins, at 25 fps: 221 frames of the 8.8 s P1 clip, then 13 s of the Autobahn.
    assert!((cut_at[0] as i64 - 221).abs() <= 1, "{cut_at:?}");
    assert!((cut_at[1] as i64 - 546).abs() <= 1, "{cut_at:?}");
    for f in &cut_at {
        assert!(
            err.contains(&format!("shot at frame {f}: geometry found in")),
            "{err}"
        );
    }
    let bounds = [0, cut_at[0] as usize, cut_at[1] as usize, recs.len()];
    for (i, w) in bounds.windows(2).enumerate() {
        let shot = &recs[w[0]..w[1]];
        let (both, share) = both_lines(shot);
        let widths_in = shot
            .iter()
            .filter(|r| {
                r["status"] == "both"
                    && r["lane_width_m"]
                        .as_f64()
                        .is_some_and(|w| (2.7..=4.3).contains(&w))
            })
            .count() as f64
            / both.max(1) as f64;
        eprintln!(
            "shot {i} (frames {}-{}): both lines {share:.3}, widths in 2.7-4.3 m {widths_in:.3}",
            w[0],
            w[1] - 1
        );
        assert!(share >= 0.95, "shot {i}: both lines on {share:.3}");
        assert!(widths_in >= 0.95, "shot {i}: widths {widths_in:.3}");
    }
    // `lanes batch` does the same and says so in the video's note.
    let out = d.path().join("batch");
    let o = lanes(&[
        "batch",
        joined.to_str().unwrap(),
        "--render",
        "none",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("batch.json")).unwrap()).unwrap();
    let note = report["videos"][0]["note"].as_str().unwrap_or("");
    assert!(
        note.contains(&format!(
            "an edited video: 2 cuts at frames {}, {}",
            cut_at[0], cut_at[1]
        )) && note.contains("2 of 2 shots searched found a geometry of their own"),
        "{note}"
    );
}

/// A compilation cut off in the middle of its second shot, inside the stretch read ahead to
/// find that shot's geometry: every frame decoded is analysed and written, and the run says it
/// stopped (exit 1), as for any truncated video.
#[test]
fn a_compilation_cut_off_while_its_shot_is_read_ahead_writes_every_frame_read() {
    let fit = FIT;
    let Some((d, joined)) = joined_clips(
        &[
            "videos/hortovanyi/project_video_short.mp4",
            "videos/anycam/de_autobahn_akin.mp4",
        ],
        &format!("[0]trim=end_frame=100,{fit}[a];[1]trim=end_frame=100,{fit}[b];[a][b]concat=n=2"),
        &["-movflags", "+faststart"],
    ) else {
        return;
    };
    let bytes = std::fs::read(&joined).unwrap();
    let cut = d.path().join("cut.mp4");
    std::fs::write(&cut, &bytes[..bytes.len() * 3 / 4]).unwrap();
    let out = d.path().join("o.mp4");
    let t = d.path().join("t.jsonl");
    let o = lanes(&[
        "video",
        cut.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--telemetry",
        t.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("STOPPED at frame"), "{err}");
    assert!(
        err.contains("shot at frame 100: geometry found in"),
        "{err}"
    );
    let read = frames_read(&err);
    assert!(read > 110 && read < 190, "{read} frames read: {err}");
    let lines = std::fs::read_to_string(&t).unwrap().lines().count();
    assert_eq!(lines, read, "a telemetry record per frame read");
    let (n, _, _, _) = count_frames(&out);
    assert_eq!(n, read, "output finalised with every frame read");
}

/// A compilation that opens with a short shot (3 s of the Autobahn, then the Udacity project
/// and shadow clips, all 960x540 at 25 fps): the opening search's samples reach into the
/// Udacity shots and its geometry is theirs, so the opening shot, which ends within the
/// stretch read ahead, gets its own. Before, the Autobahn's 3 s had both lines on none of its
/// frames and a wrong lane drawn on 91% of them.
#[test]
fn a_short_opening_shot_gets_its_own_geometry() {
    let fit = FIT;
    let Some((d, joined)) = joined_clips(
        &[
            "videos/anycam/de_autobahn_akin.mp4",
            "videos/hortovanyi/project_video_short.mp4",
            "videos/hortovanyi/project_video_shadow.mp4",
        ],
        &format!("[0]trim=end_frame=90,{fit}[a];[1]{fit}[b];[2]{fit}[c];[a][b][c]concat=n=3"),
        &[],
    ) else {
        return;
    };
    let (recs, err) = records(&joined, &[], d.path());
    let cut_at = cuts(&recs);
    assert_eq!(cut_at.len(), 2, "{cut_at:?}: {err}");
    assert!(err.contains("shot at frame 0: geometry found in"), "{err}");
    let first = &recs[..cut_at[0] as usize];
    let (both, share) = both_lines(first);
    eprintln!(
        "opening shot: both lines on {both} of {} frames",
        first.len()
    );
    assert!(share >= 0.9, "opening shot: both lines on {share:.3}");
    for r in &recs[cut_at[0] as usize..] {
        assert!(r["status"] != "none", "{r}");
    }
}

/// Two cameras joined by a half-second dissolve (the Udacity project clip's first 7.5 s fading
/// into the Autobahn, 960x540 at 25 fps, yuv420p): the opening search's samples span both
/// cameras, whose horizons are 68 px apart, and the video used to be refused ("the horizons
/// of the 12 usable sampled frames disagree"). The search now keeps to the samples before the
/// cut it saw while decoding; the cut is found at the end of the dissolve.
#[test]
fn a_dissolve_between_two_cameras_is_a_cut_and_the_opening_keeps_to_its_shot() {
    let fit = format!("{FIT},format=yuv420p");
    let Some((d, joined)) = joined_clips(&["videos/hortovanyi/project_video_short.mp4", "videos/anycam/de_autobahn_akin.mp4"], &format!("[0]{fit}[a];[1]{fit}[b];[a][b]xfade=transition=fade:duration=0.5:offset=7.5,format=yuv420p"), &[]) else {
        return;
    };
    let (recs, err) = records(&joined, &[], d.path());
    let cut_at = cuts(&recs);
    // The dissolve runs over frames 187-199.
    assert_eq!(cut_at.len(), 1, "{cut_at:?}: {err}");
    assert!((187..=201).contains(&cut_at[0]), "{cut_at:?}");
    let c = cut_at[0] as usize;
    for (name, shot) in [("opening", &recs[..c]), ("second", &recs[c..])] {
        let (both, share) = both_lines(shot);
        eprintln!("{name} shot: both lines on {both} of {}", shot.len());
        assert!(share >= 0.95, "{name} shot: {share:.3}: {err}");
    }
}

/// Two cameras' files joined by `cat` as MPEG-TS (1280x720, then 960x540): the stream's frame
/// size changes at frame 200. The later frames are scaled to the stream's first size (as
/// `ffmpeg` does when it writes such a stream), the change is a cut, and the second shot gets
/// its own geometry. Before, the run stopped with "image is 960x540, expected 1280x720" and
/// wrote nothing.
#[test]
fn a_stream_whose_frame_size_changes_goes_on_at_its_first_size() {
    let (Some(a), Some(b)) = (
        data("videos/hortovanyi/project_video_short.mp4"),
        data("videos/anycam/de_autobahn_akin.mp4"),
    ) else {
        return;
    };
    let d = tmp();
    let mut joined = Vec::new();
    for (i, clip) in [a, b].iter().enumerate() {
        let ts = d.path().join(format!("{i}.ts"));
        ffmpeg(&[
            "-i".as_ref(),
            clip.as_os_str(),
            "-an".as_ref(),
            "-c".as_ref(),
            "copy".as_ref(),
            "-bsf:v".as_ref(),
            "h264_mp4toannexb".as_ref(),
            ts.as_os_str(),
        ]);
        joined.extend(std::fs::read(&ts).unwrap());
    }
    let cat = d.path().join("joined.ts");
    std::fs::write(&cat, joined).unwrap();
    let (recs, err) = records(&cat, &[], d.path());
    assert_eq!(recs.len(), 590, "{err}");
    assert_eq!(cuts(&recs), vec![200], "{err}");
    assert!(
        err.contains("shot at frame 200: geometry found in"),
        "{err}"
    );
    let (first, _) = both_lines(&recs[..200]);
    let (second, share) = both_lines(&recs[200..]);
    eprintln!("both lines on {first} of 200 and {second} of 390 frames");
    assert_eq!(first, 200, "{err}");
    assert!(share >= 0.9, "{share:.3}: {err}");
}

/// The Autobahn clip converted to 60 fps by showing each frame twice (`fps=60`): half its
/// frame-to-frame differences are repeats, and the shot's usual difference is its moving
/// frames'. Before, the median of all made frames passing under a bridge cuts: 12 "shots"
/// between frames 586 and 670, each searched for its geometry, the tracking restarted at each.
#[test]
fn a_drive_with_every_frame_shown_twice_has_no_cuts() {
    let Some((_d, recs, err)) = filtered_records(
        "videos/anycam/de_autobahn_akin.mp4",
        "fps=60",
        &["-preset", "veryfast"],
    ) else {
        return;
    };
    assert_eq!(recs.len(), 780);
    assert_eq!(cuts(&recs), Vec::<u64>::new(), "{err}");
    assert!(!err.contains("shot at frame"), "{err}");
    let both = recs.iter().filter(|r| r["status"] == "both").count();
    assert!(both >= 772, "both lines on {both} of 780: {err}");
}

/// A corrupt frame decoded grey (frame 100 of the project clip painted grey) and a two-frame
/// flash (150-151 brightened) in a drive: the picture comes back within three frames, so
/// neither is a cut (`track::shot::CONFIRM_FRAMES`). The tracker predicts through the grey
/// frame, so a lane is drawn on every frame, and no shot is searched for its geometry. Before,
/// both were cuts: the note called the drive an edited video, the tracking restarted at each
/// and the grey frame had no lane.
#[test]
fn a_grey_frame_or_a_flash_is_no_cut() {
    let Some((_d, recs, err)) = filtered_records(
        "videos/hortovanyi/project_video_short.mp4",
        "drawbox=x=0:y=0:w=iw:h=ih:color=gray@1:t=fill:enable='eq(n,100)',eq=brightness=0.6:enable='between(n,150,151)'",
        &["-preset", "veryfast", "-crf", "18"],
    ) else {
        return;
    };
    assert_eq!(recs.len(), 200);
    assert_eq!(cuts(&recs), Vec::<u64>::new(), "{err}");
    assert!(
        !err.contains("edited video") && !err.contains("shot at frame"),
        "{err}"
    );
    assert_eq!(recs[100]["status"], "predicted", "{}", recs[100]);
    let drawn = recs
        .iter()
        .filter(|r| r["left_fit"].is_array() && r["right_fit"].is_array())
        .count();
    assert_eq!(drawn, 200, "{err}");
    let (both, _) = both_lines(&recs);
    assert!(both >= 197, "both lines on {both} of 200: {err}");
}

/// The project clip with its picture frozen for a second (frames 100-124 show frame 100, as a
/// recording that stalls writes it), then going on where the drive has got to: the jump is a
/// cut (the trackers start again: the lane has moved on), but the note says the picture changed
/// after an unchanging picture rather than calling the drive an edited video.
#[test]
fn a_jump_after_a_frozen_picture_is_no_edit() {
    let Some((_d, recs, err)) = filtered_records(
        "videos/hortovanyi/project_video_short.mp4",
        "split[a][b];[a][b]freezeframes=first=100:last=124:replace=100",
        &["-preset", "veryfast", "-crf", "18"],
    ) else {
        return;
    };
    assert_eq!(recs.len(), 200);
    assert_eq!(cuts(&recs), vec![125], "{err}");
    assert!(
        err.contains(
            "the picture changed at once at frame 125 after 24 frames of an unchanging picture"
        ),
        "{err}"
    );
    assert!(!err.contains("edited video"), "{err}");
    let (both, _) = both_lines(&recs);
    assert!(both >= 198, "both lines on {both} of 200: {err}");
}
