use super::super::ini::parse_into;
use super::*;

fn translate_text(text: &str, has_ramp: bool) -> Result<Translated, String> {
    let mut sections = Vec::new();
    parse_into(text, "j.fio", std::path::Path::new("."), &|_| None, 0, &mut sections).map_err(|e| e.message)?;
    let has_flag = |name: &str| has_ramp && name == "ramp";
    let ctx = Context { ignore_unsupported: false, has_flag: &has_flag, directory: None, run_length_given: false };
    translate("j.fio", &sections, &ctx).map_err(|e| e.message)
}

fn keys(t: &Translated, job: usize) -> Vec<(String, String)> {
    t.file.jobs[job]
        .entries
        .iter()
        .map(|e| {
            let v = match &e.value {
                Value::Switch(b) => b.to_string(),
                Value::Text(s) => s.clone(),
                Value::List(l) => l.join(","),
            };
            (e.key.clone(), v)
        })
        .collect()
}

fn has(t: &Translated, job: usize, key: &str, value: &str) -> bool {
    keys(t, job).contains(&(key.to_string(), value.to_string()))
}

#[test]
fn options_become_keys_of_the_same_meaning() {
    let t = translate_text(
            "[global]\nfilename=/x/a\nbuffered=0\ninvalidate=0\n[a]\nrw=randread:4\nbsrange=8k-8k\nrandom_distribution=pareto:0.8\nnumjobs=2\nnorandommap\nsize=1m\ncpus_allowed=0-1\ncpus_allowed_policy=split\nnuma_cpu_nodes=0\nrate=1m,1m\n",
            false,
        )
        .unwrap();
    for (k, v) in [
        ("random", "true"),
        ("random-percent", "25"),
        ("block-size", "8k"),
        ("distribution", "pareto"),
        ("pareto-h", "0.8"),
        ("threads", "2"),
        ("direct", "true"),
        ("cache", "keep"),
        ("targets", "/x/a"),
        ("file-size", "1M"),
        ("cpu-cores", "0-1"),
        ("numa-zones", "0"),
        ("rate-bw", "1M"),
        // norandommap, shared file, no runtime: size bytes per clone.
        ("io-limit", "2M"),
    ] {
        assert!(has(&t, 0, k, v), "{k} = {v} missing: {:?}", keys(&t, 0));
    }
    assert!(!keys(&t, 0).iter().any(|(k, _)| k == "duration"));
    // split: no note about the CPU policy; the random-percent note is there.
    assert!(t.notes.iter().all(|n| !n.contains("cpus_allowed")), "{:?}", t.notes);
    assert!(t.notes.iter().any(|n| n.contains("random-percent 25")), "{:?}", t.notes);
}

#[test]
fn later_globals_apply_to_later_jobs_and_names_stay_unique() {
    let t = translate_text("[global]\nbs=8k\n[a]\n[global]\nbs=16k\n[a]\nrw=rw\nrwmixwrite=20\n", false).unwrap();
    assert_eq!(t.file.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), vec!["a", "a-2"]);
    assert!(has(&t, 0, "block-size", "8k") && has(&t, 1, "block-size", "16k"));
    assert!(has(&t, 1, "write-percent", "20"));
    assert!(has(&t, 0, "targets", "a.0.0"), "{:?}", keys(&t, 0));
    assert!(has(&t, 0, "duration", "0"));
    // A stonewall in [global] makes every job a phase: the read-back pass fits between.
    let t = translate_text("[global]\nstonewall\n[a]\nrw=write\nverify=md5\n[b]\n", false).unwrap();
    assert_eq!(t.file.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), vec!["a", "a-verify", "b"]);
    assert!(has(&t, 1, "verify", "true") && has(&t, 1, "stonewall", "true") && has(&t, 2, "stonewall", "true"));
}

