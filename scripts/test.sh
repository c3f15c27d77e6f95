#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest. Safe to run again.
#   scripts/test.sh              normal build in build/
#   TBDPROF_SANITIZE=1 scripts/test.sh   also runs the host-side unit tests under ASan+UBSan (the default
#                                        when CI is set; build-sanitize/ with clang, which the fuzz stage
#                                        reuses, or build-asan/ with GCC where clang's libFuzzer is missing)
#   TBDPROF_TSAN=0 / TBDPROF_FUZZ=0      skip the ThreadSanitizer stage (collector unit tests, build-tsan/)
#                                        or the bounded fuzz stage (scripts/fuzz.sh, 20 s per target);
#                                        both on by default when CI is set
#   TBDPROF_TORCH=0                      do not install PyTorch (scripts/torch-venv.sh, a venv outside the
#                                        repo); its tests (label pytorch) then skip
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
ensure_packages
ensure_fleet_packages || echo "setup: python3-distributed is not installed: the fleet test will be skipped"

configure_and_build build
# PyTorch for the tests labelled pytorch (tests/pytorch/), in a venv outside the repo that later runs
# reuse; TBDPROF_TORCH=0 skips it. Without network access those tests skip with the reason.
if [ "${TBDPROF_TORCH:-1}" != "0" ]; then
    torch_status=0
    scripts/torch-venv.sh >/dev/null || torch_status=$?
    case $torch_status in
        0) ;;
        77) echo "test.sh: PyPI cannot be reached; the PyTorch tests will be skipped" ;;
        *) echo "test.sh: installing PyTorch failed (status $torch_status); the PyTorch tests will be skipped" ;;
    esac
fi
# The tests' temporary files, and tbdprof's run directories, in a folder of this run's own: a run
# directory that a killed recording left in the machine's /tmp would otherwise add "an earlier
# recording was not built" notes to output that some tests compare.
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-tests.XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 300)

# The host-side unit tests again under AddressSanitizer and UBSan (the libraries injected into a
# profiled program are never sanitized). On by default in CI; TBDPROF_SANITIZE=0 skips it,
# TBDPROF_SANITIZE=1 forces it.
if [ "${TBDPROF_SANITIZE:-${CI:-0}}" != "0" ] && [ "${TBDPROF_SANITIZE:-${CI:-0}}" != "false" ]; then
    unit_targets=(simgpu_driver_test simgpu_module_image_test tbdprof_trace_test tagger_rules_test
                  tagger_subranges_test tagger_subranges_buckets_test tbdprof_analyzer_tests tbdprof_interop_test)
    sanitize_dir=$(configure_sanitizer_build)
    # The viewer's headless core tests too, when Qt 6 is there (the viewer is built only then).
    sanitize_targets=$(cmake --build "$sanitize_dir" --target help 2>/dev/null || true)
    if grep -q viewer_core_test <<<"$sanitize_targets"; then
        unit_targets+=(viewer_core_test viewer_lanes_test)
    fi
    cmake --build "$sanitize_dir" -j "$(nproc)" --target "${unit_targets[@]}"
    (cd "$sanitize_dir" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$(nproc)" --timeout 600 \
        -R '^(simgpu\.driver|simgpu\.module_image|trace\.unit|tagger\.rules|tagger\.subranges|analyzer_unit|interop_unit|viewer\.core|viewer\.lanes)')
fi

# The collector's unit tests under ThreadSanitizer (its writer thread, rings and fork paths).
if [ "${TBDPROF_TSAN:-${CI:-0}}" != "0" ] && [ "${TBDPROF_TSAN:-${CI:-0}}" != "false" ]; then
    cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo "${TBDPROF_SCRIPT_BUILD_FLAGS[@]}" -DTBDPROF_TSAN=ON \
          -DTBDPROF_BUILD_SAMPLES=OFF \
          -DCMAKE_CUDA_COMPILER="${CUDACXX:-/usr/local/cuda/bin/nvcc}" >/dev/null
    cmake --build build-tsan -j "$(nproc)" --target tbdprof_collector_unit_test
    (cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure --timeout 300 -R '^collector\.unit$')
fi

# libFuzzer targets, 20 s each (the raw-file reader and builder, the trace opener, the Kineto parser).
# Skips with a message when clang's libFuzzer cannot be had.
if [ "${TBDPROF_FUZZ:-${CI:-0}}" != "0" ] && [ "${TBDPROF_FUZZ:-${CI:-0}}" != "false" ]; then
    FUZZ_SECONDS=${FUZZ_SECONDS:-20} scripts/fuzz.sh
fi
