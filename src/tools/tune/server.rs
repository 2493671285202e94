//! The tuner's HTTP server (tiny_http on 127.0.0.1): the page, previews as JSON, save.
//!
//! Routes:
//! - `GET /`, `/app.js`, `/app.css`: the page (embedded in the binary; no external resources).
//! - `GET /api/state`: stills, parameter specs, loaded and default values, save path.
//! - `POST /api/preview` `{"params": {key: value}, "stills": [i], "scale": n, "birdseye_of": i}`:
//!   previews; 400 with `{"error": ...}` when a value is bad.
//! - `GET /api/frame/<i>?scale=<n>`: the undistorted still as JPEG (for placing the quad).
//! - `POST /api/save` `{"params": {...}}`: writes the TOML of the values that differ from the
//!   defaults; 400 when a value is bad.
//!
//! Only requests whose `Host` names the loopback interface are served (a web page elsewhere,
//! even one that points its own name at 127.0.0.1, cannot drive it), and POST bodies must be `application/json` (so browsers send a preflight
//! request, which is refused, for cross-origin posts).

use super::params;
use super::preview::{frame_jpeg, Tuner};
use crate::base::config::Config;
use crate::base::error::{Error, Result};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");

/// Largest request body accepted, bytes.
pub const MAX_BODY: usize = 1 << 20;
/// Most stills previewed by one request.
pub const MAX_STILLS_PER_REQUEST: usize = 48;
/// Stills per page of the grid.
pub const PAGE_SIZE: usize = 12;

/// What the server serves: the stills, where Save writes, and the preview reduction.
pub struct App {
    pub tuner: Tuner,
    /// File that Save writes.
    pub save_to: PathBuf,
    /// Previews are reduced by this factor (3 = one third of the width and height).
    pub scale: u32,
    /// First lines of the saved file (without `# `).
    pub header: String,
}

