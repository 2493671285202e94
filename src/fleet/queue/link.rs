//! A Redis connection that outlives its server: `Endpoint` (the URL resolved once: password
//! from `LANES_REDIS_PASSWORD`, `rediss://` with the system roots or a CA file, and the
//! redacted form that is the only one ever printed) and `Link` (one connection that reconnects
//! with capped exponential backoff and jitter, logs each outage once when it starts and once
//! with its duration when it ends, and gives up only after `give_up_after`).
//!
//! The first connection is strict (any error is returned: a wrong port, password or CA is a
//! configuration mistake); after that, connection-level errors (refused, reset, end of file,
//! timeouts, `LOADING` while Redis reads its AOF, failover's `READONLY`/`MASTERDOWN`) are
//! retried. Authentication and certificate errors are never retried.

use super::metrics::Metrics;
use crate::base::cancel::Cancel;
use crate::base::error::{Error, Result};
use redis::IntoConnectionInfo;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Waits between reconnection attempts: 100 ms doubling to 2 s (so a worker is back within
/// about 2 s of its server), each multiplied by a random factor in [0.5, 1) so that a fleet
/// does not reconnect in lockstep.
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_CAP: Duration = Duration::from_secs(2);
/// Connecting (TCP and TLS handshake) may take this long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// A command's reply may take this long (XREADGROUP blocks 1 s): a server that stopped
/// answering (a stalled host, a dead network path) counts as a lost connection.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how to connect.
#[derive(Debug, Clone, Default)]
pub struct EndpointOptions {
    /// PEM file of the CA that signed the server's certificate (`rediss://` only); without it
    /// the system's roots are used.
    pub ca_file: Option<PathBuf>,
    /// Used when the URL carries no password (`LANES_REDIS_PASSWORD`).
    pub password: Option<String>,
}

/// A Redis server, resolved once.
pub struct Endpoint {
    client: redis::Client,
    /// The URL with its password replaced by `***`: the only form that is printed.
    pub shown: String,
    /// The password, to scrub from any message that might echo it.
    secret: Option<String>,
}

/// `scheme://user:***@host:port/db`: the URL with the password part of its user info hidden.
pub fn redact_url(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[start..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..auth_end].rfind('@') else {
        return url.to_string();
    };
    let user = rest[..at].split(':').next().unwrap_or("");
    format!("{}{user}:***{}", &url[..start], &rest[at..])
}

/// The password part of a URL's user info as written (percent-encoded or not), if any.
pub fn url_password(url: &str) -> Option<&str> {
    let start = url.find("://")? + 3;
    let rest = &url[start..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..auth_end].rfind('@')?;
    let (_, pw) = rest[..at].split_once(':')?;
    (!pw.is_empty()).then_some(pw)
}

/// Overwrite every occurrence of `secret` with `*` in this process's argument block, which is
/// what `ps` and `/proc/PID/cmdline` show, so a password given in `--redis URL` is not visible
/// in the process list while a worker runs (Linux; elsewhere, or when the block cannot be
/// found, nothing happens). Arguments already parsed are copies and keep their value.
pub fn hide_in_process_args(secret: &str) {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return;
    };
    // Fields after the command name (in parentheses, may hold spaces): the first is field 3,
    // arg_start and arg_end are fields 48 and 49 (proc(5)).
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return;
    };
    let f: Vec<usize> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let (Some(&start), Some(&end)) = (f.get(45), f.get(46)) else {
        return;
    };
    let pat = secret.as_bytes();
    if secret.is_empty() || start == 0 || end <= start || end - start > 1 << 21 {
        return;
    }
    // SAFETY: [arg_start, arg_end) is this process's argument block (the strings argv points
    // to), mapped readable and writable at the top of the main thread's stack for the life of
    // the process; bytes are replaced in place, keeping every string's length and terminator.
    let args = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    let mut i = 0;
    while i + pat.len() <= args.len() {
        if &args[i..i + pat.len()] == pat {
            args[i..i + pat.len()].fill(b'*');
            i += pat.len();
        } else {
            i += 1;
        }
    }
}

