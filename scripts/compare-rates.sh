#!/usr/bin/env bash
# The false-positive and detection rates of `iopulse compare` on this machine
# (docs/ci.md): N A/A comparisons (two sets of five runs of one workload) and N A/B
# comparisons (the new side made 15 % slower on purpose), the runs of each pair of sets
# interleaved. Prints how many comparisons exited 5 (a regression) and which figures.
#   scripts/compare-rates.sh [N] [BASE FLAGS...] -- [SLOWER FLAGS...]
# Default: the null engine at --rate-iops 2000 against 1700, 150 ms runs, N = 20.
# Set IOPULSE to the binary (default: target/release/iopulse, else target/debug/iopulse).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${IOPULSE:-target/release/iopulse}
[ -x "$bin" ] || bin=target/debug/iopulse
n=${1:-20}
shift || true
base=(--engine null --duration 150ms --rate-iops 2000)
slow=(--engine null --duration 150ms --rate-iops 1700)
if [ $# -gt 0 ]; then
    base=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do base+=("$1"); shift; done
    shift || true
    slow=("$@")
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# One comparison: five runs a side, interleaved; prints the exit code and the regressed figures.
one() {
    local tag=$1; shift
    local -a new=("$@")
    for r in 1 2 3 4 5; do
        "$bin" "${base[@]}" -q --json "$dir/$tag-b$r.json" >/dev/null 2>&1
        "$bin" "${new[@]}" -q --json "$dir/$tag-n$r.json" >/dev/null 2>&1
    done
    local code=0
    "$bin" compare --base "$dir/$tag"-b*.json --new "$dir/$tag"-n*.json --force --output-format json \
        >"$dir/$tag.cmp.json" 2>/dev/null || code=$?
    local figs
    figs=$(jq -r '[.figures[] | select(.verdict == "regressed") | "\(.figure) \(.change_percent | floor)%"] | join(", ")' "$dir/$tag.cmp.json")
    echo "$code $figs"
}

count() {
    local kind=$1; shift
    local flagged=0
    for i in $(seq 1 "$n"); do
        local out
        out=$(one "${kind//\//}$i" "$@")
        [ "${out%% *}" = 5 ] && flagged=$((flagged + 1))
        echo "  $kind $i: exit ${out}"
    done
    echo "$kind: $flagged of $n comparisons flagged a regression"
}

echo "binary: $bin · base: ${base[*]} · slower: ${slow[*]}"
count A/A "${base[@]}"
count A/B "${slow[@]}"
