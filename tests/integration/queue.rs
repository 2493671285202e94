//! `lanes queue`: real `redis-server` on a free loopback port, real workers. Three workers on
//! 8 jobs with one SIGKILLed mid-job; dead letters after K attempts; SIGTERM; an unreachable
//! server; Redis SIGKILLed and restarted (AOF) twice under two workers; a worker SIGSTOPped past
//! its lease; TLS and passwords; metrics.

use super::batch::{clip_inputs, corrupt_set, partials_under};
use super::*;
use serde_json::Value;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of our own on a free loopback port, stopped on drop.
struct RedisServer {
    child: Child,
    url: String,
    port: u16,
    args: Vec<String>,
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl RedisServer {
    /// Start one on a free port; `None` (skip, or fail under CI) when redis-server is missing.
    fn start() -> Option<Self> {
        Self::start_with(&["--save", "", "--appendonly", "no"])
    }

    /// With an append-only file in `dir` (fsync on every write, so a SIGKILL loses nothing
    /// and the test is deterministic; `everysec` may lose the last second, which costs a lease
    /// and a skipped redo, never a wrong output).
    fn start_persistent(dir: &Path) -> Option<Self> {
        let d = dir.to_str().unwrap();
        Self::start_with(&[
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--dir",
            d,
        ])
    }

    fn start_with(extra: &[&str]) -> Option<Self> {
        let port = free_port();
        let mut args: Vec<String> = vec!["--port".into(), port.to_string()];
        args.extend(["--bind", "127.0.0.1"].iter().map(|s| s.to_string()));
        args.extend(extra.iter().map(|s| s.to_string()));
        let child = match Self::spawn(&args) {
            Ok(c) => c,
            Err(e) => {
                let msg = format!("redis-server not runnable ({e}); scripts/setup.sh installs it");
                if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
                    panic!("{msg}");
                }
                eprintln!("SKIP: {msg}");
                return None;
            }
        };
        let scheme = if extra.contains(&"--tls-port") {
            "rediss"
        } else {
            "redis"
        };
        let url = format!("{scheme}://127.0.0.1:{port}/");
        let s = Self {
            child,
            url,
            port: extra
                .iter()
                .position(|a| *a == "--tls-port")
                .map(|i| extra[i + 1].parse().unwrap())
                .unwrap_or(port),
            args,
        };
        s.wait_ready();
        Some(s)
    }

    fn spawn(args: &[String]) -> std::io::Result<Child> {
        Command::new("redis-server")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    }

