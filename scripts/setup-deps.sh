#!/usr/bin/env bash
# Installs the Debian packages tbdprof builds with, when they are missing. Sourced by test.sh and
# demo.sh. As root it installs them; otherwise it prints the apt-get line to run and fails.
set -euo pipefail

TBDPROF_PACKAGES=(cmake g++ make pkg-config libsqlite3-dev libunwind-dev libfmt-dev doctest-dev
                  libzstd-dev zlib1g-dev sqlite3 libsimdjson-dev python3)

missing_packages() {
    local missing=()
    for p in "${TBDPROF_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    echo "${missing[@]:-}"
}

ensure_packages() {
    local missing
    missing=$(missing_packages)
    if [ -n "$missing" ]; then
        if [ "$(id -u)" -eq 0 ]; then
            echo "setup: installing $missing"
            export DEBIAN_FRONTEND=noninteractive
            apt-get update -qq
            # shellcheck disable=SC2086
            apt-get install -y -qq --no-install-recommends $missing >/dev/null
        else
            echo "setup: missing packages. Run: sudo apt-get install -y $missing" >&2
            return 1
        fi
    fi
    local nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
    if [ ! -x "$nvcc" ] && ! command -v nvcc >/dev/null; then
        echo "setup: the CUDA toolkit (nvcc, headers) was not found in /usr/local/cuda;" \
             "install it or set CUDACXX" >&2
        return 1
    fi
}

# Configures and builds into $1 (default: build) with any extra CMake arguments after it.
configure_and_build() {
    local build_dir=${1:-build}
    shift || true
    local nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
    [ -x "$nvcc" ] || nvcc=$(command -v nvcc)
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_COMPILER="$nvcc" \
          -DCUDAToolkit_ROOT="$(dirname "$(dirname "$nvcc")")" "$@" >/dev/null
    cmake --build "$build_dir" -j "$(nproc)"
}
