#!/usr/bin/env bash
# Checks a ground-truth label file (TBD_SAMPLE_LABELS) for form and consistency.
#
# usage: check_labels.sh FILE [checks...]
#   --expect CAT         at least one allocation of category CAT
#   --absent CAT         no allocation of category CAT
#   --count CAT=N        exactly N allocations of category CAT
#   --persistent CAT     every free of CAT comes after the last allocation of an input (lives
#                        through training; with --grad persistent that is what gradients must do)
#   --all-freed          every allocation is freed by the end of the file
#   --mixed              (first) whole allocations may sit beside segments (arenas)
#   --spans K=N          exactly N span lines of kind K (training, validation, checkpoint)
# Always checked: 4 tab-separated fields per line; alloc lines are alloc/0x<hex>/<bytes > 0>/<known
# category>; free lines are free/0x<hex>/0/-; no alloc at an address that is live; every free
# matches an earlier live alloc; the file is not empty.
# Pool mode (--alloc pool): every line has a fifth field, the host time in ns, never decreasing;
# segment/0x<hex>/<bytes>/- and segment_free/0x<hex>/0/- lines pair up like allocs and frees; every
# tensor alloc lies inside a live segment (with --mixed, first of the checks, an alloc outside every
# segment is a whole allocation: arena programs have both); --all-freed covers segments too.
# span/KIND/INDEX/BEGIN/END lines (5 fields, BEGIN <= END, indices 0, 1, ... per kind) are counted
# per kind; in timed files END is the line's time.
set -u
file=${1:?usage: check_labels.sh FILE [checks...]}
shift
mixed=0
if [[ ${1:-} == --mixed ]]; then mixed=1; shift; fi

