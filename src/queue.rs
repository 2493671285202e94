//! A Redis Streams job queue for `lanes batch`'s per-video work, shared by many machines.
//!
//! One stream entry per video (`path`, `rel`, optional `camera`/`config`), one consumer group
//! (`lanes`). A worker takes an entry with XREADGROUP (blocking) or, first, takes over an
//! entry left idle longer than the lease by a dead worker (XAUTOCLAIM); while it works a
//! heartbeat thread re-claims the entry every third of the lease (`XCLAIM ... JUSTID`, which
//! resets the idle time without counting a delivery), so a live worker keeps its job. The
//! entry's delivery count (XPENDING) is its attempt number; a job whose processing failed
//! `max_attempts` times, or whose input file does not exist (a permanent failure, recorded at
//! once), is copied with its error to the dead-letter stream `NAME:dead` and acknowledged.
//! Redis gives at-least-once delivery; `batch::process` writes every output atomically and
//! skips a video already done, which turns repeats into one result.
//!
//! Keys: `NAME` (jobs), `NAME:dead` (dead letters), `NAME:errors` (hash: entry id -> last
//! error), `NAME:done` (hash: entry id -> consumer), `NAME:log` (list: one `rel` per completed
//! processing, to audit exactly-once).

use crate::batch::{self, Item, Options, Setup, Status};
use crate::cancel::Cancel;
use crate::config::Preset;
use crate::error::{Error, Result};
use redis::streams::{
    StreamAutoClaimReply, StreamId, StreamInfoGroupsReply, StreamPendingCountReply,
    StreamRangeReply, StreamReadReply,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The consumer group every worker joins.
pub const GROUP: &str = "lanes";

/// A connection to one queue on one Redis server.
pub struct Queue {
    client: redis::Client,
    con: redis::Connection,
    url: String,
    pub name: String,
}

fn redis_err(url: &str, what: &str, e: redis::RedisError) -> Error {
    Error::Redis {
        url: url.to_string(),
        message: format!("{what}: {e}"),
    }
}

impl Queue {
    /// Connect (3 s timeout) and make sure the stream and the consumer group exist.
    pub fn connect(url: &str, name: &str) -> Result<Self> {
        let client = redis::Client::open(url).map_err(|e| redis_err(url, "bad Redis URL", e))?;
        let con = client
            .get_connection_with_timeout(Duration::from_secs(3))
            .map_err(|e| redis_err(url, "cannot connect", e))?;
        let mut q = Self {
            client,
            con,
            url: url.to_string(),
            name: name.to_string(),
        };
        let created: redis::RedisResult<()> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(name)
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .query(&mut q.con);
        match created {
            Ok(()) => {}
            Err(e) if e.code() == Some("BUSYGROUP") => {}
            Err(e) => return Err(redis_err(url, "creating the consumer group", e)),
        }
        Ok(q)
    }

    fn key(&self, suffix: &str) -> String {
        format!("{}:{suffix}", self.name)
    }

    fn query<T: redis::FromRedisValue>(&mut self, what: &str, cmd: &redis::Cmd) -> Result<T> {
        cmd.query(&mut self.con)
            .map_err(|e| redis_err(&self.url, what, e))
    }

    fn run_pipe(&mut self, what: &str, pipe: &redis::Pipeline) -> Result<()> {
        pipe.query::<()>(&mut self.con)
            .map_err(|e| redis_err(&self.url, what, e))
    }

    /// Enqueue one job per item; paths are made absolute (as the workers will see them on
    /// shared storage). Returns the entry ids.
    pub fn push(
        &mut self,
        items: &[Item],
        camera: Option<&Path>,
        config: Option<&Path>,
    ) -> Result<Vec<String>> {
        let abs =
            |p: &Path| -> PathBuf { std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()) };
        let mut ids = Vec::new();
        for it in items {
            let mut c = redis::cmd("XADD");
            c.arg(&self.name)
                .arg("*")
                .arg("path")
                .arg(abs(&it.path).to_string_lossy().as_ref())
                .arg("rel")
                .arg(&it.rel);
            if let Some(p) = camera {
                c.arg("camera").arg(abs(p).to_string_lossy().as_ref());
            }
            if let Some(p) = config {
                c.arg("config").arg(abs(p).to_string_lossy().as_ref());
            }
            ids.push(self.query("XADD", &c)?);
        }
        Ok(ids)
    }

    /// The queue's state.
    pub fn status(&mut self) -> Result<QueueStatus> {
        let name = self.name.clone();
        let groups: StreamInfoGroupsReply =
            self.query("XINFO GROUPS", redis::cmd("XINFO").arg("GROUPS").arg(&name))?;
        let g = groups.groups.into_iter().find(|g| g.name == GROUP);
        let total: usize = self.query("XLEN", redis::cmd("XLEN").arg(&name))?;
        let waiting = g.as_ref().and_then(|g| g.lag).unwrap_or(0);
        let pending: StreamPendingCountReply = self.query(
            "XPENDING",
            redis::cmd("XPENDING")
                .arg(&name)
                .arg(GROUP)
                .arg("-")
                .arg("+")
                .arg(1000),
        )?;
        let mut in_flight = Vec::new();
        for p in pending.ids {
            let range: StreamRangeReply = self.query(
                "XRANGE",
                redis::cmd("XRANGE").arg(&name).arg(&p.id).arg(&p.id),
            )?;
            let rel = range
                .ids
                .first()
                .and_then(|e| e.get::<String>("rel"))
                .unwrap_or_default();
            in_flight.push(InFlight {
                id: p.id,
                rel,
                consumer: p.consumer,
                idle_ms: p.last_delivered_ms as u64,
                deliveries: p.times_delivered,
            });
        }
        let done: usize = self.query("HLEN", redis::cmd("HLEN").arg(self.key("done")))?;
        let failed: usize = self.query("HLEN", redis::cmd("HLEN").arg(self.key("errors")))?;
        let dead_entries: StreamRangeReply = self.query(
            "XRANGE",
            redis::cmd("XRANGE").arg(self.key("dead")).arg("-").arg("+"),
        )?;
        let dead = dead_entries
            .ids
            .iter()
            .map(|e| DeadLetter {
                rel: e.get("rel").unwrap_or_default(),
                error: e.get("error").unwrap_or_default(),
                attempts: e.get("attempts").unwrap_or(0),
            })
            .collect();
        Ok(QueueStatus {
            total,
            waiting,
            in_flight,
            done,
            failed,
            dead,
        })
    }
}

