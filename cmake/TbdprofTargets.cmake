# Shared compile settings for tbdprof targets.

# Warnings for every target we write.
function(tbd_warnings target)
    target_compile_options(${target} PRIVATE
        $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
          -Wnon-virtual-dtor -Wcast-align -Wunused -Wnull-dereference -Wformat=2>)
endfunction()

# Sanitizers, for host-side tools and tests only. Never for libraries injected into a target process
# (the simulated GPU, the preload collector): a sanitizer runtime cannot be LD_PRELOADed after libc
# into an arbitrary program.
function(tbd_sanitize target)
    if(TBDPROF_FUZZ)
        # Coverage for libFuzzer on top of ASan and UBSan. The unit tests built in the same tree run
        # under the same sanitizers (the ASan runtime answers the coverage hooks outside libFuzzer), so
        # CI's sanitizer stage and its fuzz stage share one build (scripts/setup-deps.sh).
        target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                                                 -fno-sanitize-recover=undefined)
        target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    elseif(TBDPROF_SANITIZE)
        target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                 -fno-sanitize-recover=undefined)
        target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    endif()
endfunction()

# ThreadSanitizer, for the collector and its unit tests only (build-tsan/ in scripts/test.sh): the
# writer thread, the rings and the fork/exit paths race with the application's threads by design.
function(tbd_thread_sanitize target)
    if(TBDPROF_TSAN)
        target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
        target_link_options(${target} PRIVATE -fsanitize=thread)
    endif()
endfunction()

