//! `run_batch`: the videos on `jobs` threads.

use super::plan::Item;
use super::process::{process, Options, Outcome};
use super::setup::Setup;
use crate::base::cancel::Cancel;
use crate::video;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What `run_batch` reports while it runs.
pub enum Event<'a> {
    /// More frames were analysed (a delta).
    Frames(usize),
    /// A video finished (or was skipped).
    Finished(&'a Outcome),
}

/// A video and the set-up it runs with (`lanes batch --manifest` gives each video its own
/// camera and config; set-ups are shared between the videos that name the same files).
#[derive(Clone)]
pub struct Task {
    pub item: Item,
    pub setup: Arc<Setup>,
}

/// Videos processed at once when `--jobs` is not given: one per core. A video's own frame
/// loop keeps about 1.5 cores busy, and its geometry search, decoding the opening seconds and
/// then analysing samples, leaves cores idle in turn; another video fills them (on this 2-core
/// VM, the 8 shared clips with `--render none`: 5.5-6.7 s with 2 jobs, 6.7-9.0 s with 1).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The order the videos start in: with several at once, the costliest first
/// (`video::work_estimate`; a file it cannot read, first, to fail early), so that a long
/// video does not start last and run alone while the other cores wait; one at a time, as given.
fn start_order(paths: &[&std::path::Path], running: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..paths.len()).collect();
    if running > 1 {
        let cost: Vec<f64> = paths
            .iter()
            .map(|p| video::work_estimate(p).unwrap_or(f64::INFINITY))
            .collect();
        // Stable: equal costs keep the given order.
        order.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]));
    }
    order
}

/// Run `process` over the tasks on `jobs` threads (`start_order`); stop taking new videos once
/// `cancel` is set. Outcomes are returned in task order (videos never started are left out).
pub fn run_batch(
    tasks: &[Task],
    opts: &Options,
    jobs: usize,
    cancel: &Cancel,
    on_event: &(dyn Fn(Event) + Sync),
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; tasks.len()]);
    let running = jobs.max(1).min(tasks.len().max(1));
    let opts = &Options {
        videos_at_once: running,
        ..opts.clone()
    };
    if running > 1 {
        // Several videos at once: each decoder gets its share of the cores (threaded decoding
        // costs CPU in hand-offs; with the cores busy anyway, fewer threads decode more frames
        // per core).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        video::set_decoder_threads((cores / running).max(1));
    }
    let paths: Vec<&std::path::Path> = tasks.iter().map(|t| t.item.path.as_path()).collect();
    let order = start_order(&paths, running);
    std::thread::scope(|scope| {
        for _ in 0..running {
            scope.spawn(|| loop {
                if cancel.requested() {
                    break;
                }
                let Some(&i) = order.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                let Some(task) = tasks.get(i) else { break };
                let last = AtomicUsize::new(0);
                let progress = |n: usize| {
                    let before = last.swap(n, Ordering::Relaxed);
                    on_event(Event::Frames(n.saturating_sub(before)));
                };
                let outcome = process(&task.setup, &task.item, opts, cancel, &progress);
                on_event(Event::Finished(&outcome));
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(outcome);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Videos made with FFmpeg's test source: 1 s at 640x360, 4 s at 640x360, 1 s at 1280x720,
    /// and a file that is no video. With two videos at once the costliest (most frames times
    /// pixels) start first and the unreadable file before them; one at a time, as given.
    #[test]
    fn the_costliest_videos_start_first() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, size: &str, secs: &str| {
            let p = dir.path().join(name);
            let src = format!("testsrc=size={size}:rate=25:duration={secs}");
            let st = std::process::Command::new("ffmpeg")
                .args([
                    "-v", "error", "-y", "-f", "lavfi", "-i", &src, "-c:v", "libx264",
                ])
                .arg(&p)
                .status()
                .expect("ffmpeg is installed (README set-up installs it)");
            assert!(st.success());
            p
        };
        let short = make("short.mp4", "640x360", "1");
        let long = make("long.mp4", "640x360", "4");
        let big = make("big.mp4", "1280x720", "1");
        let junk = dir.path().join("junk.mp4");
        std::fs::write(&junk, b"not a video").unwrap();
        let (e_short, e_long, e_big) = (
            video::work_estimate(&short).unwrap(),
            video::work_estimate(&long).unwrap(),
            video::work_estimate(&big).unwrap(),
        );
        // 25 frames of 640x360: 1 + 2/4 each; 100 of them; 25 of 1280x720: 1 + 2 each.
        assert!((e_short - 37.5).abs() < 1.0, "{e_short}");
        assert!((e_long - 150.0).abs() < 2.0, "{e_long}");
        assert!((e_big - 75.0).abs() < 1.0, "{e_big}");
        assert_eq!(video::work_estimate(&junk), None);
        let paths = [
            short.as_path(),
            long.as_path(),
            junk.as_path(),
            big.as_path(),
        ];
        assert_eq!(start_order(&paths, 2), vec![2, 1, 3, 0]);
        assert_eq!(start_order(&paths, 1), vec![0, 1, 2, 3]);
    }
}