/// A delivered, unacknowledged job.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InFlight {
    pub id: String,
    pub rel: String,
    pub consumer: String,
    pub idle_ms: u64,
    pub deliveries: usize,
}

/// A job given up on.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DeadLetter {
    pub rel: String,
    pub error: String,
    pub attempts: usize,
}

/// What `lanes queue status` prints.
#[derive(Debug, Clone, serde::Serialize)]
pub struct QueueStatus {
    /// Entries in the job stream.
    pub total: usize,
    /// Not yet delivered to any worker.
    pub waiting: usize,
    pub in_flight: Vec<InFlight>,
    /// Jobs completed.
    pub done: usize,
    /// Jobs with a failed attempt (retried or dead-lettered).
    pub failed: usize,
    pub dead: Vec<DeadLetter>,
}

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
    /// "done", "retry", "dead", "released"
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

/// Re-claims a job every third of the lease until dropped.
struct Heartbeat {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    fn start(q: &Queue, id: &str, consumer: &str, lease: Duration) -> Result<Self> {
        let mut con = q
            .client
            .get_connection_with_timeout(Duration::from_secs(3))
            .map_err(|e| redis_err(&q.url, "cannot connect", e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let (stop2, name, id, consumer) = (
            Arc::clone(&stop),
            q.name.clone(),
            id.to_string(),
            consumer.to_string(),
        );
        let every = (lease / 3).max(Duration::from_millis(100));
        let handle = std::thread::spawn(move || {
            let mut last = Instant::now();
            while !stop2.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                if last.elapsed() >= every {
                    last = Instant::now();
                    let _: redis::RedisResult<Vec<String>> = redis::cmd("XCLAIM")
                        .arg(&name)
                        .arg(GROUP)
                        .arg(&consumer)
                        .arg(0)
                        .arg(&id)
                        .arg("JUSTID")
                        .query(&mut con);
                }
            }
        });
        Ok(Self {
            stop,
            handle: Some(handle),
        })
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A worker: takes jobs until `cancel` is set (or, with `drain`, until the queue is empty),
/// processes each with `batch::process` and records the result. `default_setup` serves jobs
/// that name no camera/config; others get a set-up loaded once per (camera, config) pair.
pub fn work(
    q: &mut Queue,
    default_setup: &Setup,
    preset: Preset,
    opts: &Options,
    wopts: &WorkerOptions,
    cancel: &Cancel,
    on_job: &mut dyn FnMut(&JobEnd),
) -> Result<usize> {
    let mut setups: HashMap<(Option<String>, Option<String>), Setup> = HashMap::new();
    let lease_ms = wopts.lease.as_millis() as u64;
    let mut handled = 0;
    while !cancel.requested() {
        let entry = match next_entry(q, wopts, lease_ms)? {
            Some(e) => e,
            None => {
                if wopts.drain {
                    let st = q.status()?;
                    if st.waiting == 0 && st.in_flight.is_empty() {
                        break;
                    }
                }
                continue;
            }
        };
        let end = handle(
            q,
            &entry,
            default_setup,
            &mut setups,
            preset,
            opts,
            wopts,
            cancel,
        )?;
        handled += 1;
        on_job(&end);
    }
    Ok(handled)
}

/// The next job: one idle past the lease first (a dead worker's), else a new one (blocking 1 s).
fn next_entry(q: &mut Queue, wopts: &WorkerOptions, lease_ms: u64) -> Result<Option<StreamId>> {
    let name = q.name.clone();
    let claimed: StreamAutoClaimReply = q.query(
        "XAUTOCLAIM",
        redis::cmd("XAUTOCLAIM")
            .arg(&name)
            .arg(GROUP)
            .arg(&wopts.consumer)
            .arg(lease_ms)
            .arg("0-0")
            .arg("COUNT")
            .arg(1),
    )?;
    if let Some(e) = claimed.claimed.into_iter().next() {
        return Ok(Some(e));
    }
    let read: Option<StreamReadReply> = q.query(
        "XREADGROUP",
        redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(GROUP)
            .arg(&wopts.consumer)
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

#[allow(clippy::too_many_arguments)]
fn handle(
    q: &mut Queue,
    entry: &StreamId,
    default_setup: &Setup,
    setups: &mut HashMap<(Option<String>, Option<String>), Setup>,
    preset: Preset,
    opts: &Options,
    wopts: &WorkerOptions,
    cancel: &Cancel,
) -> Result<JobEnd> {
    let name = q.name.clone();
    let id = entry.id.clone();
    let path: Option<String> = entry.get("path");
    let rel: String = entry.get("rel").unwrap_or_default();
    let pending: StreamPendingCountReply = q.query(
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
    let last_error: Option<String> =
        q.query("HGET", redis::cmd("HGET").arg(q.key("errors")).arg(&id))?;
    let Some(path) = path.filter(|_| !rel.is_empty()) else {
        end.error = Some(format!("job {id} has no path or rel field"));
        dead_letter(q, &id, &rel, end.error.as_deref().unwrap_or(""), attempt)?;
        return Ok(end);
    };
    if attempt > wopts.max_attempts {
        // Delivered more often than allowed: workers died while processing it.
        end.error = Some(last_error.unwrap_or_else(|| {
            format!(
                "{path}: {} deliveries without a result (workers died)",
                attempt - 1
            )
        }));
        dead_letter(
            q,
            &id,
            &rel,
            end.error.as_deref().unwrap_or(""),
            attempt - 1,
        )?;
        return Ok(end);
    }
    let item = Item {
        path: PathBuf::from(&path),
        rel: rel.clone(),
    };
    let camera: Option<String> = entry.get("camera");
    let config: Option<String> = entry.get("config");
    let setup = if camera.is_none() && config.is_none() {
        default_setup
    } else {
        let k = (camera.clone(), config.clone());
        if !setups.contains_key(&k) {
            match Setup::load(
                camera.as_deref().map(Path::new),
                config.as_deref().map(Path::new),
                preset,
            ) {
                Ok(s) => {
                    setups.insert(k.clone(), s);
                }
                Err(e) => {
                    end.error = Some(e.to_string());
                    return fail(q, &id, end, wopts);
                }
            }
        }
        match setups.get(&k) {
            Some(s) => s,
            None => default_setup,
        }
    };
    let outcome = {
        let _heartbeat = Heartbeat::start(q, &id, &wopts.consumer, wopts.lease)?;
        batch::process(setup, &item, opts, cancel, &|_| {})
    };
    end.error = outcome.report.error.clone();
    let status = outcome.report.status;
    end.outcome = Some(outcome);
    match status {
        Status::Done => {
            q.run_pipe(
                "recording a done job",
                redis::pipe()
                    .atomic()
                    .cmd("HSET")
                    .arg(q.key("done"))
                    .arg(&id)
                    .arg(&wopts.consumer)
                    .ignore()
                    .cmd("RPUSH")
                    .arg(q.key("log"))
                    .arg(&rel)
                    .ignore()
                    .cmd("XACK")
                    .arg(&name)
                    .arg(GROUP)
                    .arg(&id)
                    .ignore(),
            )?;
            end.verdict = "done";
            Ok(end)
        }
        Status::Interrupted => {
            // Hand the job back at once: idle as long as the lease, so the next worker's
            // XAUTOCLAIM takes it without waiting (JUSTID: no delivery is counted).
            let _: Vec<String> = q.query(
                "XCLAIM",
                redis::cmd("XCLAIM")
                    .arg(&name)
                    .arg(GROUP)
                    .arg(&wopts.consumer)
                    .arg(0)
                    .arg(&id)
                    .arg("IDLE")
                    .arg(wopts.lease.as_millis() as u64)
                    .arg("JUSTID"),
            )?;
            end.verdict = "released";
            Ok(end)
        }
        Status::Failed => {
            if !item.path.exists() {
                // A missing input will not appear by retrying: dead-lettered at once.
                end.error = Some(format!("{path}: file not found"));
                let _: () = q.query(
                    "HSET",
                    redis::cmd("HSET")
                        .arg(q.key("errors"))
                        .arg(&id)
                        .arg(end.error.as_deref().unwrap_or("")),
                )?;
                dead_letter(q, &id, &rel, end.error.as_deref().unwrap_or(""), attempt)?;
                return Ok(end);
            }
            fail(q, &id, end, wopts)
        }
    }
}

/// Record a failed attempt: dead-letter after `max_attempts`, else leave the job pending so that
/// a worker takes it again once its lease has run out.
fn fail(q: &mut Queue, id: &str, mut end: JobEnd, wopts: &WorkerOptions) -> Result<JobEnd> {
    let err = end.error.clone().unwrap_or_default();
    let _: () = q.query(
        "HSET",
        redis::cmd("HSET").arg(q.key("errors")).arg(id).arg(&err),
    )?;
    if end.attempt >= wopts.max_attempts {
        dead_letter(q, id, &end.rel, &err, end.attempt)?;
        end.verdict = "dead";
    } else {
        end.verdict = "retry";
    }
    Ok(end)
}

fn dead_letter(q: &mut Queue, id: &str, rel: &str, error: &str, attempts: usize) -> Result<()> {
    let name = q.name.clone();
    q.run_pipe(
        "dead-lettering a job",
        redis::pipe()
            .atomic()
            .cmd("XADD")
            .arg(q.key("dead"))
            .arg("*")
            .arg("id")
            .arg(id)
            .arg("rel")
            .arg(rel)
            .arg("error")
            .arg(error)
            .arg("attempts")
            .arg(attempts)
            .ignore()
            .cmd("XACK")
            .arg(&name)
            .arg(GROUP)
            .arg(id)
            .ignore(),
    )
}
