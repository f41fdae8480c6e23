//! `iopulse report --html`: one page of a job file's result, a sweep and a comparison, read
//! as XML: every chart `plot` draws of the same inputs is in it, nothing in it loads
//! anything, a hostile job name stays text; an input given as the output is refused and
//! left as it was; and the page opens in a real headless browser (Chromium, skipped with a
//! message where it is not installed) without a console message, every chart drawn, a
//! screenshot kept under target/.

use crate::common::*;
use std::path::{Path, PathBuf};

const HOSTILE: &str = "<script>alert(1)</script>";

/// The inputs of a page, written by real runs on the null engine in `dir`: a job file's
/// result with a time series and a hostile job name, a sweep's JSON and a comparison's.
fn inputs(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let d = path_str(dir);
    let job_file = dir.join("j.toml");
    std::fs::write(
        &job_file,
        format!(
            "[global]\nfile-size = \"1M\"\nengine = \"null\"\ninterval = \"20ms\"\n\n\
             [\"{HOSTILE}\"]\ntargets = [\"{d}/a.dat\"]\nops = 20000\n\n\
             [plain]\ntargets = [\"{d}/b.dat\"]\nblock-size = \"64k\"\nops = 20000\n"
        ),
    )
    .unwrap();
    let jobs = dir.join("jobs.json");
    run_ok(&["run", &path_str(&job_file), "--json", &path_str(&jobs), "--quiet"]);
    let sweep = dir.join("sweep.json");
    let (stdout, _) = run_ok(&[
        "sweep",
        &format!("{d}/s.dat"),
        "--file-size",
        "1M",
        "--engine",
        "null",
        "--ops",
        "2000",
        "--queue-depth",
        "1,4",
        "--output-format",
        "json",
        "--quiet",
    ]);
    std::fs::write(&sweep, stdout).unwrap();
    let compare = dir.join("compare.json");
    // A second run of the job file with the same figures (compare counts one run once).
    let again = dir.join("jobs-again.json");
    let mut doc = read_json(&jobs);
    as_another_run(&mut doc);
    std::fs::write(&again, serde_json::to_string(&doc).unwrap()).unwrap();
    let (code, stdout, stderr) = run(&["compare", &path_str(&jobs), &path_str(&again), "--output-format", "json"]);
    assert!(code == 0 || code == 5, "compare exited {code}: {stderr}");
    std::fs::write(&compare, stdout).unwrap();
    (jobs, sweep, compare)
}

/// How many charts `iopulse plot` writes of `result`: the page must hold as many.
fn charts_plot_draws(result: &Path, dir: &Path) -> usize {
    let plots = dir.join(format!("plots-{}", result.file_stem().unwrap().to_string_lossy()));
    let (stdout, _) = run_ok(&["plot", &path_str(result), "--plot", &path_str(&plots), "--quiet"]);
    stdout.lines().filter(|l| l.ends_with(".svg")).count()
}

