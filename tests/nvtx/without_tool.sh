#!/usr/bin/env bash
# `--nvtx` without a tool attached is harmless, a recording without --nvtx has no ranges, and a user's
# own NVTX_INJECTION64_PATH is kept (with a note).
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${PRELOAD:?}" "${SIMGPU_DIR:?}"
cd "$WORK" || exit 1
mlp="$TBDPROF_BIN_DIR/mlp_train"

run_plain() {
    local what=$1
    shift
    env -u TBDPROF_RUN_DIR -u NVTX_INJECTION64_PATH -u LD_PRELOAD "$@" LD_LIBRARY_PATH="$SIMGPU_DIR" \
        "$mlp" --iterations 3 --nvtx >out 2>err
    local status=$?
    if [ "$status" -eq 0 ] && grep -q "iterations=3" out; then pass "$what"; else fail "$what: exit $status: $(cat err)"; fi
}
run_plain "no tool: NVTX calls are no-ops"
run_plain "tool library named but not recording" NVTX_INJECTION64_PATH="$PRELOAD"
run_plain "preloaded, not recording" LD_PRELOAD="$PRELOAD" NVTX_INJECTION64_PATH="$PRELOAD"

"$TBDPROF" --sim -o plain.sqlite -- "$mlp" --iterations 4 >out 2>err || fail "record without --nvtx: $(cat err)"
expect_equal "without --nvtx: no ranges" "$(query plain.sqlite "SELECT count(*) FROM ranges")" 0
expect_none "without --nvtx: iterations not from nvtx" \
    "$(query plain.sqlite "SELECT DISTINCT source FROM iterations WHERE source = 'nvtx'")"

NVTX_INJECTION64_PATH="$WORK/libsome-other-tool.so" "$TBDPROF" --sim -o other.sqlite -- "$mlp" --iterations 3 --nvtx \
    >out 2>err || fail "record with another NVTX tool named: $(cat err)"
grep -q "keeping your NVTX_INJECTION64_PATH=$WORK/libsome-other-tool.so" err && pass "a user's NVTX tool is kept, with a note" \
    || fail "no note about the user's NVTX_INJECTION64_PATH: $(cat err)"
expect_equal "another NVTX tool named: no ranges" "$(query other.sqlite "SELECT count(*) FROM ranges")" 0

env LD_LIBRARY_PATH="$SIMGPU_DIR" "$mlp" --nvtx=yes >out 2>err
expect_equal "--nvtx takes no value (exit status)" "$?" 2
finish
