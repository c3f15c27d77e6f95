// A program that falls into holes of the simulated GPU, as a framework does when it reaches a call
// the simulator does not model: it allocates (so the trace has activity), calls an unmodelled cuDNN
// function twice (named once) and an unmodelled runtime function, and fails like a framework would.
// With --fork a child process calls the same functions first: tbdprof still names each once. With
// --none it calls nothing unmodelled (a launch-free allocation only) and exits 0. With --nvrtc it
// compiles a kernel at run time the way PyTorch's jiterator does (NVRTC loaded with dlopen) and
// exits 4 when the compilation fails.
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace {

int call_holes() {
    const auto folded = [] {
        return cudnnGetFoldedConvBackwardDataDescriptors(nullptr, nullptr, nullptr, nullptr, nullptr, CUDNN_TENSOR_NCHW,
                                                         nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                         nullptr);
    };
    const cudnnStatus_t first = folded();
    const cudnnStatus_t second = folded();
    cudaChannelFormatDesc format = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t array = nullptr;
    const cudaError_t runtime = cudaMallocArray(&array, &format, 4, 4);
    std::printf("cudnnGetFoldedConvBackwardDataDescriptors: %s, %s; cudaMallocArray: %s\n", cudnnGetErrorString(first),
                cudnnGetErrorString(second), cudaGetErrorName(runtime));
    return first == CUDNN_STATUS_NOT_SUPPORTED && second == CUDNN_STATUS_NOT_SUPPORTED ? 3 : 0;
}

// Run-time compilation through NVRTC, found by dlopen as PyTorch finds it: 4 when it fails.
int compile_at_run_time() {
    void* nvrtc = dlopen("libnvrtc.so.13", RTLD_NOW);
    if (nvrtc == nullptr) return 1;
    using Create =
        nvrtcResult (*)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
    using Compile = nvrtcResult (*)(nvrtcProgram, int, const char* const*);
    const auto create = reinterpret_cast<Create>(dlsym(nvrtc, "nvrtcCreateProgram"));
    const auto compile = reinterpret_cast<Compile>(dlsym(nvrtc, "nvrtcCompileProgram"));
    if (create == nullptr || compile == nullptr) return 1;
    nvrtcProgram program = nullptr;
    if (create(&program, "extern \"C\" __global__ void twice(float* x) { x[threadIdx.x] *= 2; }", "twice.cu", 0,
               nullptr, nullptr) != NVRTC_SUCCESS)
        return 1;
    const nvrtcResult result = compile(program, 0, nullptr);
    std::printf("nvrtcCompileProgram: %d\n", static_cast<int>(result));
    return result == NVRTC_SUCCESS ? 0 : 4;
}

}  // namespace

int main(int argc, char** argv) {
    void* buffer = nullptr;
    if (cudaMalloc(&buffer, 1 << 20) != cudaSuccess) return 1;
    if (argc > 1 && std::strcmp(argv[1], "--none") == 0) return cudaFree(buffer) == cudaSuccess ? 0 : 1;
    if (argc > 1 && std::strcmp(argv[1], "--nvrtc") == 0) return compile_at_run_time();
    if (argc > 1 && std::strcmp(argv[1], "--fork") == 0) {
        const pid_t child = fork();
        if (child == 0) _exit(call_holes());
        int status = 0;
        waitpid(child, &status, 0);
    }
    const int status = call_holes();
    cudaFree(buffer);
    return status;
}
