//! The layers and the module graph. src/ is a pipeline of folders, each a layer that imports
//! only the layers below it (`LAYERS`, in order; docs/architecture.md, "Layers"), read from
//! the `crate::X` paths of every source file (its `#[cfg(test)] mod tests` and the tests.rs
//! files left out: a test may reach anywhere). Inside a layer its modules import each other
//! one way only (`crate::LAYER::X`, `super::X`), and so do the files of each module
//! (`crate::LAYER::MODULE::X`, `super::X`). A cycle is reported with the files that make
//! each arrow of it, an arrow up the layers with the file that draws it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every .rs file under `dir` (also what tests/it/shape.rs measures).
pub(crate) fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of a file without its inline test module.
fn without_tests(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The identifiers that follow `prefix` in `text` (`crate::` → `spec`, `report`, ...),
/// including those listed in braces (`crate::{spec, units}`).
fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        // `xcrate::` is not `crate::`.
        let before_ok = rest[..i].chars().last().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if before_ok {
            if let Some(list) = after.strip_prefix('{') {
                let end = list.find('}').unwrap_or(list.len());
                for part in list[..end].split(',') {
                    let name = ident(part.trim());
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            } else {
                let name = ident(after);
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
        rest = after;
    }
    out
}

/// Tarjan's strongly connected components with more than one member.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The layers of src/, from the top: each imports only those after it. `testing.rs` (what
/// the tests and benches reach) and the binary's `main.rs` stand outside.
const LAYERS: [&str; 9] =
    ["commands", "front", "output", "coordination", "figures", "storage", "workload", "io", "base"];

/// Every arrow of the source: (from, to) at each granularity, with a file that draws it.
struct Arrows {
    /// Between layers.
    layers: BTreeMap<String, BTreeSet<String>>,
    /// Between the modules of each layer (`layer` -> module -> modules).
    modules: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// Between the files and subfolders of each module (`layer/module` -> ...).
    files: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    why: BTreeMap<(String, String), String>,
}

/// The arrows inside `scope` (a layer, or a layer's module) drawn by the file at `parts`
/// (its path under src/, split), which lies `depth` folders below src/ in that scope: its
/// `crate::SCOPE::X` names and, from a file directly in the scope (or a subfolder's
/// mod.rs), its `super::X` names.
fn scope_arrows(text: &str, parts: &[String], depth: usize) -> Option<(String, BTreeSet<String>)> {
    if parts.len() <= depth || (parts.len() == depth + 1 && parts[depth] == "mod") {
        return None;
    }
    let scope = parts[..depth].join("::");
    let mut targets = names_after(text, &format!("crate::{scope}::"));
    if parts.len() == depth + 1 || (parts.len() == depth + 2 && parts[depth + 1] == "mod") {
        targets.extend(names_after(text, "super::"));
    }
    targets.remove(&parts[depth]);
    targets.remove("super");
    Some((parts[depth].clone(), targets))
}

fn arrows() -> Arrows {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut out =
        Arrows { layers: BTreeMap::new(), modules: BTreeMap::new(), files: BTreeMap::new(), why: BTreeMap::new() };
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
        let layer = parts[0].clone();
        // Test code may reach anywhere: the inline test modules and the tests.rs files.
        if ["main", "lib", "io_crate"].contains(&layer.as_str()) || parts.last().is_some_and(|p| p == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let text = without_tests(&text);
        let mut note = |from: String, to: String| {
            out.why.entry((from, to)).or_insert_with(|| rel.display().to_string());
        };
        for target in names_after(text, "crate::") {
            if target != layer {
                note(layer.clone(), target.clone());
                out.layers.entry(layer.clone()).or_default().insert(target);
            }
        }
        if let Some((me, targets)) = scope_arrows(text, &parts, 1) {
            for target in targets {
                note(format!("{layer}/{me}"), format!("{layer}/{target}"));
                out.modules.entry(layer.clone()).or_default().entry(me.clone()).or_default().insert(target);
            }
        }
        if let Some((me, targets)) = scope_arrows(text, &parts, 2) {
            let module = format!("{layer}/{}", parts[1]);
            for target in targets {
                note(format!("{module}/{me}"), format!("{module}/{target}"));
                out.files.entry(module.clone()).or_default().entry(me.clone()).or_default().insert(target);
            }
        }
    }
    out
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let arrows = arrows();
    let rank = |layer: &str| LAYERS.iter().position(|l| *l == layer);
    let mut up = Vec::new();
    // What the root holds besides the layers is no layer: `testing`, and the macros
    // (`crate::stderr_line!`).
    let is_folder = |name: &str| arrows.layers.contains_key(name) || rank(name).is_some();
    for (from, targets) in &arrows.layers {
        let Some(from_rank) = rank(from) else {
            assert!(from == "testing", "src/{from} is in no layer: put it in one of {LAYERS:?}");
            continue;
        };
        for to in targets.iter().filter(|t| is_folder(t)) {
            match rank(to) {
                Some(to_rank) if to_rank > from_rank => {}
                _ => up.push(format!("{from} -> {to} (in {})", arrows.why[&(from.clone(), to.clone())])),
            }
        }
    }
    assert!(up.is_empty(), "arrows up the layers ({}):\n{}", LAYERS.join(" > "), up.join("\n"));
    // Every layer is a folder of src/, and every folder of src/ is a layer.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let folders: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let layers: BTreeSet<String> = LAYERS.iter().map(|l| l.to_string()).collect();
    assert_eq!(folders, layers, "the folders of src/ are the layers");
    assert!(
        arrows.layers.len() >= LAYERS.len(),
        "only {} layers read: is src/ where the test looks?",
        arrows.layers.len()
    );
}

/// The lowest layers are a crate of their own (crates/iopulse-io, its root src/io_crate.rs),
/// built with the release profile's full optimisation while the rest builds quickly: it
/// holds exactly the last layers of `LAYERS`, so that an arrow from them up is also a
/// compile error, and the `iopulse` crate declares every other layer itself.
#[test]
fn the_io_crate_holds_the_lowest_layers_and_the_rest_the_others() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("crates/iopulse-io/Cargo.toml")).unwrap();
    assert!(manifest.contains("path = \"../../src/io_crate.rs\""), "the io crate's root is src/io_crate.rs");
    let declared = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(root.join("src").join(file)).unwrap();
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
            .map(|m| m.trim_end_matches(';').to_string())
            .filter(|m| LAYERS.contains(&m.as_str()))
            .collect()
    };
    let mut in_io_crate = declared("io_crate.rs");
    in_io_crate.sort();
    let mut lowest: Vec<String> = LAYERS[LAYERS.len() - 2..].iter().map(|l| l.to_string()).collect();
    lowest.sort();
    assert_eq!(in_io_crate, lowest, "src/io_crate.rs declares the lowest layers");
    let mut in_lib = declared("lib.rs");
    in_lib.sort();
    let mut others: Vec<String> = LAYERS[..LAYERS.len() - 2].iter().map(|l| l.to_string()).collect();
    others.sort();
    assert_eq!(in_lib, others, "src/lib.rs declares the other layers");
}

