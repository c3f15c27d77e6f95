# Sourced by the identity scripts (bench/interop/import_identity.sh, bench/trace/build_identity.sh):
# dump DB prints every table of an SQLite trace, each under "== NAME" with its rows sorted, so that
# two traces with the same rows in another order compare equal.
dump_tables() {
    local db=$1
    sqlite3 "$db" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name" | while read -r table; do
        echo "== $table"
        sqlite3 -list "$db" "SELECT * FROM \"$table\"" | sort
    done
}
