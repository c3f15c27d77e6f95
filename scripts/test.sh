#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest. Safe to run again.
#   scripts/test.sh              normal build in build/
#   TBDPROF_SANITIZE=1 scripts/test.sh   also runs the host-side tests under ASan+UBSan (build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
ensure_packages

configure_and_build build
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 300)

if [ "${TBDPROF_SANITIZE:-0}" = "1" ]; then
    configure_and_build build-asan -DTBDPROF_SANITIZE=ON
    (cd build-asan && ctest --output-on-failure -j "$(nproc)" --timeout 600)
fi
