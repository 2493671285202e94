//! Per-frame lane telemetry: the record `lanes video` writes for every frame (JSON Lines or
//! CSV), its streaming writer, and a tolerant reader of both forms used by `lanes events`,
//! `lanes report` and `lanes batch`.

use crate::base::error::{Error, Result};
use crate::base::poly::Poly2;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One telemetry record per frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameRecord {
    pub frame: usize,
    pub time_s: f64,
    pub search: String,
    /// This frame's fits were both accepted by the tracker.
    pub detected: bool,
    /// What is drawn: `both`, `left_only`, `right_only`, `predicted` or `none`.
    pub status: String,
    /// This frame's evidence for each line (0..1; 0 when the search found no line).
    pub left_confidence: f64,
    pub right_confidence: f64,
    /// Confidence of the drawn lane (0..1).
    pub confidence: f64,
    /// The smoothed fits drawn (null when no lane is drawn).
    pub left_fit: Option<Poly2>,
    pub right_fit: Option<Poly2>,
    pub radius_m: Option<f64>,
    pub offset_m: Option<f64>,
    pub lane_width_m: Option<f64>,
    pub left_pixels: usize,
    pub right_pixels: usize,
    /// The camera's downward pitch relative to the road used for this frame's measurements,
    /// degrees (`tracking.online_pitch`; null when it is off or the quad has no horizon).
    #[serde(default)]
    pub pitch_deg: Option<f64>,
    /// The horizon row of that pitch in the undistorted frame, pixels.
    #[serde(default)]
    pub horizon_y: Option<f64>,
    /// This frame begins a new shot of an edited video: the trackers started again here
    /// (`tracking.restart_at_cuts`). Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

impl FrameRecord {
    /// A record for unit tests: frame `frame` at 25 fps, search "prior"; with `offset`, both
    /// lines of a 3.6 m lane (fits at x 450 and 830), radius `radius_m`, confidence 0.9;
    /// without, status `none`.
    #[cfg(test)]
    pub(crate) fn sample(frame: usize, offset: Option<f64>, radius_m: f64) -> Self {
        FrameRecord {
            frame,
            time_s: frame as f64 / 25.0,
            search: "prior".into(),
            detected: offset.is_some(),
            status: if offset.is_some() { "both" } else { "none" }.into(),
            left_confidence: 0.9,
            right_confidence: 0.9,
            confidence: if offset.is_some() { 0.9 } else { 0.0 },
            left_fit: offset.map(|_| Poly2::from([-1e-4, 0.0, 450.0])),
            right_fit: offset.map(|_| Poly2::from([-1e-4, 0.0, 830.0])),
            radius_m: offset.map(|_| radius_m),
            offset_m: offset,
            lane_width_m: offset.map(|_| 3.6),
            left_pixels: 100,
            right_pixels: 100,
            pitch_deg: None,
            horizon_y: None,
            cut: false,
        }
    }

    /// CSV header matching `to_csv`.
    pub const CSV_HEADER: &'static str = "frame,time_s,search,detected,status,left_confidence,right_confidence,confidence,left_a,left_b,left_c,right_a,right_b,right_c,radius_m,offset_m,lane_width_m,left_pixels,right_pixels,pitch_deg,horizon_y,cut";

    /// The record of a CSV row of [`Self::to_csv`] whose columns `header` names; `None` when
    /// a cell does not parse or the row has another number of cells.
    pub fn from_csv(header: &[&str], row: &str) -> Option<Self> {
        let cells: Vec<&str> = row.split(',').collect();
        if cells.len() != header.len() {
            return None;
        }
        let cell = |name: &str| header.iter().position(|h| *h == name).map(|i| cells[i]);
        let num = |name: &str| cell(name)?.parse::<f64>().ok();
        let count = |name: &str| cell(name)?.parse::<usize>().ok();
        // An optional number: absent or empty is null, anything else must parse.
        let opt = |name: &str| match cell(name) {
            None | Some("") => Some(None),
            Some(v) => v.parse::<f64>().ok().map(Some),
        };
        let fit = |side: &str| match (
            opt(&format!("{side}_a"))?,
            opt(&format!("{side}_b"))?,
            opt(&format!("{side}_c"))?,
        ) {
            (Some(a), Some(b), Some(c)) => Some(Some(Poly2::from([a, b, c]))),
            (None, None, None) => Some(None),
            _ => None,
        };
        Some(FrameRecord {
            frame: count("frame")?,
            time_s: num("time_s")?,
            search: cell("search")?.to_string(),
            detected: cell("detected")?.parse().ok()?,
            status: cell("status")?.to_string(),
            left_confidence: num("left_confidence")?,
            right_confidence: num("right_confidence")?,
            confidence: num("confidence")?,
            left_fit: fit("left")?,
            right_fit: fit("right")?,
            radius_m: opt("radius_m")?,
            offset_m: opt("offset_m")?,
            lane_width_m: opt("lane_width_m")?,
            left_pixels: count("left_pixels")?,
            right_pixels: count("right_pixels")?,
            pitch_deg: opt("pitch_deg")?,
            horizon_y: opt("horizon_y")?,
            cut: cell("cut").is_some_and(|v| v == "true"),
        })
    }

    /// One CSV row (empty cells for nulls).
    pub fn to_csv(&self) -> String {
        let f = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_default();
        let p = |p: Option<Poly2>| match p {
            Some(p) => format!("{},{},{}", p.a, p.b, p.c),
            None => ",,".to_string(),
        };
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            self.frame,
            self.time_s,
            self.search,
            self.detected,
            self.status,
            self.left_confidence,
            self.right_confidence,
            self.confidence,
            p(self.left_fit),
            p(self.right_fit),
            f(self.radius_m),
            f(self.offset_m),
            f(self.lane_width_m),
            self.left_pixels,
            self.right_pixels,
            f(self.pitch_deg),
            f(self.horizon_y),
            self.cut
        )
    }
}

