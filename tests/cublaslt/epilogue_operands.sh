#!/usr/bin/env bash
# Records cublaslt_program with `tbdprof --sim` and checks the bias its epilogue matmuls read: each
# cublasLtMatmul the program ran with a bias epilogue (its expectation file says which, in call order)
# has one library_call_operands row, role 'bias', read, D's rows x the element size long, in the
# program's 1 MiB bias allocation; the matmuls without an epilogue have none. Then records
# epilogue_program and checks its four matmuls' bias and aux rows: role, direction, bytes and the
# allocation (4 KiB bias, 1 MiB aux) as NVIDIA's cublasLtEpilogue_t documentation implies.
#   epilogue_operands.sh TBDPROF PROGRAM EPILOGUE_PROGRAM
set -u
tbdprof=$1 program=$2 epilogue_program=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-lt-epilogue-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" "$work/expected.txt" >"$work/out" 2>"$work/err" ||
   ! "$tbdprof" --sim -o "$work/epilogues.sqlite" -- "$epilogue_program" >"$work/out2" 2>"$work/err2"; then
    echo "recording failed:"; cat "$work"/out* "$work"/err*; exit 1
fi
python3 - "$work/trace.sqlite" "$work/expected.txt" "$work/epilogues.sqlite" <<'PY'
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
# epilogue_program: m 256, n 128, FP32, aux ld 256; (role, access, bytes, allocation bytes) per call.
bias, aux = 1024, 256 * 128 * 4
want_calls = [
    [("bias", "read", bias, 4096), ("epilogue_aux", "write", aux, 1 << 20)],            # GELU_AUX_BIAS
    [("bias_gradient", "write", bias, 4096), ("epilogue_aux", "read", aux, 1 << 20)],   # DGELU_BGRAD
    [("bias_gradient", "write", 128 * 4, 4096)],                                         # BGRADB: B's columns
    [("epilogue_aux", "write", 256 * 128 // 8, 1 << 20)],                                # RELU_AUX: bits
]
db2 = sqlite3.connect(sys.argv[3])
calls2 = [c for (c,) in db2.execute("SELECT id FROM library_calls WHERE name = 'cublasLtMatmul' ORDER BY begin_ns, id")]
if len(calls2) != len(want_calls):
    failures.append(f"epilogue_program: {len(calls2)} matmuls recorded, it made {len(want_calls)}")
for call, want in zip(calls2, want_calls):
    rows = sorted(db2.execute("SELECT o.role, o.access, o.bytes, a.bytes FROM library_call_operands o "
                              "LEFT JOIN allocations a ON a.id = o.allocation WHERE o.library_call = ?", (call,)))
    if rows != sorted(want):
        failures.append(f"epilogue_program call {call}: {rows}, expected {sorted(want)}")
for f in failures:
    print("FAIL:", f)
if biased == 0:
    print("FAIL: the program ran no matmul with a bias epilogue")
print(f"{biased} bias epilogues of {len(calls)} matmuls and {len(calls2)} bias/aux epilogues checked; "
      f"{len(failures)} failures")
sys.exit(1 if failures or biased == 0 else 0)
PY
