//! The module graph of `src/` has no import circle, and the layers point one way.
//!
//! Reads every `src/**/*.rs` file as a module (`src/lane/fit/mod.rs` is `lane::fit`,
//! `src/lane/fit/window.rs` is `lane::fit::window`; `src/main.rs` and `src/cli/**` are the binary's
//! modules, under `cli`), strips comments and string literals, skips the items marked
//! `#[cfg(test)]` (only those items: the rest of the file is read), and collects every path it
//! names: `crate::`, `lanes::`, `super::`, `self::` and paths through its own child modules, also
//! inside `{a, b::{c, d}}` groups. A path names the deepest module it passes through. It fails on
//! a circle between modules (printing it) or on an import whose folder is above the importer's
//! folder in [`LAYERS`] (a module may import its own folder and the folders below it).

use crate::repo_root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level folders of `src/` from the bottom layer up. A module may name modules of its
/// own folder or of a folder lower in this table, never higher. ARCHITECTURE.md has the same
/// table with what each folder holds.
pub const LAYERS: &[&str] = &[
    "base", "lane", "video", "geometry", "drive", "fleet", "tools", "cli",
];

/// One module: its path (`["lane", "fit"]`) and its text with comments, strings and test
/// items removed.
struct Module {
    path: Vec<String>,
    file: PathBuf,
    text: String,
}

/// The module path of `rel` (relative to `src/`): `lib.rs` is the library's root (`[]`),
/// `main.rs` is `main` (the binary's root, in the `cli` layer).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    match last.as_str() {
        "lib.rs" | "mod.rs" => {}
        "main.rs" if parts.is_empty() => parts.push("main".into()),
        other => parts.push(other.trim_end_matches(".rs").to_string()),
    }
    parts
}

/// `text` without comments, string and char literals (each replaced by a space).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && !prev_is_ident(b, i)
        {
            // Raw string r"..." / r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            out.push(' ');
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                i = j + 1;
                out.push(' ');
            } else if let Some(len) = text[i + 1..].chars().next().map(|ch| ch.len_utf8()) {
                if b.get(i + 1 + len) == Some(&b'\'') {
                    i += 2 + len;
                    out.push(' ');
                } else {
                    out.push('\'');
                    i += 1;
                }
            } else {
                i += 1;
            }
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn prev_is_ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// The end (exclusive) of the item that starts at or after `from`: past its attributes, to its
/// `;` or its matching `}`.
fn item_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    let mut paren = 0i32;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' => paren += 1,
            b')' | b']' => paren -= 1,
            b';' if paren == 0 => return i + 1,
            b'{' if paren == 0 => {
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                return i + 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                return b.len();
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// `text` (already stripped) without the items marked `#[cfg(test)]`, and the names of
/// child modules declared as test-only (`#[cfg(test)] mod tests;`).
fn without_test_items(text: &str) -> (String, Vec<String>) {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut test_mods = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let after = &rest[i + MARK.len()..];
        let end = item_end(after.as_bytes(), 0);
        let item = &after[..end];
        let words: Vec<&str> = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if item.trim_end().ends_with(';') {
            if let Some(p) = words.iter().position(|w| *w == "mod") {
                if let Some(name) = words.get(p + 1) {
                    test_mods.push(name.to_string());
                }
            }
        }
        out.push(' ');
        rest = &after[end..];
    }
    out.push_str(rest);
    (out, test_mods)
}

/// Every path of two or more segments in `text` (stripped), groups expanded:
/// `use crate::{a::B, c::{D, e}}` gives `crate::a::B`, `crate::c::D`, `crate::c::e`.
fn paths_in(text: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = is_ident_start(chars[i])
            && (i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':'));
        if !starts {
            i += 1;
            continue;
        }
        let (paths, end) = parse_path(&chars, i);
        out.extend(paths.into_iter().filter(|p| p.len() >= 2));
        i = end.max(i + 1);
    }
    out
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn skip_ws(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && chars[i].is_whitespace() {
        i += 1;
    }
    i
}

/// The paths of `ident(::ident)*(::{group})?` at `i`, and where it ends.
fn parse_path(chars: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        let s = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        prefix.push(chars[s..i].iter().collect::<String>());
        let j = skip_ws(chars, i);
        if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
            let k = skip_ws(chars, j + 2);
            match chars.get(k) {
                Some(&c) if is_ident_start(c) => i = k,
                Some(&'{') => {
                    let (group, end) = parse_group(chars, k + 1);
                    let paths = if group.is_empty() {
                        vec![prefix]
                    } else {
                        group
                            .into_iter()
                            .map(|g| prefix.iter().cloned().chain(g).collect())
                            .collect()
                    };
                    return (paths, end);
                }
                _ => return (vec![prefix], k),
            }
        } else {
            return (vec![prefix], i);
        }
    }
}

/// The paths inside `{ ... }` starting after the `{`, and the index after the `}`.
fn parse_group(chars: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut out = Vec::new();
    loop {
        i = skip_ws(chars, i);
        match chars.get(i) {
            None => return (out, i),
            Some(&'}') => return (out, i + 1),
            Some(&c) if is_ident_start(c) => {
                let (paths, end) = parse_path(chars, i);
                out.extend(paths);
                i = end;
            }
            Some(_) => i += 1,
        }
    }
}

