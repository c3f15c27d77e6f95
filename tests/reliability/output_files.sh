#!/usr/bin/env bash
# Files the user did not ask to lose: outputs never replace a device, an input or an
# existing file without --force; concurrent recordings do not lose one; a user's OUT.tmp survives;
# a full disk leaves nothing half-written.
source "$(dirname "$0")/../cli/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
mlp="$TBDPROF_BIN_DIR/mlp_train"
checksum() { sha256sum "$1" | cut -d' ' -f1; }
is_char_device() { [ -c "$1" ] || fail "$1 is no longer a character device"; }

"$TBDPROF" --sim -o t.sqlite -- "$mlp" --iterations 2 >/dev/null 2>&1 || fail "cannot record the sample"
"$TBDPROF" export t.sqlite -o t.json >/dev/null || fail "cannot export the sample"
sum_t=$(checksum t.sqlite)
sum_json=$(checksum t.json)

# Devices: record refuses /dev/null and /dev/full even with --force; they stay devices.
for dev in /dev/null /dev/full; do
    expect_status 1 "record --force -o $dev is refused" -- "$TBDPROF" --sim --force -o "$dev" -- true \
        && stderr_has "is a device"
    is_char_device "$dev"
done
expect_status 1 "import -o /dev/null is refused (a trace is a file)" -- "$TBDPROF" import t.json -o /dev/null
is_char_device /dev/null
# Text outputs may go into a device: written there, never renamed over it.
"$TBDPROF" report t.sqlite -o /dev/null || fail "report -o /dev/null failed"
"$TBDPROF" export t.sqlite -o /dev/null --force >/dev/null || fail "export -o /dev/null failed"
is_char_device /dev/null
expect_status 1 "export -o /dev/full says the disk is full" -- "$TBDPROF" export t.sqlite -o /dev/full
is_char_device /dev/full
pass "devices stay devices"

# The output equal to an input: refused, the input intact.
expect_status 2 "report T -o T" -- "$TBDPROF" report t.sqlite -o t.sqlite --force && stderr_has "is the input"
expect_status 1 "export T -o T" -- "$TBDPROF" export t.sqlite -o t.sqlite --force && stderr_has "is the input"
expect_status 1 "import J -o J" -- "$TBDPROF" import t.json -o t.json --force && stderr_has "is the input"
ln -s t.sqlite link.sqlite
expect_status 1 "export through a symbolic link to the input" -- "$TBDPROF" export link.sqlite -o t.sqlite --force
ln t.sqlite hard.sqlite
expect_status 1 "export to a hard link of the input" -- "$TBDPROF" export t.sqlite -o hard.sqlite --force
[ "$(checksum t.sqlite)" = "$sum_t" ] || fail "the input trace changed"
[ "$(checksum t.json)" = "$sum_json" ] || fail "the input JSON changed"
pass "inputs intact"

# Existing outputs: refused without --force by every writing subcommand, replaced with it.
echo keep >old.txt
for cmd in "report t.sqlite -o old.txt" "export t.sqlite -o old.txt" "import t.json -o old.txt" \
           "check t.sqlite --max-peak-memory 1TiB --junit old.txt"; do
    # shellcheck disable=SC2086
    "$TBDPROF" $cmd >/dev/null 2>"$WORK/err" && fail "$cmd replaced an existing file without --force"
    grep -q "use --force" "$WORK/err" || fail "$cmd: no --force hint: $(cat "$WORK/err")"
    [ "$(cat old.txt)" = keep ] || fail "$cmd changed old.txt"
done
"$TBDPROF" report t.sqlite -o old.txt --force || fail "report --force did not replace"
grep -q "GPU utilization" old.txt || fail "report --force wrote no report"
"$TBDPROF" import t.json -o old.txt --force -q || fail "import --force did not replace"
"$TBDPROF" report old.txt >/dev/null || fail "the imported trace does not read"
pass "existing outputs need --force"

# A user's OUT.tmp (a file or a directory) is neither removed nor used.
echo mine >rec.sqlite.tmp
mkdir rec2.sqlite.tmp
"$TBDPROF" --sim -o rec.sqlite -- "$mlp" --iterations 1 >/dev/null 2>&1 || fail "record next to OUT.tmp failed"
"$TBDPROF" --sim -o rec2.sqlite -- "$mlp" --iterations 1 >/dev/null 2>&1 || fail "record next to a directory OUT.tmp failed"
[ "$(cat rec.sqlite.tmp)" = mine ] || fail "record touched the user's rec.sqlite.tmp"
[ -d rec2.sqlite.tmp ] || fail "record removed the directory rec2.sqlite.tmp"
[ -s rec.sqlite ] && [ -s rec2.sqlite ] || fail "no trace written next to OUT.tmp"
pass "OUT.tmp of the user kept"

