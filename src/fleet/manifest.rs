//! `lanes batch --manifest FILE`: a camera and a config per video, for mixed fleets. FILE is
//! CSV with the header `input,camera,config` (columns in any order, `camera` and `config`
//! optional) or JSON lines (`{"input": ..., "camera": ..., "config": ...}`); an empty cell, an
//! empty string, null or a missing key means the batch's `--camera`/`--config`. Relative
//! paths are resolved against the manifest's folder. Blank lines and lines starting with `#`
//! are skipped. Every row is checked before any video starts: a bad one is a one-line error
//! naming the manifest, the line and the value.

use crate::base::config::Preset;
use crate::base::error::{Error, Result};
use crate::fleet::batch::{check_names, rel_name, Item, Setup, Task};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One row: the video and its own camera and config (`None`: the batch's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub item: Item,
    pub camera: Option<PathBuf>,
    pub config: Option<PathBuf>,
    /// 1-based line in the manifest.
    pub line: usize,
}

const COLUMNS: [&str; 3] = ["input", "camera", "config"];

fn bad(path: &Path, line: usize, message: String) -> Error {
    Error::Manifest {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// Split one CSV line into fields (RFC 4180 quotes: `"a,b"`, `""` for a quote).
fn csv_fields(line: &str) -> std::result::Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => cur.push(c),
            (false, '"') if cur.trim().is_empty() && !was_quoted => {
                cur.clear();
                quoted = true;
                was_quoted = true;
            }
            (false, ',') => {
                fields.push(if was_quoted {
                    std::mem::take(&mut cur)
                } else {
                    cur.trim().to_string()
                });
                cur.clear();
                was_quoted = false;
            }
            (false, c) if was_quoted => {
                if !c.is_whitespace() {
                    return Err(format!("text after a closing quote: {line:?}"));
                }
            }
            (false, c) => cur.push(c),
        }
    }
    if quoted {
        return Err(format!("unclosed quote: {line:?}"));
    }
    fields.push(if was_quoted {
        cur
    } else {
        cur.trim().to_string()
    });
    Ok(fields)
}

/// A row's cells by column name, before its paths are checked.
type Cells = HashMap<&'static str, String>;

fn csv_rows(path: &Path, text: &str) -> Result<Vec<(usize, Cells)>> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((hline, header)) = lines.next() else {
        return Ok(Vec::new());
    };
    let names = csv_fields(header).map_err(|m| bad(path, hline, m))?;
    let mut columns: Vec<&'static str> = Vec::new();
    for n in &names {
        let col = COLUMNS
            .iter()
            .find(|c| c.eq_ignore_ascii_case(n.trim()))
            .ok_or_else(|| {
                bad(
                    path,
                    hline,
                    format!(
                        "unknown column {n:?} in the header (expected input,camera,config; \
                         camera and config may be left out)"
                    ),
                )
            })?;
        if columns.contains(col) {
            return Err(bad(path, hline, format!("column {col:?} named twice")));
        }
        columns.push(col);
    }
    if !columns.contains(&"input") {
        return Err(bad(
            path,
            hline,
            format!("the header {header:?} has no input column (expected input,camera,config)"),
        ));
    }
    let mut rows = Vec::new();
    for (n, line) in lines {
        let fields = csv_fields(line).map_err(|m| bad(path, n, m))?;
        if fields.len() > columns.len() {
            return Err(bad(
                path,
                n,
                format!(
                    "{} fields in {line:?}, the header has {} ({})",
                    fields.len(),
                    columns.len(),
                    columns.join(",")
                ),
            ));
        }
        let cells = columns.iter().copied().zip(fields).collect();
        rows.push((n, cells));
    }
    Ok(rows)
}

