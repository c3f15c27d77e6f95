#!/usr/bin/env bash
# Installs the Debian packages tbdprof builds with, when they are missing. Sourced by test.sh and
# demo.sh. As root it installs them; otherwise it prints the apt-get line to run and fails.
set -euo pipefail

TBDPROF_PACKAGES=(cmake g++ make pkg-config libsqlite3-dev libunwind-dev libfmt-dev libcli11-dev doctest-dev clang-format
                  libzstd-dev zlib1g-dev sqlite3 libsimdjson-dev libisal-dev python3
                  patchelf bash-completion dpkg-dev   # the real-GPU bundle, the .deb and its test
                  qt6-base-dev qt6-svg-dev xvfb xauth)  # tbdprof-viewer and its window test

# Only for the fuzz stage (scripts/fuzz.sh): clang's libFuzzer. Installed on demand, never required.
TBDPROF_FUZZ_PACKAGES=(clang libclang-rt-14-dev)

# True when clang++ -fsanitize=fuzzer links; as root, installs TBDPROF_FUZZ_PACKAGES first if needed.
ensure_fuzz_packages() {
    local probe
    probe=$(mktemp -d)
    printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' \
        >"$probe/probe.cpp"
    links() { command -v clang++ >/dev/null && clang++ -fsanitize=fuzzer "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null; }
    if ! links && [ "$(id -u)" -eq 0 ]; then
        echo "setup: installing ${TBDPROF_FUZZ_PACKAGES[*]} for the fuzz stage" >&2
        apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${TBDPROF_FUZZ_PACKAGES[@]}" \
            >/dev/null 2>&1 || true
    fi
    local ok=1
    links && ok=0
    rm -rf "$probe"
    return $ok
}

# Only for the fleet test (tests/communication: tbdprof-fleet on a local Dask cluster): Debian's Dask
# distributed. Installed on demand as root; without it that test is skipped.
TBDPROF_FLEET_PACKAGES=(python3-distributed)

ensure_fleet_packages() {
    /usr/bin/python3 -c "import distributed" 2>/dev/null && return 0
    if [ "$(id -u)" -eq 0 ]; then
        echo "setup: installing ${TBDPROF_FLEET_PACKAGES[*]} for the fleet test"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${TBDPROF_FLEET_PACKAGES[@]}" \
            >/dev/null 2>&1 || true
    fi
    /usr/bin/python3 -c "import distributed" 2>/dev/null
}

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

# The scripts' builds keep line tables only (-g1): backtraces and sanitizer reports still give file
# and line, and the compiler takes 14% less time than with full debug information (14 files sampled;
# the build is most of what CI spends: docs/reliability.md, "CI's time"). A hand-made RelWithDebInfo
# build keeps -g.
TBDPROF_SCRIPT_BUILD_FLAGS=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
                            -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

# Configures and builds into $1 (default: build) with any extra CMake arguments after it.
configure_and_build() {
    local build_dir=${1:-build}
    shift || true
    local nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
    [ -x "$nvcc" ] || nvcc=$(command -v nvcc)
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${TBDPROF_SCRIPT_BUILD_FLAGS[@]}" \
          -DCMAKE_CUDA_COMPILER="$nvcc" -DCUDAToolkit_ROOT="$(dirname "$(dirname "$nvcc")")" "$@" >/dev/null
    cmake --build "$build_dir" -j "$(nproc)"
}

# Configures the sanitizer build that test.sh's ASan stage and fuzz.sh share, and prints its folder:
# build-sanitize/ (clang: ASan, UBSan and libFuzzer's coverage, so the unit tests and the fuzz targets
# come from one compilation of the libraries) where clang's libFuzzer is there, else build-asan/
# (GCC's ASan and UBSan; no fuzz targets).
configure_sanitizer_build() {
    local nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
    [ -x "$nvcc" ] || nvcc=$(command -v nvcc)
    local common=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "${TBDPROF_SCRIPT_BUILD_FLAGS[@]}" -DTBDPROF_SANITIZE=ON
                  -DTBDPROF_BUILD_SAMPLES=OFF -DCMAKE_CUDA_COMPILER="$nvcc")
    if ensure_fuzz_packages; then
        cmake -S . -B build-sanitize "${common[@]}" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
              -DTBDPROF_FUZZ=ON >/dev/null || return 1
        echo build-sanitize
    else
        cmake -S . -B build-asan "${common[@]}" >/dev/null || return 1
        echo build-asan
    fi
}
