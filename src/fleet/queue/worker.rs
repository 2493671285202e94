//! `lanes queue work`: take jobs, process each into a private staging folder with
//! `batch::process`, publish the files into the video's folder only while the job is still
//! this worker's, and record the result; a heartbeat keeps the job's lease and notices when
//! another worker took it over.

use super::client::{Queue, GROUP};
use super::link::Link;
use super::metrics::{JobResult, Metrics};
use crate::base::cancel::Cancel;
use crate::base::config::Preset;
use crate::base::error::{Error, Result};
use crate::fleet::batch::{self, Item, Options, Setup, Status};
use redis::streams::{StreamAutoClaimReply, StreamId, StreamPendingCountReply, StreamReadReply};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Staging folders live under OUTDIR (so publishing is a rename on one file system), one per
/// worker: `OUTDIR/.lanes-work/CONSUMER/REL/...`.
pub const STAGING_DIR: &str = ".lanes-work";

/// Renews the lease of entry ARGV[3] for consumer ARGV[2] only while it is pending for that
/// consumer; 1 if it was, 0 if another worker took it or it was acknowledged.
const RENEW_SCRIPT: &str = r"
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
if #p == 0 then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
return 1
";

/// Records a job done once: HSETNX the done hash, push the log entry only when that set it,
/// acknowledge. Safe to run again after a reply lost in an outage.
const DONE_SCRIPT: &str = r"
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 1 then
  redis.call('RPUSH', KEYS[3], ARGV[4])
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return 1
";

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// A job idle (no heartbeat) this long is taken over by another worker.
    pub lease: Duration,
    /// Attempts before a job goes to the dead-letter stream.
    pub max_attempts: usize,
    /// This worker's consumer name (unique per process).
    pub consumer: String,
    /// Exit once nothing is waiting or in flight.
    pub drain: bool,
}

/// What happened to one job, for the worker's log line.
#[derive(Debug, Clone)]
pub struct JobEnd {
    pub rel: String,
    pub attempt: usize,
    pub outcome: Option<batch::Outcome>,
    /// "done", "retry", "dead", "released", "lost"
    pub verdict: &'static str,
    pub error: Option<String>,
}

/// A unique consumer name: host name and process id.
pub fn default_consumer() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "host".into());
    format!("{host}-{}", std::process::id())
}

/// A name usable as one path component and in `CLIENT SETNAME` (no spaces, no `/`).
fn safe_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.:".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// 1 when entry `id` is still pending for `consumer` (its lease renewed), 0 otherwise.
fn renew_cmd(stream: &str, consumer: &str, id: &str) -> redis::Cmd {
    let mut c = redis::cmd("EVAL");
    c.arg(RENEW_SCRIPT)
        .arg(1)
        .arg(stream)
        .arg(GROUP)
        .arg(consumer)
        .arg(id);
    c
}

/// Keeps a job's lease while it is processed: every third of the lease it renews the entry if
/// it is still this worker's, and when it is not (the worker stalled past its lease and another
/// took the job) sets `lost` and stops the job. It also passes a stop signal on to the job.
struct Heartbeat {
    stop: Arc<AtomicBool>,
    lost: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Link>>,
}

impl Heartbeat {
    fn start(
        mut link: Link,
        stream: &str,
        id: &str,
        consumer: &str,
        lease: Duration,
        global: &Cancel,
        job: &Cancel,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(AtomicBool::new(false));
        let (stop2, lost2, global, job) = (
            Arc::clone(&stop),
            Arc::clone(&lost),
            global.clone(),
            job.clone(),
        );
        let cmd = renew_cmd(stream, consumer, id);
        let every = (lease / 3).max(Duration::from_millis(100));
        // After a failed beat (Redis away) the next comes sooner, so the lease is renewed
        // within half a second of Redis being back rather than up to a third of a lease later.
        let retry = Duration::from_millis(500).min(every);
        let handle = std::thread::spawn(move || {
            let (mut last, mut wait) = (Instant::now(), every);
            while !stop2.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                if let Some(sig) = global.signal() {
                    job.request(sig);
                }
                if last.elapsed() < wait {
                    continue;
                }
                last = Instant::now();
                // Only a clear "not yours" stops the job; a connection error is tried again.
                wait = match link.once(|con| cmd.query::<i64>(con)) {
                    Ok(0) => {
                        lost2.store(true, Ordering::SeqCst);
                        job.request(libc::SIGTERM);
                        every
                    }
                    Ok(_) => every,
                    Err(_) => retry,
                };
            }
            link
        });
        Self {
            stop,
            lost,
            handle: Some(handle),
        }
    }

    /// Stop beating; returns the link and whether the job was lost.
    fn finish(mut self) -> (Option<Link>, bool) {
        self.stop.store(true, Ordering::SeqCst);
        let link = self.handle.take().and_then(|h| h.join().ok());
        (link, self.lost.load(Ordering::SeqCst))
    }
}

