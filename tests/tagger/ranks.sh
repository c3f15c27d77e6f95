#!/usr/bin/env bash
# A multi-process run: every rank is a program of its own. dp_train is recorded with 2 ranks (one
# process each) and its labels (one file per rank), then, for each process: its training steps are
# found (as many as the steps it labelled, none set apart), its weights, gradients and optimizer
# state carry those tags, whatever the other rank did at the same time, and the tags agree with the
# labels on at least MIN_RANK_ACCURACY (default 0.95) of the rank's labelled bytes (tbdprof-tag-accuracy
# on a copy of the trace holding that rank's process only: the ranks' devices reuse addresses).
# RANKS_SAMPLE names another sample with dp_train's launcher and labels (pp_train: pipeline stages that
# send activations and their gradients to each other); RANKS_MISALIGNED allows that many steps per rank
# to begin elsewhere than labelled (default 0: pp_train's stages block in the simulated NCCL's receive,
# whose host call waits for the peer, so where a step begins can be off by that wait).
#   ranks.sh STEPS [SAMPLE ARGS...]      (env: TBDPROF, TAG_ACCURACY, TBDPROF_BIN_DIR, RANKS_SAMPLE)
set -euo pipefail
steps=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TBD_SAMPLE_LABELS="$work/labels.tsv" "$TBDPROF" --sim -o "$work/run.sqlite" -- "$TBDPROF_BIN_DIR/${RANKS_SAMPLE:-dp_train}" \
    --ranks 2 --iterations "$steps" "$@" >"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
q() { sqlite3 "$work/run.sqlite" "$1"; }
status=0
for rank in 0 1; do
    labels="$work/labels.tsv"
    [ "$rank" = 0 ] || labels="$labels.rank$rank"
    process=$(q "SELECT process FROM process_ranks WHERE rank = $rank")
    [ -n "$process" ] || { echo "FAIL: no process for rank $rank"; exit 1; }
    labelled=$(awk -F'\t' '$1 == "span" && $2 == "training"' "$labels" | wc -l)
    read -r found apart < <(q "SELECT (SELECT count(*) FROM iterations WHERE process = $process AND kind = 'training'),
        (SELECT count(*) FROM iterations WHERE process = $process AND kind = 'non_training')" | tr '|' ' ')
    # A step found begins where the labelled one does: not before it (less a tenth of its length, as
    # tbdprof-tag-accuracy allows, or less the time since the process's last recorded event before it:
    # a 15 ms stall of the host after the previous step's frees, with nothing recorded in it, was seen
    # on a loaded machine, and nothing in the trace tells where in it the step began) and not after the
    # first kernel the process launched in it. (Not within a tenth after its start: a host stall in the
    # first step's allocations, before its first kernel, was seen to take 8 ms on a loaded machine, and
    # a first step begins with its first work.)
    values=$(awk -F'\t' '$1 == "span" && $2 == "training" { printf "%s(%s, %s)", n++ ? ", " : "", $4, $5 }' "$labels")
    aligned=$(q "WITH s(b, e) AS (VALUES $values), t(start) AS (SELECT start_monotonic_ns FROM run)
        SELECT count(*) FROM s, t WHERE EXISTS (SELECT 1 FROM iterations i WHERE i.process = $process AND i.kind = 'training'
            AND i.begin_ns + t.start >= min(s.b - (s.e - s.b) / 10, t.start + (SELECT max(x) FROM (
                SELECT max(alloc_ns) AS x FROM allocations WHERE process = $process AND alloc_ns + t.start < s.b
                UNION ALL SELECT max(free_ns) FROM allocations WHERE process = $process AND free_ns + t.start < s.b
                UNION ALL SELECT max(launch_ns) FROM kernel_view WHERE process = $process AND launch_ns + t.start < s.b)))
            AND i.begin_ns <= (SELECT min(k.launch_ns) FROM kernel_view k WHERE k.process = $process AND k.launch_ns + t.start >= s.b))")
    echo "rank $rank (process $process): $found steps, $apart set apart; labelled $labelled steps, $aligned begin where found"
    if [ "$labelled" != "$steps" ] || [ "$found" != "$steps" ] || [ "$apart" != 0 ] || [ "$aligned" -lt $((steps - ${RANKS_MISALIGNED:-0})) ]; then
        echo "FAIL: rank $rank's steps"
        status=1
    fi
    # Each labelled weights, gradients and optimizer-state buffer: the allocation at its address and
    # size that lived longest (the buffer is made once; short-lived ones may reuse the address later).
    checked=0 wrong=0
    while IFS=$'\t' read -r event address bytes category _; do
        [ "$event" = alloc ] || continue
        case "$category" in weights | gradients | optimizer_state) ;; *) continue ;; esac
        tag=$(q "SELECT ifnull(c.category, 'none') FROM allocations a LEFT JOIN allocation_categories c ON c.allocation = a.id
                 WHERE a.process = $process AND a.address = $((address)) AND a.bytes = $bytes
                 ORDER BY ifnull(a.free_ns, 9223372036854775807) - a.alloc_ns DESC LIMIT 1")
        checked=$((checked + 1))
        if [ "$tag" != "$category" ]; then
            echo "  $address ($bytes bytes) labelled $category, tagged ${tag:-not found}"
            wrong=$((wrong + 1))
        fi
    done <"$labels"
    echo "rank $rank: $((checked - wrong)) of $checked weights, gradients and optimizer-state buffers tagged as labelled"
    if [ "$checked" -lt 3 ] || [ "$wrong" != 0 ]; then
        echo "FAIL: rank $rank's tags"
        status=1
    fi
    cp "$work/run.sqlite" "$work/rank$rank.sqlite"
    sqlite3 "$work/rank$rank.sqlite" "DELETE FROM allocation_categories WHERE allocation IN
            (SELECT id FROM allocations WHERE process != $process);
        DELETE FROM allocations WHERE process != $process; DELETE FROM iterations WHERE process != $process;"
    echo "rank $rank's labelled bytes:"
    "$TAG_ACCURACY" "$work/rank$rank.sqlite" "$labels" --min "${MIN_RANK_ACCURACY:-0.95}" | sed 's/^/  /' ||
        { echo "FAIL: rank $rank's byte accuracy"; status=1; }
done
[ "$status" = 0 ] && echo ok
exit $status
