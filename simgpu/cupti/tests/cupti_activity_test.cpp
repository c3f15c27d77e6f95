// CUPTI Activity API of the simulated GPU, used the way a profiler uses it, by a program linked
// against the real libcupti and run with the simulated libraries first on LD_LIBRARY_PATH.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "loaded_library.h"
#include "simulated_driver.h"

using tbdsim::testing::SimulatedDriver;

extern "C" const unsigned char tbdsim_cupti_test_fatbin[];

namespace {

// ---- the client side of the buffer protocol ----

struct Delivered {
    std::mutex mutex;
    std::vector<std::vector<uint8_t>> records;  // one copy per record, in delivery order
    int buffers = 0;
    int empty_buffers = 0;
};
Delivered delivered;
size_t requested_buffer_bytes = 64 * 1024;
bool refuse_buffers = false;

void CUPTIAPI request_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
    *max_records = 0;
    if (refuse_buffers) {
        *buffer = nullptr;
        *size = 0;
        return;
    }
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, requested_buffer_bytes));
    *size = requested_buffer_bytes;
}

void CUPTIAPI complete_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
    std::vector<std::vector<uint8_t>> records;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
        const auto* bytes = reinterpret_cast<const uint8_t*>(record);
        size_t size = 0;
        switch (record->kind) {
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: size = sizeof(CUpti_ActivityKernel10); break;
            case CUPTI_ACTIVITY_KIND_MEMCPY: size = sizeof(CUpti_ActivityMemcpy6); break;
            case CUPTI_ACTIVITY_KIND_MEMSET: size = sizeof(CUpti_ActivityMemset4); break;
            case CUPTI_ACTIVITY_KIND_MEMORY2: size = sizeof(CUpti_ActivityMemory4); break;
            case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: size = sizeof(CUpti_ActivityExternalCorrelation); break;
            case CUPTI_ACTIVITY_KIND_RUNTIME:
            case CUPTI_ACTIVITY_KIND_DRIVER:
                size = sizeof(CUpti_ActivityAPI);
                break;
            default: size = sizeof(CUpti_Activity); break;
        }
        records.emplace_back(bytes, bytes + size);
    }
    std::free(buffer);
    std::lock_guard lock(delivered.mutex);
    ++delivered.buffers;
    if (valid_size == 0) ++delivered.empty_buffers;
    for (auto& r : records) delivered.records.push_back(std::move(r));
}

// Flushes everything and takes the records delivered so far.
std::vector<std::vector<uint8_t>> take_records() {
    REQUIRE(SimulatedDriver::instance().ctx_synchronize(nullptr) == CUDA_SUCCESS);
    REQUIRE(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
    std::lock_guard lock(delivered.mutex);
    std::vector<std::vector<uint8_t>> taken;
    taken.swap(delivered.records);
    return taken;
}

template <typename Record>
std::vector<Record> of_kind(const std::vector<std::vector<uint8_t>>& records, CUpti_ActivityKind kind) {
    std::vector<Record> selected;
    for (const auto& bytes : records) {
        CUpti_ActivityKind record_kind;
        std::memcpy(&record_kind, bytes.data(), sizeof record_kind);
        if (record_kind != kind) continue;
        REQUIRE(bytes.size() == sizeof(Record));
        Record record;
        std::memcpy(&record, bytes.data(), sizeof record);
        selected.push_back(record);
    }
    return selected;
}

CUpti_ActivityKind kind_of(const std::vector<uint8_t>& bytes) {
    CUpti_ActivityKind kind;
    std::memcpy(&kind, bytes.data(), sizeof kind);
    return kind;
}

// ---- work for the simulated GPU ----

CUfunction scale_kernel() {
    static CUfunction function = [] {
        auto& driver = SimulatedDriver::instance();
        CUmodule module = nullptr;
        REQUIRE(driver.module_load_data(&module, tbdsim_cupti_test_fatbin) == CUDA_SUCCESS);
        CUfunction f = nullptr;
        REQUIRE(driver.module_get_function(&f, module, "_Z12scale_kernelPffi") == CUDA_SUCCESS);
        return f;
    }();
    return function;
}

void launch_scale(CUstream stream, CUdeviceptr values, int count) {
    float factor = 2.0f;
    void* arguments[] = {&values, &factor, &count};
    REQUIRE(SimulatedDriver::instance().launch_kernel(scale_kernel(), static_cast<unsigned>((count + 255) / 256), 1,
                                                      1, 256, 1, 1, 0, stream, arguments, nullptr) == CUDA_SUCCESS);
}

const CUpti_ActivityKind kWorkKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MEMORY2,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

}  // namespace

