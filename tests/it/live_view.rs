//! `--live`, the full-screen view, driven in a real terminal: a private tmux server (its
//! own socket, killed when the test ends), keys sent with send-keys, the screen read with
//! capture-pane. What the screen shows is checked against the interval rows of the same
//! run's JSON; `q`, Ctrl-C and SIGTERM each stop the run with every output written and
//! the terminal given back (stty's modes, the alternate screen left). Skips without tmux.

use super::common::{path_str, read_json, temp_dir};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of the test's own (its socket in the test's directory, gone with it), one
/// window of `width`×`height` running `command`.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(dir: &Path, command: &str, width: u16, height: u16) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            super::common::root::skip("the live view in a terminal", "tmux is not installed");
            return None;
        }
        let tmux = Tmux { socket: path_str(&dir.join("tmux.sock")) };
        let (w, h) = (width.to_string(), height.to_string());
        let status = tmux.cmd(&["new-session", "-d", "-s", "main", "-x", &w, "-y", &h, command]).status().unwrap();
        assert!(status.success(), "tmux new-session");
        Some(tmux)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        // No user configuration: the same terminal everywhere.
        c.args(["-S", &self.socket, "-f", "/dev/null"]).args(args);
        c
    }

    fn screen(&self) -> String {
        let out = self.cmd(&["capture-pane", "-p", "-t", "main"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Everything the pane printed, the lines scrolled away included.
    fn history(&self) -> String {
        let out = self.cmd(&["capture-pane", "-p", "-J", "-S", "-", "-t", "main"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "main"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status().unwrap().success());
    }

    fn alternate_screen_on(&self) -> bool {
        let out = self.cmd(&["display-message", "-p", "-t", "main", "#{alternate_on}"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }

    /// The screen once `ready` holds of it (within `limit`).
    fn wait_for(&self, what: &str, limit: Duration, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(Instant::now() < deadline, "{what} never showed; the screen:\n{screen}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // The server is the test's own (its socket): ending it ends only what it started.
        let _ = self.cmd(&["kill-server"]).status();
    }
}

/// A command for the pane: iopulse with `args`, then its exit code and the terminal's
/// modes (`stty -a`) written beside, then the pane stays for reading.
fn pane_command(dir: &Path, args: &str) -> String {
    let d = path_str(dir);
    format!(
        "sh -c 'echo $$ > {d}/sh.pid; {} {args}; echo $? > {d}/code; stty -a > {d}/stty; sleep 120'",
        env!("CARGO_BIN_EXE_iopulse")
    )
}

/// Once the run's first interval is on screen: the pid of the iopulse the pane's shell
/// runs as its one child (none, said as a skip of `what`, where the kernel does not list a
/// process's children).
fn running_iopulse(tmux: &Tmux, dir: &Path, what: &str) -> Option<i32> {
    tmux.wait_for("the first interval", Duration::from_secs(30), |s| {
        cells(s, "run 1").is_some_and(|c| c[1] == "running" && c[2] != "–")
    });
    let sh: u32 = std::fs::read_to_string(dir.join("sh.pid")).unwrap().trim().parse().unwrap();
    let Ok(children) = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")) else {
        super::common::root::skip(what, "/proc/PID/task/TID/children is not in this kernel");
        return None;
    };
    Some(children.split_whitespace().next().unwrap().parse().unwrap())
}

/// The exit code the pane's command wrote (within `limit`).
fn exit_code(dir: &Path, limit: Duration) -> i32 {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("code"))
            && let Ok(code) = text.trim().parse()
        {
            // stty writes after the code: wait for it too.
            while std::fs::metadata(dir.join("stty")).map_or(true, |m| m.len() == 0) {
                assert!(Instant::now() < deadline, "stty never wrote the terminal's modes");
                std::thread::sleep(Duration::from_millis(50));
            }
            return code;
        }
        assert!(Instant::now() < deadline, "iopulse never ended");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The terminal is back in the mode a shell left it: line editing and echo on.
fn assert_terminal_given_back(dir: &Path, tmux: &Tmux) {
    let stty = std::fs::read_to_string(dir.join("stty")).unwrap();
    let modes: Vec<&str> = stty.split([' ', ';', '\n']).collect();
    for mode in ["icanon", "echo", "isig"] {
        assert!(modes.contains(&mode), "{mode} is back on: {stty}");
        assert!(!modes.contains(&format!("-{mode}").as_str()), "{mode} is back on: {stty}");
    }
    assert!(!tmux.alternate_screen_on(), "the alternate screen was left");
}

/// A figure as the screen writes it ("955.5K", "3.6 GiB/s", "1.29 µs", "812"): its value
/// and half its last digit's worth (what rounding to that many digits can move it).
fn figure(text: &str) -> (f64, f64) {
    let (number, unit) = text.split_once(' ').unwrap_or((text, ""));
    let (number, scale) = match number.strip_suffix('K') {
        Some(n) => (n, 1e3),
        None => match number.strip_suffix('M') {
            Some(n) => (n, 1e6),
            None => (number, 1.0),
        },
    };
    let scale = scale
        * match unit {
            "" | "ns" | "B/s" => 1.0,
            "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "KiB/s" => 1024.0,
            "MiB/s" => 1024.0 * 1024.0,
            "GiB/s" => 1024.0 * 1024.0 * 1024.0,
            other => panic!("unit {other:?} in {text:?}"),
        };
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let value: f64 = number.parse().unwrap_or_else(|_| panic!("a number: {text:?}"));
    (value * scale, 0.5 * 10f64.powi(-decimals) * scale * 1.0001)
}

/// The cells of the screen line that starts (inside its border) with `first`, split on
/// two or more spaces.
fn cells(screen: &str, first: &str) -> Option<Vec<String>> {
    screen.lines().find_map(|line| {
        let inner = line.trim_start_matches(['│', ' ']).trim_end_matches(['│', ' ']);
        inner
            .starts_with(first)
            .then(|| inner.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(str::to_string).collect())
    })
}

fn assert_shown(what: &str, shown: &str, recorded: f64) {
    let (value, slack) = figure(shown);
    assert!((value - recorded).abs() <= slack, "{what}: the screen says {shown}, the JSON {recorded}");
}

#[test]
fn the_screen_shows_the_runs_intervals_its_keys_work_and_q_stops_with_every_output() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let args = format!(
        "{d}/t.dat --file-size 16m --random --threads 2 --duration 60 --interval 1s --live --json {d}/r.json --quiet"
    );
    let Some(tmux) = Tmux::start(dir.path(), &pane_command(dir.path(), &args), 110, 36) else { return };
    // The third interval on screen: the headline and the runs table are of one drawing.
    let screen = tmux.wait_for("the third interval", Duration::from_secs(30), |s| {
        cells(s, "run 1").is_some_and(|c| c.get(2).is_some_and(|t| t.ends_with(" s") && figure(t).0 >= 3e9))
    });
    assert!(tmux.alternate_screen_on(), "the view is on the alternate screen");
    let run_row = cells(&screen, "run 1").unwrap();
    let at = run_row[2].clone();
    let read_row = cells(&screen, "read").unwrap_or_else(|| panic!("a read row:\n{screen}"));
    assert!(screen.contains("sync QD 1 × 2 workers"), "{screen}");
    assert!(screen.contains(" / 60.00 s"), "the progress against the planned length:\n{screen}");

    // Keys: each view, the pause, the help.
    tmux.keys(&["2"]);
    let workers = tmux.wait_for("the workers view", Duration::from_secs(5), |s| s.contains("each worker's part"));
    assert!(cells(&workers, "0 ").is_some() && cells(&workers, "1 ").is_some(), "a row per worker:\n{workers}");
    tmux.keys(&["3"]);
    tmux.wait_for("the messages view", Duration::from_secs(5), |s| s.contains("said on stderr"));
    tmux.keys(&["1"]);
    tmux.keys(&["p"]);
    // The screen whole: a capture can fall inside a drawing (the status line new, the
    // messages view's rows not yet replaced by the runs table).
    let paused = tmux
        .wait_for("the pause", Duration::from_secs(5), |s| s.contains("display paused") && cells(s, "run 1").is_some());
    std::thread::sleep(Duration::from_millis(2200));
    let still = tmux.screen();
    assert_eq!(cells(&still, "run 1"), cells(&paused, "run 1"), "a paused display keeps its figures");
    tmux.keys(&["p"]);
    tmux.wait_for("the display going on", Duration::from_secs(5), |s| {
        !s.contains("display paused") && cells(s, "run 1") != cells(&paused, "run 1")
    });
    tmux.keys(&["?"]);
    tmux.wait_for("the help", Duration::from_secs(5), |s| s.contains("pause the display (the run goes on)"));
    tmux.keys(&["x"]);
    tmux.wait_for("the help closed", Duration::from_secs(5), |s| !s.contains("pause the display (the run goes on)"));

    // q: stopped as by SIGINT, every output written, the terminal given back.
    tmux.keys(&["q"]);
    assert_eq!(exit_code(dir.path(), Duration::from_secs(30)), 130);
    assert_terminal_given_back(dir.path(), &tmux);
    let after = tmux.wait_for("the report", Duration::from_secs(5), |s| s.contains("IOPS ·"));
    assert!(after.contains("done "), "the text report follows the view:\n{after}");
    let doc = read_json(dir.path().join("r.json"));
    assert_eq!(doc["stop_reason"], "interrupted", "{}", doc["stop_reason"]);
    // The interval shown, as the JSON records it.
    let t_ns = figure(&at).0.round() as u64;
    let row = doc["time_series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["t_ns"].as_u64() == Some(t_ns))
        .unwrap_or_else(|| panic!("a row ending at {t_ns} ns"));
    let read = &row["read"];
    assert_shown("IOPS", &read_row[1], read["iops"].as_f64().unwrap());
    assert_shown("bandwidth", &read_row[2], read["bw_bytes_per_sec"].as_f64().unwrap());
    for (i, p) in ["p50", "p99", "p99_9", "max"].iter().enumerate() {
        assert_shown(p, &read_row[3 + i], read["latency_ns"][p].as_f64().unwrap());
    }
    assert_shown("the runs table's IOPS", &run_row[3], row["total"]["iops"].as_f64().unwrap());
}

#[test]
fn a_job_file_shows_a_row_per_job_and_ctrl_c_stops_them_all() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let jobs = dir.path().join("jobs.toml");
    std::fs::write(
        &jobs,
        format!(
            "[global]\nduration = \"60s\"\nfile-size = \"16m\"\nlive = true\n\n[reader]\ntargets = [\"{d}/a.dat\"]\nrandom = true\n\n[writer]\ntargets = [\"{d}/b.dat\"]\nwrite-percent = 100\nblock-size = \"64k\"\n"
        ),
    )
    .unwrap();
    let args = format!("run {} --json {d}/r.json --quiet", path_str(&jobs));
    let Some(tmux) = Tmux::start(dir.path(), &pane_command(dir.path(), &args), 110, 36) else { return };
    let screen = tmux.wait_for("both jobs", Duration::from_secs(30), |s| {
        ["reader", "writer"].iter().all(|j| cells(s, j).is_some_and(|c| c.get(1).is_some_and(|st| st == "running")))
    });
    assert!(screen.contains("runs (2)"), "{screen}");
    tmux.keys(&["C-c"]);
    assert_eq!(exit_code(dir.path(), Duration::from_secs(30)), 130);
    assert_terminal_given_back(dir.path(), &tmux);
    let doc = read_json(dir.path().join("r.json"));
    let names: Vec<&str> = doc["jobs"].as_array().unwrap().iter().map(|j| j["job"].as_str().unwrap()).collect();
    assert_eq!(names, ["reader", "writer"], "both jobs' results are written");
}

#[test]
fn sigterm_gives_the_terminal_back_with_the_report() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let args = format!("{d}/t.dat --file-size 16m --duration 60 --live --quiet");
    let Some(tmux) = Tmux::start(dir.path(), &pane_command(dir.path(), &args), 100, 30) else { return };
    let Some(pid) = running_iopulse(&tmux, dir.path(), "SIGTERM to the live view") else { return };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(exit_code(dir.path(), Duration::from_secs(30)), 143);
    assert_terminal_given_back(dir.path(), &tmux);
    let after = tmux.history();
    assert!(after.contains("⚠ INTERRUPTED: partial results"), "the report says the run was stopped:\n{after}");
    assert!(after.contains("IOPS ·"), "{after}");
}

#[test]
fn without_a_terminal_or_room_the_live_line_stands_in_with_a_note() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    // stdout a file: a note, the run, the report in the file.
    let out = super::common::iopulse()
        .args([&format!("{d}/t.dat"), "--file-size", "4m", "--duration", "1", "--live"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let notes: Vec<&str> = stderr.lines().filter(|l| l.contains("--live")).collect();
    assert_eq!(
        notes,
        [
            "iopulse: note: --live: stdout is not a terminal: the live line is shown instead (on stderr, when it is a terminal)"
        ]
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("IOPS ·"));
    // A terminal too small for the view.
    let args = format!("{d}/u.dat --file-size 4m --duration 1 --live");
    let Some(tmux) = Tmux::start(dir.path(), &pane_command(dir.path(), &args), 60, 15) else { return };
    assert_eq!(exit_code(dir.path(), Duration::from_secs(30)), 0);
    let screen = tmux.history();
    assert!(
        screen.contains("iopulse: note: --live: the terminal is 60×15, smaller than the 72×20 the view needs"),
        "{screen}"
    );
    assert!(!tmux.alternate_screen_on());
}

#[test]
fn a_second_signal_ends_at_once_and_still_gives_the_terminal_back() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let args = format!("{d}/t.dat --file-size 16m --duration 60 --live --quiet");
    let Some(tmux) = Tmux::start(dir.path(), &pane_command(dir.path(), &args), 100, 30) else { return };
    let Some(pid) = running_iopulse(&tmux, dir.path(), "two signals to the live view") else { return };
    let pid = nix::unistd::Pid::from_raw(pid);
    // The second before the run could stop: the process ends in the signal's handler. Two
    // signals land together whatever the machine's load: sent while the process is stopped,
    // both are pending when it goes on (two of one kind would be one). Which is handled
    // second decides the code (130 or 143); that it ended in a handler, before the run
    // could stop, is told by the report it never printed (below).
    use nix::sys::signal::{Signal, kill};
    kill(pid, Signal::SIGSTOP).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    kill(pid, Signal::SIGTERM).unwrap();
    kill(pid, Signal::SIGINT).unwrap();
    kill(pid, Signal::SIGCONT).unwrap();
    let code = exit_code(dir.path(), Duration::from_secs(30));
    assert!(code == 130 || code == 143, "ended by a signal's code: {code}");
    assert_terminal_given_back(dir.path(), &tmux);
    // It ended in the handler: no report was printed.
    let history = tmux.history();
    assert!(!history.contains("IOPS ·"), "the process ended at once, before its report:\n{history}");
}

#[test]
fn a_tree_of_files_shows_each_kind_of_operation_as_its_json_rows_record() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let args = format!(
        "{d}/tree --files 2000 --meta-mix create=10,stat=70,read=20 --threads 2 --duration 60 --live --json {d}/r.json --quiet"
    );
    let Some(tmux) = Tmux::start(dir.path(), &pane_command(dir.path(), &args), 110, 36) else { return };
    // The third interval of the mix on screen.
    let screen = tmux.wait_for("the mix's third interval", Duration::from_secs(60), |s| {
        cells(s, "run 1").is_some_and(|c| c.get(2).is_some_and(|t| t.ends_with(" s") && figure(t).0 >= 3e9))
    });
    assert!(screen.contains("mix phase · "), "{screen}");
    let at = cells(&screen, "run 1").unwrap()[2].clone();
    let stat = cells(&screen, "stat").unwrap_or_else(|| panic!("a stat row:\n{screen}"));
    assert!(cells(&screen, "all").is_some(), "all kinds together:\n{screen}");
    tmux.keys(&["q"]);
    assert_eq!(exit_code(dir.path(), Duration::from_secs(60)), 130);
    assert_terminal_given_back(dir.path(), &tmux);
    let doc = read_json(dir.path().join("r.json"));
    let t_ns = figure(&at).0.round() as u64;
    let row = doc["time_series"]
        .as_array()
        .unwrap_or_else(|| panic!("rows per interval: {doc}"))
        .iter()
        .find(|r| r["op"] == "stat" && r["t_ns"].as_u64() == Some(t_ns))
        .unwrap_or_else(|| panic!("a stat row ending at {t_ns} ns"));
    assert_shown("stat ops/s", &stat[1], row["ops_per_sec"].as_f64().unwrap());
    for (i, p) in ["p50", "p99", "p99_9", "max"].iter().enumerate() {
        assert_shown(p, &stat[3 + i], row["latency_ns"][p].as_f64().unwrap());
    }
}

#[test]
fn a_terminal_that_hangs_up_ends_the_run_and_the_process() {
    let dir = temp_dir();
    let d = path_str(dir.path());
    let args = format!("{d}/t.dat --file-size 16m --duration 60 --live --quiet");
    let Some(tmux) = Tmux::start(dir.path(), &pane_command(dir.path(), &args), 100, 30) else { return };
    let Some(pid) = running_iopulse(&tmux, dir.path(), "a hangup under the live view") else { return };
    // The terminal goes away (its server ends): SIGHUP, then a terminal that reads as ended.
    drop(tmux);
    let deadline = Instant::now() + Duration::from_secs(20);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let alive = Path::new(&format!("/proc/{pid}")).exists();
    if alive {
        // Not left behind: the process this test started is ended before the test fails.
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
    assert!(!alive, "iopulse ended within 20 s of its terminal's hangup");
}
