#!/usr/bin/env bash
# Checks a styled sample's numerics in its host build (samples/host: kernels and library calls run
# on the CPU, which the simulated GPU does not do).
#   host_numerics.sh gradient-check BINARY [ARGS...]   the sample's --gradient-check passes
#   host_numerics.sh trains RATIO BINARY [ARGS...]      final_loss < RATIO * first_loss, both finite
set -u
mode=$1; shift
if [[ $mode == trains ]]; then ratio=$1; shift; fi
binary=$1; shift
output=$("$binary" "$@" 2>&1)
status=$?
echo "$output"
if ((status != 0)); then echo "host_numerics: $binary $* exited with $status" >&2; exit 1; fi
case $mode in
gradient-check)
    grep -Eq "gradient_check tensors=[1-9][0-9]* failed=0 " <<<"$output" ||
        { echo "host_numerics: no passing gradient_check line" >&2; exit 1; } ;;
trains)
    awk -v ratio="$ratio" '
        / iterations=/ {
            for (i = 1; i <= NF; ++i) { split($i, kv, "="); value[kv[1]] = kv[2] }
            found = 1
        }
        END {
            first = value["first_loss"] + 0; final = value["final_loss"] + 0
            if (!found || value["first_loss"] ~ /nan|inf/ || value["final_loss"] ~ /nan|inf/ || first <= 0) {
                print "host_numerics: no finite losses in the summary line" > "/dev/stderr"; exit 1
            }
            if (final >= ratio * first) {
                printf "host_numerics: final loss %g is not below %g x first loss %g\n", final, ratio, first > "/dev/stderr"; exit 1
            }
            printf "host_numerics: loss %g -> %g\n", first, final
        }' <<<"$output" ;;
*) echo "host_numerics: unknown mode $mode" >&2; exit 2 ;;
esac
