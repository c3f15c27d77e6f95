#!/usr/bin/env bash
# How the collector's device records join their host calls on the real CUPTI, for each choice of the
# API record kinds enabled beside the work (TBDPROF_CUPTI_API_RECORDS=both|driver|runtime|none, see
# docs/collector.md). Runs inside the bundle made by scripts/gpu/bundle.sh; under a minute on an H200.
# For each choice, hello_copy and mlp_train --iterations 50 are recorded plainly; printed per run: the
# exit status, the wall time, the program's own elapsed_ms, the builder's notes on the join ("lost
# their correlation record", "without a matching host call") and the copies and sets stored (a
# failed join stores each twice). Results in ${OUT:-correlation-out}/.
#   correlation_check.sh              on the real GPU
#   correlation_check.sh --rehearse   the same on the simulated GPU
# Exit status: 0 the default (both) joined every record; 1 a run failed; 3 the default lost joins.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sim=()
case "${1:-}" in
    --rehearse) sim=(--sim) ;;
    "") ;;
    *) echo "usage: correlation_check.sh [--rehearse]" >&2; exit 2 ;;
esac
[ -x "$here/bin/tbdprof" ] || { echo "correlation_check.sh runs inside a bundle (scripts/gpu/bundle.sh)" >&2; exit 2; }
B="$here/bin"
out=$(realpath -m "${OUT:-correlation-out}")
mkdir -p "$out" || exit 1
exec > >(tee "$out/correlation_check.log") 2>&1
# tee runs beside the script: at exit, close its input and wait for it, so that the log is whole
# when the script returns (a caller reading the log at once found its last lines missing).
tee_pid=$!
trap 'exec >&- 2>&-; wait "$tee_pid"' EXIT

if [ ${#sim[@]} -eq 0 ] && ldd "$B/mlp_train" | grep -q "not found"; then
    # As run_on_gpu.sh: CUDA 13's runtime and cuBLAS from the toolkit or PyTorch's nvidia-* wheels.
    # shellcheck disable=SC2038,SC2046  # paths without spaces; the site folders are meant to split
    extra=$(find /usr/local/cuda*/lib* /usr/lib/x86_64-linux-gnu \
                 $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
                 -name 'libcublas.so.13' -o -name 'libcudart.so.13' 2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
    export LD_LIBRARY_PATH="${extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

failed=0
default_lost=0
record() {  # api kinds, name, program...
    local kinds=$1 name=$2; shift 2
    local trace="$out/${name}_$kinds.sqlite" log="$out/${name}_$kinds.log" start rc
    start=$(date +%s%N)
    TBDPROF_CUPTI_API_RECORDS=$kinds timeout --kill-after=5 "${TBDPROF_CHECK_TIMEOUT:-40}" \
        "$B/tbdprof" "${sim[@]}" --force -o "$trace" -- "$@" >"$log" 2>&1
    rc=$?
    local wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    local program_ms stored notes
    program_ms=$(grep -o 'elapsed_ms=[0-9.]*' "$log" | head -1 | cut -d= -f2)
    # Python's sqlite3: the GPU machine has Python, not necessarily the sqlite3 shell (nor, in the
    # rehearsal, the system's libsqlite3: the bundle's copy is found first).
    stored=$(LD_LIBRARY_PATH="$here/lib/tbdprof/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(", ".join("%d %s" % (db.execute("SELECT COUNT(*) FROM " + t).fetchone()[0], t) for t in ("kernels", "copies", "sets")))' \
        "$trace" 2>/dev/null)
    notes=$(grep -oE '[0-9]+ device records (had lost their correlation record|without a matching host call)' "$log" | paste -sd';')
    printf '%-8s %-14s exit %s  wall %6s ms  program %8s ms  %s  %s\n' "$kinds" "$name" "$rc" "$wall_ms" \
        "${program_ms:--}" "${stored:-no trace}" "${notes:-every device record joined by id}"
    if [ "$rc" -ne 0 ]; then failed=$((failed + 1)); sed 's/^/    /' "$log" | tail -5; fi
    if [ "$kinds" = both ] && [ -n "$notes" ]; then default_lost=$((default_lost + 1)); fi
}

check_kernel=(--check-kernel)
[ ${#sim[@]} -gt 0 ] && check_kernel=()  # the simulated GPU does not execute kernels
for kinds in both driver runtime none; do
    record "$kinds" hello_copy "$B/hello_copy" "${check_kernel[@]}"
    record "$kinds" mlp_train "$B/mlp_train" --iterations 50
done
echo "== done: $failed run(s) failed; the default (both) lost joins in $default_lost run(s); results in $out"
[ "$failed" -eq 0 ] || exit 1
[ "$default_lost" -eq 0 ] || exit 3
exit 0