impl Endpoint {
    pub fn new(url: &str, opts: &EndpointOptions) -> Result<Self> {
        let shown = redact_url(url);
        let mut info = url.into_connection_info().map_err(|e| Error::Redis {
            url: shown.clone(),
            message: format!("bad Redis URL: {e}"),
        })?;
        let from_url = info.redis_settings().password().map(str::to_string);
        if let (None, Some(pw)) = (&from_url, &opts.password) {
            let settings = info.redis_settings().clone().set_password(pw);
            info = info.set_redis_settings(settings);
        }
        let secret = from_url.or_else(|| opts.password.clone());
        let mut ep = Self {
            client: redis::Client::open(info.clone()).map_err(|e| Error::Redis {
                url: shown.clone(),
                message: format!("bad Redis URL: {e}"),
            })?,
            shown,
            secret: secret.filter(|s| !s.is_empty()),
        };
        if let Some(ca) = &opts.ca_file {
            if !url.starts_with("rediss://") {
                return Err(Error::Redis {
                    url: ep.shown,
                    message: format!("--redis-ca {} needs a rediss:// (TLS) URL", ca.display()),
                });
            }
            let pem = std::fs::read(ca).map_err(|e| Error::io(ca, e))?;
            if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
                return Err(Error::Io {
                    path: ca.clone(),
                    message: "no PEM certificate in it (expected the CA's certificate)".into(),
                });
            }
            let certs = redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(pem),
            };
            ep.client = redis::Client::build_with_tls(info, certs).map_err(|e| Error::Io {
                path: ca.clone(),
                message: format!("not a usable CA certificate file: {}", ep.scrub(&e)),
            })?;
        }
        Ok(ep)
    }

    /// A message with the password (if any) replaced by `***`.
    pub fn scrub(&self, msg: &impl std::fmt::Display) -> String {
        let s = msg.to_string();
        match &self.secret {
            Some(p) => s.replace(p.as_str(), "***"),
            None => s,
        }
    }

    /// The library error for `what` failing with `e`, naming the redacted URL.
    pub fn error(&self, what: &str, e: &redis::RedisError) -> Error {
        let mut message = format!("{what}: {}", self.scrub(e));
        let text = e.to_string();
        if text.contains("invalid peer certificate") {
            message += " (the server's certificate is not signed by a trusted CA: give its CA with --redis-ca or LANES_REDIS_CA)";
        } else if text.contains("NOAUTH") {
            message += " (give the password in the URL or in LANES_REDIS_PASSWORD)";
        } else if self.shown.starts_with("redis://")
            && is_connection_error(e)
            && !e.is_connection_refusal()
        {
            message += " (if the server expects TLS, use a rediss:// URL)";
        }
        Error::Redis {
            url: self.shown.clone(),
            message,
        }
    }

    /// A new connection (with I/O timeouts), named `name` in `CLIENT LIST`.
    fn open(&self, name: &str) -> redis::RedisResult<redis::Connection> {
        let mut con = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
        con.set_read_timeout(Some(IO_TIMEOUT))?;
        con.set_write_timeout(Some(IO_TIMEOUT))?;
        if !name.is_empty() {
            redis::cmd("CLIENT")
                .arg("SETNAME")
                .arg(name)
                .query::<()>(&mut con)?;
        }
        Ok(con)
    }
}

/// The connection broke or could not be made (as opposed to a command the server refused).
fn is_connection_error(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_connection_dropped() || e.is_timeout() || e.is_connection_refusal()
}

/// Worth retrying: the connection failed or the server is briefly unable to serve (loading
/// its data, in failover). Authentication and certificate problems are not.
pub fn is_transient(e: &redis::RedisError) -> bool {
    if e.kind() == redis::ErrorKind::AuthenticationFailed {
        return false;
    }
    let text = e.to_string();
    if text.contains("certificate") || text.contains("WRONGPASS") || text.contains("NOAUTH") {
        return false;
    }
    if matches!(
        e.code(),
        Some("LOADING" | "MASTERDOWN" | "READONLY" | "TRYAGAIN" | "CLUSTERDOWN")
    ) {
        return true;
    }
    is_connection_error(e)
}

/// One outage: since when, how many attempts, the last error.
struct Outage {
    start: Instant,
    attempts: u32,
}