    /// Wait until the port accepts connections (the data may still be loading).
    fn wait_ready(&self) {
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGKILL, as a crashed or OOM-killed server.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Start again on the same port with the same settings (and data, with AOF).
    fn restart(&mut self) {
        self.child = Self::spawn(&self.args).unwrap();
        self.wait_ready();
    }

    fn con(&self) -> redis::Connection {
        redis::Client::open(self.url.as_str())
            .unwrap()
            .get_connection()
            .unwrap()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A worker whose stderr goes to `log` (read while it runs).
fn worker_logged(url: &str, out: &Path, name: &str, extra: &[&str], log: &Path) -> Child {
    Command::new(lanes_bin())
        .args(["queue", "work", "--redis", url, "-o"])
        .arg(out)
        .args(["--consumer", name])
        .args(extra)
        .current_dir(repo_root())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// Names of the clients connected to the server (empty while it is down).
fn client_names(url: &str) -> Vec<String> {
    let Ok(mut con) = redis::Client::open(url).unwrap().get_connection() else {
        return Vec::new();
    };
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut con)
        .unwrap_or_default();
    list.lines()
        .filter_map(|l| l.split(' ').find_map(|f| f.strip_prefix("name=")))
        .map(str::to_string)
        .collect()
}

/// `lanes:log` (one rel per job recorded done), or empty while the server is down.
fn done_log(url: &str) -> Vec<String> {
    redis::Client::open(url)
        .unwrap()
        .get_connection()
        .ok()
        .and_then(|mut c| {
            redis::cmd("LRANGE")
                .arg("lanes:log")
                .arg(0)
                .arg(-1)
                .query(&mut c)
                .ok()
        })
        .unwrap_or_default()
}

fn worker(url: &str, out: &Path, name: &str, extra: &[&str]) -> Child {
    Command::new(lanes_bin())
        .args(["queue", "work", "--redis", url, "-o"])
        .arg(out)
        .args(["--consumer", name])
        .args(extra)
        .current_dir(repo_root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for a child with a deadline; returns its exit code and stderr.
fn finish(mut c: Child, limit: Duration) -> (Option<i32>, String) {
    let start = Instant::now();
    loop {
        if let Some(st) = c.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            if let Some(mut e) = c.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            return (st.code(), err);
        }
        if start.elapsed() > limit {
            let _ = c.kill();
            panic!("worker did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// (entry id, consumer, deliveries) of every pending entry.
fn pending(con: &mut redis::Connection) -> Vec<(String, String, usize)> {
    let r: redis::streams::StreamPendingCountReply = redis::cmd("XPENDING")
        .arg("lanes")
        .arg("lanes")
        .arg("-")
        .arg("+")
        .arg(100)
        .query(con)
        .unwrap();
    r.ids
        .into_iter()
        .map(|p| (p.id, p.consumer, p.times_delivered))
        .collect()
}

fn status_json(url: &str) -> Value {
    let o = lanes(&["queue", "status", "--redis", url, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn push(url: &str, inputs: &[&str]) {
    let mut a = vec!["queue", "push", "--redis", url];
    a.extend_from_slice(inputs);
    let o = lanes(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn queue_three_workers_one_killed_mid_job_every_job_done_exactly_once() {
    let Some(inputs) = clip_inputs() else { return };
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let out = dir.path().join("out");
    let ins: Vec<&str> = inputs.iter().map(|p| p.to_str().unwrap()).collect();
    push(&server.url, &ins);
    let lease = 3.0;
    let opts = ["--frames", "40", "--lease", "3s", "--drain"];
    let mut con = server.con();
    // Every video of the inputs (the shared data may hold more clips than when this was written).
    let jobs: usize = redis::cmd("XLEN").arg("lanes").query(&mut con).unwrap();
    assert!(jobs >= 8, "{jobs} jobs");
    let mut victim = worker(&server.url, &out, "w1", &opts);
    let others = [
        worker(&server.url, &out, "w2", &opts),
        worker(&server.url, &out, "w3", &opts),
    ];
    // SIGKILL w1 while it holds a job (a worker's job stays pending until its XACK).
    let start = Instant::now();
    let held = loop {
        if let Some(p) = pending(&mut con).into_iter().find(|p| p.1 == "w1") {
            victim.kill().unwrap(); // SIGKILL, mid-job
            break p.0;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "w1 took no job");
        std::thread::sleep(Duration::from_millis(5));
    };
    victim.wait().unwrap();
    let killed_at = Instant::now();
    assert!(
        pending(&mut con).iter().any(|p| p.0 == held && p.1 == "w1"),
        "w1 was killed mid-job"
    );
    // The killed job is taken over once it has been idle for the lease.
    let reclaimed_after = loop {
        let p = pending(&mut con);
        match p.iter().find(|e| e.0 == held) {
            Some(e) if e.1 != "w1" => break killed_at.elapsed().as_secs_f64(),
            None => break killed_at.elapsed().as_secs_f64(), // taken and finished
            _ => {}
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(30),
            "killed job never reclaimed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    eprintln!("reclaim after SIGKILL: {reclaimed_after:.2} s (lease {lease} s)");
    // Margin: the other workers look for idle jobs between their own (40 frames each) and
    // every second while waiting for new ones.
    assert!(
        reclaimed_after <= lease + 4.0,
        "reclaimed after {reclaimed_after:.2} s, lease {lease} s"
    );
    for w in others {
        let (code, err) = finish(w, Duration::from_secs(120));
        assert_eq!(code, Some(0), "{err}");
    }
    // Every job done exactly once: one completion per video, all distinct, all `done` on disk.
    let log: Vec<String> = redis::cmd("LRANGE")
        .arg("lanes:log")
        .arg(0)
        .arg(-1)
        .query(&mut con)
        .unwrap();
    let mut uniq = log.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(log.len(), jobs, "{log:?}");
    assert_eq!(uniq.len(), jobs, "{log:?}");
    for rel in &uniq {
        let s: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(rel).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(s["status"], "done", "{rel}");
        assert_eq!(s["frames"].as_u64().unwrap() as usize, {
            let (r, _) =
                lanes::base::telemetry::read_jsonl(&out.join(rel).join("telemetry.jsonl")).unwrap();
            r.len()
        });
    }
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
    let st = status_json(&server.url);
    assert_eq!(st["done"], jobs);
    assert_eq!(st["waiting"], 0);
    assert_eq!(st["in_flight"].as_array().unwrap().len(), 0);
    assert_eq!(st["dead"].as_array().unwrap().len(), 0);
}

#[test]
fn queue_failing_jobs_end_in_the_dead_letter_stream() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let set = corrupt_set(dir.path());
    let out = dir.path().join("out");
    let missing = dir.path().join("missing.mp4");
    // A missing file is refused at push, as `lanes batch` refuses it, and nothing is pushed.
    let o = lanes(&[
        "queue",
        "push",
        "--redis",
        &server.url,
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("missing.mp4: file not found"),
        "{}",
        stderr(&o)
    );
    // One deleted after it was pushed: the worker meets it missing.
    std::fs::copy(set.join("good.mp4"), &missing).unwrap();
    push(
        &server.url,
        &[
            set.join("noise.mp4").to_str().unwrap(),
            missing.to_str().unwrap(),
            set.join("good.mp4").to_str().unwrap(),
        ],
    );
    std::fs::remove_file(&missing).unwrap();
    let w = worker(
        &server.url,
        &out,
        "w1",
        &[
            "--frames",
            "3",
            "--lease",
            "1s",
            "--max-attempts",
            "2",
            "--drain",
        ],
    );
    let (code, err) = finish(w, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{err}");
    let st = status_json(&server.url);
    assert_eq!(st["done"], 1, "{st}");
    let dead = st["dead"].as_array().unwrap();
    assert_eq!(dead.len(), 2, "{st}");
    let by_rel = |r: &str| dead.iter().find(|d| d["rel"] == r).unwrap().clone();
    // Corrupt input: retried after the lease, dead after K = 2 attempts, with its error.
    let noise = by_rel("noise.mp4");
    assert_eq!(noise["attempts"], 2);
    assert!(noise["error"]
        .as_str()
        .unwrap()
        .contains("cannot open as a video"));
    // A missing file is permanent: dead-lettered at the first attempt.
    let m = by_rel("missing.mp4");
    assert_eq!(m["attempts"], 1);
    assert!(m["error"].as_str().unwrap().contains("file not found"));
    assert!(err.contains("retry") && err.contains("dead"), "{err}");
    assert_eq!(st["in_flight"].as_array().unwrap().len(), 0);
}

#[test]
fn queue_sigterm_stops_a_worker_cleanly_and_the_job_is_taken_over() {
    let Some(video) = data("videos/hortovanyi/project_video_short.mp4") else {
        return;
    };
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let out = dir.path().join("out");
    push(&server.url, &[video.to_str().unwrap()]);
    let w = worker(&server.url, &out, "w1", &["--lease", "30s"]);
    let mut con = server.con();
    let start = Instant::now();
    while pending(&mut con).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(20), "no job taken");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(w.id() as i32, libc::SIGTERM);
    }
    let (code, err) = finish(w, Duration::from_secs(20));
    assert_eq!(code, Some(0), "{err}");
    let rel = "project_video_short.mp4";
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
    assert!(
        !out.join(rel).join("telemetry.jsonl").exists(),
        "no half output"
    );
    // Released at once (not after the 30 s lease): another worker finishes it.
    let t = Instant::now();
    let w2 = worker(&server.url, &out, "w2", &["--lease", "30s", "--drain"]);
    let (code, err) = finish(w2, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(25),
        "job waited for the lease"
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(rel).join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(s["status"], "done");
    assert_eq!(s["frames"], 200);
}

#[test]
fn queue_unreachable_redis_is_a_one_line_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}/");
    let o = lanes(&["queue", "status", "--redis", &url]);
    assert_one_line_error(&o, &url);
    let dir = tmp();
    let out = dir.path().join("out");
    let o = lanes(&[
        "queue",
        "work",
        "--redis",
        &url,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, &url);
}

#[test]
fn queue_job_with_its_own_camera_and_config_matches_lanes_video() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let out = dir.path().join("out");
    let root = repo_root();
    let clip = root.join("test_videos/synthetic_drive.mp4");
    let camera = root.join("calibration/synthetic.yml");
    let config = root.join("test_videos/synthetic_drive.toml");
    let o = lanes(&[
        "queue",
        "push",
        "--redis",
        &server.url,
        "--camera",
        camera.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        clip.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The worker has no --camera/--config of its own: the job's are used.
    let w = worker(&server.url, &out, "w1", &["--frames", "20", "--drain"]);
    let (code, err) = finish(w, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{err}");
    let t = dir.path().join("video.jsonl");
    let o = lanes(&[
        "video",
        clip.to_str().unwrap(),
        "--camera",
        camera.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--no-render",
        "--frames",
        "20",
        "--telemetry",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let got = std::fs::read(out.join("synthetic_drive.mp4/telemetry.jsonl")).unwrap();
    assert_eq!(got, std::fs::read(&t).unwrap());
    // Without the job's camera and config the result would differ (so the test can fail).
    let plain = dir.path().join("plain.jsonl");
    let o = lanes(&[
        "video",
        clip.to_str().unwrap(),
        "--no-render",
        "--frames",
        "20",
        "--telemetry",
        plain.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ne!(got, std::fs::read(&plain).unwrap());
}

/// `n` copies of the synthetic clip (125 frames) under distinct names.
fn copies(dir: &Path, n: usize) -> PathBuf {
    let set = dir.join("clips");
    std::fs::create_dir_all(&set).unwrap();
    let clip = repo_root().join("test_videos/synthetic_drive.mp4");
    for i in 0..n {
        std::fs::copy(&clip, set.join(format!("clip{i}.mp4"))).unwrap();
    }
    set
}

fn alive(c: &mut Child) -> bool {
    c.try_wait().unwrap().is_none()
}

/// Kill Redis, wait `down`, start it again; returns the seconds from its restart until both
/// workers are connected again (any of their connections in CLIENT LIST).
fn outage(server: &mut RedisServer, down: Duration, workers: &[&str]) -> f64 {
    server.kill();
    std::thread::sleep(down);
    server.restart();
    let back = Instant::now();
    loop {
        let names = client_names(&server.url);
        let all = workers.iter().all(|w| {
            names
                .iter()
                .any(|n| n == w || n == &format!("lanes-beat:{w}"))
        });
        if all {
            return back.elapsed().as_secs_f64();
        }
        assert!(
            back.elapsed() < Duration::from_secs(30),
            "workers did not reconnect: {names:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn queue_redis_killed_and_restarted_twice_every_job_done_exactly_once() {
    let dir = tmp();
    let Some(mut server) = RedisServer::start_persistent(dir.path()) else {
        return;
    };
    let set = copies(dir.path(), 8);
    let out = dir.path().join("out");
    push(&server.url, &[set.to_str().unwrap()]);
    let opts = ["--lease", "10s", "--drain"];
    let logs = [dir.path().join("w1.log"), dir.path().join("w2.log")];
    let mut w1 = worker_logged(&server.url, &out, "w1", &opts, &logs[0]);
    let mut w2 = worker_logged(&server.url, &out, "w2", &opts, &logs[1]);
    let mut recoveries = Vec::new();
    for after_done in [1, 4] {
        // Kill mid-run: once `after_done` jobs are recorded (others in progress or waiting).
        let start = Instant::now();
        while done_log(&server.url).len() < after_done {
            assert!(start.elapsed() < Duration::from_secs(60), "no progress");
            std::thread::sleep(Duration::from_millis(20));
        }
        let r = outage(&mut server, Duration::from_secs(2), &["w1", "w2"]);
        assert!(
            alive(&mut w1) && alive(&mut w2),
            "a worker died in the outage"
        );
        recoveries.push(r);
    }
    eprintln!(
        "recovery after each Redis restart (both workers reconnected): {:.2} s, {:.2} s",
        recoveries[0], recoveries[1]
    );
    let (c1, e1) = finish(w1, Duration::from_secs(120));
    let (c2, e2) = finish(w2, Duration::from_secs(120));
    let (e1, e2) = (
        std::fs::read_to_string(&logs[0]).unwrap() + &e1,
        std::fs::read_to_string(&logs[1]).unwrap() + &e2,
    );
    assert_eq!((c1, c2), (Some(0), Some(0)), "{e1}\n{e2}");
    for r in &recoveries {
        assert!(*r <= 10.0, "recovery {r:.2} s; {e1}\n{e2}");
    }
    assert!(
        (e1.clone() + &e2).contains("reconnected after"),
        "no outage logged: {e1}\n{e2}"
    );
    // Every job done exactly once: 8 distinct log entries, each processed by one worker.
    let log = done_log(&server.url);
    let mut uniq = log.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!((log.len(), uniq.len()), (8, 8), "{log:?}");
    for rel in &uniq {
        let runs = (e1.clone() + &e2)
            .lines()
            .filter(|l| l.contains(&format!("] done    {rel}:")))
            .count();
        assert_eq!(runs, 1, "{rel} processed {runs} times: {e1}\n{e2}");
        let s: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(rel).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(s["status"], "done", "{rel}");
        assert_eq!(s["frames"], 125, "{rel}");
        let (recs, _) =
            lanes::base::telemetry::read_jsonl(&out.join(rel).join("telemetry.jsonl")).unwrap();
        assert_eq!(recs.len(), 125, "{rel}");
    }
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
    let st = status_json(&server.url);
    assert_eq!(st["done"], 8, "{st}");
    assert_eq!(st["waiting"], 0);
    assert_eq!(st["in_flight_count"], 0);
    assert_eq!(st["dead_count"], 0);
    assert!(!e1.contains("panicked") && !e2.contains("panicked"));
}

#[test]
fn queue_worker_gives_up_after_the_given_outage() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let out = dir.path().join("out");
    let w = worker(&server.url, &out, "w1", &["--give-up-after", "2s"]);
    let start = Instant::now();
    while !client_names(&server.url).iter().any(|n| n == "w1") {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "worker not connected"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    let killed = Instant::now();
    let (code, err) = finish(w, Duration::from_secs(30));
    let took = killed.elapsed().as_secs_f64();
    assert_eq!(code, Some(2), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with("lanes: ") && last.contains("no connection for"),
        "{err}"
    );
    assert!((2.0..8.0).contains(&took), "gave up after {took:.2} s");
}

/// Send `sig` to a child.
fn signal(c: &Child, sig: i32) {
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(c.id() as i32, sig);
    }
}

/// Poll `f` every 20 ms until it holds; panics after `limit` with `what`.
fn wait_until(limit: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "timed out: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn done_by(url: &str, id: &str) -> Option<String> {
    let mut con = redis::Client::open(url).unwrap().get_connection().ok()?;
    redis::cmd("HGET")
        .arg("lanes:done")
        .arg(id)
        .query(&mut con)
        .ok()
        .flatten()
}

#[test]
fn queue_worker_stopped_past_its_lease_loses_the_job_and_goes_on() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let set = copies(dir.path(), 2);
    let out = dir.path().join("out");
    let mut con = server.con();
    push(&server.url, &[set.join("clip0.mp4").to_str().unwrap()]);
    let opts = ["--lease", "2s"];
    let logs = [dir.path().join("w1.log"), dir.path().join("w2.log")];
    let w1 = worker_logged(&server.url, &out, "w1", &opts, &logs[0]);
    let mut held = String::new();
    wait_until(
        Duration::from_secs(20),
        "w1 takes the job",
        || match pending(&mut con).into_iter().find(|p| p.1 == "w1") {
            Some(p) => {
                held = p.0;
                true
            }
            None => false,
        },
    );
    std::thread::sleep(Duration::from_millis(150));
    signal(&w1, libc::SIGSTOP); // stalled mid-job, alive
    let stopped = Instant::now();
    assert!(
        pending(&mut con).iter().any(|p| p.0 == held && p.1 == "w1"),
        "w1 finished before it was stopped"
    );
    let w2 = worker_logged(&server.url, &out, "w2", &opts, &logs[1]);
    // Stopped for twice the lease: w2 takes the job over once its lease has run out.
    std::thread::sleep(Duration::from_secs(4).saturating_sub(stopped.elapsed()));
    signal(&w1, libc::SIGCONT);
    wait_until(Duration::from_secs(30), "w2 records the job", || {
        done_by(&server.url, &held).as_deref() == Some("w2")
    });
    let log1 = || std::fs::read_to_string(&logs[0]).unwrap();
    wait_until(Duration::from_secs(20), "w1 logs the lost job", || {
        log1().contains("lost")
    });
    signal(&w2, libc::SIGTERM);
    let (code, err2) = finish(w2, Duration::from_secs(20));
    assert_eq!(code, Some(0), "{err2}");
    // The woken worker takes the next job.
    push(&server.url, &[set.join("clip1.mp4").to_str().unwrap()]);
    wait_until(Duration::from_secs(30), "w1 does the next job", || {
        done_log(&server.url).len() == 2
    });
    signal(&w1, libc::SIGTERM);
    let (code, _) = finish(w1, Duration::from_secs(20));
    let (e1, e2) = (log1(), std::fs::read_to_string(&logs[1]).unwrap());
    assert_eq!(code, Some(0), "{e1}");
    eprintln!("w1:\n{e1}w2:\n{e2}");
    let lost_line = e1.lines().find(|l| l.contains("lost")).unwrap();
    assert!(lost_line.contains("clip0.mp4"), "{lost_line}");
    assert!(e1.contains("] done    clip1.mp4:"), "{e1}");
    assert!(e2.contains("] done    clip0.mp4:"), "{e2}");
    assert!(!e1.contains("] done    clip0.mp4"), "{e1}");
    // The job counts once, with w2's complete outputs.
    assert_eq!(done_log(&server.url), ["clip0.mp4", "clip1.mp4"]);
    let st = status_json(&server.url);
    assert_eq!(
        (st["done"].as_u64(), st["in_flight_count"].as_u64()),
        (Some(2), Some(0)),
        "{st}"
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("clip0.mp4/summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        (s["status"].as_str(), s["frames"].as_u64()),
        (Some("done"), Some(125))
    );
    let (recs, _) =
        lanes::base::telemetry::read_jsonl(&out.join("clip0.mp4/telemetry.jsonl")).unwrap();
    assert_eq!(recs.len(), 125);
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
    assert!(!out.join(lanes::fleet::queue::STAGING_DIR).exists());
}

/// Run openssl; `None` (skip, or fail under CI) when it is missing.
fn openssl(dir: &Path, args: &[&str]) -> Option<()> {
    match Command::new("openssl").args(args).current_dir(dir).output() {
        Ok(o) => {
            assert!(o.status.success(), "openssl {args:?}: {}", stderr(&o));
            Some(())
        }
        Err(e) => {
            let msg = format!("openssl not runnable ({e}); scripts/setup.sh installs it");
            if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
                panic!("{msg}");
            }
            eprintln!("SKIP: {msg}");
            None
        }
    }
}

/// A CA, a server certificate it signed for 127.0.0.1 (server.pem, server.key), and a second
/// CA that signed nothing here (other.pem).
fn make_certs(dir: &Path) -> Option<()> {
    let ca = |name: &str| {
        let (key, pem) = (format!("{name}.key"), format!("{name}.pem"));
        let subj = format!("/CN=lanes test {name}");
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &key,
                "-out",
                &pem,
                "-days",
                "2",
                "-subj",
                &subj,
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        )
    };
    ca("ca")?;
    ca("other")?;
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    )?;
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    )
}

#[test]
fn queue_over_tls_with_passwords_and_each_mistake_is_one_line() {
    let dir = tmp();
    let d = dir.path();
    if make_certs(d).is_none() {
        return;
    }
    let (admin_pw, fleet_pw, wrong_pw) = ("adm1n-s3cret-pw", "fleet-pw-7731", "wr0ng-pa55-99");
    let tls_port = free_port().to_string();
    let p = |f: &str| d.join(f).to_str().unwrap().to_string();
    let (cert, key, ca) = (p("server.pem"), p("server.key"), p("ca.pem"));
    let pass = format!(">{fleet_pw}");
    let Some(_server) = RedisServer::start_with(&[
        "--save",
        "",
        "--appendonly",
        "no",
        "--port",
        "0",
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        &cert,
        "--tls-key-file",
        &key,
        "--tls-ca-cert-file",
        &ca,
        "--tls-auth-clients",
        "no",
        "--requirepass",
        admin_pw,
        "--user",
        "fleet",
        "on",
        &pass,
        "~*",
        "&*",
        "+@all",
    ]) else {
        return;
    };
    let host = format!("127.0.0.1:{tls_port}");
    let fleet_url = format!("rediss://fleet:{fleet_pw}@{host}/");
    let out = d.join("out");
    let clip = repo_root().join("test_videos/synthetic_drive.mp4");
    let mut outputs = String::new();
    let mut run = |args: &[&str], env: &[(&str, &str)]| {
        let o = Command::new(lanes_bin())
            .args(args)
            .env_remove("LANES_REDIS_PASSWORD")
            .env_remove("LANES_REDIS_CA")
            .envs(env.iter().copied())
            .current_dir(repo_root())
            .output()
            .unwrap();
        outputs += &(stdout(&o) + &stderr(&o));
        o
    };
    // End to end: an ACL user's password in the URL with a CA file (push, status); the default
    // user's password and the CA from the environment (the worker).
    let o = run(
        &[
            "queue",
            "push",
            "--redis",
            &fleet_url,
            "--redis-ca",
            &ca,
            clip.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(
        &[
            "queue",
            "work",
            "--redis",
            &format!("rediss://{host}/"),
            "-o",
            out.to_str().unwrap(),
            "--frames",
            "20",
            "--drain",
            "--consumer",
            "tls-w1",
        ],
        &[("LANES_REDIS_PASSWORD", admin_pw), ("LANES_REDIS_CA", &ca)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(
        &[
            "queue",
            "status",
            "--redis",
            &fleet_url,
            "--redis-ca",
            &ca,
            "--json",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let st: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(st["done"], 1, "{st}");
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("synthetic_drive.mp4/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        (s["status"].as_str(), s["frames"].as_u64()),
        (Some("done"), Some(20))
    );
    // A worker given the password in its URL does not show it in the process list.
    let mut w = Command::new(lanes_bin())
        .args([
            "queue",
            "work",
            "--redis",
            &fleet_url,
            "--redis-ca",
            &ca,
            "-o",
        ])
        .arg(&out)
        .current_dir(repo_root())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let cmdline = format!("/proc/{}/cmdline", w.id());
    wait_until(Duration::from_secs(10), "worker connected", || {
        client_names_tls(&host, &ca, admin_pw)
            .iter()
            .any(|n| n.starts_with("lanes-beat:"))
    });
    let shown = String::from_utf8_lossy(&std::fs::read(&cmdline).unwrap()).replace('\0', " ");
    signal(&w, libc::SIGTERM);
    let _ = w.wait();
    assert!(
        !shown.contains(fleet_pw) && shown.contains("fleet:"),
        "{shown}"
    );
    // Each mistake: one `lanes:` line, exit 2, the URL printed with its password hidden.
    let wrong_url = format!("rediss://fleet:{wrong_pw}@{host}/");
    let plain_url = format!("redis://fleet:{fleet_pw}@{host}/");
    let other = p("other.pem");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--redis", &wrong_url, "--redis-ca", &ca],
            "AuthenticationFailed",
        ),
        (
            &["--redis", &fleet_url, "--redis-ca", &other],
            "certificate",
        ),
        (&["--redis", &plain_url], "rediss://"),
        (
            &["--redis", &format!("rediss://{host}/"), "--redis-ca", &ca],
            "NOAUTH",
        ),
    ];
    for (conn, needle) in cases {
        let mut args = vec!["queue", "status"];
        args.extend_from_slice(conn);
        let o = run(&args, &[]);
        assert_one_line_error(&o, needle);
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        eprintln!("{}", stderr(&o).trim());
    }
    assert!(outputs.contains("fleet:***@"), "{outputs}");
    // No password anywhere: outputs, the worker's log, status, summaries and telemetry.
    for f in super::batch::files_under(&out) {
        outputs += &std::fs::read_to_string(out.join(f)).unwrap_or_default();
    }
    for pw in [admin_pw, fleet_pw, wrong_pw] {
        assert!(!outputs.contains(pw), "password {pw} printed");
    }
}

/// GET http://ADDR/metrics; name -> value summed over label sets.
fn scrape(addr: &str) -> Option<std::collections::HashMap<String, f64>> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let body = text.split("\r\n\r\n").nth(1)?;
    let mut m = std::collections::HashMap::new();
    for l in body
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (name, value) = l.rsplit_once(' ')?;
        let name = name.split('{').next()?.to_string();
        let le_inf = l.contains("le=\"+Inf\"");
        if name.ends_with("_bucket") && !le_inf {
            continue;
        }
        *m.entry(name).or_insert(0.0) += value.parse::<f64>().ok()?;
    }
    Some(m)
}

#[test]
fn queue_metrics_scraped_during_a_run_match_status() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let set = copies(dir.path(), 4);
    let bad = corrupt_set(dir.path()).join("noise.mp4");
    let out = dir.path().join("out");
    push(&server.url, &[set.to_str().unwrap(), bad.to_str().unwrap()]);
    let addrs = [
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
    ];
    let ws: Vec<Child> = ["w1", "w2"]
        .iter()
        .zip(&addrs)
        .map(|(n, a)| {
            worker(
                &server.url,
                &out,
                n,
                &["--lease", "2s", "--max-attempts", "1", "--metrics", a],
            )
        })
        .collect();
    let total = |name: &str, scrapes: &[std::collections::HashMap<String, f64>]| -> f64 {
        scrapes
            .iter()
            .map(|m| m.get(name).copied().unwrap_or(0.0))
            .sum()
    };
    let mut scrapes = Vec::new();
    let mut saw_busy = false;
    wait_until(Duration::from_secs(90), "5 jobs ended (metrics)", || {
        scrapes = addrs.iter().filter_map(|a| scrape(a)).collect();
        saw_busy |= total("lanes_queue_current_job", &scrapes) > 0.0;
        scrapes.len() == 2
            && total("lanes_queue_jobs_done_total", &scrapes)
                + total("lanes_queue_jobs_dead_total", &scrapes)
                == 5.0
    });
    let st = status_json(&server.url);
    for w in ws {
        signal(&w, libc::SIGTERM);
        let (code, err) = finish(w, Duration::from_secs(20));
        assert_eq!(code, Some(0), "{err}");
    }
    eprintln!("status {st}\nmetrics {scrapes:?}\nsaw a current job: {saw_busy}");
    assert_eq!(
        st["done"].as_f64(),
        Some(total("lanes_queue_jobs_done_total", &scrapes))
    );
    assert_eq!(st["done"], 4);
    assert_eq!(
        st["dead_count"].as_f64(),
        Some(total("lanes_queue_jobs_dead_total", &scrapes))
    );
    assert_eq!(
        st["failed"].as_f64(),
        Some(total("lanes_queue_jobs_failed_total", &scrapes))
    );
    assert_eq!(st["dead_count"], 1);
    assert_eq!(total("lanes_queue_frames_total", &scrapes), 4.0 * 125.0);
    assert_eq!(total("lanes_queue_job_seconds_count", &scrapes), 4.0);
    assert_eq!(total("lanes_queue_job_seconds_bucket", &scrapes), 4.0);
    assert!(total("lanes_queue_job_seconds_sum", &scrapes) > 0.0);
    assert_eq!(total("lanes_queue_redis_reconnects_total", &scrapes), 0.0);
    assert_eq!(total("lanes_queue_redis_connected", &scrapes), 2.0);
    assert_eq!(total("lanes_queue_current_job", &scrapes), 0.0);
}

#[test]
fn batch_input_changed_in_place_with_same_size_and_mtime_is_redone() {
    let dir = tmp();
    let input = dir.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    let clip = input.join("clip.mp4");
    std::fs::copy(repo_root().join("test_videos/synthetic_drive.mp4"), &clip).unwrap();
    let out = dir.path().join("out");
    let run = || {
        let o = lanes(&[
            "batch",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--frames",
            "5",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let b: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("batch.json")).unwrap())
                .unwrap();
        b["videos"][0]["skipped"].as_bool().unwrap()
    };
    assert!(!run());
    assert!(run(), "unchanged input: skipped");
    // Rewritten in place: same size, modification time put back (a byte near the end, in the
    // last MiB that the fingerprint reads).
    let meta = std::fs::metadata(&clip).unwrap();
    let mut bytes = std::fs::read(&clip).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0x55;
    std::fs::write(&clip, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&clip)
        .unwrap()
        .set_modified(meta.modified().unwrap())
        .unwrap();
    let now = std::fs::metadata(&clip).unwrap();
    assert_eq!(
        (now.len(), now.modified().unwrap()),
        (meta.len(), meta.modified().unwrap())
    );
    assert!(
        !run(),
        "changed input with the same size and mtime was skipped"
    );
}

/// A 1 MiB tmpfs at `dir` (root only); `None` with a printed reason elsewhere.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path) -> Option<Self> {
        std::fs::create_dir_all(dir).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir)
            .output();
        match o {
            Ok(o) if o.status.success() => Some(Self(dir.to_path_buf())),
            other => {
                eprintln!("SKIP: cannot mount a small tmpfs (needs root): {other:?}");
                None
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn queue_disk_full_fails_the_job_cleanly_and_it_goes_on_once_space_is_back() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let set = copies(dir.path(), 2);
    let out = dir.path().join("out");
    let Some(_disk) = SmallDisk::mount(&out) else {
        return;
    };
    // Fill the disk but for 8 KiB: the telemetry of 125 frames does not fit.
    let filler = out.join("filler");
    let free = {
        let o = Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(&out)
            .output()
            .unwrap();
        stdout(&o)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse::<usize>()
            .unwrap()
    };
    std::fs::write(&filler, vec![0u8; free - 8192]).unwrap();
    push(&server.url, &[set.join("clip0.mp4").to_str().unwrap()]);
    let log = dir.path().join("w1.log");
    let w = worker_logged(
        &server.url,
        &out,
        "w1",
        // One attempt: the failed job waits in the dead letters (no retry running while the
        // folder is checked); it is pushed again once space is back.
        &["--lease", "1s", "--max-attempts", "1"],
        &log,
    );
    wait_until(Duration::from_secs(60), "a failed attempt", || {
        status_json(&server.url)["dead_count"] == 1
    });
    let st = status_json(&server.url);
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(st["done"], 0, "{st}");
    let files = super::batch::files_under(&out);
    assert!(
        files
            .iter()
            .all(|f| f == "filler" || f.ends_with("summary.json")),
        "partial files left on a full disk: {files:?}"
    );
    // Space is back: the next job goes on, and so does the failed one, pushed again.
    std::fs::remove_file(&filler).unwrap();
    push(&server.url, &[set.join("clip1.mp4").to_str().unwrap()]);
    push(&server.url, &[set.join("clip0.mp4").to_str().unwrap()]);
    wait_until(Duration::from_secs(60), "both jobs done", || {
        status_json(&server.url)["done"] == 2
    });
    signal(&w, libc::SIGTERM);
    let (code, rest) = finish(w, Duration::from_secs(20));
    assert_eq!(code, Some(0), "{rest}");
    eprintln!("{}", std::fs::read_to_string(&log).unwrap());
    for rel in ["clip0.mp4", "clip1.mp4"] {
        let s: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(rel).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (s["status"].as_str(), s["frames"].as_u64()),
            (Some("done"), Some(125))
        );
    }
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
}

/// Client names on a TLS server (as the default user).
fn client_names_tls(host: &str, ca: &str, pw: &str) -> Vec<String> {
    let info = format!("rediss://:{pw}@{host}/");
    let certs = redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(std::fs::read(ca).unwrap()),
    };
    let Ok(mut con) = redis::Client::build_with_tls(info.as_str(), certs)
        .unwrap()
        .get_connection()
    else {
        return Vec::new();
    };
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut con)
        .unwrap_or_default();
    list.lines()
        .filter_map(|l| l.split(' ').find_map(|f| f.strip_prefix("name=")))
        .map(str::to_string)
        .collect()
}

#[test]
fn batch_on_a_full_disk_fails_each_video_cleanly_and_a_rerun_completes() {
    let dir = tmp();
    let set = copies(dir.path(), 2);
    let out = dir.path().join("out");
    let Some(_disk) = SmallDisk::mount(&out) else {
        return;
    };
    let filler = out.join("filler");
    let free = {
        let o = Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(&out)
            .output()
            .unwrap();
        stdout(&o)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse::<usize>()
            .unwrap()
    };
    std::fs::write(&filler, vec![0u8; free - 8192]).unwrap();
    let run = || lanes(&["batch", set.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let o = run();
    let err = stderr(&o);
    eprintln!("{err}");
    assert!(matches!(o.status.code(), Some(1) | Some(2)), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
    for rel in ["clip0.mp4", "clip1.mp4"] {
        assert!(!out.join(rel).join("telemetry.jsonl").exists(), "{rel}");
    }
    std::fs::remove_file(&filler).unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for rel in ["clip0.mp4", "clip1.mp4"] {
        let s: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(rel).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (s["status"].as_str(), s["frames"].as_u64()),
            (Some("done"), Some(125))
        );
    }
}

/// A truncated input (an MP4 with its index at the front, cut to 60% of its bytes): every
/// attempt fails, and the dead job's folder holds what its `summary.json` lists (the
/// telemetry up to the cut), as `lanes batch` keeps it. Before, only the summary was
/// published, listing a telemetry file that was not there.
#[test]
fn a_dead_truncated_job_keeps_the_outputs_its_summary_lists() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tmp();
    let clip = repo_root().join("test_videos/synthetic_drive.mp4");
    let fs = dir.path().join("fs.mp4");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(&clip)
        .args(["-c", "copy", "-movflags", "+faststart"])
        .arg(&fs)
        .status()
        .expect("ffmpeg is installed");
    assert!(st.success());
    let bytes = std::fs::read(&fs).unwrap();
    let cut = dir.path().join("cut.mp4");
    std::fs::write(&cut, &bytes[..bytes.len() * 6 / 10]).unwrap();
    push(&server.url, &[cut.to_str().unwrap()]);
    let out = dir.path().join("out");
    let w = worker(
        &server.url,
        &out,
        "w1",
        &["--render", "none", "--max-attempts", "1", "--drain"],
    );
    let (code, err) = finish(w, Duration::from_secs(120));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("dead") && err.contains("decoding stopped"),
        "{err}"
    );
    let folder = out.join("cut.mp4");
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("summary.json")).unwrap())
            .unwrap();
    let listed = summary["outputs"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{summary}");
    for f in listed {
        assert!(
            folder.join(f.as_str().unwrap()).is_file(),
            "{f} listed, missing"
        );
    }
}
