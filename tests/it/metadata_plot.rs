//! `--plot DIR` on metadata runs (`--files`): the charts a real run writes are well-formed
//! SVG whose title and legend name every operation kind of the result (and its phases),
//! with one drawn line per kind; a `--plot` that is a file, a target, or whose charts
//! would land on an input or another output is refused before the tree is made.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// What a chart shows: its title, its legend's entries, and how many data lines it draws
/// (the 2 px polylines not within the legend's box: the legend's own samples are).
struct Drawn {
    title: String,
    legend: Vec<String>,
    lines: usize,
}

fn drawn(svg: &Path) -> Drawn {
    let text = std::fs::read_to_string(svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{} is not XML: {e}", svg.display()));
    let num = |n: roxmltree::Node, a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
    let legend = doc
        .descendants()
        .find(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("none"))
        .map(|n| [num(n, "x"), num(n, "y"), num(n, "x") + num(n, "width"), num(n, "y") + num(n, "height")])
        .unwrap_or_else(|| panic!("{}: no legend", svg.display()));
    let inside = |x: f64, y: f64| x >= legend[0] && x <= legend[2] && y >= legend[1] && y <= legend[3];
    let texts: Vec<(f64, f64, String)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| (num(n, "x"), num(n, "y"), n.text().unwrap_or("").trim().to_string()))
        .collect();
    // The title is the first text drawn (the caption), above the plot.
    let title = texts.first().map(|t| t.2.clone()).unwrap_or_default();
    let legend_texts = texts.iter().filter(|(x, y, _)| inside(*x, *y)).map(|t| t.2.clone()).collect();
    let mut lines = 0;
    for line in doc.descendants().filter(|n| n.has_tag_name("polyline") && n.attribute("stroke-width") == Some("2")) {
        let points: Vec<(f64, f64)> = line
            .attribute("points")
            .unwrap()
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        if !points.iter().all(|&(x, y)| inside(x, y)) {
            lines += 1;
        }
    }
    Drawn { title, legend: legend_texts, lines }
}

/// The operation kinds of each phase of a result, as (phase, kind).
fn kinds(r: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for phase in r["phases"].as_array().unwrap() {
        for o in phase["per_op"].as_array().unwrap() {
            out.push((phase["name"].as_str().unwrap().to_string(), o["op"].as_str().unwrap().to_string()));
        }
    }
    out
}

#[test]
fn a_mix_run_draws_each_kind_in_every_chart() {
    let dir = temp_dir();
    let tree = path_str(&dir.path().join("tree"));
    let plots = dir.path().join("plots");
    let json = dir.path().join("r.json");
    let (_, stderr) = run_ok(&[
        &tree,
        "--files",
        "500",
        "--file-size-dist",
        "4k",
        "--meta-mix",
        "create=30,stat=30,read=20,unlink=20",
        "--duration",
        "1s",
        "--interval",
        "250ms",
        "--threads",
        "2",
        "--plot",
        &path_str(&plots),
        "--json",
        &path_str(&json),
    ]);
    assert!(!stderr.contains("not drawn"), "{stderr}");
    let r = read_json(&json);
    let kinds: Vec<String> = kinds(&r).into_iter().map(|(_, k)| k).collect();
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    let mut names: Vec<String> =
        std::fs::read_dir(&plots).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["latency.svg", "ops.svg", "p99.svg"]);
    for (chart, title) in
        [("latency.svg", "Latency percentiles"), ("ops.svg", "Operations per second"), ("p99.svg", "p99 latency")]
    {
        let d = drawn(&plots.join(chart));
        assert!(d.title.starts_with(title) && d.title.contains("metadata mix"), "{chart}: {}", d.title);
        assert_eq!(d.legend.len(), kinds.len(), "{chart}: legend {:?}", d.legend);
        assert_eq!(d.lines, kinds.len(), "{chart}: drawn lines, legend {:?}", d.legend);
        for kind in &kinds {
            assert!(d.title.contains(kind.as_str()), "{chart}: the title names {kind}: {}", d.title);
            assert!(
                d.legend.iter().any(|l| l == kind || l.starts_with(&format!("{kind} ("))),
                "{chart}: the legend names {kind}: {:?}",
                d.legend
            );
        }
    }
    // The latency legend counts each kind's operations, as the result does.
    let d = drawn(&plots.join("latency.svg"));
    for phase in r["phases"].as_array().unwrap() {
        for o in phase["per_op"].as_array().unwrap() {
            let ops = o["ops"].as_u64().unwrap();
            let shown = format!("{} ({} ops)", o["op"].as_str().unwrap(), thousands(ops));
            assert!(d.legend.contains(&shown), "{shown} in {:?}", d.legend);
        }
    }
}

