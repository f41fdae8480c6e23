//! The module graph has no cycle: read from the `crate::X` paths of every source file (its
//! `#[cfg(test)] mod tests` and the tests.rs files left out: a test may reach anywhere), the crate's top-level
//! modules (a folder or a file under src/) must import each other one way only, and so
//! must the files of each folder among themselves (`super::X`, `crate::FOLDER::X`). A
//! cycle is reported with the files that make each arrow of it.

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

#[test]
fn no_module_imports_back_into_a_module_that_imports_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    // Top-level modules, and the files of each folder among themselves.
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut inner: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut why: BTreeMap<(String, String), String> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
        let module = parts[0].clone();
        // Test code may reach anywhere: the inline test modules and the tests.rs files.
        if module == "main" || module == "lib" || parts.last().is_some_and(|p| p == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let text = without_tests(&text);
        for target in names_after(text, "crate::") {
            if target != module {
                why.entry((module.clone(), target.clone())).or_insert_with(|| rel.display().to_string());
                top.entry(module.clone()).or_default().insert(target);
            }
        }
        // Inside a folder: its files and subfolders (a subfolder is one node, all its files'
        // imports its own), their `crate::FOLDER::X`, and `super::X` where it names the
        // folder (from a file directly in it, or a subfolder's mod.rs).
        if parts.len() >= 2 && !(parts.len() == 2 && parts[1] == "mod") {
            let me = parts[1].clone();
            let mut targets = names_after(text, &format!("crate::{module}::"));
            if parts.len() == 2 || (parts.len() == 3 && parts[2] == "mod") {
                targets.extend(names_after(text, "super::"));
            }
            for target in targets {
                if target != me && target != "super" {
                    why.entry((format!("{module}/{me}"), format!("{module}/{target}")))
                        .or_insert_with(|| rel.display().to_string());
                    inner.entry(module.clone()).or_default().entry(me.clone()).or_default().insert(target);
                }
            }
        }
    }
    let mut found = Vec::new();
    let arrows = |members: &[String], prefix: &str| -> Vec<String> {
        let named: Vec<String> = members.iter().map(|m| format!("{prefix}{m}")).collect();
        why.iter()
            .filter(|((a, b), _)| named.contains(a) && named.contains(b))
            .map(|((a, b), file)| format!("{a} -> {b} (in {file})"))
            .collect()
    };
    for cycle in cycles(&top) {
        found.push(format!("top-level modules: {}", arrows(&cycle, "").join("; ")));
    }
    for (folder, edges) in &inner {
        for cycle in cycles(edges) {
            found.push(format!("files of src/{folder}/: {}", arrows(&cycle, &format!("{folder}/")).join("; ")));
        }
    }
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
    assert!(top.len() > 20, "only {} modules read: is src/ where the test looks?", top.len());
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

/// Where `unsafe` may be written: the engines (engine/, the metadata benchmark's tree
/// operations among them) and the other kernel calls (sys/), each block behind a safe
/// function.
const UNSAFE_HOMES: [&str; 2] = ["engine/", "sys/"];

/// Files outside those homes that still hold `unsafe`, each for a reason on its way out
/// (docs/architecture.md): the I/O loop's call of the seam's `unsafe fn queue`, whose
/// contract (a slot's bytes untouched until its completion) the worker's slot bookkeeping
/// keeps. The list only shrinks: a file not on it that gains `unsafe` fails the test.
const UNSAFE_STILL_ELSEWHERE: [&str; 1] = ["worker/io_loop.rs"];

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
    assert!(offenders.is_empty(), "unsafe outside engine/ and sys/: {}", offenders.join(", "));
    // The list of exceptions is exact: one that has no unsafe left is taken off it.
    let listed: BTreeSet<String> = UNSAFE_STILL_ELSEWHERE.iter().map(|s| s.to_string()).collect();
    assert_eq!(still, listed, "take the files without unsafe off UNSAFE_STILL_ELSEWHERE");
}