/// Small xorshift for the backoff's jitter (seeded from the clock and the process id).
fn jitter_factor(state: &mut u64) -> f64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    0.5 + 0.5 * ((*state >> 11) as f64 / (1u64 << 53) as f64)
}

/// The wait before attempt `n` (1-based) of an outage.
pub fn backoff(n: u32, rng: &mut u64) -> Duration {
    let base = BACKOFF_FIRST.saturating_mul(1u32 << n.saturating_sub(1).min(16));
    base.min(BACKOFF_CAP).mul_f64(jitter_factor(rng))
}

/// Reports what a link goes through (printed by the CLI).
pub type Notify = Arc<dyn Fn(&str) + Send + Sync>;

/// One connection to an endpoint that reconnects on its own.
pub struct Link {
    pub ep: Arc<Endpoint>,
    con: Option<redis::Connection>,
    name: String,
    /// Retry a lost connection this long at most (`None`: forever).
    pub give_up_after: Option<Duration>,
    /// Outage messages go here; `None` keeps the link quiet (the heartbeat's).
    notify: Option<Notify>,
    metrics: Option<Arc<Metrics>>,
    rng: u64,
    /// (stream, group) to create again when the server lost them (`NOGROUP` after a restart
    /// without persistence).
    group: Option<(String, String)>,
    /// Stop retrying once this is set (the worker was asked to stop).
    pub cancel: Option<Cancel>,
}

impl Link {
    /// Connect now; any error is returned as it is (the first connection is strict).
    pub fn connect(ep: Arc<Endpoint>, name: &str) -> Result<Self> {
        let con = ep.open(name).map_err(|e| ep.error("cannot connect", &e))?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            ^ ((std::process::id() as u64) << 32);
        Ok(Self {
            ep,
            con: Some(con),
            name: name.to_string(),
            give_up_after: None,
            notify: None,
            metrics: None,
            rng: seed | 1,
            group: None,
            cancel: None,
        })
    }

    pub fn with_notify(mut self, notify: Option<Notify>, metrics: Option<Arc<Metrics>>) -> Self {
        self.notify = notify;
        self.metrics = metrics;
        self
    }

    /// Recreate `group` on `stream` when a command finds it missing.
    pub fn recreate_group(mut self, stream: &str, group: &str) -> Self {
        self.group = Some((stream.to_string(), group.to_string()));
        self
    }

    fn say(&self, msg: &str) {
        if let Some(n) = &self.notify {
            n(msg);
        }
    }