/// The page of `inputs`, written by `iopulse report`, as text.
fn page(dir: &Path, inputs: &[&Path]) -> (PathBuf, String) {
    let html = dir.join("report.html");
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(inputs.iter().map(|p| path_str(p)));
    args.extend(["--html".into(), path_str(&html)]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (stdout, _) = run_ok(&args);
    assert_eq!(stdout.trim(), path_str(&html), "report prints the page it wrote");
    let text = std::fs::read_to_string(&html).unwrap();
    (html, text)
}

fn parse(text: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    roxmltree::Document::parse_with_options(text, options)
        .unwrap_or_else(|e| panic!("the page is not well-formed: {e}\n{}", &text[..text.len().min(2000)]))
}

#[test]
fn a_report_is_one_well_formed_page_that_loads_nothing_and_escapes_names() {
    let dir = temp_dir();
    let (jobs, sweep, compare) = inputs(dir.path());
    let (_, text) = page(dir.path(), &[&jobs, &sweep, &compare]);
    let doc = parse(&text);
    let elements = |name: &'static str| doc.descendants().filter(move |n| n.has_tag_name(name));

    // Every chart plot draws of the job file's result (combined, then each job's) and the
    // sweep's two curves (IOPS and p99 against queue depth), each an inline <svg>.
    let expected = charts_plot_draws(&jobs, dir.path()) + 2;
    assert!(expected >= 9, "the job file's result has a time series: {expected} charts");
    assert_eq!(elements("svg").count(), expected, "one <svg> per chart");
    assert_eq!(elements("section").count(), 3, "a section per input");

    // Nothing to load: no address, no element that loads, every link inside the page.
    assert!(!text.contains("http://") && !text.contains("https://"), "an absolute address in the page");
    for name in ["script", "link", "img", "iframe", "object", "embed", "image", "use"] {
        assert_eq!(elements(name).count(), 0, "<{name}> in the page");
    }
    for node in doc.descendants().filter(|n| n.is_element()) {
        assert_eq!(node.attribute("src"), None, "src on <{}>", node.tag_name().name());
        if let Some(href) = node.attribute("href") {
            assert!(href.starts_with('#'), "href {href} leaves the page");
        }
    }
    assert!(!text.contains("url(") && !text.contains("@import"), "the style loads something");

    // The hostile job name is text: in a heading and a table cell, never an element.
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(texts.iter().any(|t| *t == format!("job [{HOSTILE}]")), "the job's heading shows its name");
    assert!(texts.iter().any(|t| t.contains(HOSTILE)), "the name as text");
    assert!(text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "escaped in the markup");

    // Axes in words with their units: no field name with its unit suffix on a chart.
    for svg in elements("svg") {
        for t in svg.descendants().filter_map(|n| n.text()) {
            assert!(!t.contains("_ns") && !t.contains("bytes_per_sec"), "chart text {t:?}");
        }
    }

    // The comparison side by side: a row per compared figure, with its verdict.
    let compared: serde_json::Value = read_json(&compare);
    let figures = compared["figures"].as_array().unwrap();
    let verdict_rows = elements("tr").filter(|r| r.attribute("class").is_some()).count();
    assert_eq!(verdict_rows, figures.len(), "one row per compared figure (the runs have no expectations)");
    let first = &figures[0];
    assert!(
        elements("tr").any(|r| {
            let cells: Vec<&str> = r.children().filter_map(|c| c.text()).collect();
            cells.len() == 7 && cells[0] == first["scope"] && cells[1] == first["figure"]
        }),
        "the row of {} {}",
        first["scope"],
        first["figure"]
    );
}

#[test]
fn report_refuses_an_input_as_its_output_and_leaves_it_as_it_was() {
    let dir = temp_dir();
    let result = dir.path().join("r.json");
    run_ok(&[
        &path_str(&dir.path().join("t.dat")),
        "--file-size",
        "1M",
        "--engine",
        "null",
        "--ops",
        "1000",
        "--json",
        &path_str(&result),
        "--quiet",
    ]);
    let before = std::fs::read(&result).unwrap();
    let link = dir.path().join("link.html");
    std::os::unix::fs::symlink(&result, &link).unwrap();
    for out in [&result, &link] {
        let (code, stdout, stderr) = run(&["report", &path_str(&result), "--html", &path_str(out)]);
        assert_eq!(code, 2, "--html {}: stderr {stderr}", out.display());
        assert!(stderr.contains("--html") && stderr.contains("input"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(std::fs::read(&result).unwrap(), before, "the input is unchanged");
    }
    // A directory or a device is no page either.
    for out in [path_str(dir.path()), "/dev/loop0".to_string()] {
        let (code, _, stderr) = run(&["report", &path_str(&result), "--html", &out]);
        assert_eq!(code, 2, "--html {out}: {stderr}");
        assert!(stderr.contains("--html"), "{stderr}");
    }
    // A file that is not a result: refused, named, and no page written.
    let html = dir.path().join("page.html");
    let (code, _, stderr) = run(&["report", &path_str(&dir.path().join("t.dat")), "--html", &path_str(&html)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("t.dat"), "{stderr}");
    assert!(!html.exists(), "no page after a refusal");
}

/// A replay and a metadata run each say what they are: the replay's section is named a
/// replay, shows its trace, speed and each I/O's lag (its figures from its JSON), and its
/// charts' titles name the trace instead of the spec's block size; the metadata run's
/// section has a table per phase with a row per operation kind (counts from its JSON) and
/// its three charts. Before, a metadata result was refused and a replay was a "Run" of
/// "512 B sequential reads" without its lag.
#[test]
fn a_replay_and_a_metadata_run_are_named_and_shown_as_what_they_are() {
    let dir = temp_dir();
    let d = dir.path();
    let trace = d.join("app.iolog");
    let mut text = String::from("fio version 3 iolog\n0 /x/t.dat add\n0 /x/t.dat open\n");
    for i in 0..200u64 {
        let action = if i % 4 == 0 { "write" } else { "read" };
        text.push_str(&format!("{} /x/t.dat {action} {} 8192\n", i * 1000, (i % 64) * 8192));
    }
    text.push_str("200000 /x/t.dat close\n");
    std::fs::write(&trace, text).unwrap();
    let replay = d.join("replay.json");
    run_ok(&[
        "replay",
        &path_str(&trace),
        &path_str(&d.join("t.dat")),
        "--engine",
        "null",
        "--speed",
        "2",
        "--json",
        &path_str(&replay),
        "--quiet",
    ]);
    let meta = d.join("meta.json");
    run_ok(&[
        &path_str(&d.join("tree")),
        "--files",
        "300",
        "--meta-phases",
        "create,stat",
        "--interval",
        "20ms",
        "--json",
        &path_str(&meta),
        "--quiet",
    ]);
    let (_, text) = page(d, &[&replay, &meta]);
    let doc = parse(&text);
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    let headings: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("h2")).filter_map(|n| n.text()).collect();
    assert_eq!(headings, [format!("Replay · {}", path_str(&replay)), format!("Metadata run · {}", path_str(&meta))]);

    // The replay: its trace and speed, and its lag as the JSON has it.
    let r = read_json(&replay);
    let workload = texts.iter().find(|t| t.starts_with("replay of ")).expect("the replay's workload");
    assert!(workload.contains(&path_str(&trace)) && workload.contains("at 2× its speed"), "{workload}");
    assert!(workload.contains("200 of 200 I/Os issued"), "{workload}");
    let lag = texts.iter().find(|t| t.starts_with("behind its due time")).expect("the replay's lag");
    assert!(lag.ends_with(&format!("over {} I/Os", r["replay"]["lag"]["ios"])), "{lag}");
    for svg in doc.descendants().filter(|n| n.has_tag_name("svg")).take(charts_plot_draws(&replay, d)) {
        let title: String = svg.descendants().filter_map(|n| n.text()).collect::<Vec<_>>().join(" ");
        assert!(title.contains("replay of app.iolog at 2×") && !title.contains("sequential"), "{title}");
    }

    // The metadata run: a table per phase, a row per kind with its count, three charts.
    let m = read_json(&meta);
    let tables: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("table")).collect();
    for phase in m["phases"].as_array().unwrap() {
        let name = phase["name"].as_str().unwrap();
        assert!(texts.iter().any(|t| t.starts_with(&format!("Phase {name} · "))), "a heading for phase {name}");
        for o in phase["per_op"].as_array().unwrap() {
            let ops = o["ops"].as_u64().unwrap();
            let found = tables.iter().flat_map(|t| t.descendants().filter(|n| n.has_tag_name("tr"))).any(|row| {
                let cells: Vec<&str> = row.children().filter_map(|c| c.text()).collect();
                cells.len() == 10 && cells[0] == o["op"] && cells[1].replace(',', "") == ops.to_string()
            });
            assert!(found, "a row of {name}'s {} with {ops} ops", o["op"]);
        }
    }
    let svgs = doc.descendants().filter(|n| n.has_tag_name("svg")).count();
    assert_eq!(svgs, charts_plot_draws(&replay, d) + 3, "the replay's charts and the metadata run's three");
}

/// Chromium from the distribution's packages, when installed (.ci/run installs it).
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n))).find(|p| p.is_file())
}

