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

/// Run `process` over the tasks on `jobs` threads; stop taking new videos once `cancel` is set.
/// Outcomes are returned in task order (videos never started are left out).
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
    std::thread::scope(|scope| {
        for _ in 0..running {
            scope.spawn(|| loop {
                if cancel.requested() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
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
