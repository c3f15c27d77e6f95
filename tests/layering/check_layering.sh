#!/usr/bin/env bash
# The stages' dependency rule (docs/architecture.md, "The libraries"), checked on the sources:
# - a folder includes public headers (tbdprof/<library>/...) of its own library and of lower stages
#   only; the stage-0 headers (the GPU catalog, tbdprof/gpu_catalog/, and collector/include's
#   tbdprof/raw_format.h and tbdprof/step_names.h) every stage may read;
# - no product folder includes by a relative path that climbs out of it (#include "../..."), names
#   another folder's sources in its CMake include folders or sources, or links a simulated-GPU
#   target: the product never depends on its simulator;
# - no folder but trace/ (and the trace library's own tests) includes sqlite3.h;
# - only cmdline/ and cli/ parse command lines: no other product folder links tbdprof_cmdline or
#   CLI11 in its CMakeLists.txt or includes <CLI/...> (the libraries offer plain option structs and
#   functions, so the viewer and other callers link no option parser).
# Fails naming each include or CMake line that breaks it.
set -euo pipefail
src=${1:?usage: check_layering.sh SOURCE_DIR}
cd "$src"

product_folders=(gpu_catalog collector preload trace cmdline tagger analyzer interop cli viewer)
# folder -> the libraries whose headers it may include.
declare -A allowed=(
    [gpu_catalog]="gpu_catalog"
    [collector]="collector gpu_catalog"
    [preload]="collector gpu_catalog"
    [trace]="trace gpu_catalog"
    [cmdline]="cmdline trace gpu_catalog"
    [tagger]="tagger trace gpu_catalog"
    [analyzer]="analyzer trace gpu_catalog"
    [interop]="interop trace tagger gpu_catalog"
    [viewer]="viewer analyzer trace gpu_catalog"
)
sources=(--include='*.cpp' --include='*.h' --include='*.cu' --include='*.cuh')
status=0
for folder in "${!allowed[@]}"; do
    [[ -d $folder ]] || continue
    while IFS= read -r line; do
        file=${line%%:*}
        library=$(sed -E 's/.*#include [<"]tbdprof\/([a-z_]+)\/.*/\1/' <<<"$line")
        if [[ " ${allowed[$folder]} " != *" $library "* ]]; then
            echo "layering: $file includes tbdprof/$library/ (stage above or beside $folder)"
            status=1
        fi
    done < <(grep -rnE '#include [<"]tbdprof/[a-z_]+/' "$folder" "${sources[@]}" || true)
done
for folder in "${product_folders[@]}"; do
    [[ -d $folder ]] || continue
    while IFS= read -r line; do
        echo "layering: $line (an include that climbs out of $folder/; use a library's public headers)"
        status=1
    done < <(grep -rnE '#include [<"]\.\./' "$folder" "${sources[@]}" || true)
    [[ -f $folder/CMakeLists.txt ]] || continue
    while IFS= read -r line; do
        echo "layering: $folder/CMakeLists.txt:$line (the product reaches into the simulated GPU's sources)"
        status=1
    done < <(grep -nE '(SOURCE_DIR\}|\.\.)/simgpu' "$folder/CMakeLists.txt" || true)
    while IFS= read -r line; do
        echo "layering: $folder/CMakeLists.txt:$line (the product links a simulated-GPU target)"
        status=1
    done < <(grep -nE 'target_link_libraries\(.*\b(simgpu_[a-z_]+|tbdsim_[a-zA-Z_]+)' "$folder/CMakeLists.txt" || true)
done
for folder in "${product_folders[@]}"; do
    [[ -d $folder && $folder != cmdline && $folder != cli ]] || continue
    if [[ -f $folder/CMakeLists.txt ]]; then
        while IFS= read -r line; do
            echo "layering: $folder/CMakeLists.txt:$line (only cli/ and cmdline/ link the option parser)"
            status=1
        done < <(grep -nE '^[^#]*\b(tbdprof_cmdline|CLI11)' "$folder/CMakeLists.txt" || true)
    fi
    while IFS= read -r line; do
        echo "layering: $line (CLI11 outside cli/ and cmdline/: offer an option struct and a function)"
        status=1
    done < <(grep -rnE '#include [<"]CLI/' "$folder" "${sources[@]}" || true)
done
while IFS= read -r line; do
    echo "layering: $line includes sqlite3.h outside the trace library"
    status=1
done < <(grep -rlE '#include [<"]sqlite3\.h[>"]' "${sources[@]}" . |
         grep -vE '^\./(trace|tests/trace|build[^/]*)/' || true)
[[ $status == 0 ]] && echo "layering: every include follows the stages"
exit $status