/// Opens `page` in headless Chromium: (the DOM after load, its console and error lines).
/// With `screenshot`, also writes a PNG of the page there.
fn open_in_chromium(browser: &Path, page: &Path, profile: &Path, screenshot: Option<&Path>) -> (String, Vec<String>) {
    let mut cmd = std::process::Command::new("timeout");
    cmd.arg("120").arg(browser).args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1100,4000",
    ]);
    cmd.arg(format!("--user-data-dir={}", profile.display()));
    match screenshot {
        Some(png) => cmd.arg(format!("--screenshot={}", png.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd.arg(page).output().expect("start chromium");
    assert!(out.status.success(), "chromium exited {:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("Refused"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

#[test]
fn the_page_opens_in_a_headless_browser_with_every_chart_and_no_console_message() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium; .ci/run installs it)");
        return;
    };
    let dir = temp_dir();
    let (jobs, sweep, compare) = inputs(dir.path());
    let (html, text) = page(dir.path(), &[&jobs, &sweep, &compare]);
    let charts = parse(&text).descendants().filter(|n| n.has_tag_name("svg")).count();
    let profile = dir.path().join("profile");

    // The check sees a load the page tries: a copy with an outside image is reported.
    let control = dir.path().join("control.html");
    std::fs::write(&control, text.replacen("<body>", "<body><img src=\"http://example.invalid/x.png\"/>", 1)).unwrap();
    let (_, console) = open_in_chromium(&browser, &control, &profile, None);
    assert!(!console.is_empty(), "a page that loads an outside image leaves no console line: the check is blind");

    let (dom, console) = open_in_chromium(&browser, &html, &profile, None);
    assert!(console.is_empty(), "console messages:\n{}", console.join("\n"));
    assert_eq!(dom.matches("<svg").count(), charts, "every chart in the page's DOM");
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the hostile name stayed text in the DOM");

    let artefacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-report");
    std::fs::create_dir_all(&artefacts).unwrap();
    let png = artefacts.join("report.png");
    let _ = std::fs::remove_file(&png);
    let (_, console) = open_in_chromium(&browser, &html, &profile, Some(&png));
    assert!(console.is_empty(), "console messages:\n{}", console.join("\n"));
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot {}: {e}", png.display()));
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "a screenshot of the page");
    std::fs::copy(&html, artefacts.join("report.html")).unwrap();
    eprintln!("screenshot kept: {}", png.display());
}