fn json_rows(path: &Path, text: &str) -> Result<Vec<(usize, Cells)>> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| bad(path, n, format!("not a JSON object ({e}): {line}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| bad(path, n, format!("not a JSON object: {line}")))?;
        let mut cells = Cells::new();
        for (k, val) in obj {
            let col = COLUMNS.iter().find(|c| **c == k.as_str()).ok_or_else(|| {
                bad(
                    path,
                    n,
                    format!("unknown key {k:?} (expected input, camera, config)"),
                )
            })?;
            let s = match val {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => String::new(),
                other => {
                    return Err(bad(
                        path,
                        n,
                        format!("{k} = {other} (expected a path as a string)"),
                    ))
                }
            };
            cells.insert(*col, s);
        }
        rows.push((n, cells));
    }
    Ok(rows)
}

/// Read and check a manifest: formats by extension (`.csv`; `.jsonl`, `.ndjson`, `.json`),
/// else JSON lines when the first row starts with `{`. Inputs, cameras and configs must exist.
pub fn read(path: &Path) -> Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        message: format!("cannot read manifest: {e}"),
    })?;
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    let json = match ext.as_str() {
        "csv" => false,
        "jsonl" | "ndjson" | "json" => true,
        _ => first.starts_with('{'),
    };
    let rows = if json {
        json_rows(path, &text)?
    } else {
        csv_rows(path, &text)?
    };
    if rows.is_empty() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            message: "manifest lists no video (expected a header input,camera,config and a row \
                      per video, or one JSON object a line)"
                .into(),
        });
    }
    let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let resolve = |s: &str| {
        let p = PathBuf::from(s);
        if p.is_absolute() {
            p
        } else {
            base.join(p)
        }
    };
    let mut entries = Vec::new();
    for (n, cells) in rows {
        let cell = |k: &str| cells.get(k).map(|s| s.trim()).filter(|s| !s.is_empty());
        let input = cell("input")
            .ok_or_else(|| bad(path, n, "input is empty (each row names a video)".into()))?;
        let input_path = resolve(input);
        if !input_path.is_file() {
            return Err(bad(
                path,
                n,
                format!(
                    "input {input:?}: no such video file ({})",
                    input_path.display()
                ),
            ));
        }
        let file = |k: &str| -> Result<Option<PathBuf>> {
            let Some(v) = cell(k) else { return Ok(None) };
            let p = resolve(v);
            if !p.is_file() {
                return Err(bad(
                    path,
                    n,
                    format!("{k} {v:?}: no such file ({})", p.display()),
                ));
            }
            Ok(Some(p))
        };
        entries.push(Entry {
            item: Item {
                path: input_path,
                rel: rel_name(Path::new(input)),
            },
            camera: file("camera")?,
            config: file("config")?,
            line: n,
        });
    }
    Ok(entries)
}

