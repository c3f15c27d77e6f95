#!/usr/bin/env bash
# The same trace tags the same way every time; two runs of the same program give the same breakdown
# and the same iterations; `tbdprof tag --explain` explains by id and by address, and refuses
# nonsense with one message.
#   stable_tags.sh PROGRAM [ARGS...]      (env: TBDPROF, TBDPROF_BIN_DIR)
set -euo pipefail
program=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
ok() { echo "ok:   $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for run in 1 2; do
    "$TBDPROF" --sim -o "$work/run$run.sqlite" -- "$TBDPROF_BIN_DIR/$program" "$@" >"$work/record$run.log" 2>&1 ||
        { cat "$work/record$run.log"; exit 1; }
done
dump() {  # every stored result, in a fixed order
    sqlite3 "$1" "SELECT c.allocation, c.category, c.rule, c.confidence, coalesce(c.evidence, e.text)
                      FROM allocation_categories c LEFT JOIN strings e ON e.id = c.evidence_string ORDER BY c.allocation;
                  SELECT allocation, offset, bytes, begin_ns, end_ns, category, rule FROM allocation_subranges
                      ORDER BY allocation, offset, begin_ns;
                  SELECT idx, begin_ns, end_ns, device_begin_ns, device_end_ns, kind FROM iterations ORDER BY id;
                  SELECT iteration, kind, begin_ns, end_ns FROM phases ORDER BY iteration, kind"
}
dump "$work/run1.sqlite" >"$work/first.txt"
"$TBDPROF" tag "$work/run1.sqlite" >"$work/tag1a.txt"
dump "$work/run1.sqlite" >"$work/again.txt"
"$TBDPROF" tag "$work/run1.sqlite" >"$work/tag1b.txt"
cmp -s "$work/first.txt" "$work/again.txt" && cmp -s "$work/tag1a.txt" "$work/tag1b.txt" &&
    ok "the same trace tags the same way every time" || fail "tagging the same trace again changed the results"
# Reasons and evidence are strings ids, each text stored once; tagging again leaves no strings behind.
texts() {
    sqlite3 "$1" "SELECT count(*), count(DISTINCT text) FROM strings WHERE id IN (SELECT reason_string FROM allocation_categories
        UNION SELECT evidence_string FROM allocation_categories UNION SELECT reason_string FROM allocation_subranges
        UNION SELECT evidence_string FROM allocation_subranges);
        SELECT count(*) FROM strings; SELECT count(*) FROM allocation_categories WHERE reason IS NOT NULL OR evidence IS NOT NULL"
}
read -r -d '' stored < <(texts "$work/run1.sqlite") || true
"$TBDPROF" tag "$work/run1.sqlite" >/dev/null
read -r -d '' again < <(texts "$work/run1.sqlite") || true
counts=$(head -1 <<<"$stored")
[ "${counts%%|*}" = "${counts##*|}" ] && [ "${counts%%|*}" -gt 0 ] && [ "$(tail -1 <<<"$stored")" = 0 ] &&
    [ "$stored" = "$again" ] && ok "reasons and evidence stored once each ($counts); tagging again adds no strings" ||
    fail "tag texts: $stored / again: $again"
"$TBDPROF" tag "$work/run2.sqlite" >"$work/tag2.txt"
# Breakdown and iteration count (bytes per category; addresses and times differ between runs).
if cmp -s "$work/tag1a.txt" "$work/tag2.txt"; then
    ok "two runs: same breakdown and iterations ($(head -1 "$work/tag2.txt"))"
else
    fail "two runs of the same program differ:"; diff "$work/tag1a.txt" "$work/tag2.txt" || true
fi
for db in run1 run2; do
    sqlite3 "$work/$db.sqlite" "SELECT count(*) FROM iterations WHERE kind = 'training'"
done | uniq | wc -l | grep -qx 1 && ok "two runs: same number of training iterations" || fail "iteration counts differ"

# --explain by id (the largest weight) and by an address inside it.
read -r id address < <(sqlite3 -separator ' ' "$work/run1.sqlite" "SELECT a.id, printf('0x%x', a.address + a.bytes / 2)
    FROM allocations a JOIN allocation_categories c ON c.allocation = a.id WHERE c.category = 'weights'
    ORDER BY a.bytes DESC LIMIT 1")
out=$("$TBDPROF" tag "$work/run1.sqlite" --explain "$id")
grep -q "^allocation $id " <<<"$out" && grep -q "category   weights" <<<"$out" && grep -q "evidence   used in" <<<"$out" &&
    ok "--explain $id: category, rule and evidence" || fail "--explain $id: $out"
out=$("$TBDPROF" tag "$work/run1.sqlite" --explain "$address")
grep -q "^allocation $id " <<<"$out" && ok "--explain $address finds the allocation holding it" || fail "--explain $address: $out"
set +e
err=$("$TBDPROF" tag "$work/run1.sqlite" --explain bogus 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && [ "$(wc -l <<<"$err")" = 1 ] && ok "--explain bogus: one message, exit 1" || fail "--explain bogus: rc $rc: $err"
err=$("$TBDPROF" tag "$work/run1.sqlite" --explain 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && ok "--explain without a value: usage error" || fail "--explain without a value: rc $rc: $err"
set -e
[ $fails = 0 ] && echo "all ok" || { echo "$fails failure(s)"; exit 1; }
