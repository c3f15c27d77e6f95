#!/usr/bin/env bash
# tbdprof-tag-accuracy on a hand-built trace whose answer is known: a whole allocation, a whole
# allocation the tagger split into sub-ranges, an arena labelled tensor by tensor, training and
# validation spans against the trace's iterations, the merged (activations = workspace) measure
# and the exit statuses of --min and --min-merged.
#   accuracy_tool.sh SCHEMA_SQL     (env: TAG_ACCURACY)
set -euo pipefail
schema=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/trace.sqlite
sqlite3 "$db" <"$schema"
start=1000000  # run.start_monotonic_ns: label times are this plus trace times
sqlite3 "$db" "
INSERT INTO run (id, command_line, start_unix_ns, start_monotonic_ns, duration_ns, tool_version, simulated_device,
                 clock_source, host_timed_kernels, truncated_files)
    VALUES (1, 'test', 0, $start, 100000, 'test', 1, 'host', 0, 0);
INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, free_ns, kind)
    VALUES (1, 1, 0, 4096, 1000, 0, 100000, 'device'),      -- whole, right
           (2, 1, 0, 65536, 4000, 0, 100000, 'device'),     -- whole label, split by the tagger
           (3, 1, 0, 131072, 3000, 0, 100000, 'device');    -- an arena
INSERT INTO allocation_categories (allocation, category) VALUES (1, 'weights'), (2, 'activations'), (3, 'optimizer_state');
INSERT INTO allocation_subranges (allocation, offset, bytes, begin_ns, end_ns, category)
    VALUES (2, 0, 2000, 10, 90000, 'activations'), (2, 2000, 2000, 10, 90000, 'gradients'),
           (3, 0, 1000, 10, 90000, 'workspace'), (3, 1000, 2000, 10, 90000, 'optimizer_state');
INSERT INTO iterations (process, idx, begin_ns, end_ns, source) VALUES (1, 0, 100, 40000, 'nvtx'), (1, 1, 40500, 80000, 'nvtx');
"
t() { echo $((start + $1)); }
printf '%s\n' \
    "alloc	0x1000	1000	weights	$(t 1)" \
    "alloc	0x10000	4000	activations	$(t 2)" \
    "segment	0x20000	3000	-	$(t 3)" \
    "alloc	0x20000	1000	activations	$(t 4)" \
    "alloc	0x203e8	2000	optimizer_state	$(t 5)" \
    "span	training	0	$(t 50)	$(t 40000)" \
    "span	training	1	$(t 40000)	$(t 80000)" \
    "span	validation	0	$(t 80000)	$(t 90000)" \
    "free	0x20000	0	-	$(t 95000)" \
    "free	0x203e8	0	-	$(t 95001)" \
    "segment_free	0x20000	0	-	$(t 95002)" \
    "free	0x10000	0	-	$(t 95003)" \
    "free	0x1000	0	-	$(t 95004)" >"$work/labels.tsv"

fail() { echo "accuracy_tool: $*" >&2; exit 1; }
out=$("$TAG_ACCURACY" "$db" "$work/labels.tsv")
echo "$out"
# 8000 labelled bytes: 1000 right whole, 2000 of 4000 right in the split allocation, 2000 of 3000 in
# the arena (its first tensor is activations tagged workspace: right only when merged).
grep -q "^accuracy 0.6250 of 8000 labelled bytes" <<<"$out" || fail "accuracy is not 0.6250 of 8000"
grep -q "^accuracy 0.7500 with activations and workspace counted as one" <<<"$out" || fail "merged accuracy is not 0.7500"
grep -q "^1 whole-allocation labels scored against the sub-ranges" <<<"$out" || fail "the split allocation was not scored by sub-range"
grep -q "^2 of them tensors inside segments" <<<"$out" || fail "the arena's tensors were not scored as tensors"
grep -q "^iterations: 2 labelled training steps (+1 validation/checkpoint spans), 2 in the trace, 2 starting within 10%" \
    <<<"$out" || fail "iteration comparison is wrong"
