#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest. Safe to run again.
#   scripts/test.sh              normal build in build/
#   TBDPROF_SANITIZE=1 scripts/test.sh   also runs the host-side unit tests under ASan+UBSan (build-asan/;
#                                        the default when CI is set)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
ensure_packages

configure_and_build build
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 300)

# The host-side unit tests again under AddressSanitizer and UBSan (the libraries injected into a
# profiled program are never sanitized). On by default in CI; TBDPROF_SANITIZE=0 skips it,
# TBDPROF_SANITIZE=1 forces it.
if [ "${TBDPROF_SANITIZE:-${CI:-0}}" != "0" ] && [ "${TBDPROF_SANITIZE:-${CI:-0}}" != "false" ]; then
    unit_targets=(simgpu_driver_test simgpu_module_image_test tbdprof_trace_test tagger_rules_test
                  tagger_subranges_test tbdprof_analyzer_tests tbdprof_interop_test)
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBDPROF_SANITIZE=ON -DTBDPROF_BUILD_SAMPLES=OFF \
          -DCMAKE_CUDA_COMPILER="${CUDACXX:-/usr/local/cuda/bin/nvcc}" >/dev/null
    # The viewer's headless core tests too, when Qt 6 is there (the viewer is built only then).
    asan_targets=$(cmake --build build-asan --target help 2>/dev/null || true)
    if grep -q viewer_core_test <<<"$asan_targets"; then
        unit_targets+=(viewer_core_test)
    fi
    cmake --build build-asan -j "$(nproc)" --target "${unit_targets[@]}"
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$(nproc)" --timeout 600 \
        -R '^(simgpu\.driver|simgpu\.module_image|trace\.unit|tagger\.rules|tagger\.subranges|analyzer_unit|interop_unit|viewer\.core)')
fi
