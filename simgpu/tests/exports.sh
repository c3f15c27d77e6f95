#!/usr/bin/env bash
# Every public function of the toolkit's libraries (a name the library exports and its headers
# declare) is exported by the simulated one.   exports.sh SIMGPU_DIR TOOLKIT_LIB_DIR TOOLKIT_INCLUDE_DIR
# Skips (77) when the toolkit's libraries are absent.
set -u
sim=$1 lib=$2 include=$3
failures=0
for pair in cudnn:libcudnn.so.9 curand:libcurand.so.10 cufft:libcufft.so.12 cusparse:libcusparse.so.12 \
            cusolver:libcusolver.so.12 nvrtc:libnvrtc.so.13 nvJitLink:libnvJitLink.so.13; do
    prefix=${pair%%:*} so=${pair#*:}
    if [ ! -e "$lib/$so" ]; then echo "skipped: $lib/$so is absent"; exit 77; fi
    declared=$(grep -ohw "_*${prefix}[A-Za-z0-9_]*" "$include"/*.h | sort -u)
    real=$(nm -D --defined-only "$lib/$so" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
    ours=$(nm -D --defined-only "$sim/$so" | awk '$2 == "T" || $2 == "W" { sub(/@.*/, "", $3); print $3 }' | sort -u)
    public=$(comm -12 <(echo "$real") <(echo "$declared"))
    missing=$(comm -23 <(echo "$public") <(echo "$ours"))
    printf '%-10s %4d public functions, %4d exported by the simulated library, %d missing\n' "$prefix" \
        "$(echo "$public" | grep -c .)" "$(echo "$ours" | grep -c .)" "$(echo "$missing" | grep -c .)"
    if [ -n "$missing" ]; then echo "$missing" | head -20 | sed 's/^/  missing: /'; failures=1; fi
done
exit $failures