/// Telemetry output format, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TelemetryFormat {
    JsonLines,
    Csv,
}

/// Streams telemetry records to a file as they come (memory stays flat), or to standard output
/// when the path is `-` (JSON Lines, for a pipe: `--telemetry - | jq`).
pub struct TelemetryWriter {
    out: std::io::BufWriter<Box<dyn std::io::Write + Send>>,
    format: TelemetryFormat,
    path: PathBuf,
}

/// Whether a telemetry path names standard output (`-`).
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

impl TelemetryWriter {
    pub fn create(path: &Path) -> Result<Self> {
        let format = match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
        {
            Some(e) if e == "csv" => TelemetryFormat::Csv,
            _ => TelemetryFormat::JsonLines,
        };
        let out: Box<dyn std::io::Write + Send> = if is_stdout(path) {
            // Each record as it comes (a reader at the pipe's end sees the drive live).
            Box::new(std::io::stdout())
        } else {
            Box::new(std::fs::File::create(path).map_err(|e| Error::Io {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?)
        };
        let mut w = Self {
            out: std::io::BufWriter::new(out),
            format,
            path: path.to_path_buf(),
        };
        if format == TelemetryFormat::Csv {
            w.line(FrameRecord::CSV_HEADER)?;
        }
        Ok(w)
    }
    /// Whether the records go to standard output.
    pub fn to_stdout(&self) -> bool {
        is_stdout(&self.path)
    }
    fn line(&mut self, s: &str) -> Result<()> {
        writeln!(self.out, "{s}")
            .and_then(|()| {
                if self.to_stdout() {
                    self.out.flush()
                } else {
                    Ok(())
                }
            })
            .map_err(|e| self.error(e))
    }
    /// A write error, naming the file (or standard output).
    fn error(&self, e: std::io::Error) -> Error {
        if self.to_stdout() && e.kind() == std::io::ErrorKind::BrokenPipe {
            return Error::StdoutClosed;
        }
        Error::Io {
            path: if self.to_stdout() {
                PathBuf::from("--telemetry -: standard output")
            } else {
                self.path.clone()
            },
            message: e.to_string(),
        }
    }
    pub fn write(&mut self, r: &FrameRecord) -> Result<()> {
        let s = match self.format {
            TelemetryFormat::Csv => r.to_csv(),
            TelemetryFormat::JsonLines => {
                serde_json::to_string(r).map_err(|e| Error::Invalid(e.to_string()))?
            }
        };
        self.line(&s)
    }
    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Give up on the file: close and delete it (a run that failed leaves no partial file;
    /// what went to standard output has gone).
    pub fn abandon(self) {
        let path = self.path.clone();
        let stdout = self.to_stdout();
        drop(self);
        if !stdout {
            let _ = std::fs::remove_file(path);
        }
    }
    pub fn finish(mut self) -> Result<()> {
        self.out.flush().map_err(|e| self.error(e))
    }
}

/// What `read_jsonl` found besides the records: counted, never fatal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadWarnings {
    /// Lines that did not parse as a record (a truncated last line, garbage); 1-based numbers.
    pub bad_lines: Vec<usize>,
    /// Records whose frame number was not larger than the previous one (dropped).
    pub out_of_order: usize,
}

impl ReadWarnings {
    pub fn is_empty(&self) -> bool {
        self.bad_lines.is_empty() && self.out_of_order == 0
    }
}

/// Read a JSON Lines telemetry file written by `lanes video`. Lines that do not parse and
/// records out of frame order are skipped and counted; a file with no record is an error.
pub fn read_jsonl(path: &Path) -> Result<(Vec<FrameRecord>, ReadWarnings)> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        // Binary data: a video or a picture given where the telemetry goes.
        std::io::ErrorKind::InvalidData => Error::Io {
            path: path.to_path_buf(),
            message: "not a telemetry file (binary data; telemetry is the JSON Lines or CSV file `lanes video --telemetry F.jsonl|F.csv` writes)".into(),
        },
        _ => Error::io(path, e),
    })?;
    parse_jsonl(path, &text)
}

