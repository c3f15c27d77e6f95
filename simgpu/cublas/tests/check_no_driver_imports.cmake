# Fails when a simulated library could reach the driver or runtime other than through dlopen +
# cuGetProcAddress: no undefined cu*/cuda* symbols, no NEEDED entry for libcuda or libcudart.
#   cmake -DLIBRARY=libcublas.so.13 -DNM=nm -DREADELF=readelf -P check_no_driver_imports.cmake
execute_process(COMMAND ${NM} -D --undefined-only ${LIBRARY}
                OUTPUT_VARIABLE undefined RESULT_VARIABLE nm_failed)
if(nm_failed)
    message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
string(REGEX MATCHALL "[ \t]cu[A-Za-z0-9_]+" driver_imports "${undefined}")
if(driver_imports)
    message(FATAL_ERROR "${LIBRARY} imports driver/runtime symbols:${driver_imports}")
endif()

execute_process(COMMAND ${READELF} -d ${LIBRARY} OUTPUT_VARIABLE dynamic RESULT_VARIABLE readelf_failed)
if(readelf_failed)
    message(FATAL_ERROR "readelf failed on ${LIBRARY}")
endif()
string(REGEX MATCHALL "NEEDED[^\n]*\\[lib(cuda|cudart|cublasLt)[^]]*\\]" needed "${dynamic}")
if(needed)
    message(FATAL_ERROR "${LIBRARY} links the driver or runtime: ${needed}")
endif()
message(STATUS "${LIBRARY}: no direct driver or runtime imports")
