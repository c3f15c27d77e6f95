#!/usr/bin/env bash
# Hangs, exhaustion, misleading output on the import/report side: a gzip bomb, a huge
# kernel name, Kineto times near the int64 limit, pipes and FIFOs as input, a trace locked by a
# writer, an added FTS5 table, negative durations and inverted iterations. Each case: one clear
# message (or the trace still usable), within seconds, never a hang.
source "$(dirname "$0")/../cli/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${KINETO_SAMPLE:?}"
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 shell is not installed"; exit 0; }
cd "$WORK" || exit 1
cp "$KINETO_SAMPLE" k.json && gzip -k k.json

# 10. A gzip bomb (200 MB of zeros in ~200 KB) stops at the ratio cap, under a memory limit that
# 200 MB of JSON would exceed; a normal trace over --max-json-size is refused with that option named.
head -c 200000000 /dev/zero | gzip -1 >bomb.json.gz
expect_status 1 "import of a gzip bomb" -- bash -c "ulimit -v 1500000; exec timeout 60 '$TBDPROF' import bomb.json.gz -o bomb.sqlite" &&
    stderr_has "expands more than 100 times" && stderr_has "--max-json-size"
[ -e bomb.sqlite ] && fail "the bomb left bomb.sqlite"
expect_status 1 "import over --max-json-size" -- "$TBDPROF" import k.json --max-json-size 1KiB -o small.sqlite &&
    stderr_has "the --max-json-size given"
"$TBDPROF" import k.json.gz --max-json-size 1MiB -o gz.sqlite >/dev/null 2>err || fail "--max-json-size 1MiB refused a 2 KB trace: $(cat err)"
pass "decompression capped (ratio and --max-json-size)"

# 12. A 1 MB kernel name is cut to 64 KiB with a marker, counted, and every command still reads the
# trace (a 300 MB one made report, tag, export and the viewer fail: SQLite's 256 MiB string cap).
at=$(grep -n '"name": "gemm"' k.json | head -1 | cut -d: -f1)
{
    head -n $((at - 1)) k.json
    sed -n "${at}p" k.json | sed 's/"name": "gemm".*//' | tr -d '\n'
    printf '"name": "' && head -c 1000000 /dev/zero | tr '\0' a && printf '"'
    sed -n "${at}p" k.json | sed 's/.*"name": "gemm"//'
    tail -n +$((at + 1)) k.json
} >longname.json
"$TBDPROF" import longname.json -o longname.sqlite >out 2>err || fail "import of a long name: $(cat err)"
grep -q "texts longer than 64 KiB (cut" out || fail "the cut is not counted in the summary: $(head -c 300 out)"
stored=$(sqlite3 longname.sqlite "SELECT max(length(text)) FROM strings")
[ "$stored" -le 66000 ] || fail "a name of $stored bytes was stored"
sqlite3 longname.sqlite "SELECT text FROM strings WHERE length(text) > 60000" | grep -q 'bytes cut\]$' ||
    fail "the cut name has no marker"
sqlite3 longname.sqlite "SELECT value FROM run_notes WHERE key = 'import.warning'" | grep -q "texts longer" ||
    fail "the cut is not in the trace's notes"
for cmd in report tag; do "$TBDPROF" $cmd longname.sqlite >/dev/null 2>err || fail "$cmd after a cut name: $(cat err)"; done
"$TBDPROF" export longname.sqlite -o longname.json.out >/dev/null 2>err || fail "export after a cut name: $(cat err)"
pass "a 1 MB kernel name: cut to $stored bytes with a marker, counted; report, tag, export read the trace"