# A library of the simulated GPU: real SONAME, real symbol version node, output in lib/simgpu.
#   tbd_simgpu_library(TARGET name OUTPUT cuda SOVERSION 1 VERSION_SCRIPT file SOURCES ...)
function(tbd_simgpu_library)
    cmake_parse_arguments(ARG "" "TARGET;OUTPUT;SOVERSION;VERSION_SCRIPT;EXPORTS" "SOURCES" ${ARGN})
    set(generated)
    if(ARG_EXPORTS)
        # Every function the toolkit's public headers declare for this library, as weak "unsupported"
        # stubs that modelled functions override and that name themselves when called
        # (simgpu/exports/gen_exports.py).
        find_package(Python3 COMPONENTS Interpreter REQUIRED)
        set(gen ${CMAKE_SOURCE_DIR}/simgpu/exports/gen_exports.py)
        set(out_cpp ${CMAKE_CURRENT_BINARY_DIR}/exports_${ARG_EXPORTS}.cpp)
        set(outputs ${out_cpp} ${CMAKE_CURRENT_BINARY_DIR}/exports_${ARG_EXPORTS}.symbols)
        set(extra)
        # The toolkit's own runtime or driver, for the entry points it exports that no header declares
        # (nvcc's generated code may call them; optional). Never for cuBLAS/cuBLASLt: their undeclared
        # names are NVIDIA's private interfaces between its own libraries (gen_exports.py).
        set(real_name lib${ARG_EXPORTS}.so.${ARG_SOVERSION})
        set(real_dirs ${CUDAToolkit_LIBRARY_DIR})
        if(ARG_EXPORTS STREQUAL "cuda")
            set(real_name libcuda.so)
            set(real_dirs ${CUDAToolkit_LIBRARY_DIR}/stubs)
        endif()
        find_file(TBD_REAL_${ARG_EXPORTS} ${real_name} PATHS ${real_dirs} NO_DEFAULT_PATH)
        set(real_arg)
        if(TBD_REAL_${ARG_EXPORTS} AND ARG_EXPORTS MATCHES "^(cuda|cudart)$")
            set(real_arg --real ${TBD_REAL_${ARG_EXPORTS}})
        endif()
        if(ARG_EXPORTS STREQUAL "cuda")
            list(APPEND outputs ${CMAKE_CURRENT_BINARY_DIR}/proc_table.inc)
            set(extra ${CMAKE_CURRENT_BINARY_DIR}/proc_table.inc)
        endif()
        add_custom_command(OUTPUT ${outputs}
            COMMAND Python3::Interpreter ${gen} ${ARG_EXPORTS} "${CUDAToolkit_INCLUDE_DIRS}" ${out_cpp} ${extra} ${real_arg}
            DEPENDS ${gen}
            VERBATIM
            COMMENT "Export table of lib${ARG_EXPORTS} from the toolkit's headers")
        set(generated ${out_cpp} ${extra})
    endif()
    # Every library names the unmodelled functions a program calls (simgpu/include/simgpu/not_modelled.h).
    add_library(${ARG_TARGET} SHARED ${ARG_SOURCES} ${generated} ${CMAKE_SOURCE_DIR}/simgpu/exports/not_modelled.cpp)
    target_include_directories(${ARG_TARGET} PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
    set_target_properties(${ARG_TARGET} PROPERTIES
        OUTPUT_NAME ${ARG_OUTPUT}
        SOVERSION ${ARG_SOVERSION}
        LIBRARY_OUTPUT_DIRECTORY ${TBDPROF_SIMGPU_DIR}
        CXX_VISIBILITY_PRESET hidden
        VISIBILITY_INLINES_HIDDEN ON
        LINK_DEPENDS ${ARG_VERSION_SCRIPT})
    target_link_options(${ARG_TARGET} PRIVATE -Wl,--version-script=${ARG_VERSION_SCRIPT}
                                              -Wl,--no-undefined)
    target_include_directories(${ARG_TARGET} PRIVATE ${CMAKE_SOURCE_DIR}/simgpu/include ${CMAKE_SOURCE_DIR}/gpu_catalog/include
                                                     ${CUDAToolkit_INCLUDE_DIRS})
    target_link_libraries(${ARG_TARGET} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
    tbd_warnings(${ARG_TARGET})
endfunction()

# The one way of adding a test (docs/architecture.md, "Where tests live"): its ctest name, its
# command, and the properties our tests use, in one call.
#   tbd_add_test(NAME name COMMAND program args... [ENVIRONMENT var=value...] [LABELS label...]
#                [TIMEOUT s] [SKIP_RETURN_CODE n] [WORKING_DIRECTORY dir] [DISABLED bool]
#                [ENVIRONMENT_MODIFICATION var=op:value...]
#                [FIXTURES_SETUP name...] [FIXTURES_REQUIRED name...])
# PARSE_ARGV keeps empty arguments and arguments holding ';' as they were written.
function(tbd_add_test)
    cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;TIMEOUT;SKIP_RETURN_CODE;WORKING_DIRECTORY;DISABLED"
                          "COMMAND;ENVIRONMENT;ENVIRONMENT_MODIFICATION;LABELS;FIXTURES_SETUP;FIXTURES_REQUIRED")
    if(NOT ARG_NAME OR NOT ARG_COMMAND OR ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "tbd_add_test(NAME name COMMAND ...): got '${ARGN}'")
    endif()
    if(ARG_WORKING_DIRECTORY)
        add_test(NAME ${ARG_NAME} COMMAND ${ARG_COMMAND} WORKING_DIRECTORY ${ARG_WORKING_DIRECTORY})
    else()
        add_test(NAME ${ARG_NAME} COMMAND ${ARG_COMMAND})
    endif()
    foreach(property ENVIRONMENT ENVIRONMENT_MODIFICATION LABELS TIMEOUT SKIP_RETURN_CODE DISABLED FIXTURES_SETUP
                     FIXTURES_REQUIRED)
        if(DEFINED ARG_${property})
            # A property's quoted "a;b" is a list, as in set_tests_properties (PARSE_ARGV escaped it).
            string(REPLACE "\\;" ";" value "${ARG_${property}}")
            set_tests_properties(${ARG_NAME} PROPERTIES ${property} "${value}")
        endif()
    endforeach()
endfunction()

# A test program: our warnings, the sanitizer build when asked (not for programs the simulated GPU
# or the collector must load into: pass NO_SANITIZE), its libraries and include folders; DOCTEST_MAIN
# links doctest's main(), compiled once for all (tests/support/doctest_main.cpp).
#   tbd_test_program(TARGET name SOURCES file... [LIBRARIES lib...] [INCLUDES dir...] [NO_SANITIZE]
#                    [DOCTEST_MAIN])
function(tbd_test_program)
    cmake_parse_arguments(PARSE_ARGV 0 ARG "NO_SANITIZE;DOCTEST_MAIN" "TARGET" "SOURCES;LIBRARIES;INCLUDES")
    if(NOT ARG_TARGET OR NOT ARG_SOURCES OR ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "tbd_test_program(TARGET name SOURCES ...): got '${ARGN}'")
    endif()
    add_executable(${ARG_TARGET} ${ARG_SOURCES})
    if(ARG_INCLUDES)
        target_include_directories(${ARG_TARGET} PRIVATE ${ARG_INCLUDES})
    endif()
    if(ARG_LIBRARIES)
        target_link_libraries(${ARG_TARGET} PRIVATE ${ARG_LIBRARIES})
    endif()
    if(ARG_DOCTEST_MAIN)
        target_link_libraries(${ARG_TARGET} PRIVATE tbd_doctest_main)
    endif()
    tbd_warnings(${ARG_TARGET})
    if(NOT ARG_NO_SANITIZE)
        tbd_sanitize(${ARG_TARGET})
    endif()
endfunction()