# One pass over the file: form and pairing errors go to stderr (and exit 1); per-category totals go
# to stdout as "category allocs bytes frees last_free_line", plus "last_input_alloc LINE" and
# "live COUNT".
summary=$(awk -F'\t' -v mixed="$mixed" '
BEGIN {
    split("weights gradients optimizer_state activations workspace input other", names, " ")
    for (i in names) known[names[i]] = 1
    errors = 0
}
function fail(message) {
    printf "%s:%d: %s: %s\n", FILENAME, NR, message, $0 > "/dev/stderr"
    errors++
}
function hex(text,    i, value) {  # mawk has no strtonum; addresses fit a double exactly
    value = 0
    for (i = 3; i <= length(text); i++) value = value * 16 + index("0123456789abcdef", substr(text, i, 1)) - 1
    return value
}
function in_segment(address, bytes,    start) {
    for (start in segment_bytes)
        if (address >= segment_start[start] && address + bytes <= segment_start[start] + segment_bytes[start]) return 1
    return 0
}
{
    if (NR == 1) timed = NF == 5
    if ($1 == "span") {
        if (NF != 5 || $2 !~ /^(training|validation|checkpoint)$/ || $3 != span_count[$2] + 0 ||
            $4 !~ /^[0-9]+$/ || $5 !~ /^[0-9]+$/ || $4 + 0 > $5 + 0) { fail("span line must be span/KIND/INDEX/BEGIN/END"); next }
        if (timed && $5 + 0 < last_time) { fail("span end is before the previous line"); next }
        if (timed) last_time = $5 + 0
        span_count[$2]++
        has_spans = 1
        next
    }
    if (NF != (timed ? 5 : 4)) { fail("expected " (timed ? 5 : 4) " tab-separated fields, as the first line"); next }
    if (timed) {
        if ($5 !~ /^[0-9]+$/ || $5 + 0 < last_time) { fail("time is not a non-decreasing integer"); next }
        last_time = $5 + 0
    }
    if ($2 !~ /^0x[0-9a-f]+$/) { fail("address is not 0x<lowercase hex>"); next }
    if ($1 == "segment") {
        if ($3 !~ /^[1-9][0-9]*$/ || $4 != "-") { fail("segment line must have a positive size and -"); next }
        if ($2 in segment_bytes) { fail("segment at an address that is still live"); next }
        segment_bytes[$2] = $3 + 0
        segment_start[$2] = hex($2)
        segments_seen++
        next
    }
    if ($1 == "segment_free") {
        if ($3 != "0" || $4 != "-") { fail("segment_free line must end with 0 and -"); next }
        if (!($2 in segment_bytes)) { fail("segment_free of an address with no live segment"); next }
        delete segment_bytes[$2]
        next
    }
    if ($1 == "alloc") {
        if (segments_seen && !mixed && !in_segment(hex($2), $3 + 0)) { fail("pool mode: alloc outside every live segment"); next }
        if ($3 !~ /^[1-9][0-9]*$/) { fail("alloc size is not a positive integer"); next }
        if (!($4 in known)) { fail("unknown category"); next }
        if ($2 in live) { fail("alloc at an address that is still live"); next }
        live[$2] = $4
        allocs[$4]++
        bytes[$4] += $3
        if ($4 == "input") last_input_alloc = NR
    } else if ($1 == "free") {
        if ($3 != "0" || $4 != "-") { fail("free line must end with 0 and -"); next }
        if (!($2 in live)) { fail("free of an address with no live alloc"); next }
        category = live[$2]
        delete live[$2]
        frees[category]++
        last_free[category] = NR
    } else {
        fail("first field is neither alloc nor free")
    }
}
END {
    if (NR == 0) { print "label file is empty" > "/dev/stderr"; errors++ }
    if (errors > 0) exit 1
    for (name in known)
        printf "%s %d %d %d %d\n", name, allocs[name] + 0, bytes[name] + 0, frees[name] + 0, last_free[name] + 0
    printf "last_input_alloc %d\n", last_input_alloc + 0
    printf "spans %d %d %d\n", span_count["training"] + 0, span_count["validation"] + 0, span_count["checkpoint"] + 0
    count = 0
    for (address in live) count++
    for (address in segment_bytes) count++
    printf "live %d\n", count
}' "$file") || { echo "check_labels: $file is malformed" >&2; exit 1; }

field() {  # field CATEGORY COLUMN  (columns: 2 allocs, 3 bytes, 4 frees, 5 last free line)
    awk -v name="$1" -v column="$2" '$1 == name { print $column }' <<<"$summary"
}

status=0
complain() { echo "check_labels: $file: $*" >&2; status=1; }
while (($#)); do
    case $1 in
    --expect) [[ $(field "$2" 2) -gt 0 ]] || complain "no allocation of category $2"; shift 2 ;;
    --absent) [[ $(field "$2" 2) -eq 0 ]] || complain "category $2 present ($(field "$2" 2) allocations)"; shift 2 ;;
    --count)
        category=${2%%=*} expected=${2#*=}
        [[ $(field "$category" 2) -eq $expected ]] ||
            complain "$(field "$category" 2) allocations of $category, expected $expected"
        shift 2 ;;
    --persistent)
        last_input=$(field last_input_alloc 2)
        # Every free of the category must come after training, not just the last one.
        first_early=$(awk -F'\t' -v cat="$2" -v limit="$last_input" '
            $1 == "alloc" { owner[$2] = $4 }
            $1 == "free" && owner[$2] == cat && NR < limit { print NR; exit }' "$file")
        [[ -z $first_early ]] || complain "a $2 allocation is freed at line $first_early, during training"
        shift 2 ;;
    --spans)
        kind=${2%%=*} expected=${2#*=}
        column=$(case $kind in training) echo 2 ;; validation) echo 3 ;; checkpoint) echo 4 ;; *) echo 0 ;; esac)
        ((column > 0)) || { echo "check_labels: unknown span kind '$kind'" >&2; exit 2; }
        [[ $(field spans "$column") -eq $expected ]] || complain "$(field spans "$column") $kind spans, expected $expected"
        shift 2 ;;
    --all-freed) [[ $(field live 2) -eq 0 ]] || complain "$(field live 2) allocations never freed"; shift ;;
    *) echo "check_labels: unknown check '$1'" >&2; exit 2 ;;
    esac
done
if ((status == 0)); then
    echo "check_labels: $file OK"
    awk '$1 != "live" && $1 != "last_input_alloc" && $1 != "spans" && $2 > 0 { printf "  %-16s %6d allocs %12d bytes %6d frees\n", $1, $2, $3, $4 }' <<<"$summary" | sort
fi
exit $status
