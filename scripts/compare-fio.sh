#!/usr/bin/env bash
# compare-fio.sh: iopulse and fio side by side, on the same file, with equivalent
# settings, interleaved (iopulse, fio, iopulse, fio, ...) for N repetitions per
# workload. Prints, per workload, the median IOPS of each tool and their ratio,
# the median p50 and p99 latency of each, and the median CPU time per I/O of each,
# plus the exact commands used. Writes the same table as TSV (fixed header) for
# machines. See docs/performance.md for the method and measured results.
#
# Usage: scripts/compare-fio.sh [options]
#   -n, --reps N          repetitions per workload and tool       (env REPS, default 5)
#   -d, --duration T      length of each run: 5s, 500ms, 2m       (env DURATION, default 5s)
#   -s, --size SIZE       file size, fio/iopulse syntax: 1G, 64M  (env SIZE, default 1G)
#   -f, --file PATH       the file both tools use                 (env COMPARE_FILE; default a new
#                         file in $IOPULSE_BENCH_DIR or $TMPDIR, removed at the end). A block
#                         device is read as it is; write workloads are then skipped.
#   -w, --workloads LIST  workloads separated by ';' or newlines, each
#                         engine:pattern:bs:depth:threads:direct   (env WORKLOADS)
#                         engine  sync|null|io_uring|libaio|mmap
#                         pattern randread|read|randwrite|write
#                         direct  0 (buffered, warm page cache) or 1 (O_DIRECT)
#   -o, --out DIR         keep every JSON result and the TSV here  (default: a temp dir, kept)
#       --tsv FILE        write the summary TSV to FILE            (default: OUT/compare.tsv)
#       --iopulse PATH    the iopulse binary (default: the release build; built if missing)
#       --keep-file       do not remove a file this script created
#       --quick           defaults for a smoke test: reps 1, duration 1s, size 64M, two workloads
#   -h, --help
#
# Equivalences (iopulse -> fio):
#   --engine sync -> --ioengine=psync; io_uring -> io_uring; libaio -> libaio;
#   mmap -> mmap; null -> null
#   --random (uniform, with replacement) -> --rw=rand* --norandommap
#   --threads N -> --numjobs=N --thread --group_reporting (fio threads, not processes)
#   --queue-depth D -> --iodepth=D;  --direct (strict) -> --direct=1
#   --duration T -> --time_based --runtime=T;  same file -> --filename, --size
#   the page cache, set the same way on both sides before every run:
#     buffered (direct 0), a warm cache: iopulse --cache warm (it reads the file into the
#       cache before its window), fio --invalidate=0 after this script reads the file
#       (the same warm-up pass, before every fio run);
#     O_DIRECT (direct 1), a dropped cache: iopulse --cache drop, fio's default
#       --invalidate=1 (both flush and drop the file's cache before the run)
#   latency = submission to completion -> --lat_percentiles=1 (fio's lat_ns, not clat_ns)
#   sequential with N threads: iopulse spreads the workers' start points over the file;
#   fio gets --offset_increment=SIZE/N and --size=SIZE/N, the nearest equivalent.
#
# CPU time per I/O:
#   iopulse: cpu.workers_per_io_ns = worker threads' user+sys CPU (getrusage RUSAGE_THREAD) / I/Os.
#   fio:     (usr_cpu + sys_cpu) / 100 * job_runtime_ms * 1e6 / (read.total_ios + write.total_ios)
#            from its JSON; with --thread --group_reporting, usr_cpu and sys_cpu are the
#            jobs' summed CPU time as a percentage of their summed runtime (job_runtime),
#            measured per thread (RUSAGE_THREAD) as well.
#
# Requires: bash, python3, fio. Exits 0 when every workload that could run ran.
set -euo pipefail

