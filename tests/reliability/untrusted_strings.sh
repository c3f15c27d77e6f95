#!/usr/bin/env bash
# Strings from a trace never act on the terminal (escape sequences are shown, not run);
# JSON output is valid UTF-8 and valid JSON whatever bytes a name holds; absurd rows are reported,
# not summed into negative totals.
source "$(dirname "$0")/../cli/common.sh"
: "${TBDPROF_BIN_DIR:?}"
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 shell is not installed"; exit 0; }
cd "$WORK" || exit 1
"$TBDPROF" --sim -o good.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 2 >/dev/null 2>&1 || fail "cannot record"
has_control() { LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' "$1"; }
valid_utf8() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1; }
valid_json() { [ "$(sqlite3 :memory: "SELECT json_valid(CAST(readfile('$1') AS TEXT))")" = 1 ]; }

# A kernel name that retitles the window and clears the screen, followed by invalid UTF-8 bytes; the
# device name holds a C1 control (U+009B, CSI) too.
cp good.sqlite hostile.sqlite
sqlite3 hostile.sqlite "UPDATE strings SET text = CAST(X'1b5d303b6f776e6564071b5b324a6b65726e656cfffe' AS TEXT)
                         WHERE id = (SELECT f.name FROM kernels k JOIN functions f ON f.id = k.function LIMIT 1);
                        UPDATE devices SET name = CAST(X'c29b324a475055' AS TEXT);
                        UPDATE run SET command_line = CAST(X'747261696e1b5b324a' AS TEXT);" || fail "cannot make the hostile trace"
for format in text markdown; do
    "$TBDPROF" report hostile.sqlite --format "$format" --top 100 --window all >"report.$format" 2>err || fail "report $format: $(cat err)"
    has_control "report.$format" && fail "report --format $format passes control characters to the terminal"
    LC_ALL=C grep -q $'\xc2\x9b' "report.$format" && fail "report --format $format passes a C1 control"
    valid_utf8 "report.$format" || fail "report --format $format is not valid UTF-8"
    grep -qF '\x1b]0;owned\x07\x1b[2J' "report.$format" || fail "report --format $format does not show the escapes"
done
"$TBDPROF" report hostile.sqlite --format json --top 100 -o report.json || fail "report json failed"
valid_utf8 report.json || fail "report --format json is not valid UTF-8"
valid_json report.json || fail "report --format json is not valid JSON"
"$TBDPROF" export hostile.sqlite -o export.json >/dev/null || fail "export failed"
valid_utf8 export.json || fail "export is not valid UTF-8"
valid_json export.json || fail "export is not valid JSON"
grep -qF $'\xef\xbf\xbd' export.json || fail "export does not replace the invalid bytes with U+FFFD"
pass "hostile names: escapes shown in text, JSON valid UTF-8"

# The summary after recording shows the command line escaped.
"$TBDPROF" --sim -o cmd.sqlite -- bash -c $'exit 0 # \e]0;owned\a' >/dev/null 2>err || fail "record with an escape in the command"
has_control err && fail "the recording summary passes control characters to the terminal: $(cat -v err)"
pass "recording summary escapes the command line"

# Absurd rows: a kernel of 2^62 ns and an allocation of 2^62 bytes are reported, never summed.
cp good.sqlite absurd.sqlite
sqlite3 absurd.sqlite "UPDATE kernels SET duration_ns = 4611686018427387904 WHERE id IN (SELECT id FROM kernels LIMIT 3);
                       UPDATE allocations SET bytes = 4611686018427387904 WHERE id IN (SELECT id FROM allocations WHERE kind = 'device' LIMIT 2);" \
    || fail "cannot make the absurd trace"
"$TBDPROF" report absurd.sqlite --window all >report.absurd 2>err || fail "report of absurd rows failed: $(cat err)"
grep -q -- "-[0-9]" <(grep -E "GPU kernel time|peak|utilization" report.absurd) && fail "negative totals: $(grep -E 'GPU kernel time|peak' report.absurd)"
grep -q "3 kernel rows have impossible times" report.absurd || fail "the absurd kernels are not reported: $(cat report.absurd)"
grep -q "2 allocation rows claim more than 1 PiB" report.absurd || fail "the absurd allocations are not reported"
# 9 000 kernels of 2^50 ns each (allowed, but their sum exceeds int64): totals saturate, never wrap.
"$TBDPROF" --sim -o many.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 350 >/dev/null 2>&1 || fail "cannot record 350 steps"
sqlite3 many.sqlite "UPDATE kernels SET duration_ns = 1125899906842624" || fail "cannot update durations"
"$TBDPROF" report many.sqlite --window all >report.many 2>err || fail "report of huge sums failed: $(cat err)"
grep -E "GPU kernel time|utilization" report.many | grep -q -- "-[0-9]" && fail "a sum wrapped: $(grep 'GPU kernel time' report.many)"
pass "absurd rows reported, not summed; huge sums saturate"
finish
