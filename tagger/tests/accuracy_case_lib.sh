# Sourced by the scorer's hand-made cases (accuracy_setup_use.sh, accuracy_host_ahead.sh): a scratch
# folder removed on exit, an empty trace with the schema that each case copies, label times on the
# run's clock, and one failure message.
#   source accuracy_case_lib.sh SCHEMA_SQL SCRIPT_NAME
case_schema=$1
case_script=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=1000000  # run.start_monotonic_ns: label times are this plus trace times
t() { echo $((start + $1)); }
fail() { echo "$case_script: $*" >&2; exit 1; }
sqlite3 "$work/empty.sqlite" <"$case_schema"  # once: every case starts from a copy

# new_trace DB DURATION_NS: DB becomes a copy of the empty trace with its run row.
new_trace() {
    cp "$work/empty.sqlite" "$1"
    sqlite3 "$1" "
INSERT INTO run (id, command_line, start_unix_ns, start_monotonic_ns, duration_ns, tool_version, simulated_device,
                 clock_source, host_timed_kernels, truncated_files)
    VALUES (1, 'test', 0, $start, $2, 'test', 1, 'host', 0, 0);"
}
