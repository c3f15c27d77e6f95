// Error checking for the sample programs. Every CUDA and cuBLAS call goes through one of these macros:
// a failed call prints where and why on stderr and ends the program with status 1 (status 2 is
// reserved for bad command-line options, so a test can tell the two apart).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace tbdsample {

[[noreturn]] void fail_cuda(cudaError_t error, const char* call, const char* file, int line);
[[noreturn]] void fail_cublas(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void fail_message(const char* message, const char* file, int line);

// The program name used as the prefix of every diagnostic (set once by the option parser).
void set_program_name(const char* name);
const char* program_name();

}  // namespace tbdsample

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t tbd_check_error_ = (call);                                        \
        if (tbd_check_error_ != cudaSuccess)                                          \
            ::tbdsample::fail_cuda(tbd_check_error_, #call, __FILE__, __LINE__);      \
    } while (0)

#define CUBLAS_CHECK(call)                                                            \
    do {                                                                              \
        cublasStatus_t tbd_check_status_ = (call);                                    \
        if (tbd_check_status_ != CUBLAS_STATUS_SUCCESS)                               \
            ::tbdsample::fail_cublas(tbd_check_status_, #call, __FILE__, __LINE__);   \
    } while (0)

// Checks a kernel launch made with <<<>>>: launch errors are reported by cudaGetLastError().
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
