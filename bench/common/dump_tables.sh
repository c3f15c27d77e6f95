# Sourced by the identity scripts (bench/interop/import_identity.sh, bench/trace/build_identity.sh):
# dump DB prints every table of an SQLite trace, each under "== NAME" with its rows sorted, so that
# two traces with the same rows in another order compare equal; compare_sides (below) compares them.
dump_tables() {
    local db=$1
    sqlite3 "$db" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name" | while read -r table; do
        echo "== $table"
        sqlite3 -list "$db" "SELECT * FROM \"$table\"" | sort
    done
}

# compare_sides WORK NAME [SUFFIX]: WORK/{old,new}.dump and WORK/{old,new}.report.json compared;
# prints "identical: NAME ..." or "DIFFERENT: NAME" with the first differences (SUFFIX after the name,
# e.g. resources). Returns 1 on a difference.
compare_sides() {
    local work=$1 name=$2 suffix=${3:-}
    if cmp -s "$work/old.dump" "$work/new.dump" && cmp -s "$work/old.report.json" "$work/new.report.json"; then
        echo "identical: $name ($(wc -l <"$work/new.dump") dump lines, report $(wc -c <"$work/new.report.json") bytes)$suffix"
        return 0
    fi
    echo "DIFFERENT: $name$suffix"
    diff "$work/old.dump" "$work/new.dump" | head -20 || true
    diff "$work/old.report.json" "$work/new.report.json" | head -20 || true
    return 1
}
