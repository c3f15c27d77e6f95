#!/usr/bin/env bash
# Records a sample with `tbdprof --sim` and its ground-truth labels, then checks the trace's
# library_call_operands (the operands of library calls beyond a, b, c and workspace) against what the
# program allocated: every row lies inside one tensor the program labelled and is resolved to the
# allocation holding it; the tensor's category is the one its role implies (a batch norm's scale,
# shift and running statistics are weights, saved statistics and reserve spaces activations, dropout
# states other); and every call of each named function has each expected role, in its direction.
#   library_operands.sh TBDPROF PROGRAM 'EXPECT ...' [sample options...]
# EXPECT: FUNCTION:ROLE:ACCESS, e.g. cudnnRNNForward:reserve:write (space separated).
set -u
tbdprof=$1 program=$2 expect=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-operands-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! TBD_SAMPLE_LABELS="$work/labels.tsv" "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" "$@" \
        >"$work/out" 2>"$work/err"; then
    echo "recording failed:"; cat "$work/out" "$work/err"; exit 1
fi
python3 - "$work/trace.sqlite" "$work/labels.tsv" "$expect" <<'PY'
import sqlite3, sys
labelled = []  # (address, bytes, category) of every tensor the program labelled
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "alloc" and len(f) >= 4:
        labelled.append((int(f[1], 16), int(f[2]), f[3]))
category_of_role = {"scale": "weights", "bias": "weights", "running_mean": "weights",
                    "running_variance": "weights", "saved_mean": "activations",
                    "saved_inv_variance": "activations", "reserve": "activations", "dropout_states": "other"}
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT o.library_call, c.name, o.role, o.access, o.address, o.bytes, o.allocation "
                  "FROM library_call_operands o JOIN library_calls c ON c.id = o.library_call").fetchall()
failures = []
roles_of_call = {}
for call, name, role, access, address, extent, allocation in rows:
    roles_of_call.setdefault((call, name), set()).add((role, access))
    holders = [t for t in labelled if t[0] <= address and address + (extent or 1) <= t[0] + t[1]]
    if not holders:
        failures.append(f"call {call} {name}: {role} at {address:#x}+{extent} is inside no labelled tensor")
    elif allocation is None:
        failures.append(f"call {call} {name}: {role} at {address:#x} not resolved to an allocation")
    elif role in category_of_role and all(t[2] != category_of_role[role] for t in holders):
        failures.append(f"call {call} {name}: {role} lies in {sorted({t[2] for t in holders})}, "
                        f"not {category_of_role[role]}")
expected = [e.split(":") for e in sys.argv[3].split()]
for function, role, access in expected:
    calls = [c for c in db.execute("SELECT id FROM library_calls WHERE name = ?", (function,))]
    if not calls:
        failures.append(f"no {function} call recorded")
    missing = [c for (c,) in calls if (role, access) not in roles_of_call.get((c, function), set())]
    if missing:
        failures.append(f"{len(missing)} of {len(calls)} {function} calls lack {role} ({access})")
for f in failures[:20]:
    print("FAIL:", f)
print(f"{len(rows)} extra operands of {len(roles_of_call)} library calls checked; {len(failures)} failures")
sys.exit(1 if failures or not rows else 0)
PY