/// Every module under `src` (library and binary), its text ready for scanning.
fn read_modules(src: &Path) -> Vec<Module> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    files.sort();
    let mut mods: Vec<Module> = Vec::new();
    let mut test_only: BTreeSet<Vec<String>> = BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap().to_path_buf();
        let path = module_path(&rel);
        let raw = std::fs::read_to_string(&f).unwrap();
        let (text, test_mods) = without_test_items(&strip(&raw));
        for t in test_mods {
            let mut p = path.clone();
            p.push(t);
            test_only.insert(p);
        }
        mods.push(Module {
            path,
            file: rel,
            text,
        });
    }
    mods.retain(|m| !test_only.iter().any(|t| m.path.starts_with(t)));
    mods
}

/// Whether `path` is a module of the binary (`main.rs`, `src/cli/**`).
fn in_binary(path: &[String]) -> bool {
    path.first().is_some_and(|f| f == "cli" || f == "main")
}

/// The folder (layer name) of a module: `main.rs` belongs to `cli`.
fn folder(path: &[String]) -> Option<&str> {
    path.first()
        .map(|f| if f == "main" { "cli" } else { f.as_str() })
}

/// module -> the modules it names.
type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// The graph of every module under `src`, and the modules.
fn module_graph(src: &Path) -> (Graph, Vec<Module>) {
    let mods = read_modules(src);
    let known: BTreeSet<Vec<String>> = mods.iter().map(|m| m.path.clone()).collect();
    // The deepest known module `p` passes through.
    let deepest = |p: &[String]| -> Option<Vec<String>> {
        (1..=p.len())
            .rev()
            .map(|n| p[..n].to_vec())
            .find(|c| known.contains(c))
    };
    let mut g = BTreeMap::new();
    for m in &mods {
        let bin = in_binary(&m.path);
        // Where `self::` and child paths start: main.rs is the binary's root (its `cli::x` is
        // the module `cli::x`), every other module is itself.
        let scope: Vec<String> = if m.path == ["main"] {
            Vec::new()
        } else {
            m.path.clone()
        };
        let mut deps = BTreeSet::new();
        for p in paths_in(&m.text) {
            let resolved: Option<Vec<String>> = match p[0].as_str() {
                "crate" if bin => Some(p[1..].to_vec()),
                "crate" => Some(p[1..].to_vec()),
                "lanes" if bin => Some(p[1..].to_vec()),
                "self" | "super" => {
                    let mut base = scope.clone();
                    let mut k = 0;
                    while p.get(k).is_some_and(|s| s == "self" || s == "super") {
                        if p[k] == "super" {
                            base.pop();
                        }
                        k += 1;
                    }
                    Some(base.into_iter().chain(p[k..].to_vec()).collect())
                }
                first => {
                    // A path through a child module of this one (`decode::VideoSource` in
                    // `video/mod.rs`).
                    let mut child = scope.clone();
                    child.push(first.to_string());
                    known
                        .contains(&child)
                        .then(|| child.into_iter().chain(p[1..].to_vec()).collect())
                }
            };
            // In the binary, `crate::` paths that are not `cli::...` name nothing we track.
            let Some(r) = resolved else { continue };
            if let Some(d) = deepest(&r) {
                if d != m.path && !d.is_empty() {
                    deps.insert(d);
                }
            }
        }
        g.insert(m.path.clone(), deps);
    }
    (g, mods)
}

