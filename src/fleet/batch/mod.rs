//! Many videos in one process: inputs resolved to (path, relative name) items, one output folder
//! per video written atomically and skipped when already done for the same inputs, set-ups
//! shared per frame size, videos run on `jobs` threads, and the batch's `batch.json`/`batch.csv`.
//! `lanes queue work` runs the same per-video function (`process`) on jobs taken from Redis.
//!
//! `plan` (items, shards), `setup` (shared set-ups), `process` (one video), `run` (threads),
//! `report` (batch.json/csv).

mod plan;
mod process;
mod report;
mod run;
mod setup;

pub use plan::{check_names, collect_inputs, fnv1a64, rel_name, Item, Shard, LANES_VERSION};
pub use process::{
    content_fingerprint, finished_report, process, read_report, remove_partials,
    remove_stale_outputs, video_dir, InputStamp, Options, Outcome, Status, VideoReport,
    STALE_OUTPUTS, SUMMARY,
};
pub use report::{no_lane_hint, outcome_line, prepare_out_dir, BatchReport, Row};
pub use run::{default_jobs, run_batch, Event, Task};
pub use setup::Setup;

#[cfg(test)]
mod tests {
    use super::*;
    use super::{plan::*, process::*, report::*};
    use crate::base::atomic::write_atomic;

    use crate::base::summary::{DriveMedians, DriveStats};

    use std::path::{Path, PathBuf};

    #[test]
    fn fnv1a64_matches_the_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn shards_partition_names_and_parse_checks_range() {
        let names: Vec<String> = (0..200)
            .map(|i| format!("d{}/clip{i}.mp4", i % 7))
            .collect();
        let shards: Vec<Shard> = (1..=3)
            .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
            .collect();
        for n in &names {
            assert_eq!(shards.iter().filter(|s| s.owns(n)).count(), 1, "{n}");
        }
        for s in &shards {
            let c = names.iter().filter(|n| s.owns(n)).count();
            assert!((40..=95).contains(&c), "shard {} has {c} of 200", s.index);
        }
        for bad in ["0/3", "4/3", "1/0", "x", "1/"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn content_fingerprint_sees_both_ends_and_the_size() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("v.mp4");
        let mut bytes: Vec<u8> = (0..3 * FINGERPRINT_SPAN as usize)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&p, &bytes).unwrap();
        let base = content_fingerprint(&p).unwrap();
        // A byte in the middle MiB is not read (the price of reading 2 MiB of a large file).
        bytes[3 << 19] ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(content_fingerprint(&p).unwrap(), base);
        for at in [0, (1 << 20) - 1, 2 << 20, bytes.len() - 1] {
            let mut b = bytes.clone();
            b[at] ^= 1;
            std::fs::write(&p, &b).unwrap();
            assert_ne!(content_fingerprint(&p).unwrap(), base, "byte {at}");
        }
        std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert_ne!(content_fingerprint(&p).unwrap(), base);
    }

    #[test]
    fn rel_names_drop_roots_and_dots() {
        assert_eq!(rel_name(Path::new("/a/./b/../c.mp4")), "a/b/c.mp4");
        assert_eq!(rel_name(Path::new("x.mp4")), "x.mp4");
    }

