#!/usr/bin/env bash
# Records cnn_train (cuDNN) with `tbdprof --sim` and the program's ground-truth labels, then checks
# the operand extents of its cuDNN library calls (library_calls.a_bytes, b_bytes, c_bytes) against the
# tensors the program allocated: every recorded operand extent is the labelled size of a tensor the
# program placed at that address, and every cuDNN call with an operand has its extent recorded.
#   operand_bytes.sh TBDPROF CNN_TRAIN [sample options...]
set -u
tbdprof=$1 program=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-cnn-bytes-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! TBD_SAMPLE_LABELS="$work/labels.tsv" "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" "$@" \
        >"$work/out" 2>"$work/err"; then
    echo "recording failed:"; cat "$work/out" "$work/err"; exit 1
fi
python3 - "$work/trace.sqlite" "$work/labels.tsv" <<'PY'
import sqlite3, sys
from collections import defaultdict
sizes = defaultdict(set)  # labelled tensor address -> the sizes tensors there had
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "alloc" and len(f) >= 3:
        sizes[int(f[1], 16)].add(int(f[2]))
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT id, name, a, a_bytes, b, b_bytes, c, c_bytes FROM library_calls "
                  "WHERE name LIKE 'cudnn%'").fetchall()
checked, failures = 0, []
for call, name, *operands in rows:
    for role, (address, extent) in zip("abc", zip(operands[0::2], operands[1::2])):
        if not address:
            if extent is not None:
                failures.append(f"call {call} {name}: {role}_bytes {extent} without an operand")
            continue
        if extent is None:
            failures.append(f"call {call} {name}: operand {role} has no recorded extent")
        elif extent not in sizes.get(address, ()):
            failures.append(f"call {call} {name}: {role}_bytes {extent}, labelled sizes there "
                            f"{sorted(sizes.get(address, ()))}")
        else:
            checked += 1
for f in failures[:20]:
    print("FAIL:", f)
if not rows or checked == 0:
    print("FAIL: no cuDNN operand extents to check")
    sys.exit(1)
print(f"{checked} operand extents of {len(rows)} cuDNN calls equal the labelled tensor sizes; "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
PY
