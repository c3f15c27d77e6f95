#!/usr/bin/env bash
# `tbdprof whatif`: bad options get one clear line and exit 2; a trace that cannot carry a prediction
# (untagged, no iterations) gets exit 3 and the reason; JSON has scenarios[] with name, peak_bytes,
# by_category and fits, and the peak splits exactly into its categories.
#   options.sh        (env: TBDPROF, TBDPROF_BIN_DIR)
set -uo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
"$TBDPROF" --sim -o "$work/run.sqlite" -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 3 --batch 128 >"$work/rec.log" 2>&1 ||
    { cat "$work/rec.log"; exit 1; }

# Bad options: exit 2, one line on stderr naming the problem.
expect_usage() {
    local pattern=$1; shift
    "$TBDPROF" whatif "$@" >"$work/out" 2>"$work/err"
    local status=$?
    [ "$status" = 2 ] || fail "whatif $*: exit $status, expected 2"
    [ "$(wc -l <"$work/err")" = 1 ] || fail "whatif $*: $(wc -l <"$work/err") lines on stderr, expected 1"
    grep -q -- "$pattern" "$work/err" || fail "whatif $*: stderr lacks '$pattern': $(cat "$work/err")"
}
run=$work/run.sqlite
expect_usage "batch-size-recorded" "$run" --batch-size 64
expect_usage "not both" "$run" --batch-scale 2 --batch-size 64 --batch-size-recorded 128
expect_usage "positive number" "$run" --batch-scale -1
expect_usage "not a positive integer" "$run" --batch-size x --batch-size-recorded 128
expect_usage "bf16-pure, fp16-pure, fp32" "$run" --precision fp8
expect_usage "bf16-pure, fp16-pure, fp32" "$run" --precision fp32-pure
expect_usage "--zero needs --ranks" "$run" --zero 2
expect_usage "is not 1, 2 or 3" "$run" --zero 4 --ranks 8
expect_usage "--ranks needs --zero" "$run" --ranks 8
expect_usage "calibrate-batch-size" "$run" --batch-size 64 --batch-size-recorded 128 --calibrate "$run"
expect_usage "device-memory" "$run" --device-memory lots
expect_usage "exactly one trace" --batch-scale 2
expect_usage "not sqrt or every-K-layers" "$run" --checkpoint every-0-layers
expect_usage "not sqrt or every-K-layers" "$run" --checkpoint often
expect_usage "zero-bucket" "$run" --zero 1 --ranks 2 --zero-bucket lots
"$TBDPROF" whatif "$work/missing.sqlite" --batch-scale 2 >/dev/null 2>"$work/err"
[ $? = 2 ] || fail "a missing trace: exit status not 2"

# JSON: the scenarios, each peak split exactly by category; 'fits' against a given device memory.
"$TBDPROF" whatif "$run" --batch-scale 2 --precision bf16-pure --zero 2 --ranks 4 --device-memory 80GiB --format json \
    >"$work/out.json" || fail "whatif --format json failed"
python3 - "$work/out.json" <<'PY' || fail "JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
names = [s["name"] for s in d["scenarios"]]
assert names == ["recorded", "batch x2", "bf16-pure", "ZeRO-2 x4 ranks", "batch x2, bf16-pure, ZeRO-2 x4 ranks"], names
for s in d["scenarios"]:
    assert sum(s["by_category"].values()) == s["peak_bytes"], s
    assert s["fits"] is True, s
rec, batch, bf16, zero, both = d["scenarios"]
assert batch["peak_bytes"] > rec["peak_bytes"]
assert batch["by_category"]["weights"] == rec["by_category"]["weights"]
assert bf16["by_category"]["weights"] * 2 == rec["by_category"]["weights"], (bf16, rec)
assert zero["by_category"]["gradients"] < rec["by_category"]["gradients"]
assert zero["by_category"]["weights"] == rec["by_category"]["weights"]
assert d["precision_recorded"] == "fp32"
PY
# A device smaller than the recorded peak: the recorded run does not fit.
"$TBDPROF" whatif "$run" --device-memory 1MiB >"$work/out.txt" || fail "whatif text failed"
grep -q "recorded: does not fit" "$work/out.txt" || fail "no 'does not fit' line: $(cat "$work/out.txt")"