/// The tasks of a batch: `items` (the command line's inputs) with `default`, then the
/// manifest's rows, each with its camera and config (a cell left empty takes the batch's
/// `default_camera`/`default_config`) loaded once per pair over `preset`. Two videos with one
/// output folder are an error; so is a camera or config that does not load (naming the row).
pub fn tasks(
    items: Vec<Item>,
    manifest: Option<&Path>,
    default: Arc<Setup>,
    preset: Preset,
) -> Result<Vec<Task>> {
    let mut tasks: Vec<Task> = items
        .into_iter()
        .map(|item| Task {
            item,
            setup: Arc::clone(&default),
        })
        .collect();
    if let Some(m) = manifest {
        let mut setups: HashMap<(Option<PathBuf>, Option<PathBuf>), Arc<Setup>> = HashMap::new();
        let key = (default.camera_file.clone(), default.config_file.clone());
        setups.insert(key.clone(), Arc::clone(&default));
        for e in read(m)? {
            let pair = (
                e.camera.clone().or_else(|| key.0.clone()),
                e.config.clone().or_else(|| key.1.clone()),
            );
            let setup = match setups.get(&pair) {
                Some(s) => Arc::clone(s),
                None => {
                    let s = Setup::load(pair.0.as_deref(), pair.1.as_deref(), preset)
                        .map(Arc::new)
                        .map_err(|err| bad(m, e.line, err.to_string()))?;
                    setups.insert(pair, Arc::clone(&s));
                    s
                }
            };
            tasks.push(Task {
                item: e.item,
                setup,
            });
        }
    }
    let items: Vec<Item> = tasks.iter().map(|t| t.item.clone()).collect();
    check_names(&items)?;
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_follow_rfc_4180_quotes() {
        assert_eq!(csv_fields("a.mp4,,").unwrap(), vec!["a.mp4", "", ""]);
        assert_eq!(
            csv_fields(" a.mp4 , \"c,1.yml\" ,\"x\"\"y.toml\"").unwrap(),
            vec!["a.mp4", "c,1.yml", "x\"y.toml"]
        );
        assert!(csv_fields("\"open,").is_err());
        assert!(csv_fields("\"a\"b,c").is_err());
    }

    #[test]
    fn rows_resolve_against_the_manifest_folder_and_bad_rows_name_their_line() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("clips")).unwrap();
        std::fs::write(root.join("clips/a.mp4"), b"x").unwrap();
        std::fs::write(root.join("clips/b.mp4"), b"x").unwrap();
        std::fs::write(root.join("cam.yml"), b"x").unwrap();
        let m = root.join("m.csv");
        std::fs::write(
            &m,
            "# fleet\ninput,camera,config\nclips/a.mp4,cam.yml,\n\nclips/b.mp4,,\n",
        )
        .unwrap();
        let e = read(&m).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].item.path, root.join("clips/a.mp4"));
        assert_eq!(e[0].item.rel, "clips/a.mp4");
        assert_eq!(e[0].camera, Some(root.join("cam.yml")));
        assert_eq!((e[0].config.clone(), e[0].line), (None, 3));
        assert_eq!((e[1].camera.clone(), e[1].line), (None, 5));
        // The same as JSON lines, with a column order of its own and nulls.
        let j = root.join("m.jsonl");
        std::fs::write(
            &j,
            "{\"camera\": \"cam.yml\", \"input\": \"clips/a.mp4\"}\n{\"input\": \"clips/b.mp4\", \"config\": null}\n",
        )
        .unwrap();
        let ej = read(&j).unwrap();
        assert_eq!(
            ej.iter().map(|e| (&e.item, &e.camera)).collect::<Vec<_>>(),
            e.iter().map(|e| (&e.item, &e.camera)).collect::<Vec<_>>()
        );
        let err = |text: &str, name: &str| {
            let p = root.join(name);
            std::fs::write(&p, text).unwrap();
            read(&p).unwrap_err().to_string()
        };
        let e = err("input,camera,config\nclips/a.mp4,nope.yml,\n", "c1.csv");
        assert!(
            e.contains("c1.csv: line 2: camera \"nope.yml\": no such file"),
            "{e}"
        );
        let e = err("input,camera\nclips/zz.mp4,\n", "c2.csv");
        assert!(
            e.contains("c2.csv: line 2: input \"clips/zz.mp4\": no such video file"),
            "{e}"
        );
        let e = err("video,camera\nclips/a.mp4,\n", "c3.csv");
        assert!(
            e.contains("c3.csv: line 1: unknown column \"video\""),
            "{e}"
        );
        let e = err("input\nclips/a.mp4,cam.yml\n", "c4.csv");
        assert!(e.contains("c4.csv: line 2: 2 fields"), "{e}");
        let e = err("{\"input\": \"clips/a.mp4\"}\n{\"input\": 3}\n", "j1.jsonl");
        assert!(
            e.contains("j1.jsonl: line 2: input = 3 (expected a path as a string)"),
            "{e}"
        );
        let e = err(
            "{\"input\": \"clips/a.mp4\", \"lens\": \"x\"}\n",
            "j2.jsonl",
        );
        assert!(e.contains("j2.jsonl: line 1: unknown key \"lens\""), "{e}");
        let e = err("input,camera,config\n,cam.yml,\n", "c5.csv");
        assert!(e.contains("c5.csv: line 2: input is empty"), "{e}");
        let e = err("# nothing\n", "c6.csv");
        assert!(e.contains("manifest lists no video"), "{e}");
        assert!(!e.contains('\n'));
    }
}