die() { echo "compare-fio: error: $*" >&2; exit 2; }
say() { echo "$*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=${REPS:-}
DURATION=${DURATION:-}
SIZE=${SIZE:-}
QUICK=0
FILE=${COMPARE_FILE:-}
WORKLOADS=${WORKLOADS:-}
OUT=""
TSV=""
IOPULSE=${IOPULSE:-}
KEEP_FILE=0

DEFAULT_WORKLOADS="
sync:randread:4k:1:1:0
null:randread:4k:1:1:0
null:randread:4k:32:1:0
sync:read:4k:1:1:0
sync:read:128k:1:1:0
sync:randread:4k:1:2:0
io_uring:randread:4k:1:1:0
io_uring:randread:4k:32:1:0
mmap:randread:4k:1:1:0
sync:randwrite:4k:1:1:0
sync:randread:4k:1:1:1
sync:read:128k:1:1:1
io_uring:randread:4k:32:1:1
libaio:randread:4k:32:1:1
"
QUICK_WORKLOADS="sync:randread:4k:1:1:0;null:randread:4k:1:1:0"

while [[ $# -gt 0 ]]; do
    case "$1" in
        -n|--reps) REPS=${2:?}; shift 2 ;;
        -d|--duration) DURATION=${2:?}; shift 2 ;;
        -s|--size) SIZE=${2:?}; shift 2 ;;
        -f|--file) FILE=${2:?}; shift 2 ;;
        -w|--workloads) WORKLOADS=${2:?}; shift 2 ;;
        -o|--out) OUT=${2:?}; shift 2 ;;
        --tsv) TSV=${2:?}; shift 2 ;;
        --iopulse) IOPULSE=${2:?}; shift 2 ;;
        --keep-file) KEEP_FILE=1; shift ;;
        --quick) QUICK=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
# --quick changes only the defaults: flags and variables given explicitly still win.
if [[ $QUICK == 1 ]]; then
    REPS=${REPS:-1} DURATION=${DURATION:-1s} SIZE=${SIZE:-64M} WORKLOADS=${WORKLOADS:-$QUICK_WORKLOADS}
else
    REPS=${REPS:-5} DURATION=${DURATION:-5s} SIZE=${SIZE:-1G} WORKLOADS=${WORKLOADS:-$DEFAULT_WORKLOADS}
fi
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps $REPS: give a positive whole number"

command -v python3 >/dev/null || die "python3 is needed to read the JSON results"
if ! command -v fio >/dev/null; then
    say "compare-fio: SKIP: fio is not installed (apt-get install fio)"
    exit 0
fi

# --- the iopulse binary -------------------------------------------------------
if [[ -z $IOPULSE ]]; then
    IOPULSE="${CARGO_TARGET_DIR:-$REPO/target}/release/iopulse"
    if [[ ! -x $IOPULSE ]]; then
        say "compare-fio: building $IOPULSE (cargo build --release)"
        (cd "$REPO" && cargo build --release --quiet) || die "cargo build --release failed"
    fi
fi
[[ -x $IOPULSE ]] || die "iopulse binary $IOPULSE is not executable"

# Engines iopulse offers: an unknown --engine makes it list them ("[possible values: sync, null, ...]").
IOPULSE_ENGINES=$("$IOPULSE" --engine '?' 2>&1 | grep -o 'possible values: [^]]*' | head -1 | sed 's/possible values: //; s/,/ /g') || true
[[ -n $IOPULSE_ENGINES ]] || IOPULSE_ENGINES=$("$IOPULSE" --help | sed -n '/--engine/,/default:/p' | sed -n 's/^ *- \([a-z_-]*\):.*/\1/p' | tr '\n' ' ')
FIO_ENGINES=$(fio --enghelp 2>/dev/null | tr -d '\t' | tr '\n' ' ')