TEST_CASE("the simulated libcupti is the one loaded") {
    CHECK(tbdsim::test::loaded_from_simulated(reinterpret_cast<void*>(&cuptiActivityEnable), "libcupti.so"));
}

TEST_CASE("argument checks, versions and result strings") {
    SimulatedDriver::instance();
    // Before cuptiActivityRegisterCallbacks a flush has nowhere to go.
    CHECK(cuptiActivityFlushAll(0) == CUPTI_ERROR_INVALID_OPERATION);
    CHECK(cuptiActivityRegisterCallbacks(nullptr, complete_buffer) == CUPTI_ERROR_INVALID_PARAMETER);
    CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_INVALID) == CUPTI_ERROR_INVALID_KIND);
    CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_COUNT) == CUPTI_ERROR_INVALID_KIND);
    CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OPENACC_DATA) == CUPTI_ERROR_NOT_SUPPORTED);
    CHECK(cuptiActivityGetNumDroppedRecords(nullptr, 0, nullptr) == CUPTI_ERROR_INVALID_PARAMETER);
    CHECK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, nullptr) ==
          CUPTI_ERROR_QUEUE_EMPTY);
    CHECK(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1) ==
          CUPTI_ERROR_INVALID_PARAMETER);
    uint32_t version = 0;
    CHECK(cuptiGetVersion(&version) == CUPTI_SUCCESS);
    CHECK(version == CUPTI_API_VERSION);
    const char* text = nullptr;
    CHECK(cuptiGetResultString(CUPTI_ERROR_INVALID_KIND, &text) == CUPTI_SUCCESS);
    CHECK(std::string(text) == "CUPTI_ERROR_INVALID_KIND");
    uint8_t empty[8] = {};
    CUpti_Activity* record = nullptr;
    CHECK(cuptiActivityGetNextRecord(empty, 0, &record) == CUPTI_ERROR_MAX_LIMIT_REACHED);
    uint64_t before = 0, after = 0;
    CHECK(cuptiGetTimestamp(&before) == CUPTI_SUCCESS);
    CHECK(cuptiGetTimestamp(&after) == CUPTI_SUCCESS);
    CHECK(before <= after);
}

