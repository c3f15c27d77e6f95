#!/usr/bin/env bash
# A program that calls functions the simulated GPU does not model (not_modelled_program.cpp) is told
# which, and so is the user of tbdprof (docs/simgpu.md, "Unmodelled functions"):
#   - bare, on the simulated libraries: one stderr line per function, even when called twice;
#   - with TBDSIM_NOT_MODELLED: the file holds PID<TAB>NAME<TAB>RESULT per function;
#   - under `tbdprof --sim` (with a fork child calling the same functions): tbdprof names each once
#     after the run, the trace keeps a run note per function, the report repeats it.
#   not_modelled.sh TBDPROF PROGRAM SIMGPU_DIR
set -uo pipefail
tbdprof=$1 program=$2 simgpu=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-not-modelled-XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
count() { grep -c -F -- "$1" "$2"; }

cudnn_line='tbdsim: not modelled: cudnnGetFoldedConvBackwardDataDescriptors (returned CUDNN_STATUS_NOT_SUPPORTED)'
runtime_line='tbdsim: not modelled: cudaMallocArray (returned cudaErrorNotSupported)'

LD_LIBRARY_PATH=$simgpu TBDSIM_NOT_MODELLED=$work/holes "$program" >"$work/out" 2>"$work/err"
[ $? -eq 3 ] || fail "bare run: want exit 3 (the program saw NOT_SUPPORTED); out: $(cat "$work/out" "$work/err")"
[ "$(count "$cudnn_line" "$work/err")" = 1 ] || fail "bare run: want '$cudnn_line' once; stderr: $(cat "$work/err")"
[ "$(count "$runtime_line" "$work/err")" = 1 ] || fail "bare run: want '$runtime_line' once; stderr: $(cat "$work/err")"
pid_re='^[0-9]+'$'\t'
grep -qE "${pid_re}cudnnGetFoldedConvBackwardDataDescriptors"$'\t'"CUDNN_STATUS_NOT_SUPPORTED\$" "$work/holes" ||
    fail "TBDSIM_NOT_MODELLED file lacks the cuDNN line: $(cat "$work/holes" 2>&1)"
[ "$(wc -l <"$work/holes")" = 2 ] || fail "TBDSIM_NOT_MODELLED file: want 2 lines, got $(cat "$work/holes" 2>&1)"

"$tbdprof" --sim -o "$work/t.sqlite" -- "$program" --fork >"$work/out" 2>"$work/err"
status=$?
[ $status -eq 3 ] || fail "tbdprof: want the program's exit status 3, got $status: $(cat "$work/err")"
said='the simulated GPU does not model cudnnGetFoldedConvBackwardDataDescriptors: the program saw CUDNN_STATUS_NOT_SUPPORTED'
[ "$(count "tbdprof: $said" "$work/err")" = 1 ] || fail "tbdprof: want '$said' once; stderr: $(cat "$work/err")"
grep -qF 'does not model cudaMallocArray: the program saw cudaErrorNotSupported' "$work/err" ||
    fail "tbdprof: the runtime hole is not named: $(cat "$work/err")"
notes=$(sqlite3 "$work/t.sqlite" "SELECT key || '=' || value FROM run_notes WHERE key LIKE 'sim_not_modelled.%' ORDER BY key")
want=$'sim_not_modelled.cudaMallocArray=cudaErrorNotSupported\nsim_not_modelled.cudnnGetFoldedConvBackwardDataDescriptors=CUDNN_STATUS_NOT_SUPPORTED'
[ "$notes" = "$want" ] || fail "run notes: got '$notes', want '$want'"
"$tbdprof" report "$work/t.sqlite" >"$work/report" 2>&1 || fail "report failed: $(cat "$work/report")"
# The report wraps long notes: compare with runs of white space made one space.
tr -s ' \n' '  ' <"$work/report" | grep -qF "$said" || fail "the report's notes lack '$said': $(cat "$work/report")"

# `tbdprof build` of a kept run directory says the same, and skips lines of the file that are not of
# its format (cut, binary, names that are not identifiers) instead of repeating them.
TBDPROF_KEEP_RUN_DIR=1 "$tbdprof" --sim -o "$work/kept.sqlite" -- "$program" >"$work/out" 2>"$work/err"
run_dir=$(sed -n 's/^tbdprof: raw files kept in //p' "$work/err")
if [ -d "$run_dir" ]; then
    printf 'garbage\n12\tcudnnX; rm -rf /\tBAD\n34\tcudnnCut' >>"$run_dir/not-modelled"
    "$tbdprof" build "$run_dir" -o "$work/rebuilt.sqlite" >"$work/out" 2>"$work/err" || fail "build failed: $(cat "$work/err")"
    [ "$(grep -c 'does not model' "$work/err")" = 2 ] || fail "build: want the two holes named, got: $(cat "$work/err")"
    grep -q 'rm -rf\|cudnnCut\|garbage' "$work/err" && fail "build repeated a malformed line: $(cat "$work/err")"
    [ "$(sqlite3 "$work/rebuilt.sqlite" "SELECT count(*) FROM run_notes WHERE key LIKE 'sim_not_modelled.%'")" = 2 ] ||
        fail "rebuilt trace: want 2 sim_not_modelled notes"
    rm -rf "$run_dir"
else
    fail "no kept run directory in: $(cat "$work/err")"
fi

# Run-time compilation (PyTorch's jiterator, CuPy raw kernels): tbdprof says plainly that the program
# needs NVRTC and that the simulated GPU cannot compile, at the end of the run and in the report.
"$tbdprof" --sim -o "$work/nvrtc.sqlite" -- "$program" --nvrtc >"$work/out" 2>"$work/err"
[ $? -eq 4 ] || fail "--nvrtc: want exit 4 (the compilation failed): $(cat "$work/out" "$work/err")"
said='the program compiles GPU code at run time with NVRTC'
grep -qF "does not model nvrtcCompileProgram: the program saw NVRTC_ERROR_COMPILATION; $said" "$work/err" ||
    fail "--nvrtc: tbdprof does not say the program needs NVRTC: $(cat "$work/err")"
"$tbdprof" report "$work/nvrtc.sqlite" >"$work/report" 2>&1 || fail "--nvrtc report failed: $(cat "$work/report")"
tr -s ' \n' '  ' <"$work/report" | grep -qF "$said" || fail "--nvrtc: the report's notes lack '$said'"

# A program that calls nothing unmodelled: no line, no note.
"$tbdprof" --sim -o "$work/clean.sqlite" -- "$program" --none >"$work/out" 2>"$work/err"
grep -q 'not model' "$work/err" && fail "a clean run names holes: $(cat "$work/err")"
[ "$(sqlite3 "$work/clean.sqlite" "SELECT count(*) FROM run_notes WHERE key LIKE 'sim_not_modelled.%'")" = 0 ] ||
    fail "a clean run has sim_not_modelled notes"

[ $failures -eq 0 ] && echo "all passed" || { echo "$failures failure(s)"; exit 1; }
