//! A worker's counters and their Prometheus text-format endpoint (`lanes queue work --metrics
//! ADDR`): jobs done, failed, dead-lettered and lost, frames, a histogram of seconds per job,
//! the job in progress and the Redis connection's state and reconnects.

use crate::base::error::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Upper bounds (seconds) of the job-duration histogram's buckets: a short clip takes
/// seconds, an hour-long drive several minutes on two cores.
pub const JOB_SECONDS_BUCKETS: &[f64] = &[
    1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
];

/// What one worker has done since it started.
#[derive(Debug)]
pub struct Metrics {
    consumer: String,
    done: AtomicU64,
    skipped: AtomicU64,
    failed: AtomicU64,
    dead: AtomicU64,
    lost: AtomicU64,
    frames: AtomicU64,
    reconnects: AtomicU64,
    connected: AtomicBool,
    /// Per bucket (same order as `JOB_SECONDS_BUCKETS`, then +Inf), sum of seconds.
    seconds: Mutex<(Vec<u64>, f64)>,
    current: Mutex<Option<String>>,
}

/// How a job ended, for the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobResult {
    /// Processed and recorded (`skipped`: already done on disk).
    Done { skipped: bool },
    /// A failed attempt that will be retried.
    Failed,
    /// A failed attempt that sent the job to the dead letters.
    Dead,
    /// Taken over by another worker while this one stalled.
    Lost,
    /// Handed back (SIGTERM).
    Released,
}

impl Metrics {
    pub fn new(consumer: &str) -> Self {
        Self {
            consumer: consumer.to_string(),
            done: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            dead: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            frames: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            connected: AtomicBool::new(true),
            seconds: Mutex::new((vec![0; JOB_SECONDS_BUCKETS.len() + 1], 0.0)),
            current: Mutex::new(None),
        }
    }

    pub fn set_connected(&self, up: bool) {
        self.connected.store(up, Ordering::SeqCst);
    }

    /// The main connection is back after an outage.
    pub fn reconnected(&self) {
        self.reconnects.fetch_add(1, Ordering::SeqCst);
        self.set_connected(true);
    }

    pub fn start_job(&self, rel: &str) {
        if let Ok(mut c) = self.current.lock() {
            *c = Some(rel.to_string());
        }
    }

    /// A job ended after `seconds` with `frames` analysed.
    pub fn end_job(&self, result: JobResult, frames: usize, seconds: f64) {
        if let Ok(mut c) = self.current.lock() {
            *c = None;
        }
        let counter = match result {
            JobResult::Done { skipped } => {
                if skipped {
                    self.skipped.fetch_add(1, Ordering::SeqCst);
                }
                &self.done
            }
            JobResult::Failed => &self.failed,
            JobResult::Dead => {
                self.failed.fetch_add(1, Ordering::SeqCst);
                &self.dead
            }
            JobResult::Lost => &self.lost,
            JobResult::Released => return,
        };
        counter.fetch_add(1, Ordering::SeqCst);
        self.frames.fetch_add(frames as u64, Ordering::SeqCst);
        if matches!(result, JobResult::Done { skipped: false }) {
            if let Ok(mut h) = self.seconds.lock() {
                let i = JOB_SECONDS_BUCKETS
                    .iter()
                    .position(|b| seconds <= *b)
                    .unwrap_or(JOB_SECONDS_BUCKETS.len());
                h.0[i] += 1;
                h.1 += seconds;
            }
        }
    }