# The name iopulse gives engine $1 (io_uring may be spelled io-uring), or nothing.
iopulse_engine_name() {
    local want=$1 alt=${1//_/-} e
    for e in $IOPULSE_ENGINES; do
        if [[ $e == "$want" || $e == "$alt" ]]; then echo "$e"; fi
    done
    return 0
}
fio_has_engine() { [[ " $FIO_ENGINES " == *" $1 "* ]]; }

# --- output and the file ------------------------------------------------------
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/compare-fio.XXXXXX")}
mkdir -p "$OUT/json"
TSV=${TSV:-$OUT/compare.tsv}
RUNS="$OUT/runs.tsv"
: >"$RUNS"

CREATED_FILE=0
if [[ -z $FILE ]]; then
    FILE=$(mktemp "${IOPULSE_BENCH_DIR:-${TMPDIR:-/tmp}}/compare-fio.XXXXXX.dat")
    rm -f "$FILE"
fi
CHILD=""
cleanup() {
    if [[ -n $CHILD ]]; then kill "$CHILD" 2>/dev/null || true; fi
    if [[ $CREATED_FILE == 1 && $KEEP_FILE == 0 ]]; then rm -f "$FILE"; fi
}
trap cleanup EXIT
trap 'say "compare-fio: interrupted"; exit 130' INT TERM

SIZE_BYTES=$(python3 -c '
import re, sys
m = re.fullmatch(r"(\d+)([kmgt]?)i?b?", sys.argv[1].strip().lower())
if not m: sys.exit("bad size")
print(int(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))' "$SIZE") || die "--size $SIZE: give e.g. 1G, 256M"

# Lay the file out once, with iopulse (random data, each 4 KiB stamped), before any run.
# A block device is used as it is (reads only: the script never writes to one).
if [[ -b $FILE ]]; then
    dev_bytes=$(blockdev --getsize64 "$FILE") || die "cannot read the size of $FILE"
    [[ $SIZE_BYTES -le $dev_bytes ]] || die "--size $SIZE is larger than $FILE ($dev_bytes bytes)"
elif [[ ! -f $FILE || $(stat -c %s "$FILE") != "$SIZE_BYTES" ]]; then
    [[ -e $FILE ]] && { say "compare-fio: $FILE has another size; recreating it"; rm -f "$FILE"; }
    say "compare-fio: laying out $FILE ($SIZE)"
    CREATED_FILE=1
    "$IOPULSE" "$FILE" --file-size "$SIZE_BYTES" --duration 10ms --quiet >/dev/null ||
        die "iopulse could not lay out $FILE"
fi

run() { # run OUTFILE cmd...: runs in the background so that a signal can stop it
    local out=$1; shift
    "$@" >"$out" 2>"$out.err" &
    CHILD=$!
    local rc=0
    wait "$CHILD" || rc=$?
    CHILD=""
    return $rc
}

# Extracts "iops p50 p99 cpu_ns_per_io in_flight" from a result; $1 tool, $2 op
# (read|write), $3 file. in_flight is the mean number of I/Os in flight by Little's law
# (IOPS x mean latency), for both tools alike: where it differs, so will latency.
extract() {
    python3 - "$@" <<'PY'
import json, sys
tool, op, path = sys.argv[1:4]
text = open(path).read()
j = json.loads(text[text.index("{"):])  # fio may print notes before its JSON
if tool == "iopulse":
    lat = j[op]["latency_ns"]
    vals = (j["total"]["iops"], lat["p50"], lat["p99"], j["cpu"]["workers_per_io_ns"],
            j["achieved_queue_depth"]["total"])
else:
    job = j["jobs"][0]  # --group_reporting: one entry for all jobs
    r, w = job["read"], job["write"]
    ios = r["total_ios"] + w["total_ios"]
    pct = job[op]["lat_ns"].get("percentile", {})
    cpu = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1e6 / ios if ios else 0
    if job.get("error"):
        sys.exit(f"fio job error {job['error']}")
    in_flight = (r["iops"] * r["lat_ns"]["mean"] + w["iops"] * w["lat_ns"]["mean"]) / 1e9
    vals = (r["iops"] + w["iops"], pct.get("50.000000", 0), pct.get("99.000000", 0), cpu, in_flight)
print("\t".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in vals))
PY
}

say "compare-fio: iopulse $("$IOPULSE" --version | awk '{print $2}'), $(fio --version), file $FILE ($SIZE, $(df --output=fstype "$FILE" | tail -1)), $REPS reps x $DURATION, results in $OUT"

CMDS="$OUT/commands.txt"
: >"$CMDS"
n=0
SKIPPED=0
FAILED=0
while IFS= read -r spec; do
    spec=${spec%%#*}
    spec=${spec//[[:space:]]/}
    [[ -z $spec ]] && continue
    IFS=: read -r engine pattern bs depth threads direct extra <<<"$spec"
    [[ -n $direct && -z $extra ]] || die "workload '$spec': give engine:pattern:bs:depth:threads:direct"
    n=$((n + 1))
    id="w$n"

    ieng=$(iopulse_engine_name "$engine")
    case $engine in
        sync) feng=psync ;;
        *) feng=$engine ;;
    esac
    if [[ -z $ieng ]]; then
        say "[$id $spec] skip: iopulse has no engine '$engine' here (it offers: $IOPULSE_ENGINES)"
        SKIPPED=$((SKIPPED + 1)); continue
    fi
    if ! fio_has_engine "$feng"; then
        say "[$id $spec] skip: this fio has no ioengine '$feng'"
        SKIPPED=$((SKIPPED + 1)); continue
    fi
    if [[ -b $FILE && $pattern == *write ]]; then
        say "[$id $spec] skip: $FILE is a block device and this script never writes to one"
        SKIPPED=$((SKIPPED + 1)); continue
    fi
    if [[ $engine == mmap && $direct == 1 ]]; then
        say "[$id $spec] skip: mmap cannot do O_DIRECT"
        SKIPPED=$((SKIPPED + 1)); continue
    fi

    iargs=("$IOPULSE" "$FILE" --file-size "$SIZE_BYTES" --engine "$ieng" --block-size "$bs"
        --queue-depth "$depth" --threads "$threads" --duration "$DURATION" --seed 1
        --output-format json --quiet)
    fargs=(fio --name=compare --filename="$FILE" --bs="$bs" --ioengine="$feng" --iodepth="$depth"
        --numjobs="$threads" --thread --group_reporting --direct="$direct"
        --time_based --runtime="$DURATION" --lat_percentiles=1 --percentile_list=50:99
        --output-format=json)
    case $pattern in
        randread) op="read"; iargs+=(--random); fargs+=(--rw=randread --norandommap) ;;
        randwrite) op="write"; iargs+=(--random --write-percent 100); fargs+=(--rw=randwrite --norandommap) ;;
        read) op="read"; fargs+=(--rw=read) ;;
        write) op="write"; iargs+=(--write-percent 100); fargs+=(--rw=write) ;;
        *) die "workload '$spec': pattern must be randread, read, randwrite or write" ;;
    esac
    if [[ $pattern != rand* && $threads -gt 1 ]]; then
        share=$((SIZE_BYTES / threads / 4096 * 4096))
        fargs+=(--size="$share" --offset_increment="$share")
    else
        fargs+=(--size="$SIZE_BYTES")
    fi
    case $direct in
        1) iargs+=(--strict-direct --cache drop) ;;
        0)  # the null engine touches no file: there is no cache to warm
            [[ $engine == null ]] || iargs+=(--cache warm)
            fargs+=(--invalidate=0) ;;
        *) die "workload '$spec': direct must be 0 or 1" ;;
    esac
    {
        echo "[$id] $spec"
        echo "  iopulse: ${iargs[*]}"
        echo "  fio:     ${fargs[*]}"
    } | tee -a "$CMDS" >&2

    # Not measured: flush what earlier write workloads left dirty (an O_DIRECT read would
    # otherwise wait for it), and for buffered workloads read the file into the page cache
    # (O_DIRECT writes drop cached pages, and memory reclaim may have taken idle ones).
    sync "$FILE" 2>/dev/null || sync
    if [[ $direct == 0 && -f $FILE ]]; then
        cat "$FILE" >/dev/null
    fi
    ok=1
    for rep in $(seq 1 "$REPS"); do
        for tool in iopulse fio; do
            out="$OUT/json/$id-$tool-$rep.json"
            if [[ $tool == iopulse ]]; then cmd=("${iargs[@]}"); else cmd=("${fargs[@]}"); fi
            # fio has no warm-up of its own: the same pass iopulse's --cache warm makes.
            if [[ $tool == fio && $direct == 0 && -f $FILE ]]; then
                cat "$FILE" >/dev/null
            fi
            if ! run "$out" "${cmd[@]}"; then
                say "[$id] $tool run $rep failed: $(tail -3 "$out.err" | tr '\n' ' ')"
                ok=0; break 2
            fi
            if ! vals=$(extract "$tool" "$op" "$out" 2>"$out.parse-err"); then
                say "[$id] cannot read $tool's result $out: $(tail -2 "$out.parse-err" | tr '\n' ' ')"
                ok=0; break 2
            fi
            printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$spec" "$tool" "$rep" "$vals" >>"$RUNS"
            say "  rep $rep $tool: $(cut -f1 <<<"$vals" | xargs printf '%.0f') IOPS"
        done
    done
    if [[ $ok == 0 ]]; then FAILED=$((FAILED + 1)); fi
