// The modelled part of the simulated libnvrtc.so.13: versions, supported architectures, programs
// (create, destroy, logs) and compilation, which always fails with NVRTC_ERROR_COMPILATION and a log
// saying that the simulated GPU compiles nothing (it has no compiler; a program can report it and
// fall back). Other functions return NVRTC_ERROR_INVALID_PROGRAM (the generated stubs), since no
// program is ever compiled.
#include <cuda.h>
#include <nvrtc.h>
#include <simgpu/not_modelled.h>

#include <cstring>
#include <new>
#include <string>

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct _nvrtcProgram {
    std::string source, name, log;
};

TBD_EXPORT const char* nvrtcGetErrorString(nvrtcResult result) {
    switch (result) {
        case NVRTC_SUCCESS:
            return "NVRTC_SUCCESS";
        case NVRTC_ERROR_OUT_OF_MEMORY:
            return "NVRTC_ERROR_OUT_OF_MEMORY";
        case NVRTC_ERROR_INVALID_INPUT:
            return "NVRTC_ERROR_INVALID_INPUT";
        case NVRTC_ERROR_INVALID_PROGRAM:
            return "NVRTC_ERROR_INVALID_PROGRAM";
        case NVRTC_ERROR_COMPILATION:
            return "NVRTC_ERROR_COMPILATION";
        default:
            return "NVRTC_ERROR unknown";
    }
}

TBD_EXPORT nvrtcResult nvrtcVersion(int* major, int* minor) {
    if (major == nullptr || minor == nullptr) return NVRTC_ERROR_INVALID_INPUT;
    *major = CUDA_VERSION / 1000;
    *minor = CUDA_VERSION % 1000 / 10;
    return NVRTC_SUCCESS;
}

namespace {
constexpr int kArchitectures[] = {75, 80, 86, 89, 90};
}

TBD_EXPORT nvrtcResult nvrtcGetNumSupportedArchs(int* count) {
    if (count == nullptr) return NVRTC_ERROR_INVALID_INPUT;
    *count = static_cast<int>(sizeof(kArchitectures) / sizeof(kArchitectures[0]));
    return NVRTC_SUCCESS;
}

TBD_EXPORT nvrtcResult nvrtcGetSupportedArchs(int* architectures) {
    if (architectures == nullptr) return NVRTC_ERROR_INVALID_INPUT;
    std::memcpy(architectures, kArchitectures, sizeof(kArchitectures));
    return NVRTC_SUCCESS;
}

TBD_EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram* program, const char* source, const char* name, int headers,
                                          const char* const*, const char* const*) {
    if (program == nullptr || source == nullptr || headers < 0) return NVRTC_ERROR_INVALID_INPUT;
    *program = new (std::nothrow) _nvrtcProgram{source, name != nullptr ? name : "default_program", ""};
    return *program != nullptr ? NVRTC_SUCCESS : NVRTC_ERROR_OUT_OF_MEMORY;
}

TBD_EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram* program) {
    if (program == nullptr || *program == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
    delete *program;
    *program = nullptr;
    return NVRTC_SUCCESS;
}

TBD_EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram program, int options, const char* const*) {
    if (program == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
    if (options < 0) return NVRTC_ERROR_INVALID_INPUT;
    program->log = program->name + ": not compiled: the simulated GPU (tbdprof simgpu) has no runtime compiler\n";
    // Named like an unmodelled function, so that tbdprof tells the user (PyTorch's jiterator).
    tbdsim_not_modelled("nvrtcCompileProgram", "NVRTC_ERROR_COMPILATION");
    return NVRTC_ERROR_COMPILATION;
}

TBD_EXPORT nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram program, size_t* size) {
    if (program == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
    if (size == nullptr) return NVRTC_ERROR_INVALID_INPUT;
    *size = program->log.size() + 1;
    return NVRTC_SUCCESS;
}

TBD_EXPORT nvrtcResult nvrtcGetProgramLog(nvrtcProgram program, char* log) {
    if (program == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
    if (log == nullptr) return NVRTC_ERROR_INVALID_INPUT;
    std::memcpy(log, program->log.c_str(), program->log.size() + 1);
    return NVRTC_SUCCESS;
}