/// A circle in `g`, if any (depth-first search), as the modules along it.
fn find_cycle<N: Ord + Clone>(g: &BTreeMap<N, BTreeSet<N>>) -> Option<Vec<N>> {
    fn dfs<N: Ord + Clone>(
        g: &BTreeMap<N, BTreeSet<N>>,
        v: &N,
        path: &mut Vec<N>,
        done: &mut BTreeSet<N>,
    ) -> Option<Vec<N>> {
        if let Some(i) = path.iter().position(|p| p == v) {
            let mut c = path[i..].to_vec();
            c.push(v.clone());
            return Some(c);
        }
        if done.contains(v) {
            return None;
        }
        path.push(v.clone());
        for w in g.get(v).into_iter().flatten() {
            if let Some(c) = dfs(g, w, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(v.clone());
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

fn name(p: &[String]) -> String {
    if p.is_empty() {
        "crate".into()
    } else {
        p.join("::")
    }
}

/// What is wrong with the tree under `src`: circles and upward imports, one line each.
pub fn violations(src: &Path) -> Vec<String> {
    let (g, mods) = module_graph(src);
    let mut out = Vec::new();
    // Every circle, one per group of modules that reach each other.
    let mut g2 = g.clone();
    while let Some(c) = find_cycle(&g2) {
        out.push(format!(
            "import circle: {}",
            c.iter().map(|p| name(p)).collect::<Vec<_>>().join(" -> ")
        ));
        // Cut the circle's first edge and look for the next.
        if let Some(deps) = g2.get_mut(&c[0]) {
            deps.remove(&c[1]);
        }
    }
    let layer = |p: &[String]| folder(p).and_then(|f| LAYERS.iter().position(|l| *l == f));
    for m in &mods {
        if m.path.is_empty() {
            continue;
        }
        let Some(lm) = layer(&m.path) else {
            out.push(format!(
                "{}: folder `{}` is not in LAYERS",
                m.file.display(),
                m.path[0]
            ));
            continue;
        };
        for d in &g[&m.path] {
            match layer(d) {
                Some(ld) if ld > lm => out.push(format!(
                    "{}: {} ({}) imports {} ({}), a layer up",
                    m.file.display(),
                    name(&m.path),
                    LAYERS[lm],
                    name(d),
                    LAYERS[ld]
                )),
                _ => {}
            }
        }
    }
    out
}

/// A copy of `src/` in a temporary folder, for planting imports in real files.
fn copy_src() -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            let t = to.join(p.file_name().unwrap());
            if p.is_dir() {
                copy(&p, &t);
            } else {
                std::fs::copy(&p, &t).unwrap();
            }
        }
    }
    let d = tempfile::tempdir().unwrap();
    copy(&repo_root().join("src"), d.path());
    d
}

/// Insert `line` into the file `rel` under `src` after the first line containing `after`.
fn plant(src: &Path, rel: &str, after: &str, line: &str) {
    let f = src.join(rel);
    let text = std::fs::read_to_string(&f).unwrap();
    let i = text
        .find(after)
        .unwrap_or_else(|| panic!("{rel} has no `{after}`"));
    let eol = i + text[i..].find('\n').unwrap() + 1;
    let planted = format!("{}{line}\n{}", &text[..eol], &text[eol..]);
    std::fs::write(&f, planted).unwrap();
}

#[test]
fn the_scanner_reads_groups_relative_paths_and_skips_only_test_items() {
    let text = strip(
        "use crate::{a::B, c::{D, e}};\n// crate::commented::Out\nlet s = \"crate::in_string::X\";\n\
         #[cfg(test)]\nfn helper() { crate::test_only::Y }\nfn after() { super::sib::Z; }\n\
         #[cfg(test)]\nmod tests { use crate::t::U; }\nlet c = '{'; let x = crate::last::W;",
    );
    let (text, _) = without_test_items(&text);
    let got: Vec<String> = paths_in(&text).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        vec![
            "crate::a::B",
            "crate::c::D",
            "crate::c::e",
            "super::sib::Z",
            "crate::last::W"
        ]
    );
    let mut g = BTreeMap::new();
    g.insert("a", BTreeSet::from(["b"]));
    g.insert("b", BTreeSet::from(["c"]));
    g.insert("c", BTreeSet::from(["a"]));
    assert_eq!(find_cycle(&g).unwrap(), vec!["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&g), None);
}

#[test]
fn src_has_no_import_circle_and_layers_point_down() {
    let src = repo_root().join("src");
    let (g, _) = module_graph(&src);
    for (m, deps) in &g {
        println!(
            "{} -> {}",
            name(m),
            deps.iter().map(|d| name(d)).collect::<Vec<_>>().join(", ")
        );
    }
    assert!(g.len() > 60, "too few modules found: {}", g.len());
    // The tree shows the layers: at most 8 modules directly under src/, none over 700 lines.
    let top: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "lib.rs" && n != "main.rs")
        .collect();
    assert!(top.len() <= 8, "modules directly under src/: {top:?}");
    for f in top.iter().filter(|n| !n.ends_with(".rs")) {
        assert!(
            LAYERS.contains(&f.as_str()),
            "src/{f} is not a layer folder"
        );
    }
    let mut long = Vec::new();
    for m in read_modules(&src) {
        let n = std::fs::read_to_string(src.join(&m.file))
            .unwrap()
            .lines()
            .count();
        if n > 700 {
            long.push(format!("{}: {n} lines", m.file.display()));
        }
    }
    assert!(long.is_empty(), "files over 700 lines: {long:?}");
    let v = violations(&src);
    assert!(v.is_empty(), "{}", v.join("\n"));
}

/// The checker run on a copy of the real tree with an import planted: after a test-only helper
/// in the middle of a file, through `super::`, and a circle between two files of one folder.
#[test]
fn planted_upward_imports_and_circles_in_real_files_are_caught() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "upward import after a test-only helper",
            "base/telemetry.rs",
            "pub fn read_jsonl",
            "fn planted() -> Option<crate::video::VideoJob> { None }",
        ),
        (
            "upward import through super::",
            "lane/track/lane.rs",
            "use ",
            "use super::super::super::video::VideoJob;",
        ),
        (
            "circle between two files of one folder",
            "lane/measure.rs",
            "use ",
            "use crate::lane::pipeline::Pipeline;",
        ),
    ];
    let clean = copy_src();
    assert_eq!(violations(clean.path()), Vec::<String>::new());
    for (what, rel, after, line) in cases {
        let d = copy_src();
        plant(d.path(), rel, after, line);
        let v = violations(d.path());
        assert!(!v.is_empty(), "{what}: not caught");
        println!("{what}: {}", v.join(" | "));
    }
}
