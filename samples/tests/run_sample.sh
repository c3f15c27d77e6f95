#!/usr/bin/env bash
# Runs a training sample to completion with ground-truth labels on, then checks the labels.
#
# usage: run_sample.sh BINARY LABEL_FILE [check_labels.sh checks...] -- [sample options...]
# Passes when the sample exits 0, prints its one-line summary (name: iterations=N final_loss=X
# elapsed_ms=Y ...) with the requested iteration count, and the label file passes the checks.
set -u
here=$(cd "$(dirname "$0")" && pwd)
binary=${1:?usage: run_sample.sh BINARY LABEL_FILE [checks...] -- [options...]}
labels=${2:?usage: run_sample.sh BINARY LABEL_FILE [checks...] -- [options...]}
shift 2
checks=()
while (($#)) && [[ $1 != -- ]]; do checks+=("$1"); shift; done
(($#)) && shift  # the --
iterations=20
for ((i = 1; i <= $#; i++)); do
    if [[ ${!i} == --iterations ]]; then next=$((i + 1)); iterations=${!next}; fi
done

rm -f "$labels"
output=$(TBD_SAMPLE_LABELS=$labels "$binary" "$@")
status=$?
echo "$output"
if ((status != 0)); then
    echo "run_sample: $binary $* exited with $status" >&2
    exit 1
fi
name=$(basename "$binary")
if ! grep -Eq "^$name: iterations=$iterations final_loss=-?[0-9.]+(e[-+][0-9]+)? elapsed_ms=[0-9.]+ " <<<"$output"; then
    echo "run_sample: no summary line with iterations=$iterations in the output" >&2
    exit 1
fi
exec "$here/check_labels.sh" "$labels" "${checks[@]}"
