# Shared by the NVTX tests. Environment from ctest: TBDPROF, TBDPROF_BIN_DIR, PRELOAD (the collector
# library), SIMGPU_DIR, NVTX_PROGRAM. The scratch directory, fail/pass/finish come from the CLI tests.
source "$(dirname "${BASH_SOURCE[0]}")/../cli/common.sh"

# expect_rows WHAT SQL-OUTPUT: the checks below print one row per violation; none is expected.
expect_none() {
    local what=$1 rows=$2
    if [ -n "$rows" ]; then fail "$what:"$'\n'"$(head -20 <<<"$rows")"; else pass "$what"; fi
}

expect_equal() {
    local what=$1 got=$2 want=$3
    if [ "$got" != "$want" ]; then fail "$what: got '$got', want '$want'"; else pass "$what ($got)"; fi
}

# query DB SQL: runs SQL on the trace DB (read-only), tab-separated output. A failing query prints
# a line starting with SQL-ERROR, so that no check passes on an error.
query() {
    sqlite3 -readonly -batch -bail -noheader -separator $'\t' "$1" "$2" 2>"$WORK/sql.err" ||
        echo "SQL-ERROR: $(cat "$WORK/sql.err")"
}

# script SQL (stdin): runs a multi-statement script on an in-memory database, same error rule.
script() {
    sqlite3 -batch -bail -noheader -separator $'\t' :memory: 2>"$WORK/sql.err" || echo "SQL-ERROR: $(cat "$WORK/sql.err")"
}