/// Remove staging folders that no worker wrote to for `max(10 * lease, 10 min)` (left by
/// workers that were killed): a live worker's current job writes its files continuously.
fn remove_stale_staging(root: &Path, lease: Duration) {
    let limit = (lease * 10).max(Duration::from_secs(600));
    fn newest(p: &Path) -> Option<SystemTime> {
        let meta = std::fs::symlink_metadata(p).ok()?;
        let mut t = meta.modified().ok()?;
        if meta.is_dir() {
            for e in std::fs::read_dir(p).ok()?.flatten() {
                if let Some(u) = newest(&e.path()) {
                    t = t.max(u);
                }
            }
        }
        Some(t)
    }
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    for e in rd.flatten() {
        let old = newest(&e.path())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > limit);
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// What a worker keeps between jobs.
struct Worker<'a> {
    q: &'a mut Queue,
    default_setup: &'a Setup,
    setups: HashMap<(Option<String>, Option<String>), Arc<Setup>>,
    preset: Preset,
    opts: &'a Options,
    wopts: &'a WorkerOptions,
    cancel: &'a Cancel,
    metrics: Arc<Metrics>,
    /// The heartbeat's own connection (quiet: it retries at each beat).
    beat_link: Option<Link>,
    /// This worker's staging folder.
    staging: PathBuf,
}

/// The heartbeat's own connection, `None` when it cannot be made now: the server may go away
/// between the queue's connection and this one, and then the queue's link rides out the outage
/// (or gives up after `--give-up-after`) rather than the worker stopping here; a link is made
/// again before each job that finds none.
fn beat_link(q: &Queue, consumer: &str) -> Option<Link> {
    Link::connect(q.endpoint(), &format!("lanes-beat:{}", safe_name(consumer))).ok()
}

/// A worker: takes jobs until `cancel` is set (or, with `drain`, until the queue is empty),
/// processes each with `batch::process` and records the result. `default_setup` serves jobs
/// that name no camera/config; others get a set-up loaded once per (camera, config) pair.
#[allow(clippy::too_many_arguments)]
pub fn work(
    q: &mut Queue,
    default_setup: &Setup,
    preset: Preset,
    opts: &Options,
    wopts: &WorkerOptions,
    cancel: &Cancel,
    metrics: Arc<Metrics>,
    on_job: &mut dyn FnMut(&JobEnd),
) -> Result<usize> {
    let root = opts.out_dir.join(STAGING_DIR);
    remove_stale_staging(&root, wopts.lease);
    let staging = root.join(safe_name(&wopts.consumer));
    let beat_link = beat_link(q, &wopts.consumer);
    q.set_cancel(cancel.clone());
    let mut w = Worker {
        q,
        default_setup,
        setups: HashMap::new(),
        preset,
        opts,
        wopts,
        cancel,
        metrics,
        beat_link,
        staging,
    };
    let mut handled = 0;
    while !cancel.requested() {
        let step = w.step();
        match step {
            Ok(Some(end)) => {
                handled += 1;
                on_job(&end);
            }
            Ok(None) => {
                if wopts.drain {
                    let st = w.q.status()?;
                    if st.waiting == 0 && st.in_flight.is_empty() {
                        break;
                    }
                }
            }
            // Stopped by a signal while Redis was away: nothing more to record.
            Err(_) if cancel.requested() => break,
            Err(e) => return Err(e),
        }
    }
    let _ = std::fs::remove_dir_all(&w.staging);
    let _ = std::fs::remove_dir(&root); // only when no other worker's folder is in it
    Ok(handled)
}

