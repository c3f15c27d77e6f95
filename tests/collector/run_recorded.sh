#!/usr/bin/env bash
# Runs a program under the collector on the simulated GPU, then compares its raw files with the
# ground truth.
#   run_recorded.sh WORKDIR EXPECTED_STATUS CHECKER [CHECKER_ARGS...] -- PROGRAM [ARGS...]
# Environment: TBDPROF_PRELOAD (the library), LD_LIBRARY_PATH (the simulated GPU first).
# CHECKER_ARGS may use @POINTERS@ for the file the program writes its launch pointers to.
set -u
workdir=$1 expected=$2 checker=$3
shift 3
checker_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    checker_args+=("${1//@POINTERS@/$workdir/pointers.txt}")
    shift
done
shift  # --
rm -rf "$workdir" && mkdir -p "$workdir/run"
TBDSIM_TRUTH="$workdir/truth.tsv" TBDPROF_RUN_DIR="$workdir/run" TBDPROF_TEST_POINTERS="$workdir/pointers.txt" \
    LD_PRELOAD="$TBDPROF_PRELOAD" "$@" > "$workdir/program.log" 2>&1
status=$?
if [ "$status" -ne "$expected" ]; then
    echo "program exited with $status, expected $expected:"
    cat "$workdir/program.log"
    exit 1
fi
exec "$checker" --truth "$workdir/truth.tsv" --run-dir "$workdir/run" "${checker_args[@]}"