TEST_CASE("kernels, copies, sets and allocations become activity records") {
    auto& driver = SimulatedDriver::instance();
    REQUIRE(cuptiActivityRegisterCallbacks(request_buffer, complete_buffer) == CUPTI_SUCCESS);
    for (CUpti_ActivityKind kind : kWorkKinds) REQUIRE(cuptiActivityEnable(kind) == CUPTI_SUCCESS);
    take_records();

    constexpr int kCount = 1 << 20;
    constexpr size_t kBytes = sizeof(float) * kCount;
    CUstream stream = nullptr;
    REQUIRE(driver.stream_create(&stream, 0) == CUDA_SUCCESS);
    uint32_t stream_id = 0;
    CUcontext context = nullptr;
    REQUIRE(driver.ctx_get_current(&context) == CUDA_SUCCESS);
    REQUIRE(cuptiGetStreamId(context, stream, &stream_id) == CUPTI_SUCCESS);
    uint32_t context_id = 0;
    REQUIRE(cuptiGetContextId(context, &context_id) == CUPTI_SUCCESS);

    uint64_t before = 0;
    REQUIRE(cuptiGetTimestamp(&before) == CUPTI_SUCCESS);
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, kBytes) == CUDA_SUCCESS);
    void* pinned = nullptr;
    REQUIRE(driver.mem_alloc_host(&pinned, kBytes) == CUDA_SUCCESS);
    std::vector<float> pageable(kCount, 1.0f);
    REQUIRE(driver.memcpy_htod(device, pageable.data(), kBytes) == CUDA_SUCCESS);
    REQUIRE(driver.memset_d8_async(device, 0x7f, kBytes, stream) == CUDA_SUCCESS);
    launch_scale(stream, device, kCount);
    REQUIRE(driver.memcpy_dtoh_async(pinned, device, kBytes, stream) == CUDA_SUCCESS);
    REQUIRE(driver.stream_synchronize(stream) == CUDA_SUCCESS);
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
    REQUIRE(driver.mem_free_host(pinned) == CUDA_SUCCESS);
    const auto records = take_records();

    const auto kernels = of_kind<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    REQUIRE(kernels.size() == 1);
    const CUpti_ActivityKernel10& kernel = kernels[0];
    CHECK(std::string(kernel.name) == "_Z12scale_kernelPffi");
    CHECK(kernel.gridX == kCount / 256);
    CHECK(kernel.blockX == 256);
    CHECK(kernel.streamId == stream_id);
    CHECK(kernel.contextId == context_id);
    CHECK(kernel.start >= before);
    CHECK(kernel.start < kernel.end);

    const auto copies = of_kind<CUpti_ActivityMemcpy6>(records, CUPTI_ACTIVITY_KIND_MEMCPY);
    REQUIRE(copies.size() == 2);
    CHECK(copies[0].copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    CHECK(copies[0].srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
    CHECK(copies[0].dstKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    CHECK((copies[0].flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) == 0);
    CHECK(copies[0].bytes == kBytes);
    CHECK(copies[1].copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    CHECK(copies[1].srcKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    CHECK(copies[1].dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    CHECK((copies[1].flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0);
    CHECK(copies[1].streamId == stream_id);
    CHECK(copies[1].start >= kernel.end);  // same stream: in order
    for (const auto& copy : copies) CHECK(copy.start < copy.end);

    const auto sets = of_kind<CUpti_ActivityMemset4>(records, CUPTI_ACTIVITY_KIND_MEMSET);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].value == 0x7f);
    CHECK(sets[0].bytes == kBytes);
    CHECK(sets[0].streamId == stream_id);
    CHECK(sets[0].end <= kernel.start);

    const auto memory = of_kind<CUpti_ActivityMemory4>(records, CUPTI_ACTIVITY_KIND_MEMORY2);
    REQUIRE(memory.size() == 4);  // two allocations, two releases
    CHECK(memory[0].memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
    CHECK(memory[0].memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    CHECK(memory[0].address == device);
    CHECK(memory[0].bytes == kBytes);
    CHECK(memory[1].memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    CHECK(memory[2].memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
    CHECK(memory[2].address == device);

    // Every piece of work has its own correlation id.
    std::set<uint32_t> correlation_ids{kernel.correlationId, copies[0].correlationId, copies[1].correlationId,
                                       sets[0].correlationId};
    CHECK(correlation_ids.size() == 4);
    CHECK(correlation_ids.count(0) == 0);
    driver.stream_destroy(stream);
}

TEST_CASE("external correlation ids pair with the work enqueued while pushed") {
    auto& driver = SimulatedDriver::instance();
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, 4096) == CUDA_SUCCESS);
    take_records();
    REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42) == CUPTI_SUCCESS);
    launch_scale(nullptr, device, 1024);
    uint64_t popped = 0;
    REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped) == CUPTI_SUCCESS);
    CHECK(popped == 42);
    launch_scale(nullptr, device, 1024);
    const auto records = take_records();

    const auto kernels = of_kind<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    const auto correlations =
        of_kind<CUpti_ActivityExternalCorrelation>(records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    REQUIRE(kernels.size() == 2);
    REQUIRE(correlations.size() == 1);
    CHECK(correlations[0].externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    CHECK(correlations[0].externalId == 42);
    CHECK(correlations[0].correlationId == kernels[0].correlationId);
    // It precedes the record it describes.
    REQUIRE(records.size() >= 2);
    CHECK(kind_of(records[0]) == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
    take_records();
}

TEST_CASE("external correlation records come only with API records, in front of them") {
    auto& driver = SimulatedDriver::instance();
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, 4096) == CUDA_SUCCESS);
    take_records();
    // cupti_activity.h: "the activity API record will be preceded by a CUpti_ActivityExternalCorrelation
    // record": with neither API kind enabled, real CUPTI writes none.
    REQUIRE(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER) == CUPTI_SUCCESS);
    REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 5) == CUPTI_SUCCESS);
    launch_scale(nullptr, device, 1024);
    auto records = take_records();
    CHECK(of_kind<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size() == 1);
    CHECK(of_kind<CUpti_ActivityExternalCorrelation>(records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION).empty());
    // Work enqueued through the driver directly has no runtime call: the RUNTIME kind alone brings none.
    REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS);
    launch_scale(nullptr, device, 1024);
    records = take_records();
    CHECK(of_kind<CUpti_ActivityExternalCorrelation>(records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION).empty());
    REQUIRE(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS);
    // The DRIVER kind: the API record follows its correlation and carries the kernel's id.
    REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER) == CUPTI_SUCCESS);
    launch_scale(nullptr, device, 1024);
    records = take_records();
    const auto kernels = of_kind<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    const auto calls = of_kind<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_DRIVER);
    const auto correlations =
        of_kind<CUpti_ActivityExternalCorrelation>(records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    REQUIRE(kernels.size() == 1);
    REQUIRE(calls.size() == 1);
    REQUIRE(correlations.size() == 1);
    CHECK(correlations[0].externalId == 5);
    CHECK(correlations[0].correlationId == kernels[0].correlationId);
    CHECK(calls[0].correlationId == kernels[0].correlationId);
    REQUIRE(records.size() == 3);
    CHECK(kind_of(records[0]) == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    CHECK(kind_of(records[1]) == CUPTI_ACTIVITY_KIND_DRIVER);
    uint64_t popped = 0;
    REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped) == CUPTI_SUCCESS);
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
    take_records();
}

