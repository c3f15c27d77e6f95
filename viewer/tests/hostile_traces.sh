#!/bin/sh
# The viewer on hostile traces (offscreen --benchmark: load, then pan and zoom the timeline):
#  8. a run duration near INT64_MAX: the level-of-detail mipmap overflowed and spun for ever;
#  9. 100 000 streams: a row each, 1.25 MiB a row, 23 GB; now at most 512 stream rows, the rest
#     merged into one row per device that says so (threads' rows likewise), under a memory limit.
#   hostile_traces.sh BUILD_DIR TRACE_GENERATOR WORK_DIR
set -u
build=$1
generator=$2
work=$3
viewer=$build/bin/tbdprof-viewer
command -v sqlite3 >/dev/null || { echo "skipped: no sqlite3 shell"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$work"
status=0
fail() { echo "FAIL: $*"; status=1; }

# 8. The run lasts ~INT64_MAX ns, and one kernel starts near the end of it.
"$generator" "$work/long.sqlite" --kernels 3000 >/dev/null || exit 1
sqlite3 "$work/long.sqlite" "UPDATE run SET duration_ns = 9223372036854775000;
    UPDATE kernels SET start_ns = 9223372036854000000, duration_ns = 1000 WHERE id = (SELECT max(id) FROM kernels);"
timeout 60 "$viewer" --benchmark "$work/long.sqlite" >"$work/long.out" 2>"$work/long.err"
rc=$?
[ $rc -eq 124 ] && fail "a run of ~INT64_MAX ns: the viewer still runs after 60 s"
[ $rc -eq 0 ] || fail "a run of ~INT64_MAX ns: exit $rc: $(cat "$work/long.err")"
grep -q '"frames"' "$work/long.out" && echo "ok: a run of ~INT64_MAX ns loads and pans: $(cat "$work/long.out")"

# 9. 100 000 kernels, each on a stream of its own, with memory limited to 3 GB of address space.
"$generator" "$work/streams.sqlite" --kernels 100000 >/dev/null || exit 1
sqlite3 "$work/streams.sqlite" "UPDATE kernels SET stream = id; UPDATE copies SET stream = id;
    UPDATE library_calls SET thread = id; UPDATE ranges SET thread = id;"  # and 25 000 threads
(ulimit -v 3000000; exec timeout 120 "$viewer" --benchmark "$work/streams.sqlite") >"$work/streams.out" 2>"$work/streams.err"
rc=$?
[ $rc -eq 0 ] || fail "100 000 streams under a 3 GB limit: exit $rc: $(tail -3 "$work/streams.err")"
rows=$(sed -n 's/.*"rows": \([0-9]*\).*/\1/p' "$work/streams.out")
[ -n "$rows" ] && [ "$rows" -le 1100 ] || fail "100 000 streams: $rows rows drawn"
kernels=$(sed -n 's/.*"kernels": \([0-9]*\).*/\1/p' "$work/streams.out")
[ "$kernels" = 100000 ] || fail "100 000 streams: $kernels kernels loaded (all must be, in the merged row)"
rss=$(sed -n 's/.*"peak_rss_bytes": \([0-9]*\).*/\1/p' "$work/streams.out")
[ -n "$rss" ] && [ "$rss" -lt 1000000000 ] || fail "100 000 streams: peak RSS $rss bytes"
[ $status -eq 0 ] && echo "ok: 100 000 streams load under a 3 GB limit: $(cat "$work/streams.out")"
exit $status
