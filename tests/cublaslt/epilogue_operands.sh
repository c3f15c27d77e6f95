#!/usr/bin/env bash
# Records cublaslt_program with `tbdprof --sim` and checks the bias its epilogue matmuls read: each
# cublasLtMatmul the program ran with a bias epilogue (its expectation file says which, in call order)
# has one library_call_operands row, role 'bias', read, D's rows x the element size long, in the
# program's 1 MiB bias allocation; the matmuls without an epilogue have none.
#   epilogue_operands.sh TBDPROF PROGRAM
set -u
tbdprof=$1 program=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-lt-epilogue-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" "$work/expected.txt" >"$work/out" 2>"$work/err"; then
    echo "recording failed:"; cat "$work/out" "$work/err"; exit 1
fi
python3 - "$work/trace.sqlite" "$work/expected.txt" <<'PY'
import sqlite3, sys
element_bytes = {0: 4, 2: 2, 14: 2}  # CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF
expected = [line.split() for line in open(sys.argv[2]) if line.strip()]
db = sqlite3.connect(sys.argv[1])
calls = [c for (c,) in db.execute("SELECT id FROM library_calls WHERE name = 'cublasLtMatmul' ORDER BY begin_ns, id")]
failures = []
if len(calls) != len(expected):
    failures.append(f"{len(calls)} cublasLtMatmul calls recorded, the program made {len(expected)}")
biased = 0
for call, fields in zip(calls, expected):
    m, ab_type, tag = int(fields[0]), int(fields[9]), fields[12]
    rows = db.execute("SELECT o.role, o.access, o.bytes, a.bytes FROM library_call_operands o "
                      "LEFT JOIN allocations a ON a.id = o.allocation WHERE o.library_call = ?", (call,)).fetchall()
    if tag == "-":
        if rows:
            failures.append(f"call {call} (no epilogue): operands {rows}")
        continue
    biased += 1
    want = [("bias", "read", m * element_bytes[ab_type], 1 << 20)]
    if rows != want:
        failures.append(f"call {call} ({tag}): {rows}, expected {want}")
for f in failures:
    print("FAIL:", f)
if biased == 0:
    print("FAIL: the program ran no matmul with a bias epilogue")
print(f"{biased} bias epilogues of {len(calls)} matmuls checked; {len(failures)} failures")
sys.exit(1 if failures or biased == 0 else 0)
PY
