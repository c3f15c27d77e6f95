#!/bin/sh
# Report invariants (tbdprof_report_invariants) over every sample shape recorded on the simulated GPU,
# each recorded twice (the two recordings must give the same breakdown), and over the imported real
# traces in the validation-data folder when it is there (skipped with a message when not).
# Usage: report_invariants_test.sh OUT_DIR [VALIDATION_DATA_DIR]
# Environment: TBD_BUILD_DIR, TBD_INVARIANTS. Exit 77 (skipped) when the samples are not built.
set -u
out=$1
data=${TBD_VALIDATION_DATA:-${2:-}}  # the environment overrides the folder CMake passes
build=$TBD_BUILD_DIR
tbdprof=$build/bin/tbdprof
if [ ! -x "$tbdprof" ] || [ ! -x "$build/bin/mlp_train" ]; then
    echo "skipped: $tbdprof or the samples are not built"
    exit 77
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
status=0
traces=""
# Pooled shapes are tagged by sub-range, whose lifetimes follow host launch times: two recordings may
# differ by a few tensors' bytes at the peak moment (allowed: 1% of the peak); the others are exact.
for shape in \
    "0 mlp_train --iterations 5" \
    "0 mlp_train --alloc async --grad transient --optimizer adam --iterations 5" \
    "0 mlp_train --accumulate 2 --workspace 1048576 --momentum 0 --iterations 5" \
    "0.01 mlp_train --alloc pool --iterations 5" \
    "0 lstm_train --iterations 3" \
    "0.01 lstm_train --alloc pool --iterations 3" \
    "0 attention_train --iterations 3" \
    "0.01 attention_train --alloc pool --optimizer adam --iterations 3" \
    "0 attention_train --blas-math fast-tf32 --iterations 3" \
    "0 mlp_train --blas-math tf32 --iterations 4" \
    "0 graph_replay"; do
    share=${shape%% *}
    sample=${shape#* }
    name=$(echo "$sample" | tr -c 'a-zA-Z0-9\n' '_')
    for run in 1 2; do
        # shellcheck disable=SC2086
        if ! "$tbdprof" --sim -o "$out/$name.$run.sqlite" -- "$build/bin/"$sample >"$out/$name.$run.log" 2>&1; then
            echo "recording '$sample' failed:"; cat "$out/$name.$run.log"; status=1; continue 2
        fi
    done
    traces="$traces $out/$name.1.sqlite $out/$name.2.sqlite"
    "$TBD_INVARIANTS" same "$out/$name.1.sqlite" "$out/$name.2.sqlite" "$share" || status=1
done
if [ -n "$data" ] && [ -d "$data" ]; then
    for file in "$data"/kineto/*.json.gz "$data"/hta/*.json.gz; do
        [ -f "$file" ] || continue
        name=$(basename "$file" .json.gz | tr -c 'a-zA-Z0-9\n' '_')
        if "$tbdprof" import "$file" -o "$out/import_$name.sqlite" --quiet >"$out/import_$name.log" 2>&1; then
            traces="$traces $out/import_$name.sqlite"
        else
            echo "import of $file failed:"; cat "$out/import_$name.log"; status=1
        fi
    done
else
    echo "note: no validation data at '${data}': imported traces not checked"
fi
# shellcheck disable=SC2086
"$TBD_INVARIANTS" check $traces || status=1
exit $status
