//! Helpers shared by the integration tests: run the real `iopulse` binary on
//! temporary files and read what it printed and wrote.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub fn iopulse() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iopulse"));
    cmd.env_remove("IOPULSE_BENCH_DIR");
    cmd
}

/// Runs iopulse with `args`; returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out: Output = iopulse().args(args).output().expect("run iopulse");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs iopulse with JSON on stdout and returns the parsed result; panics with
/// stderr if it did not exit 0.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--output-format", "json", "--quiet"]);
    let (code, stdout, stderr) = run(&all);
    assert_eq!(code, 0, "iopulse {all:?} exited {code}\nstderr: {stderr}\nstdout: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}"))
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("iopulse-test-").tempdir().expect("temp dir")
}

pub fn path_str(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

/// A file of `len` bytes of zeros at `dir/name`.
pub fn zero_file(dir: &Path, name: &str, len: u64) -> PathBuf {
    let p = dir.join(name);
    let f = std::fs::File::create(&p).expect("create");
    f.set_len(0).unwrap();
    std::fs::write(&p, vec![0u8; len as usize]).expect("write zeros");
    p
}

/// For each `bs`-byte block of `data` written with `--verify`, the offset its header
/// says it was written for (read independently of iopulse's own code: bytes 0..8 are
/// the magic "IOPULSE\x01", bytes 8..16 the offset); `u64::MAX` for a block without header.
pub fn header_offsets(data: &[u8], bs: usize) -> Vec<u64> {
    data.chunks(bs)
        .map(|b| if &b[..8] == b"IOPULSE\x01" { u64::from_le_bytes(b[8..16].try_into().unwrap()) } else { u64::MAX })
        .collect()
}

/// u64 field of a JSON value by a path of keys (numbers index arrays).
pub fn u64_at(v: &serde_json::Value, path: &[&str]) -> u64 {
    let mut cur = v;
    for k in path {
        cur = match k.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[*k],
        };
    }
    cur.as_u64().unwrap_or_else(|| panic!("{path:?} is not a u64: {cur}"))
}

/// A JSON file, parsed.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The validator of docs/result.schema.json.
pub fn schema_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{} is not a valid schema: {e}", path.display()))
}

/// Panics with every violation if `doc` does not match the result schema.
pub fn assert_valid(validator: &jsonschema::Validator, doc: &serde_json::Value, what: &str) {
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not match docs/result.schema.json:\n{}", errors.join("\n"));
}

/// Root-only facilities (tmpfs, loop devices, blkio throttling) for the fault tests.
pub mod root;
