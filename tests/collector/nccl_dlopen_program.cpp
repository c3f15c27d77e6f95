// A framework-style NCCL user: dlopen("libnccl.so.2", RTLD_LOCAL) and every function by dlsym, no
// link-time NCCL or CUDA dependency (tests/cli/record_nccl.sh checks that the calls are recorded,
// with rank and size, and their kernels attached). One rank: ncclCommInitAll over one device,
// buffers from ncclMemAlloc, two all-reduces and a grouped broadcast on the legacy stream.
#include <dlfcn.h>
#include <nccl.h>

#include <cstdio>

namespace {

template <typename F>
F symbol(void* library, const char* name) {
    return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

int main() {
    void* nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (nccl == nullptr) {
        std::fprintf(stderr, "nccl_dlopen_program: %s\n", dlerror());
        return 2;
    }
    auto init_all = symbol<decltype(&ncclCommInitAll)>(nccl, "ncclCommInitAll");
    auto mem_alloc = symbol<decltype(&ncclMemAlloc)>(nccl, "ncclMemAlloc");
    auto all_reduce = symbol<decltype(&ncclAllReduce)>(nccl, "ncclAllReduce");
    auto broadcast = symbol<decltype(&ncclBroadcast)>(nccl, "ncclBroadcast");
    auto group_start = symbol<decltype(&ncclGroupStart)>(nccl, "ncclGroupStart");
    auto group_end = symbol<decltype(&ncclGroupEnd)>(nccl, "ncclGroupEnd");
    auto destroy = symbol<decltype(&ncclCommDestroy)>(nccl, "ncclCommDestroy");
    if (!init_all || !mem_alloc || !all_reduce || !broadcast || !group_start || !group_end || !destroy) return 2;
    ncclComm_t comm = nullptr;
    void* buffer = nullptr;
    if (init_all(&comm, 1, nullptr) != ncclSuccess || mem_alloc(&buffer, 1 << 20) != ncclSuccess) return 1;
    bool ok = all_reduce(buffer, buffer, 1 << 18, ncclFloat32, ncclSum, comm, nullptr) == ncclSuccess &&
              all_reduce(buffer, buffer, 1 << 17, ncclBfloat16, ncclMax, comm, nullptr) == ncclSuccess &&
              group_start() == ncclSuccess &&
              broadcast(buffer, buffer, 1024, ncclInt32, 0, comm, nullptr) == ncclSuccess && group_end() == ncclSuccess;
    ok = destroy(comm) == ncclSuccess && ok;
    std::printf("nccl_dlopen_program: %s\n", ok ? "done" : "a call failed");
    return ok ? 0 : 1;
}