# Cannot predict: untagged, then no iterations. Exit 3, the reason on stdout, the recorded row kept.
cp "$run" "$work/untagged.sqlite"
sqlite3 "$work/untagged.sqlite" "DELETE FROM allocation_categories; DELETE FROM allocation_subranges;"
"$TBDPROF" whatif "$work/untagged.sqlite" --batch-scale 2 >"$work/out.txt"
[ $? = 3 ] || fail "untagged trace: exit status not 3"
grep -q "cannot predict: the allocations are not tagged" "$work/out.txt" || fail "untagged: $(cat "$work/out.txt")"
cp "$run" "$work/noiter.sqlite"
sqlite3 "$work/noiter.sqlite" "DELETE FROM iterations; DELETE FROM ranges;"
"$TBDPROF" whatif "$work/noiter.sqlite" --batch-scale 2 --format json >"$work/out.json"
[ $? = 3 ] || fail "no iterations: exit status not 3"
grep -q '"cannot_predict": "no training iterations' "$work/out.json" || fail "no iterations: $(cat "$work/out.json")"
cp "$run" "$work/noweights.sqlite"
sqlite3 "$work/noweights.sqlite" "UPDATE allocation_categories SET category = 'activations' WHERE category = 'weights';"
"$TBDPROF" whatif "$work/noweights.sqlite" --batch-scale 2 >"$work/out.txt"
[ $? = 3 ] || fail "no weights: exit status not 3"
grep -q "implausible tags: no weights" "$work/out.txt" || fail "no weights: $(cat "$work/out.txt")"
# Checkpointing a run without --free-in-backward-style frees: the activations live to the end of the
# step, so the peak (at the end of backward) cannot drop; the model must say the same.
"$TBDPROF" whatif "$run" --checkpoint sqrt --format json >"$work/ckpt.json" || fail "whatif --checkpoint sqrt failed"
python3 - "$work/ckpt.json" <<'PY' || fail "checkpoint JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
assert [s["name"] for s in d["scenarios"]] == ["recorded", "checkpoint sqrt"], d["scenarios"]
c = d["checkpoint"]
assert c["layers"] == 3 and c["segment_layers"] == 2 and c["recomputed_bytes"] > 0, c
assert d["scenarios"][1]["peak_bytes"] == d["scenarios"][0]["peak_bytes"], d["scenarios"]
PY

# Checkpointing cannot be read without kernel accesses, nor for activations inside arenas; inside a
# caching pool whose replay gives back its segments they are the pool's tensors (predicted).
cp "$run" "$work/noedges.sqlite"
sqlite3 "$work/noedges.sqlite" "DELETE FROM kernel_allocations;"
"$TBDPROF" whatif "$work/noedges.sqlite" --checkpoint sqrt >"$work/out.txt"
[ $? = 3 ] || fail "checkpoint without kernel accesses: exit status not 3"
grep -q "cannot predict: checkpointing: the trace has no kernel argument accesses" "$work/out.txt" ||
    fail "checkpoint without kernel accesses: $(cat "$work/out.txt")"
"$TBDPROF" --sim -o "$work/arena.sqlite" -- "$TBDPROF_BIN_DIR/gpt_arena_train" --iterations 3 \
    >"$work/rec.log" 2>&1 || { cat "$work/rec.log"; exit 1; }
"$TBDPROF" whatif "$work/arena.sqlite" --checkpoint 1 >"$work/out.txt"
[ $? = 3 ] || fail "checkpoint in an arena: exit status not 3"
grep -q "inside segments or arenas that are not a caching pool" "$work/out.txt" ||
    fail "checkpoint in an arena: $(cat "$work/out.txt")"
"$TBDPROF" --sim -o "$work/pool.sqlite" -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 3 --batch 128 --alloc pool \
    >"$work/rec.log" 2>&1 || { cat "$work/rec.log"; exit 1; }
"$TBDPROF" whatif "$work/pool.sqlite" --checkpoint 1 --format json >"$work/pool.json" || fail "checkpoint in a pool failed"
python3 - "$work/pool.json" <<'PY' || fail "checkpoint in a pool: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cannot_predict"] is None and d["checkpoint"]["layers"] == 3, d
assert any("caching pool" in n for n in d["notes"]), d["notes"]
PY