TEST_CASE("work enqueued through the runtime: its RUNTIME record follows the DRIVER one, with one id") {
    // The simulated runtime, found on LD_LIBRARY_PATH as the driver is.
    void* cudart = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    REQUIRE(cudart != nullptr);
    const auto device_malloc = reinterpret_cast<decltype(&cudaMalloc)>(dlsym(cudart, "cudaMalloc"));
    const auto device_memset = reinterpret_cast<decltype(&cudaMemset)>(dlsym(cudart, "cudaMemset"));
    const auto device_free = reinterpret_cast<decltype(&cudaFree)>(dlsym(cudart, "cudaFree"));
    REQUIRE((device_malloc != nullptr && device_memset != nullptr && device_free != nullptr));
    void* device = nullptr;
    REQUIRE(device_malloc(&device, 4096) == cudaSuccess);
    take_records();
    REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS);  // DRIVER is on (kWorkKinds)
    REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 7) == CUPTI_SUCCESS);
    REQUIRE(device_memset(device, 0, 4096) == cudaSuccess);
    auto records = take_records();
    const auto sets = of_kind<CUpti_ActivityMemset4>(records, CUPTI_ACTIVITY_KIND_MEMSET);
    const auto driver_calls = of_kind<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_DRIVER);
    const auto runtime_calls = of_kind<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_RUNTIME);
    const auto correlations =
        of_kind<CUpti_ActivityExternalCorrelation>(records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    REQUIRE(sets.size() == 1);
    REQUIRE(driver_calls.size() == 1);
    REQUIRE(runtime_calls.size() == 1);
    REQUIRE(correlations.size() == 2);  // one in front of each API record
    // "identical to the correlation ID in the driver and runtime API activity record" (cupti_activity.h)
    CHECK(driver_calls[0].correlationId == sets[0].correlationId);
    CHECK(runtime_calls[0].correlationId == sets[0].correlationId);
    CHECK(runtime_calls[0].start <= driver_calls[0].start);  // the runtime call began first ...
    int driver_at = -1, runtime_at = -1;
    for (int i = 0; i < static_cast<int>(records.size()); ++i) {
        if (kind_of(records[i]) == CUPTI_ACTIVITY_KIND_DRIVER) driver_at = i;
        if (kind_of(records[i]) == CUPTI_ACTIVITY_KIND_RUNTIME) runtime_at = i;
    }
    CHECK(driver_at < runtime_at);  // ... and ended last
    for (const auto& c : correlations) {
        CHECK(c.externalId == 7);
        CHECK(c.correlationId == sets[0].correlationId);
    }
    // Work a program enqueues through the driver directly has no runtime call around it.
    launch_scale(nullptr, reinterpret_cast<CUdeviceptr>(device), 1024);
    records = take_records();
    CHECK(of_kind<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_RUNTIME).empty());
    CHECK(of_kind<CUpti_ActivityAPI>(records, CUPTI_ACTIVITY_KIND_DRIVER).size() == 1);
    uint64_t popped = 0;
    REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped) == CUPTI_SUCCESS);
    REQUIRE(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS);
    REQUIRE(device_free(device) == cudaSuccess);
    take_records();
}

