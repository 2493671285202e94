//! The module graph of `src/` has no import circle, and the layers point one way.
//!
//! Reads every `src/**/*.rs` file, takes the top-level module it belongs to (`src/fit/poly.rs`
//! is `fit`, `src/cli/*.rs` and `src/main.rs` are `cli`), collects the modules it names through
//! `crate::NAME` (or `lanes::NAME` in the binary), ignoring `#[cfg(test)]` modules, and fails on
//! a cycle (printing it) or on an edge that goes up the layer table below.

use crate::repo_root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Layers from the bottom: a module may name modules of its own layer or lower, never higher.
/// (Within a layer, the cycle check keeps the graph one-way.)
const LAYERS: &[&[&str]] = &[
    &["error", "stats", "cancel", "still", "atomic", "same_file"],
    &[
        "config",
        "poly",
        "frame",
        "camera",
        "telemetry",
        "summary",
        "yuv",
    ],
    &[
        "calibrate",
        "undistort",
        "warp",
        "threshold",
        "fit",
        "measure",
        "confidence",
        "track",
        "events",
    ],
    &["pipeline", "synth"],
    &["render"],
    &["present", "autoperspective"],
    &["video", "sample"],
    &[
        "eval",
        "tune",
        "report",
        "batch",
        "batch_index",
        "manifest",
        "queue",
        "floors",
        "selfcal",
    ],
    &["cli"],
];

fn layer_of(m: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&m))
}

fn rs_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Names following `prefix` (`crate::` or `lanes::`), also inside `prefix{a, b::c}` groups.
fn named_modules(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        // Skip matches inside a longer path (`my_crate::`).
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let n = ident(part);
                if !n.is_empty() {
                    out.insert(n);
                }
            }
        } else {
            let n = ident(rest);
            if !n.is_empty() {
                out.insert(n);
            }
        }
    }
    out
}

fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = repo_root().join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let (module, prefix) = match module.as_str() {
            "lib" => continue,
            "main" | "cli" => ("cli".to_string(), "lanes::"),
            _ => (module, "crate::"),
        };
        let text = std::fs::read_to_string(&f).unwrap();
        let text = match text.find("#[cfg(test)]") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        let deps = g.entry(module.clone()).or_default();
        for d in named_modules(text, prefix) {
            if d != module {
                deps.insert(d);
            }
        }
    }
    let modules: BTreeSet<String> = g.keys().cloned().collect();
    for deps in g.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    g
}

/// A cycle through `start`, if any (depth-first search).
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn dfs(
        g: &BTreeMap<String, BTreeSet<String>>,
        v: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == v) {
            let mut c = path[i..].to_vec();
            c.push(v.to_string());
            return Some(c);
        }
        if done.contains(v) {
            return None;
        }
        path.push(v.to_string());
        for w in g.get(v).into_iter().flatten() {
            if let Some(c) = dfs(g, w, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(v.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for v in g.keys() {
        if let Some(c) = dfs(g, v, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_checker_finds_a_planted_cycle_and_grouped_imports() {
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(find_cycle(&g).unwrap(), vec!["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&g), None);
    let names = named_modules(
        "use crate::{fit::Poly2, warp};\nlet x = crate::render::f(); other_crate::zzz",
        "crate::",
    );
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        vec!["fit", "render", "warp"]
    );
}

#[test]
fn src_modules_have_no_import_cycle_and_layers_point_down() {
    let g = module_graph();
    for (m, deps) in &g {
        println!(
            "{m} -> {}",
            deps.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    assert!(g.len() > 15, "too few modules found: {g:?}");
    if let Some(c) = find_cycle(&g) {
        panic!("import cycle among src/ modules: {}", c.join(" -> "));
    }
    let mut up = Vec::new();
    for (m, deps) in &g {
        let lm = layer_of(m).unwrap_or_else(|| panic!("module `{m}` is not in LAYERS"));
        for d in deps {
            let ld = layer_of(d).unwrap_or_else(|| panic!("module `{d}` is not in LAYERS"));
            if ld > lm {
                up.push(format!("{m} (layer {lm}) -> {d} (layer {ld})"));
            }
        }
    }
    assert!(
        up.is_empty(),
        "imports that go up a layer:\n{}",
        up.join("\n")
    );
}
