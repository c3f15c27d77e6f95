#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in build-fuzz/ and runs each for FUZZ_SECONDS
# (default 20, what CI runs; give e.g. FUZZ_SECONDS=600 for a longer benchmark run). Inputs found are
# kept in build-fuzz/corpus-NAME (the seeds in fuzz/corpus/ are never written); a crash, leak or
# timeout leaves its input in build-fuzz/ and fails the script.
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
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(raw_build trace_open kineto_json)
    pkg-config --exists Qt6Widgets 2>/dev/null && targets+=(viewer_load)
fi
nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DTBDPROF_FUZZ=ON -DTBDPROF_BUILD_SAMPLES=OFF -DCMAKE_CUDA_COMPILER="$nvcc" "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
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
    mkdir -p "build-fuzz/corpus-$target"
    echo "fuzz: $target for $seconds s"
    if ! (cd build-fuzz && TMPDIR="$scratch" "./bin/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
              -rss_limit_mb=2048 -print_final_stats=1 "corpus-$target" "../$seeds" >"fuzz-$target.log" 2>&1); then
        echo "fuzz: $target FAILED; see build-fuzz/fuzz-$target.log:"
        grep -E "ERROR|SUMMARY|Test unit written" "build-fuzz/fuzz-$target.log" | head -5
        failed=1
    else
        grep -E "^Done|stat::number_of_executed_units" "build-fuzz/fuzz-$target.log" | head -1
    fi
done
exit $failed