TEST_CASE("nested external ids: the innermost of each kind describes the work, pops unwind in order") {
    auto& driver = SimulatedDriver::instance();
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, 4096) == CUDA_SUCCESS);
    take_records();
    const auto custom0 = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    const auto custom1 = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
    REQUIRE(cuptiActivityPushExternalCorrelationId(custom0, 1) == CUPTI_SUCCESS);
    REQUIRE(cuptiActivityPushExternalCorrelationId(custom0, 2) == CUPTI_SUCCESS);
    REQUIRE(cuptiActivityPushExternalCorrelationId(custom0, 3) == CUPTI_SUCCESS);
    REQUIRE(cuptiActivityPushExternalCorrelationId(custom1, 7) == CUPTI_SUCCESS);
    launch_scale(nullptr, device, 1024);  // custom0 -> 3, custom1 -> 7
    uint64_t popped = 0;
    REQUIRE(cuptiActivityPopExternalCorrelationId(custom0, &popped) == CUPTI_SUCCESS);
    CHECK(popped == 3);
    REQUIRE(cuptiActivityPopExternalCorrelationId(custom1, &popped) == CUPTI_SUCCESS);
    CHECK(popped == 7);
    launch_scale(nullptr, device, 1024);  // custom0 -> 2 only
    REQUIRE(cuptiActivityPopExternalCorrelationId(custom0, &popped) == CUPTI_SUCCESS);
    CHECK(popped == 2);
    REQUIRE(cuptiActivityPopExternalCorrelationId(custom0, &popped) == CUPTI_SUCCESS);
    CHECK(popped == 1);
    CHECK(cuptiActivityPopExternalCorrelationId(custom0, &popped) == CUPTI_ERROR_QUEUE_EMPTY);
    CHECK(cuptiActivityPopExternalCorrelationId(custom1, &popped) == CUPTI_ERROR_QUEUE_EMPTY);
    launch_scale(nullptr, device, 1024);  // nothing pushed
    const auto records = take_records();

    const auto kernels = of_kind<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    const auto correlations =
        of_kind<CUpti_ActivityExternalCorrelation>(records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    REQUIRE(kernels.size() == 3);
    REQUIRE(correlations.size() == 3);
    CHECK(correlations[0].externalKind == custom0);
    CHECK(correlations[0].externalId == 3);
    CHECK(correlations[0].correlationId == kernels[0].correlationId);
    CHECK(correlations[1].externalKind == custom1);
    CHECK(correlations[1].externalId == 7);
    CHECK(correlations[1].correlationId == kernels[0].correlationId);
    CHECK(correlations[2].externalKind == custom0);
    CHECK(correlations[2].externalId == 2);
    CHECK(correlations[2].correlationId == kernels[1].correlationId);
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
    take_records();
}

TEST_CASE("records without a buffer are dropped and counted") {
    auto& driver = SimulatedDriver::instance();
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, 4096) == CUDA_SUCCESS);
    take_records();  // also returns the current buffer, so the next record needs a new one
    size_t dropped = 0;
    REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
    refuse_buffers = true;
    for (int i = 0; i < 3; ++i) launch_scale(nullptr, device, 1024);
    refuse_buffers = false;
    CHECK(take_records().empty());
    REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
    CHECK(dropped == 6);  // per launch its driver API record and its kernel record
    REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
    CHECK(dropped == 0);  // reading resets the count
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
    take_records();
}

TEST_CASE("full buffers are handed back and the next records go to a new buffer") {
    auto& driver = SimulatedDriver::instance();
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, 4096) == CUDA_SUCCESS);
    take_records();
    REQUIRE(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2) == CUPTI_SUCCESS);
    int buffers_before = 0;
    {
        std::lock_guard lock(delivered.mutex);
        buffers_before = delivered.buffers;
    }
    requested_buffer_bytes = 2 * sizeof(CUpti_ActivityKernel10);
    for (int i = 0; i < 5; ++i) launch_scale(nullptr, device, 1024);
    const auto records = take_records();
    requested_buffer_bytes = 64 * 1024;
    CHECK(of_kind<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size() == 5);
    {
        std::lock_guard lock(delivered.mutex);
        CHECK(delivered.buffers - buffers_before >= 3);
    }
    REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2) == CUPTI_SUCCESS);
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
    take_records();
}

