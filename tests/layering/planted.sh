#!/usr/bin/env bash
# The layering check catches what it is there to catch: planted in a copy of a minimal tree, a
# product file that includes the simulator by a relative path, a CMake include folder into simgpu/,
# a link to a simulated-GPU target, a header of a stage above, a CMake include folder into another
# stage's sources, a link to a library of a stage above, and a library other than cli/ and cmdline/
# linking or including the option parser (CLI11) must each fail it; the clean tree must pass.
set -euo pipefail
check=${1:?usage: planted.sh CHECK_SCRIPT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

clean_tree() {
    rm -rf "$work/tree" && mkdir -p "$work/tree"/{preload,trace,analyzer,cmdline,cli,simgpu/cudnn}
    echo '#include "tbdprof/collector/recorder.h"' >"$work/tree/preload/hooks.cpp"
    echo '#include "tbdprof/gpu_catalog/gpu_catalog.h"' >>"$work/tree/preload/hooks.cpp"
    echo '#include "tbdprof/trace/tables.h"' >"$work/tree/analyzer/report.cpp"
    echo 'add_library(tbdprof_preload SHARED hooks.cpp)' >"$work/tree/preload/CMakeLists.txt"
    echo 'target_link_libraries(tbdprof_preload PRIVATE tbdprof_collector tbdprof_contracts)' >>"$work/tree/preload/CMakeLists.txt"
    echo 'target_include_directories(tbdprof_trace PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)' >"$work/tree/trace/CMakeLists.txt"
    echo '#pragma once' >"$work/tree/simgpu/cudnn/dnn_flops.h"
    echo 'add_library(tbdprof_analyzer STATIC report.cpp)' >"$work/tree/analyzer/CMakeLists.txt"
    echo '# no tbdprof_cmdline here: a comment is not a link' >>"$work/tree/analyzer/CMakeLists.txt"
    echo 'find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)' >"$work/tree/cmdline/CMakeLists.txt"
    echo '#include <CLI/CLI.hpp>' >"$work/tree/cmdline/command.cpp"
    echo 'target_link_libraries(tbdprof PRIVATE tbdprof_cmdline tbdprof_analyzer)' >"$work/tree/cli/CMakeLists.txt"
    echo '#include <tbdprof/cmdline/command.h>' >"$work/tree/cli/report_command.cpp"
}

expect() {  # expect pass|fail WHAT
    local want=$1 what=$2 got=pass
    bash "$check" "$work/tree" >"$work/out" 2>&1 || got=fail
    if [[ $got != "$want" ]]; then
        echo "planted: $what: expected the check to $want, it did $got"; cat "$work/out"; exit 1
    fi
    if [[ $want == fail ]] && ! grep -q '^layering: ' "$work/out"; then
        echo "planted: $what: failed without naming the offending line"; exit 1
    fi
    echo "planted: $what: $got, as expected"
}

clean_tree; expect pass "clean tree"
clean_tree; echo '#include "../simgpu/cudnn/dnn_flops.h"' >>"$work/tree/preload/hooks.cpp"
expect fail "relative include of the simulator"
clean_tree; echo 'target_include_directories(tbdprof_preload PRIVATE ${CMAKE_SOURCE_DIR}/simgpu/include)' >>"$work/tree/preload/CMakeLists.txt"
expect fail "CMake include folder into simgpu/"
clean_tree; echo 'target_link_libraries(tbdprof_preload PRIVATE simgpu_driver)' >>"$work/tree/preload/CMakeLists.txt"
expect fail "link to a simulated-GPU target"
clean_tree; echo '#include "tbdprof/analyzer/report.h"' >>"$work/tree/trace/build.cpp"
expect fail "header of a stage above"
clean_tree; echo 'target_include_directories(tbdprof_trace PUBLIC ${PROJECT_SOURCE_DIR}/collector/include)' >>"$work/tree/trace/CMakeLists.txt"
expect fail "CMake include folder into another stage's sources"
clean_tree; echo 'target_link_libraries(tbdprof_trace PUBLIC tbdprof_analyzer)' >>"$work/tree/trace/CMakeLists.txt"
expect fail "link to a library of a stage above"
clean_tree; echo 'target_link_libraries(tbdprof_analyzer PRIVATE tbdprof_trace' >>"$work/tree/analyzer/CMakeLists.txt"
echo '    tbdprof_cmdline)' >>"$work/tree/analyzer/CMakeLists.txt"
expect fail "a library linking the option parser (tbdprof_cmdline) on a continued line"
clean_tree; echo 'target_include_directories(tbdprof_analyzer PRIVATE ${CLI11_INCLUDE_DIR})' >>"$work/tree/analyzer/CMakeLists.txt"
expect fail "a library using CLI11's include folder"
clean_tree; echo '#include <CLI/CLI.hpp>' >>"$work/tree/analyzer/report.cpp"
expect fail "a library including CLI11"
clean_tree; echo '#include <tbdprof/cmdline/progress.h>' >>"$work/tree/analyzer/report.cpp"
expect fail "a library including cmdline/'s headers"
clean_tree; mkdir -p "$work/tree/trace/tests" && echo '#include "tbdprof/analyzer/report.h"' >"$work/tree/trace/tests/read_back_test.cpp"
expect pass "a library's unit test (its tests/ folder) reading back through a stage above"
clean_tree; mkdir -p "$work/tree/trace/src/tests_helpers" && echo '#include "tbdprof/analyzer/report.h"' >"$work/tree/trace/src/tests_helpers/x.cpp"
expect fail "header of a stage above in a product folder whose name only starts with tests"
