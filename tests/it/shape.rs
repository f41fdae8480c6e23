//! The shape of the source, held: no file in src/ over 700 lines, no function over 120
//! lines (test code left out), no struct over 15 fields. What is over today is listed with
//! its size as a ceiling (docs/architecture.md, "Shape"): a listed item may shrink, never
//! grow, and is taken off the list once it fits; anything new over a limit fails.

use crate::architecture::sources;
use std::collections::BTreeMap;
use std::path::Path;

const FILE_MAX_LINES: usize = 700;
const FN_MAX_LINES: usize = 120;
const STRUCT_MAX_FIELDS: usize = 15;

/// What is over a limit today, with its size now: the ceiling it may not pass. Each is
/// on its way to being split by concern (issue "A lighter house").
const STILL_OVER: &[(&str, usize)] = &[];

/// Structs that mirror another tool's document field for field (fio's JSON job and its
/// per-direction figures): their size is fio's, not ours to split.
const MIRRORS: &[&str] = &["struct output/report/fio_json.rs FioJob", "struct output/report/fio_json.rs FioOp"];

/// A line without its comment and string contents, so braces can be counted.
fn code_of(line: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_string => {
                chars.next();
            }
            '"' => in_string = !in_string,
            '/' if !in_string && chars.peek() == Some(&'/') => break,
            // A char literal holding a brace or a quote: '{', '}', '"'.
            '\'' if !in_string => {
                let rest: String = chars.clone().take(3).collect();
                if rest.len() >= 2 && rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                } else if rest.starts_with('\\') && rest.chars().nth(2) == Some('\'') {
                    chars.next();
                    chars.next();
                    chars.next();
                } else {
                    out.push(c);
                }
            }
            _ if in_string => {}
            _ => out.push(c),
        }
    }
    out
}

/// The name after `keyword ` when the line declares one (`pub(crate) fn name<`, `struct Name {`).
fn declared(code: &str, keyword: &str) -> Option<String> {
    let words: Vec<&str> = code.split_whitespace().collect();
    let at = words.iter().position(|w| *w == keyword)?;
    let before_ok =
        words[..at].iter().all(|w| w.starts_with("pub") || ["const", "async", "unsafe", "extern", "\"C\""].contains(w));
    let name: String = words.get(at + 1)?.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (before_ok && !name.is_empty()).then_some(name)
}

/// The lines of an item starting at `start` (its braces balanced), or None for a
/// declaration without a body.
fn item_end(code: &[String], start: usize) -> Option<usize> {
    let mut depth = 0i64;
    let mut opened = false;
    for (i, line) in code.iter().enumerate().skip(start) {
        if !opened && line.contains(';') && !line.contains('{') {
            return None;
        }
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        opened |= line.contains('{');
        if opened && depth <= 0 {
            return Some(i);
        }
    }
    None
}

/// Every item over a limit in one file: "file F" / "fn F name" / "struct F Name" → size.
fn over_limits(rel: &str, text: &str, out: &mut BTreeMap<String, usize>) {
    let lines = text.lines().count();
    if lines > FILE_MAX_LINES {
        out.insert(format!("file {rel}"), lines);
    }
    // Test code may be as long as it needs: the test module (inline, or a tests.rs) is left out.
    let body = match text.find("#[cfg(test)]\nmod tests") {
        _ if rel == "tests.rs" || rel.ends_with("/tests.rs") => "",
        Some(i) => &text[..i],
        None => text,
    };
    let raw: Vec<&str> = body.lines().collect();
    let code: Vec<String> = raw.iter().map(|l| code_of(l)).collect();
    for (i, line) in code.iter().enumerate() {
        let is_test = i > 0 && raw[i.saturating_sub(3)..i].iter().any(|l| l.trim() == "#[test]");
        if let (Some(name), false) = (declared(line, "fn"), is_test) {
            let len = item_end(&code, i).map_or(0, |end| end - i + 1);
            if len > FN_MAX_LINES {
                let key = format!("fn {rel} {name}");
                let longest = out.get(&key).copied().unwrap_or(0).max(len);
                out.insert(key, longest);
            }
        }
        if let Some(name) = declared(line, "struct") {
            if !line.trim_end().ends_with('{') {
                continue; // a tuple or unit struct
            }
            let Some(end) = item_end(&code, i) else { continue };
            let mut depth = 0i64;
            let mut fields = 0;
            for field_line in &code[i..=end] {
                let t = field_line.trim();
                let t = t.strip_prefix("pub(crate) ").or_else(|| t.strip_prefix("pub ")).unwrap_or(t);
                let t = t.strip_prefix("pub(super) ").unwrap_or(t);
                let ident_then_colon = t.split_once(':').is_some_and(|(head, tail)| {
                    !head.is_empty() && head.chars().all(|c| c.is_alphanumeric() || c == '_') && !tail.starts_with(':')
                });
                if depth == 1 && ident_then_colon {
                    fields += 1;
                }
                depth += field_line.matches('{').count() as i64 - field_line.matches('}').count() as i64;
            }
            if fields > STRUCT_MAX_FIELDS {
                out.insert(format!("struct {rel} {name}"), fields);
            }
        }
    }
}

fn measured() -> BTreeMap<String, usize> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut out = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        over_limits(&rel, &std::fs::read_to_string(file).unwrap(), &mut out);
    }
    for mirror in MIRRORS {
        out.remove(*mirror);
    }
    out
}

#[test]
fn no_file_function_or_struct_grows_past_its_limit() {
    let now = measured();
    let listed: BTreeMap<&str, usize> = STILL_OVER.iter().copied().collect();
    let mut problems = Vec::new();
    for (item, size) in &now {
        match listed.get(item.as_str()) {
            None => problems.push(format!(
                "{item}: {size} (limits: {FILE_MAX_LINES} lines a file, {FN_MAX_LINES} a function, \
                 {STRUCT_MAX_FIELDS} fields a struct; split it by concern)"
            )),
            Some(ceiling) if size > ceiling => {
                problems.push(format!("{item}: {size}, grown past its ceiling {ceiling}; split it, do not raise it"))
            }
            Some(_) => {}
        }
    }
    for item in listed.keys() {
        if !now.contains_key(*item) {
            problems.push(format!("{item} is within its limit now: take it off STILL_OVER"));
        }
    }
    assert!(problems.is_empty(), "the shape of src/:\n{}", problems.join("\n"));
}

#[test]
fn the_shape_check_sees_long_functions_and_wide_structs() {
    let mut text = String::from("pub(crate) fn long() {\n");
    text.push_str(&"    let s = \"}\"; // {\n".repeat(FN_MAX_LINES));
    text.push_str("}\nstruct Wide {\n");
    for i in 0..=STRUCT_MAX_FIELDS {
        text.push_str(&format!("    pub f{i}: u64,\n"));
    }
    text.push_str("    nested: std::collections::BTreeMap<u8, u8>,\n}\n#[cfg(test)]\nmod tests {\n");
    text.push_str(&"    fn in_tests() {\n    }\n".repeat(FILE_MAX_LINES));
    text.push_str("}\n");
    let mut out = BTreeMap::new();
    over_limits("x.rs", &text, &mut out);
    assert_eq!(out.get("fn x.rs long"), Some(&(FN_MAX_LINES + 2)));
    assert_eq!(out.get("struct x.rs Wide"), Some(&(STRUCT_MAX_FIELDS + 2)));
    assert!(out.contains_key("file x.rs"));
    assert!(!out.contains_key("fn x.rs in_tests"), "test code is left out of the function limit");
}