impl Worker<'_> {
    /// Take and handle one job, if there is one.
    fn step(&mut self) -> Result<Option<JobEnd>> {
        match self.next_entry()? {
            Some(entry) => self.handle(&entry).map(Some),
            None => Ok(None),
        }
    }

    /// The next job: one idle past the lease first (a dead or stalled worker's), else a new
    /// one (blocking 1 s).
    fn next_entry(&mut self) -> Result<Option<StreamId>> {
        let name = self.q.name.clone();
        let claimed: StreamAutoClaimReply = self.q.query(
            "XAUTOCLAIM",
            redis::cmd("XAUTOCLAIM")
                .arg(&name)
                .arg(GROUP)
                .arg(&self.wopts.consumer)
                .arg(self.wopts.lease.as_millis() as u64)
                .arg("0-0")
                .arg("COUNT")
                .arg(1),
        )?;
        if let Some(e) = claimed.claimed.into_iter().next() {
            return Ok(Some(e));
        }
        let read: Option<StreamReadReply> = self.q.query(
            "XREADGROUP",
            redis::cmd("XREADGROUP")
                .arg("GROUP")
                .arg(GROUP)
                .arg(&self.wopts.consumer)
                .arg("COUNT")
                .arg(1)
                .arg("BLOCK")
                .arg(1000)
                .arg("STREAMS")
                .arg(&name)
                .arg(">"),
        )?;
        Ok(read
            .and_then(|r| r.keys.into_iter().next())
            .and_then(|k| k.ids.into_iter().next()))
    }

    /// The set-up for a job's camera and config (loaded once per pair); `None`: the default.
    fn setup_for(
        &mut self,
        camera: Option<String>,
        config: Option<String>,
    ) -> Result<Option<Arc<Setup>>> {
        if camera.is_none() && config.is_none() {
            return Ok(None);
        }
        let k = (camera, config);
        if let Some(s) = self.setups.get(&k) {
            return Ok(Some(Arc::clone(s)));
        }
        let s = Arc::new(Setup::load(
            k.0.as_deref().map(Path::new),
            k.1.as_deref().map(Path::new),
            self.preset,
        )?);
        self.setups.insert(k, Arc::clone(&s));
        Ok(Some(s))
    }

    fn handle(&mut self, entry: &StreamId) -> Result<JobEnd> {
        let name = self.q.name.clone();
        let id = entry.id.clone();
        let path: Option<String> = entry.get("path");
        let rel: String = entry.get("rel").unwrap_or_default();
        let pending: StreamPendingCountReply = self.q.query(
            "XPENDING",
            redis::cmd("XPENDING")
                .arg(&name)
                .arg(GROUP)
                .arg(&id)
                .arg(&id)
                .arg(1),
        )?;
        let attempt = pending.ids.first().map(|p| p.times_delivered).unwrap_or(1);
        let mut end = JobEnd {
            rel: rel.clone(),
            attempt,
            outcome: None,
            verdict: "dead",
            error: None,
        };
        let last_error: Option<String> = self.q.query(
            "HGET",
            redis::cmd("HGET").arg(self.q.key("errors")).arg(&id),
        )?;
        let Some(path) = path.filter(|_| !rel.is_empty()) else {
            end.error = Some(format!("job {id} has no path or rel field"));
            dead_letter(
                self.q,
                &id,
                &rel,
                end.error.as_deref().unwrap_or(""),
                attempt,
            )?;
            self.metrics.end_job(JobResult::Dead, 0, 0.0);
            return Ok(end);
        };
        if attempt > self.wopts.max_attempts {
            // Delivered more often than allowed: workers died while processing it.
            end.error = Some(last_error.unwrap_or_else(|| {
                format!(
                    "{path}: {} deliveries without a result (workers died)",
                    attempt - 1
                )
            }));
            dead_letter(
                self.q,
                &id,
                &rel,
                end.error.as_deref().unwrap_or(""),
                attempt - 1,
            )?;
            self.metrics.end_job(JobResult::Dead, 0, 0.0);
            return Ok(end);
        }
        let item = Item {
            path: PathBuf::from(&path),
            rel: rel.clone(),
        };
        let (camera, config) = (entry.get("camera"), entry.get("config"));
        let own = match self.setup_for(camera, config) {
            Ok(s) => s,
            Err(e) => {
                end.error = Some(e.to_string());
                return self.fail_or_dead(&id, end, &item, 0, 0.0);
            }
        };
        let default_setup = self.default_setup;
        let setup: &Setup = own.as_deref().unwrap_or(default_setup);
        self.metrics.start_job(&rel);
        let started = Instant::now();
        let before = (!self.opts.force)
            .then(|| batch::finished_report(setup, &item, self.opts))
            .flatten();
        if let Some(prev) = before {
            // Done before (by an earlier run, or a worker whose record was lost): record it.
            end.outcome = Some(batch::Outcome {
                item,
                report: prev,
                skipped: true,
                removed: Vec::new(),
            });
            self.record_done(&id, &rel)?;
            self.metrics
                .end_job(JobResult::Done { skipped: true }, 0, 0.0);
            end.verdict = "done";
            return Ok(end);
        }
        let outcome = self.process_staged(setup, &item, &id);
        let seconds = started.elapsed().as_secs_f64();
        let (outcome, lost) = outcome;
        let frames = outcome.report.frames;
        end.error = outcome.report.error.clone();
        let status = outcome.report.status;
        end.outcome = Some(outcome);
        if lost || (status != Status::Interrupted && !self.still_mine(&id)?) {
            // Stalled past the lease: another worker owns the job (or finished it). Its
            // outputs are its own; this copy is thrown away.
            let _ = std::fs::remove_dir_all(&self.staging);
            end.verdict = "lost";
            end.error = Some(format!(
                "lease ran out (this worker stalled); another worker owns {rel}: this copy was discarded"
            ));
            self.metrics.end_job(JobResult::Lost, frames, seconds);
            return Ok(end);
        }
        let published = match status {
            Status::Done => self.publish(&item, end.outcome.as_ref()),
            // A truncated input's outputs (finalised up to the cut) are kept, as `lanes batch`
            // keeps them, so that its summary.json lists only files that are there.
            Status::Failed => match end.outcome.as_ref() {
                Some(o) if !o.report.outputs.is_empty() => self.publish(&item, Some(o)),
                _ => self.publish_summary_only(&item),
            },
            Status::Interrupted => Ok(()),
        };
        let _ = std::fs::remove_dir_all(&self.staging);
        if let Err(e) = published {
            end.error = Some(e.to_string());
            if let Some(o) = end.outcome.as_mut() {
                o.report.status = Status::Failed;
                o.report.error = end.error.clone();
            }
            return self.fail_or_dead(&id, end, &item, frames, seconds);
        }
        match status {
            Status::Done => {
                self.record_done(&id, &rel)?;
                self.metrics
                    .end_job(JobResult::Done { skipped: false }, frames, seconds);
                end.verdict = "done";
                Ok(end)
            }
            Status::Interrupted => {
                // Hand the job back at once: idle as long as the lease, so the next worker's
                // XAUTOCLAIM takes it without waiting (JUSTID: no delivery is counted).
                let _: Vec<String> = self.q.query(
                    "XCLAIM",
                    redis::cmd("XCLAIM")
                        .arg(&name)
                        .arg(GROUP)
                        .arg(&self.wopts.consumer)
                        .arg(0)
                        .arg(&id)
                        .arg("IDLE")
                        .arg(self.wopts.lease.as_millis() as u64)
                        .arg("JUSTID"),
                )?;
                self.metrics.end_job(JobResult::Released, frames, seconds);
                end.verdict = "released";
                Ok(end)
            }
            Status::Failed => self.fail_or_dead(&id, end, &item, frames, seconds),
        }
    }

    /// Process the item into this worker's staging folder under a heartbeat; returns the
    /// outcome and whether the heartbeat found the job taken over.
    fn process_staged(&mut self, setup: &Setup, item: &Item, id: &str) -> (batch::Outcome, bool) {
        let _ = std::fs::remove_dir_all(&self.staging);
        let stage_opts = Options {
            out_dir: self.staging.clone(),
            force: true,
            ..self.opts.clone()
        };
        let job_cancel = Cancel::default();
        if self.beat_link.is_none() {
            self.beat_link = beat_link(self.q, &self.wopts.consumer);
        }
        let beat = self.beat_link.take().map(|link| {
            Heartbeat::start(
                link,
                &self.q.name,
                id,
                &self.wopts.consumer,
                self.wopts.lease,
                self.cancel,
                &job_cancel,
            )
        });
        // Without a heartbeat (its link could not be made again) the job stops on signals only.
        let stop = match beat {
            Some(_) => job_cancel.clone(),
            None => self.cancel.clone(),
        };
        let outcome = batch::process(setup, item, &stage_opts, &stop, &|_| {});
        let mut lost = false;
        if let Some(b) = beat {
            // `None` when the heartbeat thread died (it cannot panic by design): the next job
            // makes a fresh link.
            let (link, l) = b.finish();
            lost = l;
            self.beat_link = link;
        }
        (outcome, lost)
    }

    /// Whether the job is still this worker's (renewing its lease); waits through an outage.
    fn still_mine(&mut self, id: &str) -> Result<bool> {
        let cmd = renew_cmd(&self.q.name, &self.wopts.consumer, id);
        let r: i64 = self.q.query("checking the job's lease", &cmd)?;
        Ok(r == 1)
    }

    /// Move the staged outputs into the video's folder: the old `summary.json` removed first,
    /// each output renamed over its old version, the new `summary.json` last.
    fn publish(&self, item: &Item, outcome: Option<&batch::Outcome>) -> Result<()> {
        let from = batch::video_dir(&self.staging, item);
        let to = batch::video_dir(&self.opts.out_dir, item);
        std::fs::create_dir_all(&to).map_err(|e| Error::Io {
            path: to.clone(),
            message: format!("cannot create output folder: {e}"),
        })?;
        match std::fs::remove_file(to.join(batch::SUMMARY)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&to.join(batch::SUMMARY), e)),
        }
        let outputs = outcome
            .map(|o| o.report.outputs.clone())
            .unwrap_or_default();
        for f in outputs.iter().map(String::as_str).chain([batch::SUMMARY]) {
            std::fs::rename(from.join(f), to.join(f)).map_err(|e| Error::io(&to.join(f), e))?;
        }
        // Outputs of an earlier run with another --render go, as `lanes batch` removes them.
        if outcome.is_some() {
            batch::remove_stale_outputs(&to, &outputs, &item.path);
        }
        Ok(())
    }

    /// A failed video's `summary.json` (its error), as `lanes batch` leaves it.
    fn publish_summary_only(&self, item: &Item) -> Result<()> {
        let from = batch::video_dir(&self.staging, item).join(batch::SUMMARY);
        if !from.is_file() {
            return Ok(());
        }
        let to = batch::video_dir(&self.opts.out_dir, item);
        std::fs::create_dir_all(&to).map_err(|e| Error::io(&to, e))?;
        std::fs::rename(&from, to.join(batch::SUMMARY))
            .map_err(|e| Error::io(&to.join(batch::SUMMARY), e))
    }

    fn record_done(&mut self, id: &str, rel: &str) -> Result<()> {
        let mut c = redis::cmd("EVAL");
        c.arg(DONE_SCRIPT)
            .arg(3)
            .arg(&self.q.name)
            .arg(self.q.key("done"))
            .arg(self.q.key("log"))
            .arg(GROUP)
            .arg(id)
            .arg(&self.wopts.consumer)
            .arg(rel);
        self.q.query::<i64>("recording a done job", &c).map(|_| ())
    }

    /// A failed attempt: a missing input is dead-lettered at once, else `fail`.
    fn fail_or_dead(
        &mut self,
        id: &str,
        mut end: JobEnd,
        item: &Item,
        frames: usize,
        seconds: f64,
    ) -> Result<JobEnd> {
        if !item.path.exists() {
            // A missing input will not appear by retrying: dead-lettered at once.
            end.error = Some(format!("{}: file not found", item.path.display()));
            let _: () = self.q.query(
                "HSET",
                redis::cmd("HSET")
                    .arg(self.q.key("errors"))
                    .arg(id)
                    .arg(end.error.as_deref().unwrap_or("")),
            )?;
            dead_letter(
                self.q,
                id,
                &end.rel,
                end.error.as_deref().unwrap_or(""),
                end.attempt,
            )?;
            self.metrics.end_job(JobResult::Dead, frames, seconds);
            return Ok(end);
        }
        let r = self.fail(id, end)?;
        let result = if r.verdict == "dead" {
            JobResult::Dead
        } else {
            JobResult::Failed
        };
        self.metrics.end_job(result, frames, seconds);
        Ok(r)
    }

    /// Record a failed attempt: dead-letter after `max_attempts`, else leave the job pending so
    /// that a worker takes it again once its lease has run out.
    fn fail(&mut self, id: &str, mut end: JobEnd) -> Result<JobEnd> {
        let err = end.error.clone().unwrap_or_default();
        let _: () = self.q.query(
            "HSET",
            redis::cmd("HSET")
                .arg(self.q.key("errors"))
                .arg(id)
                .arg(&err),
        )?;
        if end.attempt >= self.wopts.max_attempts {
            dead_letter(self.q, id, &end.rel, &err, end.attempt)?;
            end.verdict = "dead";
        } else {
            end.verdict = "retry";
        }
        Ok(end)
    }
}

/// Copy a job to the dead letters and acknowledge it (once: a retried call after a lost reply
/// finds the entry acknowledged and adds nothing).
fn dead_letter(q: &mut Queue, id: &str, rel: &str, error: &str, attempts: usize) -> Result<()> {
    const SCRIPT: &str = r"
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('XADD', KEYS[2], '*', 'id', ARGV[2], 'rel', ARGV[3], 'error', ARGV[4], 'attempts', ARGV[5])
end
return 1
";
    let mut c = redis::cmd("EVAL");
    c.arg(SCRIPT)
        .arg(2)
        .arg(&q.name)
        .arg(q.key("dead"))
        .arg(GROUP)
        .arg(id)
        .arg(rel)
        .arg(error)
        .arg(attempts);
    q.query::<i64>("dead-lettering a job", &c).map(|_| ())
}