    /// Run `f` on the connection, reconnecting (backoff with jitter) through transient errors
    /// until it succeeds, a non-transient error comes, or the outage outlasts `give_up_after`.
    pub fn run<T>(
        &mut self,
        what: &str,
        mut f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T> {
        let mut outage: Option<Outage> = None;
        let mut recreated = false;
        loop {
            let attempt = match self.con.as_mut() {
                Some(con) => f(con),
                None => match self.ep.open(&self.name) {
                    Ok(c) => {
                        self.con = Some(c);
                        continue;
                    }
                    Err(e) => Err(e),
                },
            };
            let err = match attempt {
                Ok(v) => {
                    if let Some(o) = outage {
                        self.recovered(&o);
                    }
                    return Ok(v);
                }
                Err(e) => e,
            };
            if err.code() == Some("NOGROUP") && !recreated {
                if let (Some((stream, group)), Some(con)) = (&self.group, self.con.as_mut()) {
                    recreated = true;
                    let made: redis::RedisResult<()> = redis::cmd("XGROUP")
                        .arg("CREATE")
                        .arg(stream)
                        .arg(group)
                        .arg("0")
                        .arg("MKSTREAM")
                        .query(con);
                    if made.is_ok()
                        || made.as_ref().err().and_then(|e| e.code()) == Some("BUSYGROUP")
                    {
                        self.say(&format!(
                            "{}: consumer group {group} was missing (Redis restarted without persistence?); created it again",
                            self.ep.shown
                        ));
                        continue;
                    }
                }
            }
            if !is_transient(&err) {
                return Err(self.ep.error(what, &err));
            }
            self.con = None;
            if self.cancel.as_ref().is_some_and(|c| c.requested()) {
                // A stop signal (its EINTR may be what broke the command): no outage to report.
                return Err(Error::Redis {
                    url: self.ep.shown.clone(),
                    message: format!("{what}: stopped by signal"),
                });
            }
            let o = outage.get_or_insert_with(|| {
                if let Some(m) = &self.metrics {
                    m.set_connected(false);
                }
                Outage {
                    start: Instant::now(),
                    attempts: 0,
                }
            });
            if o.attempts == 0 {
                let msg = format!(
                    "{}: connection lost ({what}: {}); reconnecting",
                    self.ep.shown,
                    self.ep.scrub(&err)
                );
                self.say(&msg);
            }
            o.attempts += 1;
            if let Some(limit) = self.give_up_after {
                if o.start.elapsed() >= limit {
                    return Err(Error::Redis {
                        url: self.ep.shown.clone(),
                        message: format!(
                            "{what}: no connection for {:.1} s (--give-up-after {:.0} s); last error: {}",
                            o.start.elapsed().as_secs_f64(),
                            limit.as_secs_f64(),
                            self.ep.scrub(&err)
                        ),
                    });
                }
            }
            let wait = backoff(o.attempts, &mut self.rng);
            std::thread::sleep(wait);
        }
    }

    /// One try (reconnecting once if needed), no retry: for the heartbeat, which tries again
    /// at its next beat.
    pub fn once<T>(
        &mut self,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        if self.con.is_none() {
            self.con = Some(self.ep.open(&self.name)?);
        }
        let Some(con) = self.con.as_mut() else {
            return Err((redis::ErrorKind::Io, "not connected").into());
        };
        let r = f(con);
        if r.as_ref().err().is_some_and(is_transient) {
            self.con = None;
        }
        r
    }

    fn recovered(&self, o: &Outage) {
        if let Some(m) = &self.metrics {
            m.reconnected();
        }
        self.say(&format!(
            "{}: reconnected after {:.1} s without a connection ({} attempts)",
            self.ep.shown,
            o.start.elapsed().as_secs_f64(),
            o.attempts
        ));
    }

    /// A command, retried through outages.
    pub fn query<T: redis::FromRedisValue>(&mut self, what: &str, cmd: &redis::Cmd) -> Result<T> {
        self.run(what, |con| cmd.query(con))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_printed_without_their_password() {
        assert_eq!(
            redact_url("rediss://lanes:s3cr%40t@redis.example:6380/0"),
            "rediss://lanes:***@redis.example:6380/0"
        );
        assert_eq!(
            redact_url("redis://:hunter2@127.0.0.1:6379/"),
            "redis://:***@127.0.0.1:6379/"
        );
        assert_eq!(
            redact_url("redis://127.0.0.1:6379/"),
            "redis://127.0.0.1:6379/"
        );
        assert_eq!(redact_url("redis://u:p@h"), "redis://u:***@h");
        assert_eq!(
            url_password("rediss://lanes:s3cr%40t@h:1/0"),
            Some("s3cr%40t")
        );
        assert_eq!(url_password("redis://lanes@h:1/"), None);
        assert_eq!(url_password("redis://h:1/"), None);
    }

    #[test]
    fn password_from_the_environment_is_used_and_scrubbed() {
        let ep = Endpoint::new(
            "redis://127.0.0.1:1/",
            &EndpointOptions {
                ca_file: None,
                password: Some("pa55word".into()),
            },
        )
        .unwrap();
        assert_eq!(ep.scrub(&"WRONGPASS pa55word"), "WRONGPASS ***");
        assert_eq!(ep.shown, "redis://127.0.0.1:1/");
    }

    #[test]
    fn backoff_doubles_to_its_cap_with_jitter() {
        let mut rng = 12345u64;
        for n in 1..40 {
            let d = backoff(n, &mut rng);
            let nominal = BACKOFF_FIRST
                .saturating_mul(1 << (n - 1).min(16))
                .min(BACKOFF_CAP);
            assert!(d >= nominal / 2 && d < nominal, "attempt {n}: {d:?}");
        }
    }
}
