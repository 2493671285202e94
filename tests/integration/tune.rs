//! Integration tests: `lanes tune`, over HTTP (the server started as the real binary on a free
//! port), the headless sweep, and one end-to-end test in headless Chromium (`tune/browser.rs`).
//!
//! Numbers are checked against the stills pipeline (`lanes image --json` on the same images
//! must give the same pixel counts and radii as the tuner's previews) and against the
//! monotonic effect of a threshold (a lower `l_min` keeps more pixels). Preview latency is
//! printed, never asserted.

use super::{assert_one_line_error, data, lanes, lanes_bin, repo_root, stdout, tmp};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) mod browser;
pub mod http;

/// A running `lanes tune` server; stopped with SIGINT on `stop()` (killed on drop otherwise).
pub struct TuneServer {
    child: Option<Child>,
    pub url: String,
}

impl TuneServer {
    /// Start `lanes tune --port 0 ARGS...` in `cwd` and wait for the URL it prints.
    pub fn start(args: &[&str], cwd: &Path) -> TuneServer {
        Self::start_preset("reference", args, cwd)
    }

    pub fn start_preset(preset: &str, args: &[&str], cwd: &Path) -> TuneServer {
        // The tuner's mechanics are tested on the reference rule's `l_min` (a plain monotonic
        // threshold); `tune_local_contrast_slider_follows_the_default_rule` covers the default.
        let mut child = Command::new(lanes_bin())
            .arg("tune")
            .args(["--preset", preset, "--port", "0"])
            .args(args)
            .current_dir(cwd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start lanes tune");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        if !line.starts_with("http://127.0.0.1:") {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("lanes tune did not print its URL: {line:?}; stderr: {err}");
        }
        TuneServer {
            child: Some(child),
            url: line.trim().to_string(),
        }
    }

    pub fn get(&self, path: &str) -> http::Response {
        http::get(&format!("{}{}", self.url, path.trim_start_matches('/')))
    }

    pub fn post(&self, path: &str, v: &Value) -> http::Response {
        http::post_json(&format!("{}{}", self.url, path.trim_start_matches('/')), v)
    }

