//! End-to-end test of the tuner page in headless Chromium, driven over WebDriver (Debian's
//! `chromium` and `chromium-driver` packages; the W3C WebDriver protocol is plain HTTP+JSON,
//! spoken here with the test's own small client).
//!
//! Without Chromium or chromedriver the test prints why and passes, except under `CI=true`,
//! where it fails. `LANES_TUNE_SCREENSHOT=path.png` also saves a screenshot of the page.

use super::http;
use super::{s, udacity, TuneServer};
use crate::{data, tmp};
use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn find_program(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// chromedriver and the Chromium binary, or the reason they are missing.
pub(crate) fn browser() -> Result<(PathBuf, PathBuf), String> {
    let driver = find_program(&["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"])
        .ok_or("chromedriver not found (apt-get install chromium-driver)")?;
    let chrome = find_program(&["/usr/lib/chromium/chromium", "/usr/bin/chromium"])
        .ok_or("chromium not found (apt-get install chromium)")?;
    Ok((driver, chrome))
}

pub(crate) struct Driver {
    child: Child,
    base: String,
    session: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            http::delete_quietly(&format!("{}/session/{}", self.base, self.session));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Driver {
    pub(crate) fn start(driver: &Path, chrome: &Path, profile: &Path) -> Driver {
        let port = free_port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let base = format!("http://127.0.0.1:{port}");
        // From here on, `Drop` ends chromedriver even if a check below fails.
        let mut d = Driver {
            child,
            base: base.clone(),
            session: String::new(),
        };
        let t0 = Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                let st = http::get(&format!("{base}/status"));
                if st.status == 200 && st.json()["value"]["ready"] == true {
                    break;
                }
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "chromedriver not ready after 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let caps = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": { "browser": "ALL" },
            "goog:chromeOptions": {
                "binary": chrome.to_str().unwrap(),
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--no-first-run", "--hide-scrollbars", "--window-size=1600,1200",
                    format!("--user-data-dir={}", profile.display()),
                ]
            }
        }}});
        let r = http::post_json(&format!("{}/session", d.base), &caps);
        assert_eq!(r.status, 200, "new session: {}", r.text());
        d.session = r.json()["value"]["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_string();
        d
    }

    fn url(&self, rest: &str) -> String {
        format!("{}/session/{}/{rest}", self.base, self.session)
    }

    fn cmd(&self, rest: &str, body: Value) -> Value {
        let r = http::post_json(&self.url(rest), &body);
        assert_eq!(r.status, 200, "{rest}: {}", r.text());
        r.json()["value"].clone()
    }

    pub(crate) fn goto(&self, url: &str) {
        self.cmd("url", json!({ "url": url }));
    }

    pub(crate) fn js(&self, script: &str) -> Value {
        self.cmd("execute/sync", json!({ "script": script, "args": [] }))
    }

    pub(crate) fn find(&self, css: &str) -> String {
        let v = self.cmd("element", json!({ "using": "css selector", "value": css }));
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_string()
    }

    fn keys(&self, el: &str, text: &str) {
        self.cmd(&format!("element/{el}/value"), json!({ "text": text }));
    }

    pub(crate) fn click(&self, el: &str) {
        self.cmd(&format!("element/{el}/click"), json!({}));
    }

    /// Poll a JS expression until it is truthy; returns its value.
    pub(crate) fn wait_for(&self, expr: &str, what: &str) -> Value {
        let t0 = Instant::now();
        loop {
            let v = self.js(&format!("return ({expr});"));
            if !(v.is_null() || v == false || v == 0 || v == "") {
                return v;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "timed out waiting for {what} ({expr})"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The page's console messages so far (chromedriver's `browser` log).
    pub(crate) fn console_log(&self) -> Vec<Value> {
        let v = self.cmd("se/log", json!({ "type": "browser" }));
        v.as_array().cloned().unwrap_or_default()
    }

    pub(crate) fn screenshot(&self, path: &Path) {
        let r = http::get(&self.url("screenshot"));
        assert_eq!(r.status, 200);
        use base64::Engine;
        let png = base64::engine::general_purpose::STANDARD
            .decode(r.json()["value"].as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
    }
}

/// A card's numbers without the trailing processing time.
fn without_ms(v: &Value) -> String {
    let t = v.as_str().unwrap();
    t.rsplit_once(" · ")
        .map(|(a, _)| a)
        .unwrap_or(t)
        .to_string()
}

const IDLE: &str = "window.tuneState && !window.tuneState.inflight && !window.tuneState.dirty";

/// Move the l_min slider with the keyboard, see the preview change, press Save, read the file.
#[test]
fn tune_browser_slider_changes_preview_and_save_writes_file() {
    let (Some(dir), Some(chal)) = (
        udacity(),
        data("frames/ysono/challenge_video_test_images/chalvid_04.png"),
    ) else {
        return;
    };
    let (driver, chrome) = match browser() {
        Ok(p) => p,
        Err(why) => {
            if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
                panic!("browser test cannot run under CI: {why}");
            }
            eprintln!("SKIP tune_browser: {why}");
            return;
        }
    };
    let t = tmp();
    let saved = t.path().join("lanes.toml");
    // Six stills; the third (a challenge-video frame) has no left line at the defaults.
    let stills = [
        dir.join("test1.jpg"),
        dir.join("test4.jpg"),
        chal,
        dir.join("straight_lines1.jpg"),
        dir.join("test5.jpg"),
        dir.join("test6.jpg"),
    ];
    let args: Vec<&str> = stills.iter().map(|p| s(p)).collect();
    let srv = TuneServer::start(&args, t.path());
    let profile = t.path().join("profile");
    let d = Driver::start(&driver, &chrome, &profile);
    d.goto(&srv.url);
    d.wait_for(
        &format!("document.body.dataset.updates >= 1 && {IDLE}"),
        "the first previews",
    );
    let cards = d.js("return document.querySelectorAll('.card').length;");
    assert_eq!(cards, 6);
    // The still without a left line is marked; the others are not.
    let marked = d.js("return [...document.querySelectorAll('.card.missing')].map(c => c.id + ': ' + c.querySelector('.badges').textContent);");
    assert_eq!(marked, json!(["card-2: left line not found"]));
    let before_src = d.js("return document.querySelector('#card-0 img.mask').src;");
    let before_nums = d.js("return document.querySelector('#card-0 .nums').textContent;");
    let updates = d
        .js("return Number(document.body.dataset.updates);")
        .as_i64()
        .unwrap();
    assert!(before_src
        .as_str()
        .unwrap()
        .starts_with("data:image/jpeg;base64,"));

    // At the loaded config, before any change.
    if let Ok(path) = std::env::var("LANES_TUNE_SCREENSHOT") {
        d.js("window.scrollTo(0, 0);");
        d.screenshot(Path::new(&path));
        eprintln!("screenshot written to {path}");
    }

    // Under the reference rule (this server's preset) the local-contrast controls do not act:
    // greyed out, disabled, with the reason; the reference rule's l_min acts. Every label fits.
    let inactive =
        d.js("return [...document.querySelectorAll('.param.inactive')].map(r => r.dataset.key);");
    let inactive: Vec<String> = serde_json::from_value(inactive).unwrap();
    for k in [
        "threshold.l_contrast_min",
        "threshold.marking_width_px",
        "threshold.sobel_min",
        "search.prior_margin",
    ] {
        assert!(
            inactive.iter().any(|i| i == k),
            "{k} not greyed: {inactive:?}"
        );
    }
    assert!(
        !inactive.iter().any(|i| i == "threshold.l_min"),
        "{inactive:?}"
    );
    let why = d.js("const r = document.querySelector(\".param[data-key='threshold.l_contrast_min']\"); return [r.querySelector('.why').textContent, r.querySelector('input[type=range]').disabled, r.title];");
    assert_eq!(
        why[0],
        "acts only under the default rule (local contrast): untick global_max"
    );
    assert_eq!(why[1], true);
    assert!(
        why[2]
            .as_str()
            .unwrap()
            .contains("default rule (local contrast) only"),
        "{why}"
    );
    let cut = d.js("return [...document.querySelectorAll('.param label')].filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.textContent);");
    assert_eq!(cut, json!([]), "labels cut off");

    // 40 presses of the left arrow key on the slider: l_min 220 -> 180.
    let slider = d.find(".param[data-key='threshold.l_min'] input[type=range]");
    d.keys(&slider, &"\u{E012}".repeat(40));
    d.wait_for(
        &format!("Number(document.body.dataset.updates) > {updates} && {IDLE} && window.tuneState.params['threshold.l_min'] === 180"),
        "previews after the slider moved",
    );
    let number_box = d.js("return document.querySelector(\".param[data-key='threshold.l_min'] input[type=number]\").value;");
    assert_eq!(number_box, "180");
    let status = d.js("return document.getElementById('status').textContent;");
    println!(
        "tune page after the slider moved: {}",
        status.as_str().unwrap()
    );
    let after_src = d.js("return document.querySelector('#card-0 img.mask').src;");
    assert_ne!(before_src, after_src, "the mask preview did not change");
    let after_nums = d.js("return document.querySelector('#card-0 .nums').textContent;");
    assert_ne!(without_ms(&before_nums), without_ms(&after_nums));
    // The page shows what the server computes for l_min = 180.
    let api = srv.preview(json!({ "threshold.l_min": 180 }), &[0]);
    let shown_mask = after_nums
        .as_str()
        .unwrap()
        .split("mask ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(
        shown_mask,
        api["stills"][0]["mask_pixels"].to_string(),
        "{after_nums}"
    );

    let save = d.find("#save");
    d.click(&save);
    d.wait_for("document.body.dataset.saved === '1'", "the save");
    let text = std::fs::read_to_string(&saved).expect("saved file");
    let body: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    // The server runs the reference preset; the file lists what differs from the defaults,
    // and the geometry tuned on whole.
    assert_eq!(
        body,
        [
            "[threshold]",
            "l_min = 180",
            "method = \"global_max\"",
            "smooth_noise = false",
            "[perspective]",
            "src = [[575.0, 464.0], [707.0, 464.0], [258.0, 682.0], [1049.0, 682.0]]",
            "dst = [[450.0, 0.0], [830.0, 0.0], [450.0, 720.0], [830.0, 720.0]]",
            "birdseye_scale_x = 1.0",
            "birdseye_scale_y = 0.5",
            "[search]",
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
    let msg = d.js("return document.getElementById('saved').textContent;");
    assert!(
        msg.as_str()
            .unwrap()
            .contains("saved lanes.toml (the geometry, and 10 values that differ"),
        "{msg}"
    );
    // Unticking global_max switches to local contrast: now l_min is the one greyed out.
    let rule = d.find(".param[data-key='threshold.global_max'] input");
    d.click(&rule);
    d.wait_for(
        "document.querySelector(\".param[data-key='threshold.l_min']\").classList.contains('inactive')",
        "l_min greyed out under local contrast",
    );
    let why = d.js("const r = document.querySelector(\".param[data-key='threshold.l_min']\"); return [r.querySelector('.why').textContent, r.querySelector('input[type=number]').disabled];");
    assert_eq!(
        why,
        json!(["acts only under the reference rule: tick global_max", true])
    );
    let lc = d.js("return document.querySelector(\".param[data-key='threshold.l_contrast_min']\").classList.contains('inactive');");
    assert_eq!(lc, false);
    d.click(&rule);
    d.wait_for(
        &format!("window.tuneState.params['threshold.global_max'] === true && {IDLE}"),
        "back to the reference rule",
    );

    // Drag the top-left quad point 40 px (page pixels) to the left with the mouse.
    let before_bird = d.js("return document.getElementById('quad-birdseye').src;");
    let updates = d
        .js("return Number(document.body.dataset.updates);")
        .as_i64()
        .unwrap();
    let at = d.js(
        "const r = document.getElementById('quad-canvas').getBoundingClientRect(); const k = r.width / 1280; \
         return [Math.round(r.left + 575 * k), Math.round(r.top + 464 * k), k];",
    );
    let (x, y, k) = (
        at[0].as_i64().unwrap(),
        at[1].as_i64().unwrap(),
        at[2].as_f64().unwrap(),
    );
    d.cmd(
        "actions",
        json!({ "actions": [{ "type": "pointer", "id": "mouse", "parameters": { "pointerType": "mouse" }, "actions": [
            { "type": "pointerMove", "origin": "viewport", "x": x, "y": y, "duration": 0 },
            { "type": "pointerDown", "button": 0 },
            { "type": "pointerMove", "origin": "viewport", "x": x - 20, "y": y, "duration": 100 },
            { "type": "pointerMove", "origin": "viewport", "x": x - 40, "y": y, "duration": 100 },
            { "type": "pointerUp", "button": 0 },
        ]}]}),
    );
    d.wait_for(
        &format!("Number(document.body.dataset.updates) > {updates} && {IDLE}"),
        "previews after the drag",
    );
    let quad = d.js("return window.tuneState.params['perspective.src'];");
    let moved = quad[0][0].as_f64().unwrap();
    let want = 575.0 - 40.0 / k;
    assert!(
        (moved - want).abs() <= 2.0 / k + 1.0,
        "top-left x {moved}, expected about {want} (k = {k})"
    );
    // (The pointer lands on whole page pixels: a page pixel is 1/k still pixels.)
    assert!(
        (quad[0][1].as_f64().unwrap() - 464.0).abs() <= 1.0 / k + 0.5,
        "top-left y {}",
        quad[0][1]
    );
    assert_eq!(
        (quad[1][0].as_f64(), quad[1][1].as_f64()),
        (Some(707.0), Some(464.0)),
        "other points stay"
    );
    let number = d.js("return document.getElementById('quad-0-0').value;");
    assert_eq!(number.as_str().unwrap().parse::<f64>().unwrap(), moved);
    let after_bird = d.js("return document.getElementById('quad-birdseye').src;");
    assert_ne!(
        before_bird, after_bird,
        "the bird's-eye view did not follow the quad"
    );

    // A bad value typed into a number box shows the server's message and keeps the server up.
    let boxed = d.find(".param[data-key='search.windows'] input[type=number]");
    d.js("const b = document.querySelector(\".param[data-key='search.windows'] input[type=number]\"); b.value = ''; b.focus();");
    d.keys(&boxed, "77");
    let err = d.wait_for(
        "!document.getElementById('error').hidden && document.getElementById('error').textContent",
        "the error banner",
    );
    assert_eq!(
        err,
        "config search.windows = 77 (expected an integer in 1..=50)"
    );

    // Reset: every control back to the loaded config, the error gone, the first numbers back.
    let updates = d
        .js("return Number(document.body.dataset.updates);")
        .as_i64()
        .unwrap();
    let reset = d.find("#reset");
    d.click(&reset);
    d.wait_for(
        &format!("Number(document.body.dataset.updates) > {updates} && {IDLE}"),
        "previews after Reset",
    );
    let back = d.js(
        "const q = (k, t) => document.querySelector(`.param[data-key='${k}'] input[type=${t}]`).value; \
         return [q('threshold.l_min', 'range'), q('search.windows', 'number'), \
                 document.getElementById('quad-0-0').value, document.getElementById('error').hidden, \
                 document.querySelectorAll('.param.changed').length, document.getElementById('reset').disabled];",
    );
    assert_eq!(back, json!(["220", "10", "575", true, 0, true]));
    let nums = d.js("return document.querySelector('#card-0 .nums').textContent;");
    assert_eq!(without_ms(&nums), without_ms(&before_nums));
    drop(d);
    srv.stop();
}