# 17. Kineto times near the int64 limit: skipped and counted, never a wrapped duration.
sed 's/"ts": 1430, "dur": 100/"ts": 9223372036854774, "dur": 100/' k.json >huge_ts.json
"$TBDPROF" import huge_ts.json -o huge_ts.sqlite >out 2>err || fail "import with a huge ts: $(cat err)"
grep -q "timestamps beyond 146 years" out || fail "the huge timestamp is not counted: $(cat out)"
duration=$(sqlite3 huge_ts.sqlite "SELECT duration_ns FROM run")
[ "$duration" -ge 0 ] && [ "$duration" -lt 1000000000 ] || fail "run duration $duration ns"
"$TBDPROF" report huge_ts.sqlite >out 2>err || fail "report: $(cat err)"
grep -q -- "-9223372036" out && fail "the report shows a wrapped time: $(grep -- -9223 out)"
# Each time fits, their span does not: refused with one sentence.
sed -e 's/"ts": 1430, "dur": 100/"ts": 4600000000000000, "dur": 100000000000000/' -e 's/"ts": 900,/"ts": -4600000000000000,/' \
    k.json >span.json
expect_status 1 "import of times spanning more than int64 ns" -- "$TBDPROF" import span.json -o span.sqlite &&
    stderr_has "span more than 292 years"
pass "Kineto times near the int64 limit: skipped and counted, or refused; never wrapped"

# 18. Pipes, stdin and FIFOs as the input.
cat k.json | "$TBDPROF" import - -o stdin.sqlite >/dev/null 2>err || fail "import - from a pipe: $(cat err)"
cat k.json.gz | "$TBDPROF" import /dev/stdin -o devstdin.sqlite >/dev/null 2>err || fail "import /dev/stdin (gzip): $(cat err)"
mkfifo fifo
(cat k.json >fifo &)
timeout 20 "$TBDPROF" import fifo -o fifo.sqlite >/dev/null 2>err || fail "import of a FIFO with a writer: $(cat err)"
for t in stdin devstdin fifo; do
    [ "$(sqlite3 $t.sqlite "SELECT count(*) FROM kernels")" -eq 2 ] || fail "$t.sqlite lacks the 2 kernels"
done
start=$(date +%s)
TBDPROF_IMPORT_WAIT_SECONDS=2 expect_status 1 "import of a FIFO nobody writes" -- timeout 20 "$TBDPROF" import fifo -o none.sqlite &&
    stderr_has "nothing was written to this FIFO within 2 s"
[ $(($(date +%s) - start)) -lt 10 ] || fail "the FIFO wait was not bounded"
expect_status 2 "import - without -o" -- "$TBDPROF" import - </dev/null && stderr_has "give -o OUT.sqlite"
: | expect_status 1 "import of an empty pipe" -- "$TBDPROF" import - -o empty.sqlite && stderr_has "nothing came through the pipe"
pass "import from a pipe, /dev/stdin (gzip) and a FIFO; a FIFO without a writer gives up"

# A recorded trace for the trace-side cases.
"$TBDPROF" --sim -o good.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 4 >/dev/null 2>&1 || fail "cannot record"

# 14. A trace locked by a program writing it: "locked", and check exits 3 (could not read), not 2.
cp good.sqlite locked.sqlite
mkfifo locker.ctl
sqlite3 locked.sqlite <locker.ctl >/dev/null &
locker=$!
exec 3>locker.ctl
# The writer waits for readers (the poll below) rather than failing its BEGIN EXCLUSIVE.
printf '.timeout 20000\nBEGIN EXCLUSIVE; UPDATE run SET host = host;\n' >&3
waited=0  # until the writer holds its lock (the shell's own read fails at once then)
while sqlite3 locked.sqlite "SELECT count(*) FROM run" >/dev/null 2>&1 && [ $waited -lt 200 ]; do
    sleep 0.05
    waited=$((waited + 1))