done <<<"${WORKLOADS//;/$'\n'}"

# --- medians, TSV and the readable table ----------------------------------------
python3 - "$RUNS" "$TSV" <<'PY'
import statistics, sys
runs_path, tsv_path = sys.argv[1:3]
runs = {}
order = []
for line in open(runs_path):
    wid, spec, tool, rep, iops, p50, p99, cpu, qd = line.rstrip("\n").split("\t")
    if wid not in runs:
        runs[wid] = {"spec": spec, "iopulse": [], "fio": []}
        order.append(wid)
    runs[wid][tool].append((float(iops), float(p50), float(p99), float(cpu), float(qd)))

HEADER = ["workload", "engine", "pattern", "bs", "depth", "threads", "direct", "reps",
          "iopulse_iops", "fio_iops", "iops_ratio", "iopulse_p50_ns", "fio_p50_ns",
          "iopulse_p99_ns", "fio_p99_ns", "iopulse_cpu_ns_per_io", "fio_cpu_ns_per_io",
          "iops_diff_pct", "p50_diff_pct", "agreement", "iopulse_in_flight", "fio_in_flight"]
rows = []
for wid in order:
    r = runs[wid]
    reps = min(len(r["iopulse"]), len(r["fio"]))
    if reps == 0:
        continue
    med = {t: [statistics.median(x[k] for x in r[t][:reps]) for k in range(5)] for t in ("iopulse", "fio")}
    (ii, i50, i99, icpu, iqd), (fi, f50, f99, fcpu, fqd) = med["iopulse"], med["fio"]
    engine, pattern, bs, depth, threads, direct = r["spec"].split(":")
    iops_diff = (ii - fi) / fi * 100 if fi else float("nan")
    p50_diff = (i50 - f50) / f50 * 100 if f50 else float("nan")
    # The agreement check (issue 10 item 6) applies where the device is the limit:
    # O_DIRECT on a storage engine. Elsewhere the tools' own costs are what differ.
    if direct == "1" and engine != "null":
        agreement = "ok" if abs(iops_diff) <= 5 and abs(p50_diff) <= 10 else "differs"
    else:
        agreement = "n/a"
    rows.append([wid, engine, pattern, bs, depth, threads, direct, str(reps),
                 f"{ii:.0f}", f"{fi:.0f}", f"{ii / fi:.3f}" if fi else "nan",
                 f"{i50:.0f}", f"{f50:.0f}", f"{i99:.0f}", f"{f99:.0f}",
                 f"{icpu:.0f}", f"{fcpu:.0f}", f"{iops_diff:+.1f}", f"{p50_diff:+.1f}", agreement,
                 f"{iqd:.2f}", f"{fqd:.2f}"])

