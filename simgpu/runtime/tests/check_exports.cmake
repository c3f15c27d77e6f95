# Checks that the simulated runtime exports, under the libcudart.so.13 version node, every symbol
# nvcc-generated code and the per-thread-default-stream variants need, and nothing else.
# Usage: cmake -DLIBRARY=<libcudart.so.13> -DREAL_LIBRARY=<real one or empty> -P check_exports.cmake
execute_process(COMMAND nm -D --defined-only ${LIBRARY} OUTPUT_VARIABLE ours RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
set(required
    __cudaRegisterFatBinary __cudaRegisterFatBinaryEnd __cudaUnregisterFatBinary __cudaRegisterFunction
    __cudaRegisterVar __cudaRegisterManagedVar __cudaInitModule __cudaPushCallConfiguration
    __cudaPopCallConfiguration __cudaGetKernel __cudaLaunchKernel __cudaLaunchKernel_ptsz
    cudaLaunchKernel cudaLaunchKernel_ptsz cudaLaunchKernelExC cudaLaunchKernelExC_ptsz
    cudaMalloc cudaFree cudaMallocAsync cudaMallocAsync_ptsz cudaFreeAsync cudaFreeAsync_ptsz
    cudaMemcpy cudaMemcpy_ptds cudaMemcpyAsync cudaMemcpyAsync_ptsz cudaMemcpy2D cudaMemcpy2D_ptds
    cudaMemset cudaMemset_ptds cudaMemsetAsync cudaMemsetAsync_ptsz cudaStreamSynchronize
    cudaStreamSynchronize_ptsz cudaEventRecord cudaEventRecord_ptsz cudaGetDeviceProperties
    cudaGetLastError cudaGetErrorString cudaGetDriverEntryPoint cudaGetDriverEntryPointByVersion
    cudaFuncGetParamInfo cudaProfilerStart cudaProfilerStop)
foreach(symbol IN LISTS required)
    if(NOT ours MATCHES "[ \n]${symbol}@@libcudart\\.so\\.13\n")
        message(SEND_ERROR "missing export: ${symbol}@@libcudart.so.13")
    endif()
endforeach()
# Nothing but cuda*/__cuda* (and the version node itself) may leak out.
string(REGEX MATCHALL "[^\n]+\n" lines "${ours}")
foreach(line IN LISTS lines)
    if(NOT line MATCHES " (cuda|__cuda)[A-Za-z0-9_]*@@libcudart\\.so\\.13\n" AND NOT line MATCHES " A libcudart\\.so\\.13\n")
        message(SEND_ERROR "unexpected export: ${line}")
    endif()
endforeach()
# Every export must exist in the real runtime (no invented API).
if(REAL_LIBRARY AND EXISTS ${REAL_LIBRARY})
    execute_process(COMMAND nm -D --defined-only ${REAL_LIBRARY} OUTPUT_VARIABLE real)
    string(REGEX MATCHALL " (cuda|__cuda)[A-Za-z0-9_]*@@" exported "${ours}")
    foreach(symbol IN LISTS exported)
        if(NOT real MATCHES "${symbol}")
            message(SEND_ERROR "exported but not in the real runtime:${symbol}")
        endif()
    endforeach()
endif()