# A pool whose replay does not give back the recorded segments (one segment made 2 MiB larger than
# its tensors' placement explains): each segment scaled on its own, so 'fits' and check --whatif allow
# for 10% error, not 3% (docs/whatif.md, "Fits"); the replayed pool keeps 3%.
cp "$work/pool.sqlite" "$work/odd_pool.sqlite"
sqlite3 "$work/odd_pool.sqlite" \
    "UPDATE allocations SET bytes = bytes + 2097152 WHERE id = (SELECT min(allocation) FROM allocation_subranges)"
for trace in pool odd_pool; do
    "$TBDPROF" whatif "$work/$trace.sqlite" --batch-scale 2 --format json >"$work/$trace.json" || fail "$trace: whatif failed"
done
python3 - "$work/pool.json" "$work/odd_pool.json" <<'PY' || fail "the margin of a pool the replay does not reproduce"
import json, sys
replayed, scaled = (json.load(open(path)) for path in sys.argv[1:3])
assert replayed["fit_margin"] == 0.03 and any("are replayed through" in n for n in replayed["notes"]), replayed
assert scaled["fit_margin"] == 0.1 and any("does not reproduce" in n and "10.00%" in n for n in scaled["notes"]), scaled
PY
odd_peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scenarios"][1]["peak_bytes"])' "$work/odd_pool.json")
"$TBDPROF" whatif "$work/odd_pool.sqlite" --batch-scale 2 --device-memory $((odd_peak * 105 / 100)) >"$work/out.txt"
grep -q "batch x2: borderline: within the model's 10.00% error" "$work/out.txt" ||
    fail "a pool the replay does not reproduce, 5% headroom: $(cat "$work/out.txt")"
"$TBDPROF" check "$work/odd_pool.sqlite" --whatif "--batch-scale 2" --max-peak-memory $((odd_peak * 105 / 100)) >"$work/out.txt"
[ $? = 1 ] || fail "check --whatif: a limit 5% above a scaled pool's prediction passed: $(cat "$work/out.txt")"

# One segment (K at least the layer count): nothing recomputed, the recorded peak, said in a note.
"$TBDPROF" whatif "$run" --checkpoint every-8-layers --format json >"$work/ckpt8.json" || fail "whatif --checkpoint 8 failed"
python3 - "$work/ckpt8.json" <<'PY' || fail "one-segment checkpoint JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["checkpoint"]["segments"] == 1 and d["checkpoint"]["recomputed_bytes"] == 0, d["checkpoint"]
assert d["scenarios"][1]["peak_bytes"] == d["scenarios"][0]["peak_bytes"], d["scenarios"]
assert any("nothing is recomputed" in n for n in d["notes"]), d["notes"]
PY

# HTML: one page with the scenarios' table and the bar chart; escaped, no scripts.
"$TBDPROF" whatif "$run" --batch-scale 2 --format html -o "$work/out.html" || fail "whatif --format html failed"
grep -q "<table" "$work/out.html" || fail "html: no table"
grep -q "<svg" "$work/out.html" || fail "html: no chart"
grep -q "batch x2" "$work/out.html" || fail "html: no batch scenario"
grep -qi "<script" "$work/out.html" && fail "html: a script"