/// A response before it is sent: status, content type, body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    fn json(status: u16, v: &Value) -> Self {
        Self {
            status,
            content_type: "application/json",
            body: v.to_string().into_bytes(),
        }
    }
    fn error(status: u16, message: impl Into<String>) -> Self {
        Self::json(status, &json!({ "error": message.into() }))
    }
    fn text(content_type: &'static str, s: &str) -> Self {
        Self {
            status: 200,
            content_type,
            body: s.as_bytes().to_vec(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreviewRequest {
    #[serde(default)]
    params: Map<String, Value>,
    stills: Vec<usize>,
    scale: Option<u32>,
    birdseye_of: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveRequest {
    #[serde(default)]
    params: Map<String, Value>,
}

fn parse<T: for<'de> Deserialize<'de>>(body: &[u8]) -> std::result::Result<T, Reply> {
    serde_json::from_slice(body).map_err(|e| Reply::error(400, format!("bad request body: {e}")))
}

impl App {
    fn state(&self) -> Result<Value> {
        let stills: Vec<Value> = self
            .tuner
            .names()
            .iter()
            .enumerate()
            .map(|(i, n)| json!({ "index": i, "name": n }))
            .collect();
        Ok(json!({
            "stills": stills,
            "specs": params::SPECS,
            // Why a control is greyed out, by its spec's `applies` (the page checks the rule).
            "reasons": params::Applies::ALL
                .iter()
                .filter_map(|a| a.reason().map(|r| (a.name().to_string(), Value::from(r))))
                .collect::<serde_json::Map<String, Value>>(),
            "loaded": params::params_of(&self.tuner.loaded)?,
            "defaults": params::params_of(&Config::default())?,
            "dst": self.tuner.loaded.perspective.dst,
            "save_to": self.save_to.display().to_string(),
            "scale": self.scale,
            "page_size": PAGE_SIZE,
        }))
    }

    fn preview(&self, body: &[u8]) -> Reply {
        let req: PreviewRequest = match parse(body) {
            Ok(r) => r,
            Err(reply) => return reply,
        };
        if req.stills.len() > MAX_STILLS_PER_REQUEST {
            return Reply::error(
                400,
                format!(
                    "{} stills asked for, at most {MAX_STILLS_PER_REQUEST} per request",
                    req.stills.len()
                ),
            );
        }
        if let Some(i) = req.stills.iter().find(|i| **i >= self.tuner.len()) {
            return Reply::error(
                400,
                format!("no still number {i} (have {})", self.tuner.len()),
            );
        }
        let scale = req.scale.unwrap_or(self.scale);
        if !(1..=16).contains(&scale) {
            return Reply::error(400, format!("scale = {scale} (expected 1..=16)"));
        }
        let t0 = Instant::now();
        let result = params::apply_params(&self.tuner.loaded, &req.params).and_then(|cfg| {
            self.tuner
                .previews(&cfg, &req.stills, scale, req.birdseye_of)
        });
        match result {
            Ok(stills) => {
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                Reply::json(200, &json!({ "ms": ms, "stills": stills }))
            }
            Err(e) => Reply::error(400, e.to_string()),
        }
    }

    fn save(&self, body: &[u8]) -> Reply {
        let req: SaveRequest = match parse(body) {
            Ok(r) => r,
            Err(reply) => return reply,
        };
        let cfg = match params::apply_params(&self.tuner.loaded, &req.params).and_then(|cfg| {
            crate::lane::warp::Perspective::from_config(&cfg.perspective, 1280, 720).map(|_| cfg)
        }) {
            Ok(c) => c,
            Err(e) => return Reply::error(400, e.to_string()),
        };
        let text = match params::toml_diff(&cfg, &self.header) {
            Ok(t) => t,
            Err(e) => return Reply::error(500, e.to_string()),
        };
        match crate::base::atomic::write_atomic(&self.save_to, text.as_bytes()) {
            Ok(()) => {
                eprintln!("lanes tune: saved {}", self.save_to.display());
                Reply::json(
                    200,
                    &json!({ "path": self.save_to.display().to_string(), "text": text }),
                )
            }
            Err(e) => Reply::error(500, e.to_string()),
        }
    }

    fn frame(&self, rest: &str, query: &str) -> Reply {
        let Ok(i) = rest.parse::<usize>() else {
            return Reply::error(404, format!("no still `{rest}`"));
        };
        if i >= self.tuner.len() {
            return Reply::error(
                404,
                format!("no still number {i} (have {})", self.tuner.len()),
            );
        }
        let scale = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("scale="))
            .map(|v| v.parse::<u32>().ok().filter(|s| (1..=16).contains(s)))
            .unwrap_or(Some(2));
        let Some(scale) = scale else {
            return Reply::error(400, "scale must be an integer in 1..=16");
        };
        match self
            .tuner
            .undistorted(i)
            .and_then(|f| frame_jpeg(&f, scale))
        {
            Ok(jpeg) => Reply {
                status: 200,
                content_type: "image/jpeg",
                body: jpeg,
            },
            Err(e) => Reply::error(500, e.to_string()),
        }
    }

    /// Answer one request (no I/O besides Save's file).
    pub fn handle(&self, method: &str, url: &str, body: &[u8]) -> Reply {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        match (method, path) {
            ("GET", "/") | ("GET", "/index.html") => {
                Reply::text("text/html; charset=utf-8", INDEX_HTML)
            }
            ("GET", "/app.js") => Reply::text("text/javascript; charset=utf-8", APP_JS),
            ("GET", "/app.css") => Reply::text("text/css; charset=utf-8", APP_CSS),
            ("GET", "/api/state") => match self.state() {
                Ok(v) => Reply::json(200, &v),
                Err(e) => Reply::error(500, e.to_string()),
            },
            ("POST", "/api/preview") => self.preview(body),
            ("POST", "/api/save") => self.save(body),
            ("GET", p) if p.starts_with("/api/frame/") => {
                self.frame(&p["/api/frame/".len()..], query)
            }
            (
                _,
                "/" | "/index.html" | "/app.js" | "/app.css" | "/api/state" | "/api/preview"
                | "/api/save",
            ) => Reply::error(405, format!("{method} not allowed on {path}")),
            _ => Reply::error(404, format!("no such page: {path}")),
        }
    }
}

fn header(name: &str, value: &str) -> Option<tiny_http::Header> {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

/// Whether a `Host` header names the loopback interface (any port: an SSH tunnel may forward
/// another local port). A page from elsewhere reaches us only under its own host name.
fn loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((n, p))
            if !n.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && !n.ends_with(':') =>
        {
            n
        }
        _ => host,
    };
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
}

/// Check the request's origin and read its body; `Err` is the reply to send instead.
fn admit(req: &mut tiny_http::Request, addr: SocketAddr) -> std::result::Result<Vec<u8>, Reply> {
    let get = |name: &str| {
        req.headers()
            .iter()
            .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str().to_string())
    };
    let host = get("Host").unwrap_or_default();
    let port = addr.port();
    if !loopback_host(&host) {
        return Err(Reply::error(
            403,
            format!("Host `{host}` refused: open http://127.0.0.1:{port}/"),
        ));
    }
    if *req.method() == tiny_http::Method::Post {
        let ct = get("Content-Type").unwrap_or_default();
        if !ct.to_ascii_lowercase().starts_with("application/json") {
            return Err(Reply::error(415, "POST bodies must be application/json"));
        }
    }
    if req.body_length().unwrap_or(0) > MAX_BODY {
        return Err(Reply::error(
            413,
            format!("request body over {MAX_BODY} bytes"),
        ));
    }
    let mut body = Vec::new();
    if let Err(e) = req
        .as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut body)
    {
        return Err(Reply::error(400, format!("cannot read request body: {e}")));
    }
    if body.len() > MAX_BODY {
        return Err(Reply::error(
            413,
            format!("request body over {MAX_BODY} bytes"),
        ));
    }
    Ok(body)
}

