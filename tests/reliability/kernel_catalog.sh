#!/usr/bin/env bash
# A function address reused after cuModuleUnload never gets the old kernel's name or
# parameter layout; more kernels than the catalog's first 2048 slots are all described correctly.
source "$(dirname "$0")/../cli/common.sh"
: "${MODULE_REUSE_PROGRAM:?}"
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 shell is not installed"; exit 0; }
cd "$WORK" || exit 1
q() { sqlite3 "$1" "$2"; }

"$TBDPROF" --sim -o reuse.sqlite -- "$MODULE_REUSE_PROGRAM" reuse >out 2>err || fail "reuse: $(cat err)"
names=$(q reuse.sqlite "SELECT group_concat(s.text, ',') FROM (SELECT f.name AS n FROM kernels k JOIN functions f ON f.id = k.function ORDER BY k.id) JOIN strings s ON s.id = n")
[ "$names" = "only_one,takes_three" ] || fail "reuse: kernels named '$names', want only_one,takes_three"
edges=$(q reuse.sqlite "SELECT count(*) FROM kernel_allocations ka JOIN kernels k ON k.id = ka.kernel JOIN functions f ON f.id = k.function JOIN strings s ON s.id = f.name WHERE s.text = 'takes_three'")
[ "$edges" -eq 3 ] || fail "reuse: takes_three has $edges allocation edges, want 3"
pass "reused function address: right name and layout ($(cat out), $edges edges)"

"$TBDPROF" --sim -o many.sqlite -- "$MODULE_REUSE_PROGRAM" many 5000 >/dev/null 2>err || fail "many: $(cat err)"
distinct=$(q many.sqlite "SELECT count(DISTINCT f.name) FROM kernels k JOIN functions f ON f.id = k.function")
edges=$(q many.sqlite "SELECT count(*) FROM kernel_allocations")
[ "$distinct" -eq 5000 ] || fail "many: $distinct distinct kernel names, want 5000"
[ "$edges" -eq 5000 ] || fail "many: $edges allocation edges, want 5000"
grep -q "kernel catalog" err && fail "many: the catalog overflowed: $(cat err)"
pass "5000 kernels (more than the first 2048 slots): all named, all with their edge"
finish