#[test]
fn write_iolog_is_a_jobs_own_file_and_from_global_a_file_per_job() {
    let t = translate_text(
        "[global]\nwrite_iolog=/l/run.iolog\n[a]\nrw=write\nverify=md5\n[b]\nstonewall\nwrite_iolog=own.log\n",
        false,
    )
    .unwrap();
    let names: Vec<&str> = t.file.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a", "a-verify", "b"]);
    assert!(has(&t, 0, "write-iolog", "/l/run-a.iolog"), "{:?}", keys(&t, 0));
    // The read-back pass is iopulse's own: it logs nothing.
    assert!(!keys(&t, 1).iter().any(|(k, _)| k == "write-iolog"), "{:?}", keys(&t, 1));
    assert!(has(&t, 2, "write-iolog", "own.log"), "{:?}", keys(&t, 2));
    assert!(t.notes.iter().any(|n| n.contains("write_iolog in [global]: job [a] writes its own log, /l/run-a.iolog")));
}

#[test]
fn ramp_time_waits_for_the_ramp_flag() {
    let e = translate_text("[a]\nramp_time=5\nruntime=10\ntime_based\n", false).unwrap_err();
    assert!(e.starts_with("j.fio:2: option `ramp_time` of [a]"), "{e}");
    let t = translate_text("[a]\nramp_time=5\nruntime=10\ntime_based\n", true).unwrap();
    assert!(has(&t, 0, "ramp", "5s") && has(&t, 0, "duration", "10s"));
}

#[test]
fn number_ios_and_filesize_end_the_job_at_the_smaller_amount() {
    // filesize is each file's size, size the job's I/O; the smaller of it and number_ios
    // ends each clone, iopulse's --ops counting for all of them.
    let t = translate_text("[a]\nrw=randwrite\nfilesize=1m\nsize=512k\nnumjobs=2\nnumber_ios=100\n", false).unwrap();
    for (k, v) in [("file-size", "1M"), ("duration", "0"), ("ops", "200"), ("file-distribution", "per-worker")] {
        assert!(has(&t, 0, k, v), "{k} = {v}: {:?}", keys(&t, 0));
    }
    let t = translate_text("[a]\nrw=write\nfilesize=1m\nsize=512k\nnumber_ios=1000\nbs=8k\n", false).unwrap();
    assert!(has(&t, 0, "ops", "64") && has(&t, 0, "duration", "0"), "{:?}", keys(&t, 0));
    // A size past the files' total is capped there, as fio does: every block once.
    let t = translate_text("[a]\nrw=write\nfilesize=1m\nsize=3m\n", false).unwrap();
    assert!(has(&t, 0, "file-size", "1M") && has(&t, 0, "duration", "0"), "{:?}", keys(&t, 0));
    assert!(!keys(&t, 0).iter().any(|(k, _)| k == "io-limit" || k == "ops"), "{:?}", keys(&t, 0));
    // io_size with filesize: the I/O amount; number_ios alone with a runtime.
    let t = translate_text("[a]\nfilesize=1m\nsize=3m\nio_size=2m\n", false).unwrap();
    assert!(has(&t, 0, "io-limit", "2M") && has(&t, 0, "file-size", "1M"), "{:?}", keys(&t, 0));
    let t = translate_text("[a]\nfilename=/x\nruntime=5\nnumber_ios=7\nnumjobs=3\n", false).unwrap();
    assert!(has(&t, 0, "duration", "5s") && has(&t, 0, "ops", "21"), "{:?}", keys(&t, 0));
    // time_based: fio runs its runtime whatever number_ios says (a note).
    let t = translate_text("[a]\nsize=1m\ntime_based\nruntime=2\nnumber_ios=10\n", false).unwrap();
    assert!(!keys(&t, 0).iter().any(|(k, _)| k == "ops"), "{:?}", keys(&t, 0));
    assert!(t.notes.iter().any(|n| n.contains("number_ios=10: fio runs a time_based job")), "{:?}", t.notes);
    // A verified write that number_ios cuts short cannot be read back whole.
    let e = translate_text("[a]\nrw=write\nsize=1m\nverify=crc32c\nnumber_ios=10\n", false).unwrap_err();
    assert!(e.contains("option `verify`") && e.contains("number_ios"), "{e}");
}

