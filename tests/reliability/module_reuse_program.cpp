// Driver-API program for the kernel catalog cases, with kernels made up as PTX text:
//   reuse    loads module A (kernel "only_one", 1 pointer), launches it, unloads A, loads module B
//            (kernel "takes_three", 3 pointers) until a function handle of B equals A's freed one
//            (at most 64 tries), launches it: the trace must name it takes_three with 3 edges
//   many N   one module of N kernels (1 pointer each), each launched once
// Prints "reused 1" when B's function got A's address.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        CUresult r_ = (call);                                                              \
        if (r_ != CUDA_SUCCESS) {                                                          \
            std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, r_); \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

static std::string ptx(const std::vector<std::pair<std::string, int>>& kernels) {
    std::string text = ".version 8.0\n.target sm_90\n.address_size 64\n";
    for (const auto& [name, params] : kernels) {
        text += ".visible .entry " + name + "(\n";
        for (int i = 0; i < params; ++i)
            text += " .param .u64 " + name + "_param_" + std::to_string(i) + (i + 1 < params ? ",\n" : "\n");
        text += ")\n{\n ret;\n}\n";
    }
    return text;
}

static void launch(CUfunction f, std::vector<CUdeviceptr>& pointers) {
    std::vector<void*> params;
    for (CUdeviceptr& p : pointers) params.push_back(&p);
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params.data(), nullptr));
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    CHECK(cuInit(0));
    CUdevice device;
    CHECK(cuDeviceGet(&device, 0));
    CUcontext context;
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    std::vector<CUdeviceptr> buffers(3);
    for (CUdeviceptr& b : buffers) CHECK(cuMemAlloc(&b, 256));

    if (std::strcmp(mode, "reuse") == 0) {
        const std::string a_text = ptx({{"only_one", 1}});
        CUmodule a;
        CHECK(cuModuleLoadData(&a, a_text.c_str()));
        CUfunction fa;
        CHECK(cuModuleGetFunction(&fa, a, "only_one"));
        std::vector<CUdeviceptr> one{buffers[0]};
        launch(fa, one);
        CHECK(cuCtxSynchronize());
        CHECK(cuModuleUnload(a));
        const std::string b_text = ptx({{"takes_three", 3}});
        std::vector<CUmodule> kept;
        CUfunction fb = nullptr;
        bool reused = false;
        for (int attempt = 0; attempt < 64 && !reused; ++attempt) {
            CUmodule b;
            CHECK(cuModuleLoadData(&b, b_text.c_str()));
            CHECK(cuModuleGetFunction(&fb, b, "takes_three"));
            reused = fb == fa;
            kept.push_back(b);
        }
        launch(fb, buffers);
        CHECK(cuCtxSynchronize());
        std::printf("reused %d\n", reused ? 1 : 0);
        for (CUmodule m : kept) CHECK(cuModuleUnload(m));
    } else if (std::strcmp(mode, "many") == 0 && argc > 2) {
        const int count = std::atoi(argv[2]);
        std::vector<std::pair<std::string, int>> kernels;
        for (int i = 0; i < count; ++i) kernels.emplace_back("kernel_" + std::to_string(i), 1);
        const std::string text = ptx(kernels);
        CUmodule m;
        CHECK(cuModuleLoadData(&m, text.c_str()));
        std::vector<CUdeviceptr> one{buffers[1]};
        for (int i = 0; i < count; ++i) {
            CUfunction f;
            CHECK(cuModuleGetFunction(&f, m, kernels[static_cast<size_t>(i)].first.c_str()));
            launch(f, one);
        }
        CHECK(cuCtxSynchronize());
        CHECK(cuModuleUnload(m));
    } else {
        std::fprintf(stderr, "usage: module_reuse_program reuse | many N\n");
        return 2;
    }
    for (CUdeviceptr b : buffers) CHECK(cuMemFree(b));
    return 0;
}
