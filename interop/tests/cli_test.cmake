# Runs tbdprof-interop as a user would: exit codes, messages, outputs.
#   cmake -DTOOL=... -DWORK=... -P cli_test.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(expect_run expected_rc needle)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL expected_rc)
        message(FATAL_ERROR "${ARGN}: exit ${rc}, expected ${expected_rc}\nstdout: ${out}\nstderr: ${err}")
    endif()
    string(FIND "${out}${err}" "${needle}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "${ARGN}: output lacks '${needle}'\nstdout: ${out}\nstderr: ${err}")
    endif()
endfunction()

expect_run(2 "usage" ${TOOL})
expect_run(2 "usage" ${TOOL} import)
expect_run(1 "cannot open" ${TOOL} import ${WORK}/missing.json -o ${WORK}/x.sqlite)
file(WRITE ${WORK}/bad.json "{\"traceEvents\": [")
expect_run(1 "invalid JSON" ${TOOL} import ${WORK}/bad.json -o ${WORK}/bad.sqlite)
if(EXISTS ${WORK}/bad.sqlite)
    message(FATAL_ERROR "a failed import left ${WORK}/bad.sqlite behind")
endif()

file(WRITE ${WORK}/t.json [=[{"traceEvents": [
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":5,"tid":5,"ts":1,"dur":2,"args":{"correlation":9}},
 {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4,"dur":3,"args":{"device":0,"stream":7,"correlation":9}},
 {"ph":"X","cat":"weird","name":"w","pid":5,"tid":5,"ts":4,"dur":3}]}]=])
expect_run(0 "unknown event types: 1 (ph=X cat=weird: 1)" ${TOOL} import ${WORK}/t.json)
if(NOT EXISTS ${WORK}/t.sqlite)
    message(FATAL_ERROR "import without -o did not write t.sqlite next to its input")
endif()
expect_run(0 "1 flows" ${TOOL} export ${WORK}/t.sqlite --format chrome -o ${WORK}/t.chrome.json)
expect_run(2 "unknown format" ${TOOL} export ${WORK}/t.sqlite --format pprof)
expect_run(1 "not a tbdprof trace" ${TOOL} export ${WORK}/bad.json --format chrome -o ${WORK}/nope.json)
expect_run(0 "1 kernels" ${TOOL} import ${WORK}/t.chrome.json -o ${WORK}/again.sqlite)
