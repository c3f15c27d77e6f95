#!/usr/bin/env bash
# The stages' dependency rule (docs/architecture.md, "The libraries"), checked on the sources:
# - a folder includes public headers (tbdprof/<library>/...) of its own library and of lower stages
#   only; the stage-0 headers (the GPU catalog, tbdprof/gpu_catalog/, and the contracts of contracts/:
#   tbdprof/raw_format.h, tbdprof/step_names.h, ...) every stage may read; a library's unit tests
#   (its tests/ folder, not product code) may read its output back through a higher stage, as the
#   collector's writer tests do through the trace library's raw reader;
# - no product folder includes by a relative path that climbs out of it (#include "../..."), names
#   another folder's sources in its CMake include folders or sources, or links a simulated-GPU
#   target: the product never depends on its simulator; a folder reaches another stage's headers only
#   by linking its library;
# - the CMake link graph follows the stages: a folder links the libraries of its own and lower stages
#   only (the same table as the includes);
# - no folder but trace/ (and the trace library's own tests) includes sqlite3.h;
# - only cmdline/ and cli/ parse command lines: no other product folder links tbdprof_cmdline or
#   CLI11 in its CMakeLists.txt or includes <CLI/...> (the libraries offer plain option structs and
#   functions, so the viewer and other callers link no option parser).
# Fails naming each include or CMake line that breaks it.
set -euo pipefail
src=${1:?usage: check_layering.sh SOURCE_DIR}
cd "$src"

product_folders=(gpu_catalog contracts collector preload trace cmdline tagger analyzer interop cli viewer)
# folder -> the libraries whose headers it may include.
declare -A allowed=(
    [gpu_catalog]="gpu_catalog"
    [contracts]="contracts"
    [collector]="collector gpu_catalog contracts"
    [preload]="preload collector gpu_catalog contracts"
    [trace]="trace gpu_catalog contracts"
    [cmdline]="cmdline trace gpu_catalog contracts"
    [tagger]="tagger trace gpu_catalog contracts"
    [analyzer]="analyzer trace gpu_catalog contracts"
    [interop]="interop trace tagger gpu_catalog contracts"
    [viewer]="viewer analyzer trace gpu_catalog contracts"
)
# library target -> the folder (stage) it belongs to.
declare -A target_folder=(
    [tbdprof_gpu_catalog]=gpu_catalog [tbdprof_contracts]=contracts [tbdprof_collector]=collector
    [tbdprof_preload]=preload [tbdprof_raw_reader]=trace [tbdprof_trace]=trace
    [tbdprof_cmdline]=cmdline [tbdprof_tagger]=tagger [tbdprof_analyzer]=analyzer
    [tbdprof_interop]=interop [viewer_core]=viewer [viewer_widgets]=viewer
)
sources=(--include='*.cpp' --include='*.h' --include='*.cu' --include='*.cuh')
folder_pattern=$(IFS='|'; echo "${product_folders[*]}")
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
    done < <(grep -rnE '#include [<"]tbdprof/[a-z_]+/' "$folder" "${sources[@]}" --exclude-dir=tests || true)
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
    while IFS= read -r line; do
        echo "layering: $folder/CMakeLists.txt:$line (an include folder inside another stage's sources; link its library)"
        status=1
    done < <(grep -nE "SOURCE_DIR\}/($folder_pattern)/" "$folder/CMakeLists.txt" |
             grep -vE "CMAKE_CURRENT_SOURCE_DIR\}/" || true)
    [[ -n ${allowed[$folder]:-} ]] || continue  # cli/ sits on top: it may link every library
    while IFS= read -r line; do
        for target in $(grep -oE '\b(tbdprof_[a-z_]+|viewer_[a-z]+)\b' <<<"${line#*:}"); do
            stage=${target_folder[$target]:-}
            if [[ -n $stage && " ${allowed[$folder]} " != *" $stage "* ]]; then
                echo "layering: $folder/CMakeLists.txt:${line%%:*} links $target (stage above or beside $folder)"
                status=1
            fi
        done
    done < <(grep -nE 'target_link_libraries\(' "$folder/CMakeLists.txt" || true)
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
         grep -vE '^\./(trace|build[^/]*)/' || true)
[[ $status == 0 ]] && echo "layering: every include follows the stages"
exit $status
