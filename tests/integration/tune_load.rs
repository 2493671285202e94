//! Integration test: the tuner under load. Eight clients send 200 requests each at once:
//! previews with random parameter values (in range, out of range, wrong type, huge), bodies
//! over 1 MB (413) and malformed JSON (400), with a known-good preview every tenth request. The
//! server must answer every request with a status it documents (200, 400, 413; never 5xx or a
//! dropped connection), give the known-good preview the same answer every time, keep its peak
//! memory bounded (VmHWM from /proc), and stop cleanly on SIGINT (no panic).

use super::tune::{http, TuneServer};
use super::{data, tmp};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const CLIENTS: usize = 8;
const REQUESTS: usize = 200;

/// VmHWM / VmRSS of a process, kB.
fn mem_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// POST a raw body; the status, or `None` when the connection failed before a status line.
/// (An oversized body may be refused before it is all sent: write errors are not failures.)
fn post_raw(host: &str, body: &[u8]) -> (Option<u16>, String) {
    let Ok(mut s) = TcpStream::connect(host) else {
        return (None, "connect failed".into());
    };
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let head = format!(
        "POST /api/preview HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes()).and_then(|_| s.write_all(body));
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok());
    (status, text)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Random parameters: mostly in range, some out of range, of the wrong type or huge.
fn random_params(specs: &[Value], rng: &mut Rng) -> Value {
    let mut m = serde_json::Map::new();
    for _ in 0..1 + rng.below(3) {
        let s = &specs[rng.below(specs.len() as u64) as usize];
        let key = s["key"].as_str().unwrap().to_string();
        let (min, max) = (s["min"].as_i64().unwrap(), s["max"].as_i64().unwrap());
        let v = match (s["kind"].as_str().unwrap(), rng.below(20)) {
            ("bool", 0) => json!("yes"),
            ("bool", _) => json!(rng.below(2) == 1),
            (_, 0) => json!(max + 1 + rng.below(1000) as i64),
            (_, 1) => json!(min - 1 - rng.below(1000) as i64),
            (_, 2) => json!("nan"),
            (_, 3) => json!(1e308),
            (_, 4) => json!(-0.5),
            _ => json!(min + rng.below((max - min + 1) as u64) as i64),
        };
        m.insert(key, v);
    }
    Value::Object(m)
}

#[test]
fn tune_under_load_answers_every_request_with_bounded_memory() {
    let Some(dir) = data("udacity/test_images") else {
        return;
    };
    let t = tmp();
    let srv = TuneServer::start(&[dir.to_str().unwrap()], t.path());
    let pid = srv.pid();
    let state = srv.get("/api/state").json();
    let specs: Vec<Value> = state["specs"].as_array().unwrap().clone();
    let n_stills = state["stills"].as_array().unwrap().len();
    let good = json!({ "params": {}, "stills": [0], "scale": 4 });
    let baseline = srv.post("api/preview", &good);
    assert_eq!(baseline.status, 200, "{}", baseline.text());
    let want = baseline.json()["stills"][0]["mask_pixels"].clone();
    let (host, _) = http::split_url(&srv.url);
    let url = srv.url.clone();
    // Warm-up: one preview of every still (the per-still caches are built once).
    for i in 0..n_stills {
        assert_eq!(
            srv.post(
                "api/preview",
                &json!({ "params": {}, "stills": [i], "scale": 4 })
            )
            .status,
            200
        );
    }
    let warm_kb = mem_kb(pid, "VmHWM:");
    let t0 = Instant::now();
    let results: Vec<(BTreeMap<String, usize>, Vec<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (host, url, want, specs, good) = (&host, &url, &want, &specs, &good);
                s.spawn(move || {
                    let mut rng = Rng(0x9E37_79B9 + c as u64 * 7919);
                    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
                    let mut problems = Vec::new();
                    for i in 0..REQUESTS {
                        let (kind, status, text) = match i % 10 {
                            0 => {
                                let r = http::post_json(&format!("{url}api/preview"), good);
                                let same = r.status == 200
                                    && r.json()["stills"][0]["mask_pixels"] == *want;
                                if !same {
                                    problems.push(format!(
                                        "known-good preview: {} {}",
                                        r.status,
                                        r.text()
                                    ));
                                }
                                ("known-good", Some(r.status), String::new())
                            }
                            1 => {
                                // Over 1 MB: a long but valid JSON string.
                                let big = format!(
                                    "{{\"params\": {{}}, \"stills\": [0], \"pad\": \"{}\"}}",
                                    "x".repeat((1 << 20) + 1000)
                                );
                                let (st, text) = post_raw(host, big.as_bytes());
                                if st != Some(413) {
                                    problems.push(format!("oversized body: {st:?}"));
                                }
                                ("oversized", st, text)
                            }
                            2 => {
                                let cut = rng.below(40) as usize;
                                let body =
                                    &br#"{"params": {"threshold.l_min": 200}, "stills": [0]}"#
                                        [..cut];
                                let (st, text) = post_raw(host, body);
                                if st != Some(400) {
                                    problems.push(format!("malformed JSON {cut}: {st:?}"));
                                }
                                ("malformed", st, text)
                            }
                            _ => {
                                let still = rng.below(n_stills as u64 + 1) as usize;
                                let body = json!({
                                    "params": random_params(specs, &mut rng),
                                    "stills": [still],
                                    "scale": 4,
                                });
                                let r = http::post_json(&format!("{url}api/preview"), &body);
                                if !(r.status == 200 || r.status == 400) {
                                    problems.push(format!("{body}: {} {}", r.status, r.text()));
                                }
                                if r.status == 400 && r.json()["error"].as_str().is_none() {
                                    problems.push(format!("{body}: 400 without a message"));
                                }
                                ("random", Some(r.status), String::new())
                            }
                        };
                        let _ = text;
                        let key = format!(
                            "{kind} {}",
                            status.map(|s| s.to_string()).unwrap_or("no answer".into())
                        );
                        *counts.entry(key).or_default() += 1;
                    }
                    (counts, problems)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let secs = t0.elapsed().as_secs_f64();
    let peak_kb = mem_kb(pid, "VmHWM:");
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    for (c, p) in results {
        for (k, n) in c {
            *counts.entry(k).or_default() += n;
        }
        problems.extend(p);
    }
    let total: usize = counts.values().sum();
    let errors: usize = counts
        .iter()
        .filter(|(k, _)| !k.ends_with(" 200"))
        .map(|(_, n)| n)
        .sum();
    eprintln!(
        "tuner load: {total} requests from {CLIENTS} clients in {secs:.1} s; {errors} answered with an error status; peak RSS {:.1} MB after warm-up, {:.1} MB at the end; {counts:?}",
        warm_kb as f64 / 1024.0,
        peak_kb as f64 / 1024.0
    );
    assert_eq!(total, CLIENTS * REQUESTS);
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // Bounded: the load may add the working sets of the concurrent previews, not a leak per
    // request (1600 requests, 160 of them over 1 MB).
    assert!(
        peak_kb < warm_kb * 2 + 64 * 1024,
        "peak RSS grew from {warm_kb} kB to {peak_kb} kB"
    );
    // Still answering after the load, with the same numbers.
    let after = srv.post("api/preview", &good);
    assert_eq!(after.status, 200);
    assert_eq!(after.json()["stills"][0]["mask_pixels"], want);
    srv.stop();
}
