#!/usr/bin/env bash
# Builds a self-contained folder for the real-GPU check: tbdprof, its collector, the simulated GPU
# (for the rehearsal), the samples, the shared libraries they need from Debian packages, and
# run_on_gpu.sh. The GPU machine has the NVIDIA driver, CUDA 13 and PyTorch but none of our -dev
# packages and no network, so nothing in the folder may need a build step or a package there.
#
#   scripts/gpu/bundle.sh OUT_DIR [BUILD_DIR]     (BUILD_DIR defaults to build/)
#
# Then copy OUT_DIR to the GPU machine and run OUT_DIR/run_on_gpu.sh there (OUT=results dir).
# OUT_DIR/run_on_gpu.sh --rehearse runs every step on the simulated GPU instead (tests do that).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() { echo "usage: scripts/gpu/bundle.sh OUT_DIR [BUILD_DIR]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
out=$1
build=$(cd "$repo" && realpath -m "${2:-build}")
max_bytes=$((64 * 1024 * 1024))

die() { echo "bundle: $*" >&2; exit 1; }
[ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ] && die "$out exists and is not empty; remove it first"
command -v patchelf >/dev/null || die "patchelf is needed (apt-get install patchelf)"

# The samples the check runs; optional ones are taken when this build has them.
samples=(hello_copy mlp_train lstm_train attention_train cnn_train graph_replay)
tools=(tbdprof tbdprof-tag-accuracy)

if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "bundle: configuring $build"
    (cd "$repo" && source scripts/setup-deps.sh && ensure_packages && configure_and_build "$build")
fi
cmake --build "$build" -j "$(nproc)" --target "${tools[@]}" "${samples[@]}" tbdprof_preload >"$build/bundle-build.log" 2>&1 \
    || { tail -30 "$build/bundle-build.log" >&2; die "build failed (log: $build/bundle-build.log)"; }

# Stage next to the target and rename at the end: a failed bundle leaves no half-filled OUT_DIR.
parent=$(dirname "$(realpath -m "$out")")
mkdir -p "$parent"
stage=$(mktemp -d "$parent/.bundle-XXXXXX")
trap 'rm -rf "$stage"' EXIT

cmake --install "$build" --component tbdprof --prefix "$stage" >"$stage/install.log" 2>&1 \
    || { cat "$stage/install.log" >&2; die "cmake --install failed"; }
rm -f "$stage/install.log"
for t in "${tools[@]}" "${samples[@]}"; do
    [ -x "$build/bin/$t" ] || die "missing $build/bin/$t"
    cp "$build/bin/$t" "$stage/bin/"
done
cp "$here/run_on_gpu.sh" "$here/torch_loop.py" "$here/check_counter_flops.py" "$here/pytorch_samples.sh" "$here/pytorch_configs.sh" \
   "$here/cudnn_graph_check.sh" "$here/correlation_check.sh" \
   "$here/pytorch_figures.py" "$stage/"
# The PyTorch samples and their oracle (torch.profiler's labels, scoring, overhead), for
# pytorch_samples.sh: plain Python, nothing to build.
mkdir -p "$stage/pytorch/oracle"
cp "$repo"/samples/pytorch/*.py "$stage/pytorch/"
cp "$repo"/samples/pytorch/oracle/*.py "$stage/pytorch/oracle/"

# Shared libraries: the C and C++ runtimes, zlib and liblzma are on every Linux machine that runs
# PyTorch and must stay the machine's own (a second libstdc++ in the profiled Python would break
# it); CUDA libraries come from the machine's CUDA; everything else resolved from the system
# (sqlite, simdjson, libunwind, ...) is copied into lib/tbdprof/deps.
deps="$stage/lib/tbdprof/deps"
mkdir -p "$deps"
is_base_library() {
    case "$(basename "$1")" in
        ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|libstdc++.so*|\
        libgcc_s.so*|libz.so*|liblzma.so*) return 0 ;;
    esac
    return 1
}
copy_dependencies() {  # ELF file: copies its non-base system dependencies, recursively
    local lib path
    while read -r lib path; do
        [ -n "$path" ] || continue
        case "$path" in
            "$stage"/*|"$build"/*) continue ;;            # ours
            /usr/local/cuda*|*/libcuda.so*|*/libcu*|*/libnv*) continue ;;  # the machine's CUDA
        esac
        is_base_library "$path" && continue
        [ -e "$deps/$lib" ] && continue
        cp -L "$path" "$deps/$lib"
        chmod u+w "$deps/$lib"
        copy_dependencies "$deps/$lib"
    done < <(ldd "$1" 2>/dev/null | awk '/=> \// { print $1, $3 }')
}
# The simulated GPU is carried too: the rehearsal runs on it, and `tbdprof --sim` works there.
elves=()
while IFS= read -r f; do
    head -c 4 "$f" | grep -q 'ELF' && elves+=("$f")
done < <(find "$stage/bin" "$stage/lib/tbdprof" "$stage/lib/tbdprof/simgpu" -maxdepth 1 -type f)
for f in "${elves[@]}"; do copy_dependencies "$f"; done
# Debug info is most of the size (RelWithDebInfo); symbols stay, so call stacks keep their names.
for f in "${elves[@]}" "$deps"/*; do [ -e "$f" ] && strip --strip-debug "$f"; done

# Point every binary at the copied libraries, relative to itself, keeping its own run path (the
# samples' CUDA library directory) after it.
add_runpath() {  # file, path relative to $ORIGIN
    local old
    old=$(patchelf --print-rpath "$1")
    patchelf --set-rpath "\$ORIGIN/$2${old:+:$old}" "$1"
}
for f in "${elves[@]}"; do
    case "$f" in
        "$stage"/bin/*) add_runpath "$f" ../lib/tbdprof/deps ;;
        "$stage"/lib/tbdprof/simgpu/*) add_runpath "$f" ../deps ;;
        *) add_runpath "$f" deps ;;
    esac
done
for f in "$deps"/*; do [ -e "$f" ] && patchelf --set-rpath '$ORIGIN' "$f"; done

# What the folder needs from the machine, for whoever unpacks it.
glibc=$(for f in "${elves[@]}" "$deps"/*; do objdump -T "$f" 2>/dev/null; done | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
glibcxx=$(for f in "${elves[@]}" "$deps"/*; do objdump -T "$f" 2>/dev/null; done | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)
{
    echo "tbdprof real-GPU bundle, built $(date -u +%Y-%m-%dT%H:%MZ) from $(cd "$repo" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "needs from the machine: ${glibc:-GLIBC ?}, ${glibcxx:-GLIBCXX ?}, zlib, liblzma, the NVIDIA driver, CUDA 13 runtime and cuBLAS"
    echo "run: OUT=results ./run_on_gpu.sh        (./run_on_gpu.sh --rehearse: everything on the simulated GPU)"
    echo "copied libraries: $(cd "$deps" && ls | tr '\n' ' ')"
} >"$stage/MANIFEST.txt"

bytes=$(du -sb "$stage" | cut -f1)
[ "$bytes" -le "$max_bytes" ] || die "bundle is $bytes bytes, over the 64 MiB limit"
rmdir "$out" 2>/dev/null || true
chmod 755 "$stage"
mv "$stage" "$out"
trap - EXIT
echo "bundle: $out ($((bytes / 1024 / 1024)) MiB, ${#elves[@]} binaries, $(ls "$out/lib/tbdprof/deps" | wc -l) copied libraries)"
