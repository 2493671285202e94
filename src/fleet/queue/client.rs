//! The queue itself: connecting, pushing jobs, reading the state of the stream.

use super::link::{Endpoint, EndpointOptions, Link, Notify};
use super::metrics::Metrics;
use crate::base::error::Result;
use crate::fleet::batch::Item;
use redis::streams::{StreamInfoGroupsReply, StreamPendingCountReply, StreamRangeReply};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The consumer group every worker joins.
pub const GROUP: &str = "lanes";

/// How to reach the server and what to do when it goes away.
#[derive(Clone, Default)]
pub struct ConnectOptions {
    pub endpoint: EndpointOptions,
    /// Give up (an error) after this long without a connection; `None`: never.
    pub give_up_after: Option<Duration>,
    /// Where outage messages go (the CLI prints them).
    pub notify: Option<Notify>,
    /// Counts reconnections (a worker's metrics).
    pub metrics: Option<Arc<Metrics>>,
    /// The connection's name in `CLIENT LIST`.
    pub client_name: String,
}

/// A connection to one queue on one Redis server.
pub struct Queue {
    link: Link,
    pub name: String,
}

impl Queue {
    /// Connect (3 s timeout; the first connection must succeed) and make sure the stream and
    /// the consumer group exist.
    pub fn connect(url: &str, name: &str, opts: &ConnectOptions) -> Result<Self> {
        let ep = Arc::new(Endpoint::new(url, &opts.endpoint)?);
        let mut link = Link::connect(ep, &opts.client_name)?
            .with_notify(opts.notify.clone(), opts.metrics.clone())
            .recreate_group(name, GROUP);
        link.give_up_after = opts.give_up_after;
        let mut q = Self {
            link,
            name: name.to_string(),
        };
        q.link.run("creating the consumer group", |con| {
            let created: redis::RedisResult<()> = redis::cmd("XGROUP")
                .arg("CREATE")
                .arg(name)
                .arg(GROUP)
                .arg("0")
                .arg("MKSTREAM")
                .query(con);
            match created {
                Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
                other => other,
            }
        })?;
        Ok(q)
    }

    /// The server this queue is on (for more connections, e.g. a heartbeat's).
    pub fn endpoint(&self) -> Arc<Endpoint> {
        Arc::clone(&self.link.ep)
    }

    /// The URL as printed (password hidden).
    pub fn shown_url(&self) -> &str {
        &self.link.ep.shown
    }

    /// Stop retrying a lost connection once `cancel` is set (a worker asked to stop).
    pub fn set_cancel(&mut self, cancel: crate::base::cancel::Cancel) {
        self.link.cancel = Some(cancel);
    }

    pub(super) fn key(&self, suffix: &str) -> String {
        format!("{}:{suffix}", self.name)
    }

    pub(super) fn query<T: redis::FromRedisValue>(
        &mut self,
        what: &str,
        cmd: &redis::Cmd,
    ) -> Result<T> {
        self.link.query(what, cmd)
    }

    /// Enqueue one job per item; paths are made absolute (as the workers will see them on
    /// shared storage). Returns the entry ids. (A reply lost in an outage may add an entry
    /// twice; the second is done at once as already done.)
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
        let dead: Vec<DeadLetter> = dead_entries
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
            in_flight_count: in_flight.len(),
            in_flight,
            done,
            failed,
            dead_count: dead.len(),
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
    /// `in_flight.len()`, for scripts.
    pub in_flight_count: usize,
    /// Jobs completed (each counted once, whoever did it and however often it was delivered).
    pub done: usize,
    /// Jobs with a failed attempt (retried or dead-lettered).
    pub failed: usize,
    pub dead: Vec<DeadLetter>,
    /// `dead.len()`, for scripts.
    pub dead_count: usize,
}

impl QueueStatus {
    /// The text `lanes queue status` prints: a summary line, then in-flight and dead jobs.
    pub fn text(&self, queue: &str) -> String {
        let mut s = format!(
            "queue {queue}: {} jobs, {} waiting, {} in flight, {} done, {} failed at least once, {} dead-lettered\n",
            self.total, self.waiting, self.in_flight_count, self.done, self.failed, self.dead_count
        );
        for f in &self.in_flight {
            s += &format!(
                "  in flight {} ({}): consumer {}, idle {:.1} s, delivery {}\n",
                f.rel,
                f.id,
                f.consumer,
                f.idle_ms as f64 / 1000.0,
                f.deliveries
            );
        }
        for d in &self.dead {
            s += &format!(
                "  dead {} after {} attempts: {}\n",
                d.rel, d.attempts, d.error
            );
        }
        s
    }
}