    fn outcome(
        rel: &str,
        status: Status,
        skipped: bool,
        frames: usize,
        error: Option<&str>,
    ) -> Outcome {
        let mut stats = DriveStats::default();
        for i in 0..frames {
            stats.add(&crate::base::telemetry::FrameRecord {
                frame: i,
                time_s: i as f64 / 25.0,
                search: "prior".into(),
                detected: i % 2 == 0,
                status: if i % 4 == 3 { "none" } else { "both" }.into(),
                left_confidence: 1.0,
                right_confidence: 1.0,
                confidence: 1.0,
                left_fit: None,
                right_fit: None,
                radius_m: None,
                offset_m: (i % 4 != 3).then_some(0.1 * i as f64),
                lane_width_m: None,
                left_pixels: 0,
                right_pixels: 0,
                pitch_deg: None,
                horizon_y: None,
                cut: false,
            });
        }
        Outcome {
            item: Item {
                path: PathBuf::from(rel),
                rel: rel.into(),
            },
            report: VideoReport {
                rel: rel.into(),
                status,
                error: error.map(String::from),
                input: InputStamp::default(),
                camera_hash: "none".into(),
                config_hash: "0".into(),
                lanes_version: LANES_VERSION.into(),
                render: "none".into(),
                codec: "mp4v".into(),
                frames_limit: None,
                frames,
                seconds: frames as f64 / 100.0,
                fps: 100.0,
                truncated_at: None,
                stats,
                outputs: vec![],
                note: None,
                medians: DriveMedians::default(),
                camera: None,
                config: None,
            },
            skipped,
            removed: vec![],
        }
    }

    #[test]
    fn batch_report_totals_and_csv() {
        let outs = vec![
            outcome("a/x.mp4", Status::Done, false, 8, None),
            outcome("b.mp4", Status::Done, true, 4, None),
            outcome(
                "bad, \"one\".mp4",
                Status::Failed,
                false,
                0,
                Some("bad: cannot open, sorry"),
            ),
        ];
        let r = BatchReport::new(&outs, 2.0);
        assert_eq!((r.done, r.failed, r.skipped, r.interrupted), (2, 1, 1, 0));
        assert_eq!(r.totals.frames, 12);
        // fps counts only the frames processed by this run (the skipped video's 4 are left out).
        assert!((r.totals.fps - 4.0).abs() < 1e-12);
        // 12 frames, 3 of them `none` (i = 3, 7 and 3): lane share 0.75; search failed 6 of 12.
        assert!((r.totals.lane_share - 0.75).abs() < 1e-12);
        assert!((r.totals.search_failed_share - 0.5).abs() < 1e-12);
        assert!((r.totals.offset_abs_max_m.unwrap() - 0.6).abs() < 1e-12);
        let csv = r.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(lines[0].starts_with("path,status,skipped,frames"));
        assert!(lines[1].starts_with("a/x.mp4,done,false,8,"));
        assert!(
            lines[3].starts_with("\"bad, \"\"one\"\".mp4\",failed,false,0,")
                && lines[3].ends_with(",\"bad: cannot open, sorry\""),
            "{}",
            lines[3]
        );
        assert!(lines[4].starts_with("TOTAL,,false,12,"));
    }

    #[test]
    fn stale_outputs_go_but_never_the_input_or_another_file() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        for f in [
            "diagnostic.mp4",
            "report.html",
            "notes.txt",
            "telemetry.jsonl",
        ] {
            std::fs::write(dir.join(f), f).unwrap();
        }
        // The input video was given from inside the folder, under an output's name (a hard
        // link: the same file under two names).
        let input = d.path().join("input.mp4");
        std::fs::write(&input, b"video").unwrap();
        std::fs::hard_link(&input, dir.join("overlay.mp4")).unwrap();
        let keep = vec!["telemetry.jsonl".to_string(), "diagnostic.mp4".to_string()];
        assert_eq!(
            remove_stale_outputs(dir, &keep, &input),
            vec!["report.html"]
        );
        for f in [
            "overlay.mp4",
            "diagnostic.mp4",
            "notes.txt",
            "telemetry.jsonl",
        ] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        assert!(!dir.join("report.html").exists());
        assert_eq!(std::fs::read(&input).unwrap(), b"video");
        // Nothing left to remove: nothing happens.
        assert!(remove_stale_outputs(dir, &keep, &input).is_empty());
    }

    #[test]
    fn atomic_write_leaves_no_partial() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"{}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        std::fs::write(d.path().join(".b.json.partial"), b"x").unwrap();
        remove_partials(d.path());
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
    }
}
