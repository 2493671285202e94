//! `lanes queue`: real `redis-server` on a free loopback port (no persistence), real workers.
//! Three workers on 8 jobs with one SIGKILLed mid-job; dead letters after K attempts; SIGTERM;
//! an unreachable server.

use super::batch::{clip_inputs, corrupt_set, partials_under};
use super::*;
use serde_json::Value;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of our own, stopped on drop.
struct RedisServer {
    child: Child,
    url: String,
}

impl RedisServer {
    /// Start one on a free port; `None` (skip, or fail under CI) when redis-server is missing.
    fn start() -> Option<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
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
        let url = format!("redis://127.0.0.1:{port}/");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Self { child, url })
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
    // Every job done exactly once: 8 completions, 8 distinct videos, all `done` on disk.
    let log: Vec<String> = redis::cmd("LRANGE")
        .arg("lanes:log")
        .arg(0)
        .arg(-1)
        .query(&mut con)
        .unwrap();
    let mut uniq = log.clone();
    uniq.sort();
    uniq.dedup();
    let n = super::batch::clip_count();
    assert_eq!(log.len(), n, "{log:?}");
    assert_eq!(uniq.len(), n, "{log:?}");
    for rel in &uniq {
        let s: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(rel).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(s["status"], "done", "{rel}");
        assert_eq!(s["frames"].as_u64().unwrap() as usize, {
            let (r, _) =
                lanes::telemetry::read_jsonl(&out.join(rel).join("telemetry.jsonl")).unwrap();
            r.len()
        });
    }
    assert!(
        partials_under(&out).is_empty(),
        "{:?}",
        partials_under(&out)
    );
    let st = status_json(&server.url);
    assert_eq!(st["done"], n);
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
    push(
        &server.url,
        &[
            set.join("noise.mp4").to_str().unwrap(),
            missing.to_str().unwrap(),
            set.join("good.mp4").to_str().unwrap(),
        ],
    );
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
