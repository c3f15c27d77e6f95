#include "check.h"

#include <cstdio>
#include <cstdlib>

namespace tbdsample {
namespace {
const char* g_program_name = "sample";
}

void set_program_name(const char* name) { g_program_name = name; }
const char* program_name() { return g_program_name; }

void fail_cuda(cudaError_t error, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s: CUDA error %s (%s) in %s at %s:%d\n", g_program_name,
                 cudaGetErrorName(error), cudaGetErrorString(error), call, file, line);
    std::exit(1);
}

void fail_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s: cuBLAS error %s (%d) in %s at %s:%d\n", g_program_name,
                 cublasGetStatusName(status), static_cast<int>(status), call, file, line);
    std::exit(1);
}

void fail_message(const char* message, const char* file, int line) {
    std::fprintf(stderr, "%s: %s (%s:%d)\n", g_program_name, message, file, line);
    std::exit(1);
}

}  // namespace tbdsample