#[test]
fn reducible_data_and_sqpoll_become_their_keys() {
    let t = translate_text(
            "[a]\nrw=write\nsize=1m\ndedupe_percentage=34\nbuffer_compress_percentage=50\nioengine=io_uring\nsqthread_poll\nsqthread_poll_cpu=1\n",
            false,
        )
        .unwrap();
    for (k, v) in [("dedupe-ratio", "1.5152"), ("compress-ratio", "2"), ("sqpoll", "true"), ("sqpoll-cpu", "1")] {
        assert!(has(&t, 0, k, v), "{k} = {v}: {:?}", keys(&t, 0));
    }
    let t =
        translate_text("[a]\nrw=write\nsize=1m\nbuffer_compress_percentage=100\ndedupe_percentage=0\n", false).unwrap();
    assert!(has(&t, 0, "write-pattern", "zeros"), "{:?}", keys(&t, 0));
    assert!(!keys(&t, 0).iter().any(|(k, _)| k == "dedupe-ratio" || k == "compress-ratio"), "{:?}", keys(&t, 0));
    // sqthread_poll=0: no SQPOLL; its CPU then does nothing (a note), as in fio.
    let t = translate_text("[a]\nioengine=io_uring\nsqthread_poll=0\nsqthread_poll_cpu=1\n", false).unwrap();
    assert!(!keys(&t, 0).iter().any(|(k, _)| k.starts_with("sqpoll")), "{:?}", keys(&t, 0));
    assert!(t.notes.iter().any(|n| n.contains("sqthread_poll_cpu=1 binds")), "{:?}", t.notes);
}

#[test]
fn what_iopulse_cannot_do_is_refused_with_its_line() {
    for (text, expected) in [
        (
            "[a]\nrw=rw\nrwmixread=60\nrwmixwrite=60\n",
            "j.fio:4: option `rwmixwrite` of [a]: rwmixread=60 and rwmixwrite=60",
        ),
        ("[a]\nbs=4k,8k\n", "j.fio:2: option `bs` of [a]: different values for reads and writes"),
        ("[a]\nbsrange=4k-16k\n", "j.fio:2: option `bsrange` of [a]: a range of block sizes"),
        ("[a]\nrw=read:4k\n", "j.fio:2: option `rw` of [a]: a sequential skip"),
        ("[a]\nrw=randread:3\n", "j.fio:2: option `rw` of [a]: rw=randread:3"),
        ("[a]\nioengine=posixaio\n", "j.fio:2: option `ioengine` of [a]: no iopulse engine for ioengine=posixaio"),
        ("[a]\nrandom_distribution=normal:10\n", "j.fio:2: option `random_distribution` of [a]: fio's normal"),
        ("[a]\nsize=50%\n", "j.fio:2: option `size` of [a]: a percentage"),
        ("[a]\nnumjobs=2\nnrfiles=2\n", "j.fio:1: job [a]: numjobs with nrfiles"),
        ("[a]\nfilename=/x\nnrfiles=2\n", "j.fio:3: option `nrfiles` of [a]: nrfiles=2 with filename naming 1 file(s)"),
        (
            "[a]\nrw=write\nverify=crc32c\n[b]\n",
            "j.fio:3: option `verify` of [a]: iopulse checks the written blocks in a phase after",
        ),
        ("[global]\nbs=4k\n", "j.fio: no job"),
        ("[a]\ndedupe_percentage=100\n", "j.fio:2: option `dedupe_percentage` of [a]: dedupe_percentage=100"),
        (
            "[a]\nbuffer_compress_percentage=101\n",
            "j.fio:2: option `buffer_compress_percentage` of [a]: buffer_compress_percentage=101: give a percentage",
        ),
        ("[a]\nfilesize=1m-2m\n", "j.fio:2: option `filesize` of [a]: filesize=1m-2m: a range of file sizes"),
        (
            "[a]\nbssplit=4k/50:8k/50\nsize=1m\nnumber_ios=10\nio_size=1m\n",
            "j.fio:4: option `number_ios` of [a]: number_ios with a mix of block sizes and `io_size`",
        ),
    ] {
        let e = translate_text(text, false).unwrap_err();
        assert!(e.starts_with(expected), "{text:?}: {e}");
    }
}
