//! A Redis Streams job queue for `lanes batch`'s per-video work, shared by many machines.
//!
//! One stream entry per video (`path`, `rel`, optional `camera`/`config`), one consumer group
//! (`lanes`). A worker (`worker.rs`) takes an entry with XREADGROUP (blocking) or, first, takes
//! over an entry left idle longer than the lease by a dead or stalled worker (XAUTOCLAIM);
//! while it works a heartbeat re-claims the entry every third of the lease, but only while the
//! entry is still its own (a script: XPENDING for this consumer, then `XCLAIM ... JUSTID`). A
//! worker processes a video into a private staging folder and publishes the files into the
//! video's folder (renames, `summary.json` last) only after checking that the job is still its
//! own, so a worker that stalled past its lease abandons its copy without touching the outputs
//! of the worker that took the job over. The entry's delivery count (XPENDING) is its attempt
//! number; a job whose processing failed `max_attempts` times, or whose input file does not
//! exist, is copied with its error to the dead-letter stream `NAME:dead` and acknowledged.
//!
//! Connections (`link.rs`) reconnect with capped exponential backoff and jitter through Redis
//! restarts, failovers and network blips; every write that may be retried after a lost reply
//! is idempotent (the done record is `HSETNX`, the log entry is pushed only when that set it).
//! `metrics.rs` counts what a worker did and serves it in Prometheus' text format.
//!
//! Keys: `NAME` (jobs), `NAME:dead` (dead letters), `NAME:errors` (hash: entry id -> last
//! error), `NAME:done` (hash: entry id -> consumer that recorded it), `NAME:log` (list: one
//! `rel` per job recorded done, to audit exactly-once).

mod client;
mod link;
pub mod metrics;
mod worker;

pub use client::*;
pub use link::{
    hide_in_process_args, redact_url, url_password, Endpoint, EndpointOptions, Link, Notify,
};
pub use metrics::{Metrics, MetricsServer};
pub use worker::{default_consumer, work, JobEnd, WorkerOptions, STAGING_DIR};
