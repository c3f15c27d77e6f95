#!/usr/bin/env bash
# Rehearses the real-GPU bundle here: builds it with scripts/gpu/bundle.sh, then runs its
# run_on_gpu.sh --rehearse in a mount namespace where the Debian libraries we build against and the
# CUDA toolkit are hidden, as on the GPU machine (driver, CUDA and PyTorch, none of our -dev
# packages). Every step must pass, using only what the bundle carries. Needs root for the mount
# namespace; skips (77) without it.
set -uo pipefail
build_dir=$(realpath "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-bundle-test-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
    echo "SKIP: needs root and mount namespaces (unshare -m) to hide the build machine's libraries"
    exit 77
fi
command -v patchelf >/dev/null || { echo "FAIL: patchelf missing (scripts/setup-deps.sh installs it)"; exit 1; }

"$repo/scripts/gpu/bundle.sh" "$WORK/bundle" "$build_dir" || { echo "FAIL: bundle.sh failed"; exit 1; }
size=$(du -sb "$WORK/bundle" | cut -f1)
[ "$size" -le $((64 * 1024 * 1024)) ] || { echo "FAIL: bundle is $size bytes (limit 64 MiB)"; exit 1; }
# A second bundle into a non-empty folder is refused and leaves it as it was.
if "$repo/scripts/gpu/bundle.sh" "$WORK/bundle" "$build_dir" 2>"$WORK/err"; then
    echo "FAIL: bundle.sh overwrote a non-empty folder"; exit 1
fi
grep -q "not empty" "$WORK/err" || { echo "FAIL: unclear refusal: $(cat "$WORK/err")"; exit 1; }

# What is hidden: every library file of the packages we build against, and the toolkit.
hidden=()
for pattern in 'libsqlite3.so*' 'libsimdjson.so*' 'libunwind*.so*' 'libfmt.so*' 'libzstd.so*'; do
    while IFS= read -r f; do hidden+=("$f"); done < <(find /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu -maxdepth 1 -name "$pattern" 2>/dev/null)
done
toolkit=$(realpath /usr/local/cuda 2>/dev/null || true)
cat >"$WORK/inside.sh" <<INSIDE
set -e
: >"$WORK/empty-file"
mkdir -p "$WORK/empty-dir"
for f in ${hidden[*]}; do mount --bind "$WORK/empty-file" "\$f"; done
[ -n "$toolkit" ] && [ -d "$toolkit" ] && mount --bind "$WORK/empty-dir" "$toolkit"
# The hiding works: the build's own tbdprof no longer starts.
if "$build_dir/bin/tbdprof" --version >/dev/null 2>&1; then echo "FAIL: libraries not hidden"; exit 1; fi
cd "$WORK"
OUT="$WORK/results" "$WORK/bundle/run_on_gpu.sh" --rehearse
OUT="$WORK/corr" "$WORK/bundle/correlation_check.sh" --rehearse
INSIDE
if ! unshare -m bash "$WORK/inside.sh" >"$WORK/rehearsal.log" 2>&1; then
    cat "$WORK/rehearsal.log"
    echo "FAIL: the rehearsal failed inside the bundle"
    exit 1
fi
tail -5 "$WORK/rehearsal.log"
for f in mlp_train_iterations_50.sqlite mlp_train_iterations_50.report.txt attention_train_iterations_10_accumulate_2.accuracy.txt; do
    [ -s "$WORK/results/$f" ] || { echo "FAIL: the rehearsal left no $f"; exit 1; }
done
grep -q "GPU" "$WORK/results/mlp_train_iterations_50.report.txt" || { echo "FAIL: report lacks GPU figures"; exit 1; }
# correlation_check.sh: every choice of API records recorded; with both, every record joined by id.
[ "$(grep -c "exit 0" "$WORK/corr/correlation_check.log")" = 8 ] || { echo "FAIL: correlation_check runs"; cat "$WORK/corr/correlation_check.log"; exit 1; }
grep -q "^both .*every device record joined by id" "$WORK/corr/correlation_check.log" || { echo "FAIL: correlation_check joins"; exit 1; }
echo "bundle rehearsal passed ($((size / 1024 / 1024)) MiB)"
