#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in build-sanitize/ (the build test.sh's ASan stage
# shares, scripts/setup-deps.sh) and runs each for FUZZ_SECONDS
# (default 20, what CI runs; give e.g. FUZZ_SECONDS=600 for a longer benchmark run). Inputs found are
# kept in build-sanitize/corpus-NAME (the seeds in fuzz/corpus/ are never written); a crash, leak or
# timeout leaves its input in build-sanitize/ and fails the script.
#   scripts/fuzz.sh [TARGET...]      targets: raw_build trace_open kineto_json viewer_load (default: all;
#                                    viewer_load only where Qt 6 is installed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
seconds=${FUZZ_SECONDS:-20}
if ! ensure_fuzz_packages; then
    echo "fuzz: skipped: clang with libFuzzer is not installed (apt-get install -y ${TBDPROF_FUZZ_PACKAGES[*]})"
    exit 0
fi
build_dir=$(configure_sanitizer_build)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(raw_build trace_open kineto_json)
    pkg-config --exists Qt6Widgets 2>/dev/null && targets+=(viewer_load)
fi
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-fuzz-run-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failed=0
for target in "${targets[@]}"; do
    case $target in
        raw_build) seeds=fuzz/corpus/raw ;;
        trace_open | viewer_load) seeds=fuzz/corpus/trace ;;
        kineto_json) seeds=fuzz/corpus/kineto ;;
        *) echo "fuzz: unknown target $target" >&2; exit 2 ;;
    esac
    mkdir -p "$build_dir/corpus-$target"
    echo "fuzz: $target for $seconds s"
    if ! (cd "$build_dir" && TMPDIR="$scratch" "./bin/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
              -rss_limit_mb=2048 -print_final_stats=1 "corpus-$target" "../$seeds" >"fuzz-$target.log" 2>&1); then
        echo "fuzz: $target FAILED; see $build_dir/fuzz-$target.log:"
        grep -E "ERROR|SUMMARY|Test unit written" "$build_dir/fuzz-$target.log" | head -5
        failed=1
    else
        grep -E "^Done|stat::number_of_executed_units" "$build_dir/fuzz-$target.log" | head -1
    fi
done
exit $failed