done
[ $waited -lt 200 ] || fail "the writer never took its lock"
expect_status 3 "check of a locked trace" -- "$TBDPROF" check locked.sqlite --max-peak-memory 1TiB && stderr_has "is locked by another program"
expect_status 2 "report of a locked trace" -- "$TBDPROF" report locked.sqlite && stderr_has "is locked by another program"
grep -q "not a tbdprof trace" "$WORK/err" && fail "a locked trace is called not a tbdprof trace"
echo "COMMIT;" >&3
exec 3>&-
wait "$locker"
"$TBDPROF" check locked.sqlite --max-peak-memory 1TiB >/dev/null 2>err || fail "check after the lock: $(cat err)"
pass "a locked trace is said to be locked (check: exit 3), and reads once the writer is done"

# 15. A user's FTS5 index in the trace (docs/trace-format.md allows added tables): still a trace.
if sqlite3 :memory: "CREATE VIRTUAL TABLE t USING fts5(x)" 2>/dev/null; then
    cp good.sqlite fts.sqlite
    sqlite3 fts.sqlite "CREATE VIRTUAL TABLE kernel_search USING fts5(name);
                        INSERT INTO kernel_search SELECT text FROM strings;" || fail "cannot add the FTS5 table"
    for cmd in report tag; do "$TBDPROF" $cmd fts.sqlite >/dev/null 2>err || fail "$cmd with an FTS5 table: $(cat err)"; done
    "$TBDPROF" export fts.sqlite -o fts.json >/dev/null 2>err || fail "export with an FTS5 table: $(cat err)"
    cp good.sqlite fts_named.sqlite
    sqlite3 fts_named.sqlite "DROP VIEW IF EXISTS kernel_view; ALTER TABLE kernels RENAME TO k0; CREATE VIRTUAL TABLE kernels USING fts5(name);"
    expect_status 2 "a virtual table named like one of tbdprof's" -- "$TBDPROF" report fts_named.sqlite &&
        stderr_has "virtual table"
    pass "an added FTS5 table is accepted by report, tag and export"
else
    echo "skip: this sqlite3 shell has no FTS5"
fi

# 16. Negative kernel durations are damage, not host timing; iterations ending before they begin
# are invalid, named, and give no iterations/s.
cp good.sqlite negative.sqlite
sqlite3 negative.sqlite "UPDATE kernels SET duration_ns = -266 WHERE id % 3 = 0"
bad=$(sqlite3 negative.sqlite "SELECT count(*) FROM kernels WHERE duration_ns < 0")
"$TBDPROF" report negative.sqlite --format json -o negative.json >/dev/null 2>err || fail "report: $(cat err)"
grep -q '"host_timed": *0' negative.json || fail "negative durations counted as host-timed: $(grep -o '"host_timed": *[0-9]*' negative.json)"
grep -q "$bad kernel rows have impossible times" negative.json || fail "the $bad negative durations are not named"
cp good.sqlite inverted.sqlite
sqlite3 inverted.sqlite "UPDATE iterations SET end_ns = begin_ns - 1000 WHERE id = 2"
"$TBDPROF" report inverted.sqlite --format json -o inverted.json >/dev/null 2>err || fail "report: $(cat err)"
grep -q "1 iteration ends before it begins" inverted.json || fail "an inverted iteration is not named: $(grep -o '"notes".*' inverted.json | head -c 400)"
cp good.sqlite all_inverted.sqlite
sqlite3 all_inverted.sqlite "UPDATE iterations SET end_ns = begin_ns - 1000; UPDATE ranges SET end_ns = begin_ns - 1000;"
"$TBDPROF" report all_inverted.sqlite --format json -o all_inverted.json >/dev/null 2>err || fail "report: $(cat err)"
grep -q "iterations end before they begin" all_inverted.json || fail "inverted iterations not named"
grep -o '"per_s": *[0-9.e+-]*' all_inverted.json | grep -qv '"per_s": *0$' &&
    fail "inverted iterations give iterations/s: $(grep -o '"per_s": *[0-9.e+-]*' all_inverted.json)"
pass "negative durations: $bad named as impossible, not host-timed; inverted iterations named, no iterations/s"
finish
