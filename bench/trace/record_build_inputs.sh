#!/usr/bin/env bash
# Records the run directories (raw files) that build_identity.sh builds with two builds of
# tbdprof-build-trace: the cases docs/benchmarks.md "Trace build memory" names (a launch loop,
# bursts, small CUPTI buffers, samples with library calls, metrics and graphs, lost correlation
# records, two processes, a crash). Each is kept in OUT_DIR/NAME.
#
#   bench/trace/record_build_inputs.sh BIN_DIR OUT_DIR [LOOP_LAUNCHES]
#
# BIN_DIR: a build's bin/ (tbdprof, the samples, collector_scenarios, reliability_misbehaving_program,
# tbdprof_bench_target). LOOP_LAUNCHES: the loop's length (default 1000000). Exit status: 0 all
# recorded; 1 a recording left no run directory; 2 usage.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 BIN_DIR OUT_DIR [LOOP_LAUNCHES]" >&2
    exit 2
fi
bin=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
loop=${3:-1000000}

# record NAME [tbdprof options] -- PROGRAM ARGS...: the program under the simulator, its run
# directory kept (TBDPROF_KEEP_RUN_DIR) and moved to OUT_DIR/NAME. Extra environment: env before it.
record() {
    local name=$1
    shift
    local tmp="$out/$name.tmp"
    rm -rf "$tmp" "${out:?}/$name"
    mkdir -p "$tmp"
    # A crashing program makes tbdprof exit non-zero: the run directory is what counts.
    TMPDIR="$tmp" TBDPROF_KEEP_RUN_DIR=1 "$@" >"$out/$name.log" 2>&1 || true
    local dir
    dir=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
    if [ -z "$dir" ]; then
        echo "no run directory for $name (log: $out/$name.log)" >&2
        return 1
    fi
    mv "$dir" "$out/$name"
    rm -rf "$tmp"
    echo "$name: $(du -sh "$out/$name" | cut -f1)"
}

t="$bin/tbdprof"
o="-o $out/scratch.sqlite --force"
# shellcheck disable=SC2086
{
    record loop "$t" --sim $o -- "$bin/tbdprof_bench_target" launch "$loop" 1
    record burst8 "$t" --sim $o -- "$bin/collector_scenarios" burst 8 250000
    record buffer8 env TBDPROF_MAX_BUFFER_MB=8 "$t" --sim $o -- "$bin/collector_scenarios" burst 2 12000 160000
    record mlp "$t" --sim $o -- "$bin/mlp_train"
    record mlp_flops "$t" --sim --metrics flops $o -- "$bin/mlp_train" --iterations 20
    record lstm "$t" --sim $o -- "$bin/lstm_train" --iterations 5
    record graph "$t" --sim $o -- "$bin/graph_replay"
    record drops_launches env TBDPROF_TEST_DROP_CORRELATION_EVERY=7 "$t" --sim $o -- \
        "$bin/reliability_misbehaving_program" launches 4000
    record drops_threads env TBDPROF_TEST_DROP_CORRELATION_EVERY=7 "$t" --sim $o -- \
        "$bin/reliability_misbehaving_program" threads 1000
    record exec "$t" --sim $o -- "$bin/collector_scenarios" exec
    record segv "$t" --sim $o -- "$bin/collector_scenarios" segv
}
rm -f "$out/scratch.sqlite"