# Concurrent recordings to one name: the second is refused at once, the first keeps its trace.
"$TBDPROF" --sim -o same.sqlite -- sleep 2 >/dev/null 2>"$WORK/first.err" &
first=$!
sleep 0.5
expect_status 1 "second recording to the same -o" -- "$TBDPROF" --sim -o same.sqlite -- true \
    && stderr_has "another tbdprof is writing"
wait "$first" || fail "the first recording failed: $(cat "$WORK/first.err")"
[ -s same.sqlite ] || fail "the first recording lost its trace"
# Default names in the same second: distinct files.
mkdir defaults && cd defaults || exit 1
"$TBDPROF" --sim -- sleep 1 >/dev/null 2>&1 &
a=$!
"$TBDPROF" --sim -- sleep 1 >/dev/null 2>&1 &
b=$!
wait "$a" || fail "default-name recording A failed"
wait "$b" || fail "default-name recording B failed"
count=$(find . -maxdepth 1 -name 'tbdprof-sleep-*.sqlite' | wc -l)
[ "$count" -eq 2 ] || fail "two recordings with the default name left $count traces: $(ls -a)"
[ "$(find . -maxdepth 1 -name '.*' ! -name . | wc -l)" -eq 0 ] || fail "temporary or lock files left: $(ls -a)"
cd .. || exit 1
pass "concurrent recordings: distinct files or a clear refusal"

# A full disk (a file size limit makes write fail the same way): nothing half-written, no temporary.
(trap '' XFSZ; ulimit -f 8; "$TBDPROF" export t.sqlite -o full.json >/dev/null 2>"$WORK/err")
[ $? -ne 0 ] || fail "export on a full disk succeeded"
[ -e full.json ] && fail "export on a full disk left full.json ($(stat -c %s full.json) bytes)"
(trap '' XFSZ; ulimit -f 8; "$TBDPROF" report t.sqlite --format html -o full.html 2>"$WORK/err")
[ $? -ne 0 ] || fail "report on a full disk succeeded"
[ -e full.html ] && fail "report on a full disk left full.html"
(trap '' XFSZ; ulimit -f 8; "$TBDPROF" --sim -o full.sqlite -- "$mlp" --iterations 2 >/dev/null 2>"$WORK/err")
[ -e full.sqlite ] && fail "record on a full disk left full.sqlite"
grep -q "raw files are kept in" "$WORK/err" || fail "record on a full disk did not say what it kept: $(cat "$WORK/err")"
rm -rf "$(sed -n 's/.*raw files are kept in \([^;]*\);.*/\1/p' "$WORK/err" | head -1)"
[ "$(find . -maxdepth 1 -name '.*tmp*' | wc -l)" -eq 0 ] || fail "temporaries left: $(ls -a)"
pass "full disk: nothing half-written"

# A full disk while recording (the program's raw file hits a size limit): the collector keeps what it
# wrote, counts what it could not, and the trace says so; the program is not broken.
"$TBDPROF" --sim -o raw-full.sqlite -- bash -c "trap '' XFSZ; ulimit -f 256; exec '$mlp' --iterations 400" \
    >/dev/null 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] || fail "the program under a full disk exited $status: $(cat "$WORK/err")"
# Said at once (the user may stop the run), on a line of its own.
grep -q "^tbdprof: cannot write .*: recording of this process stops here; what was written is kept$" "$WORK/err" \
    || fail "the collector did not say it stopped: $(cat "$WORK/err")"
lost=$(sqlite3 raw-full.sqlite "SELECT coalesce(sum(count), 0) FROM dropped_events WHERE cause = 'write_failed'")
kept=$("$TRACE_VS_TRUTH" --count-kernels raw-full.sqlite)
[ "${lost:-0}" -gt 0 ] || fail "the trace does not count the records lost to the full disk"
[ "${kept:-0}" -gt 0 ] || fail "the kernels written before the disk filled were lost"
pass "full disk while recording: $kept kernels kept, $lost records counted as lost (dropped_events.write_failed)"
finish
