//! `lanes queue push|work|status`: the Redis Streams job queue (see `lanes::fleet::queue`).

use super::batch::JobArgs;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use lanes::base::cancel::Cancel;
use lanes::fleet::batch;
use lanes::fleet::batch::outcome_line;
use lanes::fleet::queue::{self, ConnectOptions, EndpointOptions, Metrics, Queue, WorkerOptions};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args)]
pub struct QueueArgs {
    #[command(subcommand)]
    pub(super) cmd: QueueCmd,
}

/// Where the queue is.
#[derive(Args, Clone)]
pub(super) struct Conn {
    /// Redis URL: redis://[USER:PASSWORD@]HOST:PORT/[DB], rediss:// for TLS. The password
    /// may come from LANES_REDIS_PASSWORD instead; it is never printed.
    #[arg(long, value_name = "URL")]
    redis: String,
    /// Stream name (the other keys are NAME:dead, NAME:errors, NAME:done, NAME:log).
    #[arg(long, default_value = "lanes", value_name = "NAME")]
    queue: String,
    /// CA certificate (PEM) that signed the server's (rediss:// only; default: the system's
    /// roots). Also LANES_REDIS_CA.
    #[arg(long, value_name = "FILE")]
    redis_ca: Option<PathBuf>,
    /// Exit 2 after this long without a connection to Redis (e.g. 30s, 5m, never). Default:
    /// never for `work`, 30s for `push` and `status`.
    #[arg(long, value_name = "DURATION", value_parser = parse_give_up)]
    give_up_after: Option<GiveUp>,
}

/// `--give-up-after`: a duration or never.
#[derive(Clone, Copy)]
struct GiveUp(Option<Duration>);

fn parse_give_up(s: &str) -> std::result::Result<GiveUp, String> {
    match s {
        "never" => Ok(GiveUp(None)),
        _ => parse_duration(s).map(|d| GiveUp(Some(d))),
    }
}

impl Conn {
    /// Connect as `name` (in CLIENT LIST); outages are reported on stderr, prefixed `who`.
    fn open(
        &self,
        default_give_up: Option<Duration>,
        name: &str,
        metrics: Option<Arc<Metrics>>,
    ) -> Result<Queue> {
        if let Some(pw) = queue::url_password(&self.redis) {
            queue::hide_in_process_args(pw); // `ps` shows the URL with the password starred
        }
        let who = name.to_string();
        let opts = ConnectOptions {
            endpoint: EndpointOptions {
                ca_file: self
                    .redis_ca
                    .clone()
                    .or_else(|| std::env::var_os("LANES_REDIS_CA").map(PathBuf::from)),
                password: std::env::var("LANES_REDIS_PASSWORD").ok(),
            },
            give_up_after: self.give_up_after.map_or(default_give_up, |g| g.0),
            notify: Some(Arc::new(move |m: &str| {
                eprintln!("lanes queue: [{who}] {m}")
            })),
            metrics,
            client_name: name.to_string(),
        };
        Ok(Queue::connect(&self.redis, &self.queue, &opts)?)
    }
}

