//! A tiny blocking HTTP/1.1 client over `TcpStream` for the tuner's and chromedriver's APIs.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A response: status, headers (names lower-cased) and body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).to_string()
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Split `http://host:port/path` into (`host:port`, `/path`).
pub fn split_url(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").expect("http URL");
    match rest.find('/') {
        Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
        None => (rest.to_string(), "/".to_string()),
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = body.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&body[..eol]).to_string();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("0").trim(), 16)
            .expect("chunk size");
        body = &body[eol + 2..];
        if size == 0 || body.len() < size {
            break;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[(size + 2).min(body.len())..];
    }
    out
}

/// Send one request (`Connection: close`) and read the whole response.
pub fn request(method: &str, url: &str, content_type: Option<&str>, body: &[u8]) -> Response {
    let (host, path) = split_url(url);
    let mut s = TcpStream::connect(&host).unwrap_or_else(|e| panic!("connect {host}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(ct) = content_type {
        head.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    // Read until the body is complete (by Content-Length or the last chunk): some servers
    // (chromedriver) keep the connection open despite `Connection: close`.
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let mut header_end = None;
    loop {
        if header_end.is_none() {
            header_end = raw.windows(4).position(|w| w == b"\r\n\r\n");
        }
        if let Some(split) = header_end {
            let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
            let body = &raw[split + 4..];
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
            if let Some(n) = len {
                if body.len() >= n {
                    break;
                }
            } else if head.contains("transfer-encoding: chunked") && body.ends_with(b"0\r\n\r\n") {
                break;
            }
        }
        let n = s
            .read(&mut buf)
            .unwrap_or_else(|e| panic!("read {url}: {e}"));
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let split = header_end.unwrap_or_else(|| panic!("no header end from {url}"));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"))
    {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

pub fn get(url: &str) -> Response {
    request("GET", url, None, b"")
}

pub fn post_json(url: &str, v: &serde_json::Value) -> Response {
    request(
        "POST",
        url,
        Some("application/json"),
        v.to_string().as_bytes(),
    )
}

/// A DELETE that never panics (for `Drop`): errors are ignored, the answer is not parsed.
pub fn delete_quietly(url: &str) {
    let (host, path) = split_url(url);
    let Ok(mut s) = TcpStream::connect(&host) else {
        return;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let req = format!("DELETE {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n");
    if s.write_all(req.as_bytes()).is_ok() {
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf);
    }
}