namespace {
uint64_t client_clock_ns() {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}
}  // namespace

TEST_CASE("with a timestamp callback, records are in the client's clock") {
    auto& driver = SimulatedDriver::instance();
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, 4096) == CUDA_SUCCESS);
    REQUIRE(cuptiActivityRegisterTimestampCallback(client_clock_ns) == CUPTI_SUCCESS);
    take_records();
    const uint64_t before = client_clock_ns();
    launch_scale(nullptr, device, 1024);
    const auto records = take_records();
    const uint64_t after = client_clock_ns();
    const auto kernels = of_kind<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    REQUIRE(kernels.size() == 1);
    // The kernel ran between the two readings, allowing for the fixed-offset translation's jitter.
    constexpr uint64_t kSlackNs = 1000000;
    CHECK(kernels[0].start + kSlackNs >= before);
    CHECK(kernels[0].end <= after + kSlackNs);
    uint64_t now = 0;
    REQUIRE(cuptiGetTimestamp(&now) == CUPTI_SUCCESS);
    CHECK(now >= after);
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
}

TEST_CASE("cuptiFinalize detaches; CUPTI can be used again afterwards") {
    auto& driver = SimulatedDriver::instance();
    REQUIRE(cuptiFinalize() == CUPTI_SUCCESS);
    CHECK(cuptiActivityFlushAll(0) == CUPTI_ERROR_INVALID_OPERATION);
    REQUIRE(cuptiActivityRegisterCallbacks(request_buffer, complete_buffer) == CUPTI_SUCCESS);
    REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, 4096) == CUDA_SUCCESS);
    take_records();
    launch_scale(nullptr, device, 1024);
    CHECK(of_kind<CUpti_ActivityKernel10>(take_records(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size() == 1);
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
}

TEST_CASE("a kernel record delivered after its module was unloaded still names the kernel") {
    // Tools flush CUPTI at exit, after libraries such as cuBLAS unloaded their modules; real CUPTI's
    // records name kernels with strings it owns, so the name must survive cuModuleUnload.
    auto& driver = SimulatedDriver::instance();
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(libcuda != nullptr);
    const auto module_unload = reinterpret_cast<decltype(&cuModuleUnload)>(dlsym(libcuda, "cuModuleUnload"));
    REQUIRE(reinterpret_cast<void*>(module_unload) != nullptr);
    CUdeviceptr device = 0;
    REQUIRE(driver.mem_alloc(&device, 4096) == CUDA_SUCCESS);
    take_records();
    CUmodule module = nullptr;
    REQUIRE(driver.module_load_data(&module, tbdsim_cupti_test_fatbin) == CUDA_SUCCESS);
    CUfunction f = nullptr;
    REQUIRE(driver.module_get_function(&f, module, "_Z12scale_kernelPffi") == CUDA_SUCCESS);
    float factor = 2.0f;
    int count = 1024;
    void* arguments[] = {&device, &factor, &count};
    REQUIRE(driver.launch_kernel(f, 4, 1, 1, 256, 1, 1, 0, nullptr, arguments, nullptr) == CUDA_SUCCESS);
    REQUIRE(driver.ctx_synchronize(nullptr) == CUDA_SUCCESS);
    REQUIRE(module_unload(module) == CUDA_SUCCESS);
    // Scribble over freed memory the way later allocations would, until the records are read.
    std::vector<std::vector<char>> scribbles;
    for (int i = 0; i < 64; ++i) scribbles.emplace_back(4096, '\x5a');
    const auto kernels = of_kind<CUpti_ActivityKernel10>(take_records(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    REQUIRE(kernels.size() == 1);
    REQUIRE(kernels[0].name != nullptr);
    CHECK(std::string(kernels[0].name) == "_Z12scale_kernelPffi");
    REQUIRE(driver.mem_free(device) == CUDA_SUCCESS);
    take_records();
    dlclose(libcuda);
}