#[derive(Subcommand)]
pub(super) enum QueueCmd {
    /// Enqueue one job per video (paths made absolute, as the workers see them on shared storage).
    Push {
        #[command(flatten)]
        conn: Conn,
        /// Video files, directories (searched recursively) or @list.txt.
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<PathBuf>,
        /// Camera file the workers load for these jobs (instead of their own --camera).
        #[arg(long, value_name = "FILE")]
        camera: Option<PathBuf>,
        /// Config file the workers load for these jobs (instead of their own --config).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Run a worker until SIGTERM/SIGINT (exit 0), or with --drain until the queue is empty.
    Work {
        #[command(flatten)]
        conn: Conn,
        #[command(flatten)]
        job: JobArgs,
        /// A job whose worker sent no heartbeat this long is taken over (e.g. 60s, 500ms, 2m).
        #[arg(long, default_value = "60s", value_parser = parse_duration)]
        lease: Duration,
        /// Failed attempts before a job goes to the dead-letter stream.
        #[arg(long, default_value_t = 3, value_name = "K")]
        max_attempts: usize,
        /// Exit once nothing is waiting or in flight.
        #[arg(long)]
        drain: bool,
        /// Consumer name (default: host name and process id).
        #[arg(long, value_name = "NAME")]
        consumer: Option<String>,
        /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9464).
        #[arg(long, value_name = "ADDR")]
        metrics: Option<String>,
    },
    /// Print waiting, in-flight (consumer, idle time), done, failed and dead-lettered jobs.
    Status {
        #[command(flatten)]
        conn: Conn,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `60s`, `500ms`, `2m` or a number of seconds.
fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let bad = || format!("{s} (expected e.g. 60s, 500ms, 2m)");
    let (num, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" => v,
        "m" => v * 60.0,
        _ => return Err(bad()),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

pub fn run(a: QueueArgs) -> Result<i32> {
    match a.cmd {
        QueueCmd::Push {
            conn,
            inputs,
            camera,
            config,
        } => {
            let items = batch::collect_inputs(&inputs)?;
            // What a worker would fail on for good is refused here, as `lanes batch` refuses
            // it before any work: the paths are the ones the workers read (shared storage).
            if let Some(missing) = items.iter().find(|it| !it.path.is_file()) {
                anyhow::bail!(
                    "{}: file not found (the workers read the path pushed: push videos as they are seen on the shared storage)",
                    missing.path.display()
                );
            }
            super::common::load_camera(camera.as_deref())?;
            if let Some(c) = config.as_deref() {
                super::common::load_config(Some(c))?;
            }
            let mut q = conn.open(Some(Duration::from_secs(30)), "lanes-push", None)?;
            let ids = q.push(&items, camera.as_deref(), config.as_deref())?;
            let n = super::common::count(ids.len(), "job", "jobs");
            eprintln!("lanes queue: pushed {n} to {}", conn.queue);
            Ok(0)
        }
        QueueCmd::Work {
            conn,
            job,
            lease,
            max_attempts,
            drain,
            consumer,
            metrics,
        } => {
            let (setup, opts) = job.resolve()?;
            batch::prepare_out_dir(&opts.out_dir)?;
            let consumer = consumer.unwrap_or_else(queue::default_consumer);
            let counters = Arc::new(Metrics::new(&consumer));
            let _server = match &metrics {
                Some(addr) => {
                    let s = queue::MetricsServer::start(addr, Arc::clone(&counters))?;
                    eprintln!(
                        "lanes queue: [{consumer}] metrics at http://{}/metrics",
                        s.addr
                    );
                    Some(s)
                }
                None => None,
            };
            let mut q = conn.open(None, &consumer, Some(Arc::clone(&counters)))?;
            let cancel = Cancel::on_signals().context("installing signal handlers")?;
            let wopts = WorkerOptions {
                lease,
                max_attempts: max_attempts.max(1),
                consumer,
                drain,
            };
            let mut on_job = |e: &queue::JobEnd| {
                let line = match &e.outcome {
                    Some(o) if e.verdict == "done" => outcome_line(o),
                    _ => format!(
                        "{:<7} {}: {}",
                        e.verdict,
                        e.rel,
                        e.error.as_deref().unwrap_or("")
                    ),
                };
                eprintln!("[{} attempt {}] {line}", wopts.consumer, e.attempt);
            };
            let n = queue::work(
                &mut q,
                &setup,
                super::common::preset(),
                &opts,
                &wopts,
                &cancel,
                counters,
                &mut on_job,
            )?;
            eprintln!(
                "lanes queue work: {} by {}{}",
                super::common::count(n, "job attempt", "job attempts"),
                wopts.consumer,
                if cancel.requested() {
                    ", stopped by signal"
                } else {
                    ""
                }
            );
            Ok(0)
        }
        QueueCmd::Status { conn, json } => {
            let mut q = conn.open(Some(Duration::from_secs(30)), "lanes-status", None)?;
            let s = q.status()?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&s)?);
                return Ok(0);
            }
            outln!("{}", s.text(&conn.queue).trim_end_matches('\n'));
            Ok(0)
        }
    }
}