with open(tsv_path, "w") as f:
    f.write("\t".join(HEADER) + "\n")
    for row in rows:
        f.write("\t".join(row) + "\n")

def k(x):
    return f"{float(x) / 1000:.1f}k"
table = [["workload", "engine", "pattern", "bs", "qd", "thr", "dio", "IOPS iopulse", "IOPS fio", "ratio",
          "p50 ns i/f", "p99 ns i/f", "CPU ns/IO i/f", "in flight i/f", "agree"]]
for r in rows:
    table.append([r[0], r[1], r[2], r[3], r[4], r[5], r[6], k(r[8]), k(r[9]), r[10],
                  f"{r[11]}/{r[12]}", f"{r[13]}/{r[14]}", f"{r[15]}/{r[16]}", f"{r[20]}/{r[21]}", r[19]])
widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
print()
for row in table:
    print("  ".join(c.rjust(w) if i >= 7 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
print()
print("medians of the interleaved runs; ratio = iopulse / fio IOPS; i/f = iopulse/fio;")
print("agree: O_DIRECT rows, IOPS within 5 % and p50 within 10 % (n/a elsewhere)")
print("in flight: mean I/Os in flight by Little's law (IOPS x mean latency); where the")
print("tools keep different numbers of I/Os in flight, their latencies differ for that reason")
PY
echo "TSV: $TSV"
echo "commands: $CMDS"
if [[ $FAILED -gt 0 ]]; then
    say "compare-fio: $FAILED workload(s) failed"
    exit 1
fi