# check --whatif: the memory limits judged on the prediction (with the model's 3% to spare).
peak2=$("$TBDPROF" whatif "$run" --batch-scale 2 --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["scenarios"][1]["peak_bytes"])')
"$TBDPROF" check "$run" --whatif "--batch-scale 2" --max-peak-memory $((peak2 * 104 / 100)) >"$work/out.txt"
[ $? = 0 ] || fail "check --whatif: a limit 4% above the prediction failed: $(cat "$work/out.txt")"
"$TBDPROF" check "$run" --whatif "--batch-scale 2" --max-peak-memory $((peak2 * 102 / 100)) >"$work/out.txt"
[ $? = 1 ] || fail "check --whatif: a limit within the model's error passed: $(cat "$work/out.txt")"
grep -q "predicted peak memory" "$work/out.txt" || fail "check --whatif: $(cat "$work/out.txt")"
"$TBDPROF" check "$run" --whatif "--batch-scale 2" --max-category "activations=1KiB" >"$work/out.txt"
[ $? = 1 ] || fail "check --whatif --max-category: not failed: $(cat "$work/out.txt")"
"$TBDPROF" check "$work/untagged.sqlite" --whatif "--batch-scale 2" --max-peak-memory 80GiB >"$work/out.txt"
[ $? = 1 ] || fail "check --whatif on an untagged trace: not failed"
grep -q "cannot predict" "$work/out.txt" || fail "check --whatif untagged: $(cat "$work/out.txt")"
expect_check_usage() {
    local pattern=$1; shift
    "$TBDPROF" check "$run" "$@" >"$work/out" 2>"$work/err"
    local status=$?
    [ "$status" = 2 ] || fail "check $*: exit $status, expected 2"
    grep -q -- "$pattern" "$work/err" || fail "check $*: stderr lacks '$pattern': $(cat "$work/err")"
}
expect_check_usage "needs --max-peak-memory" --whatif "--batch-scale 2" --min-gpu-utilization 0.1
expect_check_usage "batch-scale" --whatif "--batch-scale x" --max-peak-memory 1GiB
expect_check_usage "whatif" --whatif "--no-such-option 3" --max-peak-memory 1GiB
expect_check_usage "whatif" --whatif "--zero 2" --max-peak-memory 1GiB
# Mixed precision on a data-parallel run without optimizer state (dp_train, plain SGD, 2 ranks on 2
# devices): each rank gets its own FP32 master copy, 4 B per parameter of its own weights (as
# many bytes as its FP32 weights), on its own device. The master copy lives from the weights on, so
# on each device bf16 - (bf16 with ZeRO-1 over 2 ranks, no buckets: only the master copy is sharded)
# is half the rank's copy; with every rank's copy on one device it would be half of their sum.
if [ -x "$TBDPROF_BIN_DIR/dp_train" ]; then
    TBDSIM_DEVICE_COUNT=2 "$TBDPROF" --sim -o "$work/dp.sqlite" -- "$TBDPROF_BIN_DIR/dp_train" --ranks 2 \
        --iterations 2 --optimizer sgd >"$work/rec.log" 2>&1 || { cat "$work/rec.log"; exit 1; }
    sqlite3 -separator ' ' "$work/dp.sqlite" "SELECT a.process, a.device, c.category, a.bytes FROM allocations a
        JOIN allocation_categories c ON c.allocation = a.id WHERE c.category IN ('weights', 'optimizer_state')" \
        >"$work/dp_weights.txt"
    "$TBDPROF" whatif "$work/dp.sqlite" --precision bf16-pure --zero 1 --ranks 2 --zero-bucket 0 --format json \
        >"$work/dp.json" || fail "whatif on the 2-rank run failed"
    python3 - "$work/dp_weights.txt" "$work/dp.json" <<'PY' || fail "master copy per rank"
import collections, json, sys
weights, devices = collections.Counter(), collections.defaultdict(set)
for line in open(sys.argv[1]):
    process, device, category, size = line.split()
    assert category == "weights", f"the run has optimizer state: {line}"
    weights[process] += int(size)
    devices[process].add(device)
assert len(weights) == 2 and len(set.union(*devices.values())) == 2, (weights, devices)
d = json.load(open(sys.argv[2]))
s = {x["name"]: x for x in d["scenarios"]}
bf16, sharded = s["bf16-pure"], s["bf16-pure, ZeRO-1 x2 ranks"]
# 4 B per FP32 parameter: each rank's copy is its weights' bytes; at the peak, every rank's copy.
assert bf16["by_category"]["optimizer_state"] == sum(weights.values()), (bf16, weights)
gain = bf16["device_peak_bytes"] - sharded["device_peak_bytes"]
assert gain == max(weights.values()) // 2, f"device peak: {gain} B more than ZeRO-1's, expected {max(weights.values()) // 2}"
PY
fi
[ "$failures" = 0 ] && echo "whatif options: all checks passed"
exit $((failures > 0))