expect_status() {
    local want=$1; shift
    set +e; "$TAG_ACCURACY" "$db" "$work/labels.tsv" "$@" >/dev/null 2>&1; local got=$?; set -e
    [ "$got" = "$want" ] || fail "exit status $got with $*, expected $want"
}
expect_status 0 --min 0.6
expect_status 1 --min 0.7
expect_status 0 --min 0.6 --min-merged 0.7
expect_status 1 --min 0.6 --min-merged 0.8
expect_status 2 --min-merged
expect_status 2 --min 0.6x
expect_status 2 --max 0.5

# A label '-' (the labeller does not know the category, as torch.profiler for memory no tensor
# owns) is not scored but keeps its place: the second allocation at 0x1000 is matched to the
# trace's second allocation there, not its first.
unknown=$work/unknown.sqlite
sqlite3 "$unknown" <"$schema"
sqlite3 "$unknown" "
INSERT INTO run (id, command_line, start_unix_ns, start_monotonic_ns, duration_ns, tool_version, simulated_device,
                 clock_source, host_timed_kernels, truncated_files)
    VALUES (1, 'test', 0, $start, 100000, 'test', 1, 'host', 0, 0);
INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, free_ns, kind)
    VALUES (1, 1, 0, 4096, 500, 0, 10, 'device'), (2, 1, 0, 4096, 1000, 20, 100000, 'device');
INSERT INTO allocation_categories (allocation, category) VALUES (1, 'workspace'), (2, 'weights');
"
printf '%s\n' "alloc	0x1000	500	-	$(t 0)" "free	0x1000	0	-	$(t 10)" "alloc	0x1000	1000	weights	$(t 20)" \
    >"$work/unknown.tsv"
out=$("$TAG_ACCURACY" "$unknown" "$work/unknown.tsv")
echo "$out"
grep -q "^accuracy 1.0000 of 1000 labelled bytes (1 allocations, 0 not found" <<<"$out" ||
    fail "a '-' label was scored, or the next label at its address matched the wrong allocation"
grep -q "^1 allocations (500 bytes) labelled '-'" <<<"$out" || fail "the '-' label was not counted apart"

# A label's time a little before the segment holding its address was allocated (the labeller's clock
# converted from one mark runs ahead of the trace's): the tensor is in the first segment allocated
# there while it lives. One that was freed before any segment there existed is not found.
early=$work/early.sqlite
sqlite3 "$early" <"$schema"
sqlite3 "$early" "
INSERT INTO run (id, command_line, start_unix_ns, start_monotonic_ns, duration_ns, tool_version, simulated_device,
                 clock_source, host_timed_kernels, truncated_files)
    VALUES (1, 'test', 0, $start, 100000, 'test', 1, 'host', 0, 0);
INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, free_ns, kind)
    VALUES (1, 1, 0, 131072, 3000, 500, 100000, 'device');
INSERT INTO allocation_categories (allocation, category) VALUES (1, 'weights');
INSERT INTO allocation_subranges (allocation, offset, bytes, begin_ns, end_ns, category)
    VALUES (1, 0, 1000, 600, 90000, 'weights');
"
printf '%s\n' "alloc	0x20000	1000	weights	$(t 400)" "alloc	0x20400	64	gradients	$(t 100)" \
    "free	0x20400	0	-	$(t 200)" "free	0x20000	0	-	$(t 95000)" >"$work/early.tsv"
out=$("$TAG_ACCURACY" "$early" "$work/early.tsv")
echo "$out"
grep -q "^accuracy 0.9398 of 1064 labelled bytes (2 allocations, 1 not found" <<<"$out" ||
    fail "a tensor labelled just before its segment was not scored in it, or one freed before it was"
echo "accuracy_tool: OK"