/// 1234567 → "1,234,567", as the report writes counts.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn phases_are_drawn_each_with_its_name() {
    let dir = temp_dir();
    let tree = path_str(&dir.path().join("tree"));
    let plots = dir.path().join("plots");
    let json = dir.path().join("r.json");
    run_ok(&[
        &tree,
        "--files",
        "1000",
        "--file-size-dist",
        "1k",
        "--meta-phases",
        "create,stat,unlink",
        "--interval",
        "10ms",
        "--threads",
        "2",
        "--plot",
        &path_str(&plots),
        "--json",
        &path_str(&json),
        "--quiet",
    ]);
    let r = read_json(&json);
    assert_eq!(kinds(&r).len(), 3);
    for chart in ["latency.svg", "ops.svg", "p99.svg"] {
        let d = drawn(&plots.join(chart));
        assert!(d.title.contains("metadata phases create → stat → unlink"), "{chart}: {}", d.title);
        assert_eq!(d.lines, 3, "{chart}: {:?}", d.legend);
        for phase in ["create", "stat", "unlink"] {
            assert!(
                d.legend.iter().filter(|l| l.starts_with(&format!("{phase} phase"))).count() == 1,
                "{chart}: {phase}: {:?}",
                d.legend
            );
        }
    }
    // Without a time series only the latency chart is drawn, and a note says why.
    let plain = dir.path().join("plain");
    let (_, stderr) = run_ok(&[&tree, "--files", "200", "--meta-phases", "create,stat", "--plot", &path_str(&plain)]);
    let names: Vec<_> = std::fs::read_dir(&plain).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["latency.svg"]);
    assert!(stderr.contains("--plot") && stderr.contains("ops.svg") && stderr.contains("--interval"), "{stderr}");
}

#[test]
fn a_bad_plot_dir_is_refused_before_the_tree_is_made() {
    let dir = temp_dir();
    let tree = dir.path().join("tree");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "keep").unwrap();
    let job = dir.path().join("meta.toml");
    std::fs::write(&job, "[a]\nfiles = \"100\"\nmeta-phases = \"create,stat\"\n").unwrap();
    // A directory whose chart is a link to the job file (an input), and one whose chart
    // is the --json file.
    let linked = dir.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(&job, linked.join("job-a-ops.svg")).unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let listing = || {
        let mut v: Vec<_> = walk(dir.path());
        v.sort();
        v
    };
    let before = listing();
    let t = path_str(&tree);
    let cases: Vec<Vec<String>> = vec![
        vec![
            t.clone(),
            "--files".into(),
            "100".into(),
            "--meta-mix".into(),
            "stat=1".into(),
            "--plot".into(),
            path_str(&file),
        ],
        vec![
            t.clone(),
            "--files".into(),
            "100".into(),
            "--meta-phases".into(),
            "create,stat".into(),
            "--plot".into(),
            t.clone(),
        ],
        vec!["run".into(), path_str(&job), "--target".into(), t.clone(), "--plot".into(), path_str(&linked)],
        vec![
            t.clone(),
            "--files".into(),
            "100".into(),
            "--meta-phases".into(),
            "create,stat".into(),
            "--plot".into(),
            path_str(&shared),
            "--json".into(),
            path_str(&shared.join("latency.svg")),
        ],
    ];
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains("--plot"), "{stderr}");
        assert!(!tree.exists(), "the tree's root is not made: {stderr}");
        assert_eq!(listing(), before, "{args:?}: nothing created");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    assert!(std::fs::read_to_string(&job).unwrap().starts_with("[a]"));
}

/// Every path under `dir` (links not followed).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.symlink_metadata().unwrap().is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}
