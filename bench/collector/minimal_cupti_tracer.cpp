#include "minimal_cupti_tracer.h"

#include <cupti_activity.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

constexpr size_t kBufferBytes = size_t{2} << 20;  // as tbdprof's collector, so the two compare

struct Api {
    decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
    decltype(&cuptiActivityEnable) enable = nullptr;
    decltype(&cuptiActivityFlushAll) flush_all = nullptr;
    decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
} g_api;

std::atomic<long> g_kernels{0};
std::mutex g_spare_mutex;
std::vector<uint8_t*> g_spare;

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    {
        std::lock_guard lock(g_spare_mutex);
        if (!g_spare.empty()) {
            *buffer = g_spare.back();
            g_spare.pop_back();
        } else {
            *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
        }
    }
    *size = *buffer != nullptr ? kBufferBytes : 0;
    *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    CUpti_Activity* record = nullptr;
    long kernels = 0;
    while (valid > 0 && g_api.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernels;
    }
    g_kernels.fetch_add(kernels, std::memory_order_relaxed);
    std::lock_guard lock(g_spare_mutex);
    if (g_spare.size() < 8) g_spare.push_back(buffer);
    else std::free(buffer);
}

template <typename Fn>
bool resolve(void* library, const char* name, Fn& out) {
    out = reinterpret_cast<Fn>(dlsym(library, name));
    return out != nullptr;
}

}  // namespace

bool start_minimal_cupti_tracer() {
    const char* wanted = std::getenv("TBD_BENCH_CUPTI_ALONE");
    if (wanted == nullptr || std::strcmp(wanted, "1") != 0) return false;
    void* library = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr || !resolve(library, "cuptiActivityRegisterCallbacks", g_api.register_callbacks) ||
        !resolve(library, "cuptiActivityEnable", g_api.enable) ||
        !resolve(library, "cuptiActivityFlushAll", g_api.flush_all) ||
        !resolve(library, "cuptiActivityGetNextRecord", g_api.next_record)) {
        std::fprintf(stderr, "cupti_alone: libcupti.so.13 not usable\n");
        return false;
    }
    if (g_api.register_callbacks(requested, completed) != CUPTI_SUCCESS ||
        g_api.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        std::fprintf(stderr, "cupti_alone: CUPTI refused\n");
        return false;
    }
    return true;
}

void stop_minimal_cupti_tracer() {
    if (g_api.flush_all == nullptr) return;
    g_api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::fprintf(stderr, "cupti_alone kernels=%ld\n", g_kernels.load());
}