#[test]
fn no_module_imports_back_into_a_module_that_imports_it() {
    let arrows = arrows();
    let mut found = Vec::new();
    let drawn = |members: &[String], prefix: &str| -> Vec<String> {
        let named: Vec<String> = members.iter().map(|m| format!("{prefix}{m}")).collect();
        arrows
            .why
            .iter()
            .filter(|((a, b), _)| named.contains(a) && named.contains(b))
            .map(|((a, b), file)| format!("{a} -> {b} (in {file})"))
            .collect()
    };
    for cycle in cycles(&arrows.layers) {
        found.push(format!("layers: {}", drawn(&cycle, "").join("; ")));
    }
    for (scope, edges) in arrows.modules.iter().chain(&arrows.files) {
        for cycle in cycles(edges) {
            found.push(format!("src/{scope}/: {}", drawn(&cycle, &format!("{scope}/")).join("; ")));
        }
    }
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
    let modules: usize = arrows.modules.values().map(BTreeMap::len).sum();
    assert!(modules > 20, "only {modules} modules read: is src/ where the test looks?");
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    edges.entry("c".into()).or_default().insert("a".into());
    edges.entry("c".into()).or_default().insert("d".into());
    assert_eq!(cycles(&edges), vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
    assert_eq!(names_after("use crate::{spec, units::x};\nxcrate::no crate::run::y", "crate::").len(), 3);
}

/// Where `unsafe` may be written: the engines (io/engine/, the metadata benchmark's tree
/// operations among them) and the other kernel calls (base/sys/), each block behind a safe
/// function.
const UNSAFE_HOMES: [&str; 2] = ["io/engine/", "base/sys/"];

/// Files outside those homes that still hold `unsafe`, each for a reason on its way out
/// (docs/architecture.md): the I/O loop's call of the seam's `unsafe fn queue`, whose
/// contract (a slot's bytes untouched until its completion) the worker's slot bookkeeping
/// keeps. The list only shrinks: a file not on it that gains `unsafe` fails the test.
const UNSAFE_STILL_ELSEWHERE: [&str; 1] = ["io/worker/io_loop.rs"];

#[test]
fn unsafe_lives_only_in_engine_and_sys() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let is_unsafe_code = |line: &str| {
        let code = line.split("//").next().unwrap_or("");
        let code = code.split('"').step_by(2).collect::<String>(); // strings left out
        ["unsafe {", "unsafe fn", "unsafe impl", "unsafe extern"].iter().any(|k| code.contains(k))
    };
    let mut offenders = Vec::new();
    let mut still = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        let count = text.lines().filter(|l| is_unsafe_code(l)).count();
        if count == 0 || UNSAFE_HOMES.iter().any(|h| rel.starts_with(h)) {
            continue;
        }
        if UNSAFE_STILL_ELSEWHERE.contains(&rel.as_str()) {
            still.insert(rel);
        } else {
            offenders.push(format!("{rel} ({count})"));
        }
    }
    assert!(offenders.is_empty(), "unsafe outside io/engine/ and base/sys/: {}", offenders.join(", "));
    // The list of exceptions is exact: one that has no unsafe left is taken off it.
    let listed: BTreeSet<String> = UNSAFE_STILL_ELSEWHERE.iter().map(|s| s.to_string()).collect();
    assert_eq!(still, listed, "take the files without unsafe off UNSAFE_STILL_ELSEWHERE");
}
