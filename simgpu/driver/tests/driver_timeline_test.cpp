// The device timeline: stream order, the legacy stream's implicit synchronization, events, annotated
// work from libraries, host waits in wall-clock time, and many threads at once.
#include "driver_test_support.h"

#include <atomic>
#include <cstddef>
#include <ctime>
#include <map>
#include <thread>

extern "C" CUresult CUDAAPI cuStreamGetId_ptsz(CUstream, unsigned long long*);

namespace {
CUresult launch(CUstream stream, unsigned blocks = 64) {
    static float a = 1;
    static CUdeviceptr x = 0;
    static int n = 0;
    void* params[] = {&a, &x, &x, &n};
    return cuLaunchKernel(axpy_function(), blocks, 1, 1, 256, 1, 1, 0, stream, params, nullptr);
}
}  // namespace

TEST_CASE("work on one stream runs in order; the legacy stream waits for blocking streams") {
    use_primary_context();
    RecordLog log;
    CUstream blocking = nullptr, non_blocking = nullptr;
    CHECK_CU(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
    CHECK_CU(cuStreamCreate(&non_blocking, CU_STREAM_NON_BLOCKING));
    CHECK_CU(launch(blocking, 100000));  // long
    CHECK_CU(launch(nullptr));           // legacy: after the blocking stream's work
    CHECK_CU(launch(non_blocking));      // independent of both
    CHECK_CU(launch(blocking));          // after the legacy stream's work
    CHECK_CU(cuCtxSynchronize());
    auto k = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(k.size(), 4u);
    CHECK_GE(k[1].start_ns, k[0].end_ns);
    CHECK_LT(k[2].start_ns, k[0].end_ns);
    CHECK_GE(k[3].start_ns, k[1].end_ns);
    CHECK_CU(cuStreamDestroy(blocking));
    CHECK_CU(cuStreamDestroy(non_blocking));
    CHECK_EQ(cuStreamDestroy(blocking), CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("synchronization waits in wall-clock time until the work has ended") {
    use_primary_context();
    RecordLog log;
    CUstream s = nullptr;
    CHECK_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    // Annotated work: 2 * 4096^3 FLOPs at the H100 model's FP32 peak lasts about 2 ms.
    private_api().annotate_next_launch(2.0 * 4096.0 * 4096.0 * 4096.0, TBDSIM_PRECISION_FP32);
    CHECK_CU(launch(s));
    auto k = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(k.size(), 1u);
    double peak = 2.0 * 132 * 128 * 1.98e9;
    double expected_ns = 2.0 * 4096.0 * 4096.0 * 4096.0 / peak * 1e9;
    CHECK_EQ(double(k[0].end_ns - k[0].start_ns), doctest::Approx(expected_ns).epsilon(0.001));
    CHECK_EQ(k[0].precision, uint32_t(TBDSIM_PRECISION_FP32));
    check_query_against_end([&] { return cuStreamQuery(s); }, k[0].end_ns);
    CHECK_CU(cuStreamSynchronize(s));
    CHECK_GE(host_monotonic_ns(), k[0].end_ns);
    CHECK_CU(cuStreamQuery(s));
    // The annotation was consumed by that launch: the next one is timed from its grid.
    CHECK_CU(launch(s, 1));
    CHECK_EQ(log.records(TBDSIM_RECORD_KERNEL)[1].flops, 0.0);
    CHECK_CU(cuStreamSynchronize(s));
    CHECK_CU(cuStreamDestroy(s));
}

TEST_CASE("a roofline annotation times a kernel by its FLOPs or its bytes, whichever is slower") {
    use_primary_context();
    RecordLog log;
    CUstream s = nullptr;
    CHECK_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    REQUIRE_GE(private_api().struct_size, offsetof(TbdsimPrivateApi, annotate_next_launch_roofline) + sizeof(void*));
    // Bandwidth-bound: 48 MiB at the H100 model's 3.35 TB/s (15.0 us) outlasts 21 MFLOP (0.3 us).
    const double bytes = 48.0 * 1024 * 1024, small_flops = 21e6;
    private_api().annotate_next_launch_roofline(small_flops, TBDSIM_PRECISION_FP32, bytes);
    CHECK_CU(launch(s));
    // Compute-bound: 2 * 1024^3 FLOP (32 us) outlasts 1 MiB (0.3 us).
    const double big_flops = 2.0 * 1024 * 1024 * 1024;
    private_api().annotate_next_launch_roofline(big_flops, TBDSIM_PRECISION_FP32, 1024.0 * 1024);
    CHECK_CU(launch(s));
    // Bytes only (a copy-like kernel): no FLOPs recorded, still timed by its bytes.
    private_api().annotate_next_launch_roofline(0, TBDSIM_PRECISION_NONE, bytes);
    CHECK_CU(launch(s));
    CHECK_CU(cuStreamSynchronize(s));
    auto k = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(k.size(), 3u);
    const double peak = 2.0 * 132 * 128 * 1.98e9;
    CHECK_EQ(double(k[0].end_ns - k[0].start_ns), doctest::Approx(bytes / 3.35e12 * 1e9).epsilon(0.001));
    CHECK_EQ(k[0].flops, small_flops);
    CHECK_EQ(double(k[1].end_ns - k[1].start_ns), doctest::Approx(big_flops / peak * 1e9).epsilon(0.001));
    CHECK_EQ(double(k[2].end_ns - k[2].start_ns), doctest::Approx(bytes / 3.35e12 * 1e9).epsilon(0.001));
    CHECK_EQ(k[2].flops, 0.0);
    CHECK_CU(cuStreamDestroy(s));
}

TEST_CASE("events: record, wait, query, elapsed time") {
    use_primary_context();
    RecordLog log;
    CUstream a = nullptr, b = nullptr;
    CHECK_CU(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CUevent start = nullptr, stop = nullptr, untimed = nullptr;
    CHECK_CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK_CU(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    CHECK_CU(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
    CHECK_CU(cuEventQuery(stop));  // never recorded: complete
    CHECK_CU(cuEventRecord(start, a));
    CHECK_CU(launch(a, 200000));
    CHECK_CU(cuEventRecord(stop, a));
    const uint64_t long_kernel_end_ns = log.records(TBDSIM_RECORD_KERNEL).at(0).end_ns;
    check_query_against_end([&] { return cuEventQuery(stop); }, long_kernel_end_ns);
    float ms = 0;
    check_query_against_end([&] { return cuEventElapsedTime_v2(&ms, start, stop); }, long_kernel_end_ns);
    CHECK_CU(cuStreamWaitEvent(b, stop, 0));
    CHECK_CU(launch(b));
    CHECK_CU(cuEventSynchronize(stop));
    CHECK_CU(cuEventElapsedTime_v2(&ms, start, stop));
    auto k = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(k.size(), 2u);
    CHECK_EQ(double(ms), doctest::Approx(double(k[0].end_ns - k[0].start_ns) / 1e6).epsilon(0.01));
    CHECK_GE(k[1].start_ns, k[0].end_ns);  // b waited for the event
    CHECK_CU(cuEventRecord(untimed, a));
    CHECK_CU(cuCtxSynchronize());
    CHECK_EQ(cuEventElapsedTime_v2(&ms, start, untimed), CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cuEventDestroy(start));
    CHECK_EQ(cuEventQuery(start), CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cuEventDestroy(stop));
    CHECK_CU(cuEventDestroy(untimed));
    CHECK_CU(cuStreamDestroy(a));
    CHECK_CU(cuStreamDestroy(b));
}

TEST_CASE("eight threads with their own streams lose nothing and keep each stream in order") {
    CUcontext ctx = use_primary_context();
    RecordLog log;
    constexpr int kThreads = 8, kLaunches = 200;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    std::vector<uint32_t> ids(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS) ++failures;
            CUstream s = nullptr;
            if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) ++failures;
            unsigned long long id = 0;
            cuStreamGetId(s, &id);
            ids[size_t(t)] = static_cast<uint32_t>(id);
            for (int i = 0; i < kLaunches; ++i)
                if (launch(s, 1) != CUDA_SUCCESS) ++failures;
            if (cuStreamSynchronize(s) != CUDA_SUCCESS) ++failures;
            if (cuStreamDestroy(s) != CUDA_SUCCESS) ++failures;
        });
    }
    for (auto& th : threads) th.join();
    CHECK_EQ(failures.load(), 0);
    auto k = log.records(TBDSIM_RECORD_KERNEL);
    CHECK_EQ(k.size(), size_t(kThreads * kLaunches));
    std::map<uint32_t, uint64_t> last_end;
    std::map<uint32_t, int> count;
    bool ordered = true;
    for (const auto& r : k) {
        ordered &= r.start_ns >= last_end[r.stream_id];
        last_end[r.stream_id] = r.end_ns;
        ++count[r.stream_id];
    }
    CHECK(ordered);
    for (uint32_t id : ids) CHECK_EQ(count[id], kLaunches);
}

TEST_CASE("per-thread default streams are distinct per thread") {
    CUcontext ctx = use_primary_context();
    unsigned long long main_id = 0, other_id = 0;
    CHECK_CU(cuStreamGetId(CU_STREAM_PER_THREAD, &main_id));
    std::thread([&] {
        cuCtxSetCurrent(ctx);
        cuStreamGetId(CU_STREAM_PER_THREAD, &other_id);
    }).join();
    unsigned long long legacy_id = 0;
    CHECK_CU(cuStreamGetId(nullptr, &legacy_id));
    CHECK_EQ(legacy_id, 7u);
    CHECK_NE(main_id, other_id);
    CHECK_NE(main_id, legacy_id);
    unsigned long long ptsz_null = 0;
    CHECK_CU(cuStreamGetId_ptsz(nullptr, &ptsz_null));
    CHECK_EQ(ptsz_null, main_id);
}