    /// The Prometheus text exposition (version 0.0.4).
    pub fn render(&self) -> String {
        let c = escape(&self.consumer);
        let mut s = String::new();
        let mut counter = |name: &str, help: &str, v: u64| {
            s += &format!(
                "# HELP {name} {help}\n# TYPE {name} counter\n{name}{{consumer=\"{c}\"}} {v}\n"
            );
        };
        let get = |a: &AtomicU64| a.load(Ordering::SeqCst);
        counter(
            "lanes_queue_jobs_done_total",
            "Jobs this worker recorded as done (processed or already done on disk).",
            get(&self.done),
        );
        counter(
            "lanes_queue_jobs_skipped_total",
            "Done jobs whose outputs were already complete (nothing redone).",
            get(&self.skipped),
        );
        counter(
            "lanes_queue_jobs_failed_total",
            "Failed attempts (retried or dead-lettered).",
            get(&self.failed),
        );
        counter(
            "lanes_queue_jobs_dead_total",
            "Jobs this worker sent to the dead-letter stream.",
            get(&self.dead),
        );
        counter(
            "lanes_queue_jobs_lost_total",
            "Jobs taken over by another worker while this one stalled past its lease.",
            get(&self.lost),
        );
        counter(
            "lanes_queue_frames_total",
            "Frames analysed in jobs that ended.",
            get(&self.frames),
        );
        counter(
            "lanes_queue_redis_reconnects_total",
            "Outages of the Redis connection that ended in a reconnection.",
            get(&self.reconnects),
        );
        s += &format!(
            "# HELP lanes_queue_redis_connected 1 while the Redis connection works.\n# TYPE lanes_queue_redis_connected gauge\nlanes_queue_redis_connected{{consumer=\"{c}\"}} {}\n",
            self.connected.load(Ordering::SeqCst) as u8
        );
        s += "# HELP lanes_queue_current_job The job in progress (1 with its name), 0 when idle.\n# TYPE lanes_queue_current_job gauge\n";
        match self.current.lock().ok().and_then(|c| c.clone()) {
            Some(rel) => {
                s += &format!(
                    "lanes_queue_current_job{{consumer=\"{c}\",rel=\"{}\"}} 1\n",
                    escape(&rel)
                )
            }
            None => s += &format!("lanes_queue_current_job{{consumer=\"{c}\",rel=\"\"}} 0\n"),
        }
        s += "# HELP lanes_queue_job_seconds Seconds per processed job.\n# TYPE lanes_queue_job_seconds histogram\n";
        if let Ok(h) = self.seconds.lock() {
            let mut cum = 0;
            for (i, n) in h.0.iter().enumerate() {
                cum += n;
                let le = JOB_SECONDS_BUCKETS
                    .get(i)
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| "+Inf".into());
                s += &format!(
                    "lanes_queue_job_seconds_bucket{{consumer=\"{c}\",le=\"{le}\"}} {cum}\n"
                );
            }
            s += &format!(
                "lanes_queue_job_seconds_sum{{consumer=\"{c}\"}} {}\nlanes_queue_job_seconds_count{{consumer=\"{c}\"}} {cum}\n",
                h.1
            );
        }
        s
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The HTTP endpoint: serves `GET /metrics` (any path) until dropped.
pub struct MetricsServer {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
    /// The address it listens on (the port filled in when 0 was given).
    pub addr: String,
}

impl MetricsServer {
    pub fn start(addr: &str, metrics: Arc<Metrics>) -> Result<Self> {
        let server = tiny_http::Server::http(addr)
            .map_err(|e| Error::Invalid(format!("--metrics {addr}: cannot listen: {e}")))?;
        let bound = server
            .server_addr()
            .to_ip()
            .map(|a| a.to_string())
            .unwrap_or_else(|| addr.to_string());
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            while !stop2.load(Ordering::SeqCst) {
                let Ok(Some(req)) = server.recv_timeout(Duration::from_millis(200)) else {
                    continue;
                };
                let header = tiny_http::Header::from_bytes(
                    &b"Content-Type"[..],
                    &b"text/plain; version=0.0.4; charset=utf-8"[..],
                );
                let mut resp = tiny_http::Response::from_string(metrics.render());
                if let Ok(h) = header {
                    resp = resp.with_header(h);
                }
                let _ = req.respond(resp);
            }
        });
        Ok(Self {
            stop,
            handle: Some(handle),
            addr: bound,
        })
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_and_histogram_render_in_text_format() {
        let m = Metrics::new("w\"1");
        m.start_job("a/b.mp4");
        assert!(m
            .render()
            .contains("lanes_queue_current_job{consumer=\"w\\\"1\",rel=\"a/b.mp4\"} 1"));
        m.end_job(JobResult::Done { skipped: false }, 40, 1.5);
        m.end_job(JobResult::Done { skipped: true }, 40, 0.01);
        m.end_job(JobResult::Dead, 0, 0.2);
        let r = m.render();
        assert!(
            r.contains("lanes_queue_jobs_done_total{consumer=\"w\\\"1\"} 2"),
            "{r}"
        );
        assert!(r.contains("lanes_queue_jobs_failed_total{consumer=\"w\\\"1\"} 1"));
        assert!(r.contains("lanes_queue_jobs_dead_total{consumer=\"w\\\"1\"} 1"));
        assert!(r.contains("lanes_queue_frames_total{consumer=\"w\\\"1\"} 80"));
        // One processed job of 1.5 s: not in the 1 s bucket, in the 2 s one and all above.
        assert!(r.contains("lanes_queue_job_seconds_bucket{consumer=\"w\\\"1\",le=\"1\"} 0"));
        assert!(r.contains("lanes_queue_job_seconds_bucket{consumer=\"w\\\"1\",le=\"2\"} 1"));
        assert!(r.contains("lanes_queue_job_seconds_bucket{consumer=\"w\\\"1\",le=\"+Inf\"} 1"));
        assert!(r.contains("lanes_queue_job_seconds_count{consumer=\"w\\\"1\"} 1"));
        assert!(r.contains("lanes_queue_current_job{consumer=\"w\\\"1\",rel=\"\"} 0"));
    }
}