fn respond(app: &App, mut req: tiny_http::Request, addr: SocketAddr) {
    let reply = match admit(&mut req, addr) {
        Ok(body) => {
            let method = req.method().as_str().to_string();
            let url = req.url().to_string();
            // A bug in one handler must not take the server down: answer 500 and go on.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                app.handle(&method, &url, &body)
            }))
            .unwrap_or_else(|_| Reply::error(500, "internal error (see the server's terminal)"))
        }
        Err(reply) => reply,
    };
    if reply.status >= 500 {
        eprintln!(
            "lanes tune: {} {}: {}",
            req.method(),
            req.url(),
            String::from_utf8_lossy(&reply.body)
        );
    }
    let mut resp = tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
    for h in [
        header("Content-Type", reply.content_type),
        header("Cache-Control", "no-store"),
    ]
    .into_iter()
    .flatten()
    {
        resp.add_header(h);
    }
    // The browser may have gone (tab closed, request superseded): nothing to do then.
    let _ = req.respond(resp);
}

/// A bound server, not yet answering.
pub struct Server {
    inner: tiny_http::Server,
    addr: SocketAddr,
}

impl Server {
    /// Bind to 127.0.0.1:`port` (0 = any free port).
    pub fn bind(port: u16) -> Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| Error::Io {
            path: PathBuf::from(format!("127.0.0.1:{port}")),
            message: if e.kind() == std::io::ErrorKind::AddrInUse {
                "address in use (another server on this port? try --port 0 for a free one)".into()
            } else {
                e.to_string()
            },
        })?;
        let addr = listener.local_addr().map_err(|e| Error::Io {
            path: "listener".into(),
            message: e.to_string(),
        })?;
        let inner = tiny_http::Server::from_listener(listener, None).map_err(|e| Error::Io {
            path: PathBuf::from(addr.to_string()),
            message: e.to_string(),
        })?;
        Ok(Self { inner, addr })
    }

    /// The address bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Answer requests with `workers` threads until `stop` is set; requests in progress finish.
    pub fn run(&self, app: &App, stop: &AtomicBool, workers: usize) {
        std::thread::scope(|s| {
            for _ in 0..workers.max(1) {
                s.spawn(|| {
                    while !stop.load(Ordering::SeqCst) {
                        match self.inner.recv_timeout(Duration::from_millis(100)) {
                            Ok(Some(req)) => respond(app, req, self.addr),
                            Ok(None) => {}
                            Err(e) => {
                                eprintln!("lanes tune: {e}");
                                std::thread::sleep(Duration::from_millis(100));
                            }
                        }
                    }
                });
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::loopback_host;

    #[test]
    fn only_loopback_host_names_are_admitted() {
        for ok in [
            "127.0.0.1:8080",
            "localhost:9000",
            "LOCALHOST",
            "[::1]:8080",
            "127.0.0.1",
        ] {
            assert!(loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "127.0.0.1.evil.example",
            "",
            "localhost.:80",
            "10.0.0.1:8080",
        ] {
            assert!(!loopback_host(bad), "{bad}");
        }
    }
}