/// `read_jsonl` on text already in memory (`path` only names it in errors).
pub fn parse_jsonl(path: &Path, text: &str) -> Result<(Vec<FrameRecord>, ReadWarnings)> {
    let mut records: Vec<FrameRecord> = Vec::new();
    let mut warnings = ReadWarnings::default();
    // The CSV form `lanes video --telemetry F.csv` writes, told by its header: its columns by
    // name (files written before a column was added lack it).
    let header: Option<Vec<&str>> = text
        .lines()
        .next()
        .filter(|l| l.starts_with("frame,time_s,"))
        .map(|l| l.trim_end().split(',').collect());
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || (i == 0 && header.is_some()) {
            continue;
        }
        let parsed = match &header {
            Some(h) => FrameRecord::from_csv(h, line.trim_end()).ok_or(()),
            None => serde_json::from_str::<FrameRecord>(line).map_err(|_| ()),
        };
        match parsed {
            Ok(r) if !r.time_s.is_finite() => warnings.bad_lines.push(i + 1),
            Ok(r) => {
                if records.last().is_some_and(|p| r.frame <= p.frame) {
                    warnings.out_of_order += 1;
                } else {
                    records.push(r);
                }
            }
            Err(_) => warnings.bad_lines.push(i + 1),
        }
    }
    if records.is_empty() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            message: format!(
                "no telemetry record ({} lines did not parse as `lanes video` {})",
                warnings.bad_lines.len(),
                if header.is_some() {
                    "CSV"
                } else {
                    "JSON Lines"
                }
            ),
        });
    }
    Ok((records, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(frame: usize) -> FrameRecord {
        FrameRecord {
            frame,
            time_s: frame as f64 / 25.0,
            search: "sliding_window".into(),
            detected: true,
            status: "both".into(),
            left_confidence: 0.9,
            right_confidence: 0.8,
            confidence: 0.8,
            left_fit: Some(Poly2::from([0.0, 0.0, 300.0])),
            right_fit: Some(Poly2::from([0.0, 0.0, 1000.0])),
            radius_m: Some(1000.0),
            offset_m: Some(0.1),
            lane_width_m: Some(3.7),
            left_pixels: 100,
            right_pixels: 100,
            pitch_deg: None,
            horizon_y: None,
            cut: false,
        }
    }

    #[test]
    fn jsonl_round_trip_counts_bad_and_out_of_order_lines() {
        let mut text = String::new();
        for f in [0, 1, 2, 2, 3] {
            text += &serde_json::to_string(&rec(f)).unwrap();
            text.push('\n');
        }
        text += "{\"frame\": 4, \"time_s\"";
        let (records, w) = parse_jsonl(Path::new("t.jsonl"), &text).unwrap();
        assert_eq!(records.len(), 4);
        assert_eq!(records[3], rec(3));
        assert_eq!(w.out_of_order, 1);
        assert_eq!(w.bad_lines, vec![6]);
        let err = parse_jsonl(Path::new("e.jsonl"), "").unwrap_err();
        assert!(err.to_string().starts_with("e.jsonl: no telemetry record"));
    }

    #[test]
    fn csv_telemetry_reads_back_as_its_records() {
        let mut none = rec(2);
        (none.status, none.left_fit, none.right_fit) = ("none".into(), None, None);
        (none.radius_m, none.offset_m, none.lane_width_m) = (None, None, None);
        let mut cut = rec(3);
        (cut.cut, cut.pitch_deg, cut.horizon_y) = (true, Some(-3.076), Some(422.25));
        let mut text = format!("{}\n", FrameRecord::CSV_HEADER);
        for r in [rec(0), rec(1), none.clone(), cut.clone()] {
            text += &r.to_csv();
            text.push('\n');
        }
        text += "4,0.16,prior,true,both,0.9\n";
        let (records, w) = parse_jsonl(Path::new("t.csv"), &text).unwrap();
        assert_eq!(records, vec![rec(0), rec(1), none, cut]);
        assert_eq!(w.bad_lines, vec![6]);
        // A file written before the pitch and cut columns: they read as null and false.
        let old = "frame,time_s,search,detected,status,left_confidence,right_confidence,confidence,left_a,left_b,left_c,right_a,right_b,right_c,radius_m,offset_m,lane_width_m,left_pixels,right_pixels\n0,0,sliding_window,true,both,0.9,0.8,0.8,0,0,300,0,0,1000,1000,0.1,3.7,100,100\n";
        let (records, _) = parse_jsonl(Path::new("old.csv"), old).unwrap();
        assert_eq!(records, vec![rec(0)]);
        let err = parse_jsonl(
            Path::new("e.csv"),
            &format!("{}\nx\n", FrameRecord::CSV_HEADER),
        );
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("did not parse as `lanes video` CSV"));
    }
}
