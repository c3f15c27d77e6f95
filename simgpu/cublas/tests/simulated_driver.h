// Test helper: the simulated driver reached with dlopen/dlsym, so test programs need no link-time
// dependency on libcuda (and cannot accidentally resolve a library's driver calls for it), plus a
// collector of the driver's ground-truth records (TbdsimRecord) through its private API.
#pragma once

#include <cuda.h>
#include <dlfcn.h>
#include <simgpu/private_api.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace tbdsim::testing {

struct SimulatedDriver {
    void* library = nullptr;
    decltype(&::cuInit) init = nullptr;
    decltype(&::cuDeviceGet) device_get = nullptr;
    decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
    decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
    decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
    decltype(&::cuMemAlloc) mem_alloc = nullptr;
    decltype(&::cuMemFree) mem_free = nullptr;
    decltype(&::cuMemAllocHost) mem_alloc_host = nullptr;
    decltype(&::cuMemFreeHost) mem_free_host = nullptr;
    decltype(&::cuMemcpyHtoD) memcpy_htod = nullptr;
    decltype(&::cuMemcpyDtoHAsync) memcpy_dtoh_async = nullptr;
    decltype(&::cuMemsetD8Async) memset_d8_async = nullptr;
    decltype(&::cuStreamCreate) stream_create = nullptr;
    decltype(&::cuStreamDestroy) stream_destroy = nullptr;
    decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
    decltype(&::cuStreamGetId) stream_get_id = nullptr;
    // CUDA 13 entry point: takes the context to synchronize (null: the current one).
    decltype(&::cuCtxSynchronize_v2) ctx_synchronize = nullptr;
    decltype(&::cuModuleLoadData) module_load_data = nullptr;
    decltype(&::cuModuleGetFunction) module_get_function = nullptr;
    decltype(&::cuLaunchKernel) launch_kernel = nullptr;
    const TbdsimPrivateApi* private_api = nullptr;

    using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    GetProcAddressFn get_proc_address = nullptr;

    // Plain API names; cuGetProcAddress picks the ABI version matching this toolkit's headers.
    template <typename Fn>
    void bind(Fn& out, const char* name) {
        void* pointer = nullptr;
        CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        if (get_proc_address(name, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
            pointer == nullptr) {
            std::fprintf(stderr, "simulated driver lacks %s\n", name);
            std::abort();
        }
        out = reinterpret_cast<Fn>(pointer);
    }

    // Loads libcuda.so.1 (the simulated one when LD_LIBRARY_PATH points at it) and makes device 0's
    // primary context current.
    static SimulatedDriver& instance() {
        static SimulatedDriver driver = [] {
            SimulatedDriver d;
            d.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
            if (d.library == nullptr) {
                std::fprintf(stderr, "cannot load libcuda.so.1: %s\n", dlerror());
                std::abort();
            }
            d.get_proc_address = reinterpret_cast<GetProcAddressFn>(dlsym(d.library, "cuGetProcAddress_v2"));
            if (d.get_proc_address == nullptr) {
                std::fprintf(stderr, "libcuda.so.1 has no cuGetProcAddress_v2\n");
                std::abort();
            }
            d.bind(d.init, "cuInit");
            d.bind(d.device_get, "cuDeviceGet");
            d.bind(d.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
            d.bind(d.ctx_set_current, "cuCtxSetCurrent");
            d.bind(d.ctx_get_current, "cuCtxGetCurrent");
            d.bind(d.mem_alloc, "cuMemAlloc");
            d.bind(d.mem_free, "cuMemFree");
            d.bind(d.mem_alloc_host, "cuMemAllocHost");
            d.bind(d.mem_free_host, "cuMemFreeHost");
            d.bind(d.memcpy_htod, "cuMemcpyHtoD");
            d.bind(d.memcpy_dtoh_async, "cuMemcpyDtoHAsync");
            d.bind(d.memset_d8_async, "cuMemsetD8Async");
            d.bind(d.stream_create, "cuStreamCreate");
            d.bind(d.stream_destroy, "cuStreamDestroy");
            d.bind(d.stream_synchronize, "cuStreamSynchronize");
            d.bind(d.stream_get_id, "cuStreamGetId");
            d.bind(d.ctx_synchronize, "cuCtxSynchronize");
            d.bind(d.module_load_data, "cuModuleLoadData");
            d.bind(d.module_get_function, "cuModuleGetFunction");
            d.bind(d.launch_kernel, "cuLaunchKernel");
            decltype(&::cuGetExportTable) get_export_table = nullptr;
            d.bind(get_export_table, "cuGetExportTable");
            const void* table = nullptr;
            if (get_export_table(&table, &TBDSIM_PRIVATE_API_ID) != CUDA_SUCCESS || table == nullptr) {
                std::fprintf(stderr, "the driver offers no private API\n");
                std::abort();
            }
            d.private_api = static_cast<const TbdsimPrivateApi*>(table);
            CUdevice device = 0;
            CUcontext context = nullptr;
            if (d.init(0) != CUDA_SUCCESS || d.device_get(&device, 0) != CUDA_SUCCESS ||
                d.primary_ctx_retain(&context, device) != CUDA_SUCCESS || d.ctx_set_current(context) != CUDA_SUCCESS) {
                std::fprintf(stderr, "cannot set up device 0\n");
                std::abort();
            }
            return d;
        }();
        return driver;
    }
};

// A copy of a TbdsimRecord that owns its kernel name.
struct CapturedRecord {
    TbdsimRecord record;
    std::string name;
};

// Collects the driver's records while alive.
class RecordCollector {
public:
    RecordCollector() {
        slot_ = SimulatedDriver::instance().private_api->add_record_sink(&RecordCollector::sink, this);
    }
    ~RecordCollector() { SimulatedDriver::instance().private_api->remove_record_sink(slot_); }
    RecordCollector(const RecordCollector&) = delete;
    RecordCollector& operator=(const RecordCollector&) = delete;

    std::vector<CapturedRecord> of_kind(TbdsimRecordKind kind) const {
        std::lock_guard lock(mutex_);
        std::vector<CapturedRecord> selected;
        for (const CapturedRecord& captured : records_) {
            if (captured.record.kind == static_cast<uint32_t>(kind)) selected.push_back(captured);
        }
        return selected;
    }

private:
    static void sink(const TbdsimRecord* record, void* user) {
        auto* self = static_cast<RecordCollector*>(user);
        std::lock_guard lock(self->mutex_);
        self->records_.push_back({*record, record->name != nullptr ? record->name : ""});
    }

    mutable std::mutex mutex_;
    std::vector<CapturedRecord> records_;
    int slot_ = -1;
};

}  // namespace tbdsim::testing