    /// Previews of `stills` with `params`; panics unless 200.
    pub fn preview(&self, params: Value, stills: &[usize]) -> Value {
        let r = self.post(
            "api/preview",
            &json!({ "params": params, "stills": stills }),
        );
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// CPU time (user + system) the server has used so far, ms; `None` off Linux.
    pub fn cpu_ms(&self) -> Option<f64> {
        let pid = self.child.as_ref()?.id();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the `(comm)`: state is field 3, utime 14, stime 15 (in clock ticks).
        let rest = stat.rsplit_once(')')?.1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
        Some(ticks * 10.0) // USER_HZ is 100 on Linux
    }

    /// Ctrl-C (SIGINT): the server must exit 0 and say it stopped. Returns its stderr.
    pub fn stop(mut self) -> String {
        let mut child = self.child.take().unwrap();
        let ok = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "lanes tune did not stop within 20 s of SIGINT"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert_eq!(
            status.code(),
            Some(0),
            "exit status after SIGINT; stderr: {err}"
        );
        assert!(err.contains("lanes tune: stopped"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        err
    }
}

impl Drop for TuneServer {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn udacity() -> Option<PathBuf> {
    data("udacity/test_images")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

#[test]
fn tune_serves_page_assets_and_state() {
    let Some(dir) = udacity() else { return };
    let t = tmp();
    let srv = TuneServer::start(&[s(&dir)], t.path());
    let page = srv.get("/");
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    let html = page.text();
    assert!(
        html.contains("<script src=\"/app.js\">") && html.contains("/app.css"),
        "{html}"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page must not load anything from outside"
    );
    for (path, ct) in [("/app.js", "text/javascript"), ("/app.css", "text/css")] {
        let r = srv.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert!(r.header("content-type").unwrap().starts_with(ct), "{path}");
        assert!(
            !r.text().contains("https://"),
            "{path} loads something from outside"
        );
    }
    let st = srv.get("/api/state").json();
    let names: Vec<&str> = st["stills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "straight_lines1.jpg",
            "straight_lines2.jpg",
            "test1.jpg",
            "test2.jpg",
            "test3.jpg",
            "test4.jpg",
            "test5.jpg",
            "test6.jpg"
        ]
    );
    assert_eq!(st["loaded"]["threshold.l_min"], 220);
    assert_eq!(
        st["loaded"]["perspective.src"],
        json!([
            [575.0, 464.0],
            [707.0, 464.0],
            [258.0, 682.0],
            [1049.0, 682.0]
        ])
    );
    assert_eq!(st["save_to"], "lanes.toml");
    let keys: Vec<&str> = st["specs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    for k in [
        "threshold.l_min",
        "threshold.b_scale_gate",
        "threshold.sobel_enabled",
        "threshold.s_max",
        "search.windows",
        "search.min_pixels",
        "search.prior_margin",
    ] {
        assert!(keys.contains(&k), "{k} not tunable: {keys:?}");
    }
    // A request under another host name (a page elsewhere, DNS rebinding) is refused.
    let (host, _) = http::split_url(&srv.url);
    let mut c = TcpStream::connect(&host).unwrap();
    c.write_all(b"GET /api/state HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert_eq!(srv.get("/nope").status, 404);
    assert_eq!(srv.get("/api/save").status, 405);
    let frame = srv.get("/api/frame/2?scale=2");
    assert_eq!(frame.status, 200);
    assert_eq!(frame.header("content-type"), Some("image/jpeg"));
    let img = image::load_from_memory(&frame.body).unwrap();
    assert_eq!((img.width(), img.height()), (640, 360));
    srv.stop();
}

/// Under the default rule (local contrast) the tuner's contrast slider acts on the mask: a
/// lower `l_contrast_min` keeps more pixels on every still, a higher one fewer, and a still's
/// numbers equal `lanes image --json`'s (the same pipeline).
#[test]
fn tune_local_contrast_slider_follows_the_default_rule() {
    let Some(dir) = udacity() else { return };
    let t = tmp();
    let srv = TuneServer::start_preset("robust", &[s(&dir)], t.path());
    let all: Vec<usize> = (0..8).collect();
    let st = srv.get("/api/state").json();
    assert_eq!(st["loaded"]["threshold.global_max"], false);
    let counts = |v: i64| -> Vec<f64> {
        let p = srv.preview(json!({ "threshold.l_contrast_min": v }), &all);
        p["stills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| num(x, "mask_pixels"))
            .collect()
    };
    let (lo, mid, hi) = (counts(5), counts(15), counts(60));
    for i in 0..8 {
        assert!(
            lo[i] >= mid[i] && mid[i] > hi[i],
            "still {i}: contrast 5/15/60 gives {}/{}/{} mask pixels",
            lo[i],
            mid[i],
            hi[i]
        );
    }
    let base = srv.preview(json!({}), &[2]);
    let still = &base["stills"][0];
    srv.stop();
    let out = tmp();
    let o = lanes(&[
        "image",
        s(&dir.join("test1.jpg")),
        "-o",
        s(out.path()),
        "--json",
    ]);
    let rec: Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert_eq!(still["name"], "test1.jpg");
    assert_eq!(still["left_found"], !rec["left_fit"].is_null());
    assert_eq!(still["right_found"], !rec["right_fit"].is_null());
    if let (Some(a), Some(b)) = (still["offset_m"].as_f64(), rec["offset_m"].as_f64()) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
}

/// The tuner's numbers are those of the stills pipeline (`lanes image --json`) for the same
/// config, and lowering `l_min` adds mask pixels on every still and changes the mask picture.
#[test]
fn tune_preview_matches_stills_pipeline_and_mask_follows_threshold() {
    let Some(dir) = udacity() else { return };
    let t = tmp();
    let srv = TuneServer::start(&[s(&dir)], t.path());
    let all: Vec<usize> = (0..8).collect();
    let base = srv.preview(json!({}), &all);
    let out = t.path().join("img");
    // The server runs the reference preset (see `TuneServer::start`).
    let o = lanes(&[
        "image",
        "--preset",
        "reference",
        s(&dir),
        "-o",
        s(&out),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
    let records: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 8);
    for (p, r) in base["stills"].as_array().unwrap().iter().zip(&records) {
        assert!(r["file"]
            .as_str()
            .unwrap()
            .ends_with(p["name"].as_str().unwrap()));
        assert_eq!(p["error"], Value::Null);
        assert_eq!(p["left_pixels"], r["left_pixels"], "{}", p["name"]);
        assert_eq!(p["right_pixels"], r["right_pixels"], "{}", p["name"]);
        for (a, b) in [
            ("radius_m", "radius_m"),
            ("offset_m", "offset_m"),
            ("lane_width_m", "lane_width_m"),
        ] {
            let (x, y) = (num(p, a), num(r, b));
            assert!(
                (x - y).abs() <= 1e-9 * y.abs().max(1.0),
                "{} {a}: tune {x} vs image {y}",
                p["name"]
            );
        }
        assert_eq!(p["left_found"], true);
        assert_eq!(p["right_found"], true);
        for pic in ["overlay", "mask", "search"] {
            assert!(
                p[pic]
                    .as_str()
                    .unwrap()
                    .starts_with("data:image/jpeg;base64,"),
                "{pic}"
            );
        }
    }
    // One still's previews are a third of 1280x720.
    let b64 = base["stills"][0]["mask"]
        .as_str()
        .unwrap()
        .trim_start_matches("data:image/jpeg;base64,");
    use base64::Engine;
    let jpeg = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let img = image::load_from_memory(&jpeg).unwrap();
    assert_eq!((img.width(), img.height()), (426, 240));

    let lower = srv.preview(json!({ "threshold.l_min": 150 }), &all);
    for (a, b) in base["stills"]
        .as_array()
        .unwrap()
        .iter()
        .zip(lower["stills"].as_array().unwrap())
    {
        let (m0, m1) = (num(a, "mask_pixels"), num(b, "mask_pixels"));
        assert!(
            m1 > m0 * 1.1,
            "{}: l_min 150 gives {m1} mask pixels, 220 gives {m0}",
            a["name"]
        );
        assert_ne!(
            a["mask"], b["mask"],
            "{}: mask picture unchanged",
            a["name"]
        );
    }
    // Back to the defaults gives back exactly the first numbers (no state leaks between sets).
    let again = srv.preview(json!({ "threshold.l_min": 220 }), &all);
    for (a, b) in base["stills"]
        .as_array()
        .unwrap()
        .iter()
        .zip(again["stills"].as_array().unwrap())
    {
        assert_eq!(a["mask_pixels"], b["mask_pixels"]);
        assert_eq!(a["left_pixels"], b["left_pixels"]);
    }
    srv.stop();
}

#[test]
fn tune_bad_values_answer_400_with_the_message_and_the_server_goes_on() {
    let Some(dir) = udacity() else { return };
    let t = tmp();
    let srv = TuneServer::start(&[s(&dir)], t.path());
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({ "params": { "threshold.l_min": 300 }, "stills": [0] }),
            "config threshold.l_min = 300 (expected an integer in 0..=255)",
        ),
        (
            json!({ "params": { "threshold.l_min": 255 }, "stills": [0] }),
            "config threshold.l_min = 255 (expected less than threshold.l_max = 255)",
        ),
        (
            json!({ "params": { "search.windows": 0 }, "stills": [0] }),
            "config search.windows = 0 (expected an integer in 1..=50)",
        ),
        (
            json!({ "params": { "search.margin": "wide" }, "stills": [0] }),
            "config search.margin = \"wide\" (expected an integer in 1..=1000)",
        ),
        (
            json!({ "params": { "threshold.l_mn": 3 }, "stills": [0] }),
            "unknown parameter `threshold.l_mn`",
        ),
        (
            json!({ "params": { "perspective.src": [[600, 450], [600, 450], [600, 450], [600, 450]] }, "stills": [0] }),
            // Refused by the config check, naming the key (a line or a bow-tie).
            "config perspective.src = [[600.0, 450.0], [600.0, 450.0], [600.0, 450.0], [600.0, 450.0]] (expected a convex quad",
        ),
        (
            json!({ "params": { "perspective.src": [[1, 2]] }, "stills": [0] }),
            "config perspective.src = [[1,2]]",
        ),
        (
            json!({ "params": {}, "stills": [8] }),
            "no still number 8 (have 8)",
        ),
        (
            json!({ "params": {}, "stills": [0], "scale": 0 }),
            "scale = 0 (expected 1..=16)",
        ),
        (json!({ "stils": [0] }), "bad request body"),
    ];
    for (body, msg) in &cases {
        let r = srv.post("api/preview", body);
        assert_eq!(r.status, 400, "{body}: {}", r.text());
        let err = r.json()["error"].as_str().unwrap().to_string();
        assert!(err.contains(msg), "{body}: got {err:?}, expected {msg:?}");
    }
    let r = http::request(
        "POST",
        &format!("{}api/preview", srv.url),
        Some("application/json"),
        b"{not json",
    );
    assert_eq!(r.status, 400);
    let r = http::request(
        "POST",
        &format!("{}api/preview", srv.url),
        Some("text/plain"),
        b"{}",
    );
    assert_eq!(r.status, 415, "{}", r.text());
    // Save refuses bad values too, and writes nothing.
    let r = srv.post("api/save", &json!({ "params": { "threshold.b_min": 255 } }));
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("threshold.b_min = 255"),
        "{}",
        r.text()
    );
    assert!(!t.path().join("lanes.toml").exists());
    // Still alive and correct.
    let ok = srv.preview(json!({ "threshold.l_min": 200 }), &[2]);
    assert!(num(&ok["stills"][0], "mask_pixels") > 0.0);
    srv.stop();
}

#[test]
fn tune_save_writes_only_changed_values_and_reloads() {
    let Some(dir) = udacity() else { return };
    let t = tmp();
    let saved = t.path().join("tuned.toml");
    let srv = TuneServer::start(&[s(&dir), "--save-to", s(&saved)], t.path());
    let params = json!({
        "threshold.l_min": 200,
        "threshold.b_min": 190,
        "search.windows": 12,
        "perspective.src": [[570.0, 466.0], [707.0, 464.0], [258.0, 682.0], [1049.0, 682.0]],
    });
    let r = srv.post("api/save", &json!({ "params": params }));
    assert_eq!(r.status, 200, "{}", r.text());
    let text = std::fs::read_to_string(&saved).unwrap();
    assert_eq!(r.json()["text"].as_str().unwrap(), text);
    let body: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(
        body,
        [
            "[threshold]",
            "l_min = 200",
            "method = \"global_max\"",
            "smooth_noise = false",
            "[perspective]",
            "src = [[570.0, 466.0], [707.0, 464.0], [258.0, 682.0], [1049.0, 682.0]]",
            "dst = [[450.0, 0.0], [830.0, 0.0], [450.0, 720.0], [830.0, 720.0]]",
            "birdseye_scale_x = 1.0",
            "birdseye_scale_y = 0.5",
            "[search]",
            "windows = 12",
            "band_min_source_rows = 0.0",
            "robust = false",
            "occluder_share = 0.0",
            "[tracking]",
            "method = \"average\"",
            "online_pitch = false",
            "restart_at_cuts = false",
            "[confidence]",
            "min_line = 0.0",
            "[units]",
            "xm_per_px = 0.009788359788359789",
            "ym_per_px = 0.03048"
        ],
        "{text}"
    );
    assert!(
        text.starts_with("# lanes configuration written by `lanes tune`"),
        "{text}"
    );
    srv.stop();

    // The file loads (lanes config --check) and a new session starts from it and saves back to it.
    let o = lanes(&["config", "--check", s(&saved)]);
    assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
    assert!(stdout(&o).contains("l_min = 200"));
    let srv = TuneServer::start(&["--config", s(&saved), s(&dir)], t.path());
    let st = srv.get("/api/state").json();
    assert_eq!(st["loaded"]["threshold.l_min"], 200);
    assert_eq!(st["loaded"]["search.windows"], 12);
    assert_eq!(st["loaded"]["perspective.src"][0], json!([570.0, 466.0]));
    assert_eq!(st["save_to"], s(&saved));
    // An empty parameter set means "the loaded config": saving it keeps the file's values.
    let r = srv.post("api/save", &json!({ "params": {} }));
    assert_eq!(r.status, 200);
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), text);
    srv.stop();
}

/// Four clients at once, plus connections dropped mid-request and mid-response (a closed
/// tab): every answer is the one a lone request gets, the server keeps going and stops on SIGINT.
#[test]
fn tune_concurrent_requests_and_dropped_connections() {
    let Some(dir) = udacity() else { return };
    let t = tmp();
    let srv = TuneServer::start(&[s(&dir)], t.path());
    let values = [160, 190, 220, 240];
    let alone: Vec<Value> = values
        .iter()
        .map(|v| srv.preview(json!({ "threshold.l_min": v }), &[0, 3, 6]))
        .collect();
    let url = srv.url.clone();
    let handles: Vec<_> = values
        .iter()
        .map(|&v| {
            let url = url.clone();
            std::thread::spawn(move || {
                (0..3)
                    .map(|_| {
                        let r = http::post_json(
                            &format!("{url}api/preview"),
                            &json!({ "params": { "threshold.l_min": v }, "stills": [0, 3, 6] }),
                        );
                        assert_eq!(r.status, 200, "{}", r.text());
                        r.json()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    // Meanwhile: a request cut off halfway, and one whose answer is never read.
    let (host, _) = http::split_url(&url);
    let mut half = TcpStream::connect(&host).unwrap();
    half.write_all(b"POST /api/preview HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"par").unwrap();
    drop(half);
    let mut gone = TcpStream::connect(&host).unwrap();
    let body = json!({ "params": {}, "stills": [0, 1, 2, 3, 4, 5, 6, 7] }).to_string();
    write!(gone, "POST /api/preview HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    drop(gone);
    for (h, want) in handles.into_iter().zip(&alone) {
        for got in h.join().unwrap() {
            for (g, w) in got["stills"]
                .as_array()
                .unwrap()
                .iter()
                .zip(want["stills"].as_array().unwrap())
            {
                assert_eq!(g["mask_pixels"], w["mask_pixels"]);
                assert_eq!(g["left_pixels"], w["left_pixels"]);
                assert_eq!(g["right_pixels"], w["right_pixels"]);
            }
        }
    }
    // Lower l_min, more mask pixels: 160 > 190 > 220 > 240 on each still.
    for k in 0..3 {
        let m: Vec<f64> = alone
            .iter()
            .map(|a| num(&a["stills"][k], "mask_pixels"))
            .collect();
        assert!(
            m.windows(2).all(|w| w[0] > w[1]),
            "mask pixels by l_min {values:?}: {m:?}"
        );
    }
    assert_eq!(srv.get("/api/state").status, 200);
    srv.stop();
}

/// Preview latency for 12 stills at 1280x720 (printed; the page's target is 300 ms).
#[test]
fn tune_preview_latency_12_stills() {
    let (Some(a), Some(b)) = (udacity(), data("frames/ysono/test_images")) else {
        return;
    };
    let t = tmp();
    let srv = TuneServer::start(&[s(&a), s(&b)], t.path());
    let all: Vec<usize> = (0..12).collect();
    let t0 = Instant::now();
    let first = srv.preview(json!({}), &all);
    let cold = t0.elapsed().as_secs_f64() * 1e3;
    assert_eq!(first["stills"].as_array().unwrap().len(), 12);
    for p in first["stills"].as_array().unwrap() {
        assert_eq!(
            (p["width"].as_i64(), p["height"].as_i64()),
            (Some(1280), Some(720)),
            "{}",
            p["name"]
        );
    }
    let time = |params: Value| {
        let t0 = Instant::now();
        let r = srv.preview(params, &all);
        (t0.elapsed().as_secs_f64() * 1e3, num(&r, "ms"))
    };
    let cpu0 = srv.cpu_ms();
    let mut thr = Vec::new();
    for v in [200, 205, 210, 215, 225, 230] {
        thr.push(time(
            json!({ "threshold.l_min": v, "search.margin": 60 + v / 5 }),
        ));
    }
    let cpu1 = srv.cpu_ms();
    let mut persp = Vec::new();
    for dx in [1.0, 2.0, 3.0, 4.0] {
        persp.push(time(json!({ "perspective.src": [[575.0 - dx, 464.0], [707.0 + dx, 464.0], [258.0, 682.0], [1049.0, 682.0]] })));
    }
    let cpu2 = srv.cpu_ms();
    // Server CPU time per request: what the work costs, whatever else the machine is doing.
    let per = |a: Option<f64>, b: Option<f64>, n: usize| match (a, b) {
        (Some(a), Some(b)) => format!("{:.0} ms", (b - a) / n as f64),
        _ => "n/a".to_string(),
    };
    let med = |v: &[(f64, f64)]| {
        let mut x: Vec<f64> = v.iter().map(|p| p.0).collect();
        x.sort_by(|a, b| a.partial_cmp(b).unwrap());
        x[x.len() / 2]
    };
    let fmt = |v: &[(f64, f64)]| {
        v.iter()
            .map(|(rt, sv)| format!("{rt:.0} ({sv:.0})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("tune latency, 12 stills 1280x720, previews at 1/3: first request (decode + warp) {cold:.0} ms");
    println!(
        "  threshold/search change, round trip (server) ms: {}; median {:.0} ms; server CPU {} per request",
        fmt(&thr),
        med(&thr),
        per(cpu0, cpu1, thr.len())
    );
    println!(
        "  perspective change,      round trip (server) ms: {}; median {:.0} ms; server CPU {} per request",
        fmt(&persp),
        med(&persp),
        per(cpu1, cpu2, persp.len())
    );
    srv.stop();
}

#[test]
fn tune_sweep_writes_labelled_contact_sheet() {
    let Some(dir) = udacity() else { return };
    let t = tmp();
    let sheet = t.path().join("sheet.png");
    let imgs = [
        dir.join("test1.jpg"),
        dir.join("test5.jpg"),
        dir.join("straight_lines1.jpg"),
    ];
    let o = lanes(&[
        "tune",
        "--preset",
        "reference",
        "--sweep",
        "threshold.l_min=180..240:20",
        s(&imgs[0]),
        s(&imgs[1]),
        s(&imgs[2]),
        "-o",
        s(&sheet),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
    let (w, h) = image::image_dimensions(&sheet).unwrap();
    // 3 rows of 320x180 cells (+ an 18 px stats band) under a 30 px header, 4 px gaps;
    // 4 columns after the name column.
    assert_eq!(h, 30 + 3 * (180 + 18 + 4) + 4);
    assert!(
        w > 4 * (320 + 4) + 4 && w < 4 * (320 + 4) + 4 + 420,
        "width {w}"
    );
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let mean: Vec<f64> = lines
        .iter()
        .zip([180, 200, 220, 240])
        .map(|(l, v)| {
            assert!(
                l.starts_with(&format!("threshold.l_min = {v}: both lines on ")),
                "{l}"
            );
            l.rsplit(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    assert!(
        mean.windows(2).all(|w| w[0] > w[1]),
        "mean mask pixels should fall as l_min rises: {mean:?}"
    );
    // The 220 column is the default config: its mean equals the tuner's mask counts.
    let srv = TuneServer::start(&[s(&imgs[0]), s(&imgs[1]), s(&imgs[2])], t.path());
    let p = srv.preview(json!({}), &[0, 1, 2]);
    let m: f64 = p["stills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| num(s, "mask_pixels"))
        .sum::<f64>()
        / 3.0;
    assert!(
        (m - mean[2]).abs() < 0.5 + 1e-9,
        "sweep mean {} vs tuner {m}",
        mean[2]
    );
    srv.stop();

    let over = t.path().join("over.jpg");
    let o = lanes(&[
        "tune",
        "--sweep",
        "search.windows=6,9",
        "--show",
        "overlay",
        s(&imgs[0]),
        "-o",
        s(&over),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
    assert_eq!(
        image::image_dimensions(&over).unwrap().1,
        30 + 180 + 18 + 4 + 4
    );
}

#[test]
fn tune_sweep_bad_value_or_key_is_a_one_line_error() {
    let Some(dir) = udacity() else { return };
    let t = tmp();
    let out = t.path().join("s.png");
    let img = dir.join("test1.jpg");
    let o = lanes(&[
        "tune",
        "--sweep",
        "threshold.l_min=235..255:10",
        s(&img),
        "-o",
        s(&out),
    ]);
    assert_one_line_error(
        &o,
        "threshold.l_min = 255 (expected less than threshold.l_max = 255)",
    );
    let o = lanes(&[
        "tune",
        "--sweep",
        "threshold.lmin=1..2",
        s(&img),
        "-o",
        s(&out),
    ]);
    assert_one_line_error(&o, "unknown parameter `threshold.lmin`");
    let o = lanes(&[
        "tune",
        "--sweep",
        "threshold.l_min=200..180:10",
        s(&img),
        "-o",
        s(&out),
    ]);
    assert_one_line_error(&o, "TO is below FROM");
    assert!(!out.exists());
}

#[test]
fn tune_start_errors_are_one_line() {
    let Some(dir) = udacity() else { return };
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let o = lanes(&["tune", "--port", &port, s(&dir)]);
    assert_one_line_error(&o, "address in use");
    let o = lanes(&["tune", "--port", "0", "no/such/still.jpg"]);
    assert_one_line_error(&o, "no/such/still.jpg: file not found");
    let o = lanes(&[
        "tune",
        "--port",
        "0",
        "--save-to",
        "no/such/dir/x.toml",
        s(&dir),
    ]);
    assert_one_line_error(&o, "directory no/such/dir does not exist");
    let _ = repo_root();
}

/// `lanes tune` on a video samples `--frames` frames spread over the clip (one contact sheet
/// row each), leaves no sampled file behind, and a sweep over a parameter that does not act
/// under the chosen rule (l_min under local contrast) says so, while one that acts changes
/// the mask.
#[test]
fn tune_sweep_on_a_video_samples_frames_and_warns_on_a_parameter_that_does_not_act() {
    let Some(clip) = data("videos/maesla/project_video_shortest.mp4") else {
        return;
    };
    let t = tmp();
    let sheet = t.path().join("sheet.png");
    let run = |spec: &str| {
        lanes(&[
            "tune",
            s(&clip),
            "--frames",
            "4",
            "--sweep",
            spec,
            "-o",
            s(&sheet),
        ])
    };
    let o = run("threshold.l_contrast_min=10..40:30");
    let err = super::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("project_video_shortest.mp4: 4 frames sampled (8, 24, 40, 56)"),
        "{err}"
    );
    assert!(!err.contains("does not act"), "{err}");
    let (_, h) = image::image_dimensions(&sheet).unwrap();
    assert_eq!(h, 30 + 4 * (180 + 18 + 4) + 4, "one row per sampled frame");
    let means: Vec<String> = stdout(&o)
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(means.len(), 2);
    assert_ne!(means[0], means[1], "l_contrast_min acts: {means:?}");
    let o = run("threshold.l_min=160..240:80");
    let err = super::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("--sweep threshold.l_min: this parameter does not act")
            && err.contains("threshold.method = \"global_max\""),
        "{err}"
    );
    let means: Vec<String> = stdout(&o)
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(means[0], means[1], "l_min does not act: {means:?}");
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("lanes-tune-"))
        .collect();
    assert!(left.is_empty(), "sampled frames left behind: {left:?}");
}

/// `lanes tune` on stills of another camera (the six P1 test images, 960x540) with no
/// `[perspective]`: the geometry is found in the stills, as `lanes image` finds it, so the
/// sheet shows bird's-eye masks with the lane's lines. Both lines on 6 of 6 stills at either
/// value (0 of 6 with the built-in Udacity quad before).
#[test]
fn tune_on_stills_of_another_camera_finds_their_geometry() {
    let Some(dir) = data("lanelines_p1/test_images") else {
        return;
    };
    let t = tmp();
    let sheet = t.path().join("sheet.png");
    let o = lanes(&[
        "tune",
        s(&dir),
        "--sweep",
        "threshold.l_contrast_min=10..40:30",
        "-o",
        s(&sheet),
    ]);
    let err = super::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("6 stills of 960x540: geometry found in 6 of 6"),
        "{err}"
    );
    let out = stdout(&o);
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("both lines on 6/6 stills"))
            .count(),
        2,
        "{out}"
    );
}
