#include "timeline.h"

#include "runtime_calls.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <mutex>

namespace tbdsim::driver {

uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void wait_until_ns(uint64_t t) {
    timespec ts;
    ts.tv_sec = static_cast<time_t>(t / 1000000000ull);
    ts.tv_nsec = static_cast<long>(t % 1000000000ull);
    while (now_ns() < t) {
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
        if (rc != 0 && rc != EINTR) break;
    }
}

// --- cost model -----------------------------------------------------------------------------------

namespace {
constexpr uint64_t kMinKernelNs = 2000;      // smallest kernel a real GPU reports, roughly
constexpr uint64_t kKernelBaseNs = 1500;     // fixed cost of an unannotated kernel
constexpr uint64_t kWaveNs = 600;            // one full wave of thread blocks over all SMs
constexpr uint64_t kThreadsPerSm = 2048;
constexpr uint64_t kMaxBlocksPerSm = 32;
constexpr uint64_t kCopyBaseNs = 1200;
constexpr uint64_t kMemsetBaseNs = 1000;
constexpr double kHostCopyBandwidth = 10e9;

double peak_for(const GpuModel& m, uint32_t precision) {
    double fp32 = m.fp32_peak_flops();
    switch (precision) {
    case TBDSIM_PRECISION_TF32: return fp32 * m.tensor_tf32_ratio;
    case TBDSIM_PRECISION_FP16:
    case TBDSIM_PRECISION_BF16: return fp32 * m.tensor_fp16_ratio;
    case TBDSIM_PRECISION_FP64: return fp32 * m.fp64_ratio;
    default: return fp32;
    }
}
}  // namespace

uint64_t kernel_duration_ns(const Device& device, const uint32_t grid[3], const uint32_t block[3],
                            const KernelCost& cost) {
    const GpuModel& m = *device.model;
    if (cost.flops > 0 || cost.bytes > 0) {
        // A roofline: compute-bound or bandwidth-bound, whichever is slower.
        const double seconds = std::max(cost.flops / peak_for(m, cost.precision), cost.bytes / m.memory_bandwidth);
        return std::max<uint64_t>(kMinKernelNs, static_cast<uint64_t>(std::llround(seconds * 1e9)));
    }
    uint64_t blocks = uint64_t(grid[0]) * grid[1] * grid[2];
    uint64_t threads_per_block = std::max<uint64_t>(1, uint64_t(block[0]) * block[1] * block[2]);
    uint64_t blocks_per_sm = std::clamp<uint64_t>(kThreadsPerSm / threads_per_block, 1, kMaxBlocksPerSm);
    uint64_t per_wave = blocks_per_sm * uint64_t(m.sm_count);
    uint64_t waves = (blocks + per_wave - 1) / per_wave;
    return std::max<uint64_t>(kMinKernelNs, kKernelBaseNs + waves * kWaveNs);
}

uint64_t copy_duration_ns(const Device& device, TbdsimCopyKind kind, uint64_t bytes) {
    const GpuModel& m = *device.model;
    double bandwidth = kind == TBDSIM_COPY_DTOD   ? m.memory_bandwidth / 2  // read + write
                       : kind == TBDSIM_COPY_HTOH ? kHostCopyBandwidth
                                                  : m.pcie_bandwidth;
    return kCopyBaseNs + static_cast<uint64_t>(std::llround(double(bytes) / bandwidth * 1e9));
}

uint64_t memset_duration_ns(const Device& device, uint64_t bytes) {
    return kMemsetBaseNs +
           static_cast<uint64_t>(std::llround(double(bytes) / device.model->memory_bandwidth * 1e9));
}

// --- stream ordering ------------------------------------------------------------------------------

namespace {
bool is_blocking(const Stream& s) { return !s.legacy && !(s.flags & CU_STREAM_NON_BLOCKING); }
}  // namespace

uint64_t stream_ready_ns(const Stream& stream) {
    uint64_t ready = stream.ready_ns;
    const Context& ctx = *stream.context;
    if (stream.legacy) {
        // Work on the legacy stream waits for all earlier work on blocking streams.
        for (const Stream* s : ctx.streams)
            if (is_blocking(*s)) ready = std::max(ready, s->ready_ns);
    } else if (is_blocking(stream)) {
        // Work on a blocking stream waits for earlier work on the legacy stream.
        ready = std::max(ready, ctx.legacy_stream.ready_ns);
    }
    return ready;
}

uint64_t stream_done_ns(const Stream& stream) { return stream_ready_ns(stream); }

uint64_t context_done_ns(const Context& context) {
    uint64_t done = context.legacy_stream.ready_ns;
    for (const Stream* s : context.streams) done = std::max(done, s->ready_ns);
    return done;
}

std::pair<uint64_t, uint64_t> place_work(Stream& stream, uint64_t duration_ns) {
    uint64_t start = std::max(now_ns() + kLaunchLatencyNs, stream_ready_ns(stream));
    uint64_t end = start + duration_ns;
    stream.ready_ns = end;
    return {start, end};
}

std::pair<uint64_t, uint64_t> place_kernel(Stream& stream, const uint32_t grid[3], const uint32_t block[3],
                                           const KernelCost& cost) {
    return place_work(stream, kernel_duration_ns(*stream.context->device, grid, block, cost));
}

std::pair<uint64_t, uint64_t> start_collective(Stream& stream, const KernelCost& cost) {
    const uint64_t start = std::max({cost.arrival_ns, now_ns() + kLaunchLatencyNs, stream_ready_ns(stream)});
    stream.ready_ns = start + kMinKernelNs;
    return {start, start + kMinKernelNs};
}

uint64_t finish_collective(Stream& stream, uint64_t start_ns, uint64_t end_ns) {
    const uint64_t end = std::max(end_ns, start_ns + kMinKernelNs);
    stream.ready_ns = std::max(stream.ready_ns, end);
    return end;
}

uint32_t next_correlation_id() {
    static std::atomic<uint32_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

// --- record sinks and the private API -------------------------------------------------------------

namespace {
struct SinkSlot {
    std::atomic<TbdsimRecordSink> sink{nullptr};
    std::atomic<void*> user{nullptr};
};
std::array<SinkSlot, 8> g_sinks;

thread_local KernelCost t_annotation;

void api_annotate(double flops, uint32_t precision) {
    t_annotation = {flops, precision, 0};
}

void api_annotate_roofline(double flops, uint32_t precision, double bytes) {
    t_annotation = {flops, precision, bytes};
}

void api_annotate_collective(uint64_t arrival_ns, uint64_t (*resolve_end)(uint64_t, void*), void* user) {
    t_annotation = {};
    t_annotation.arrival_ns = arrival_ns;
    t_annotation.resolve_end = resolve_end;
    t_annotation.resolve_user = user;
}

CUresult api_stream_ready_at(CUstream handle, uint64_t* ready_ns) {
    if (ready_ns == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *ready_ns = 0;
    std::lock_guard lock(state().mutex);
    Stream* stream = resolve_stream(handle, false);
    if (stream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *ready_ns = std::max(now_ns() + kLaunchLatencyNs, stream_ready_ns(*stream));
    return CUDA_SUCCESS;
}

std::mutex g_sink_mutex;  // adders only: a slot's user is written only while the slot is free

int api_add_sink(TbdsimRecordSink sink, void* user) {
    std::lock_guard lock(g_sink_mutex);
    for (size_t i = 0; i < g_sinks.size(); ++i) {
        // Never touch a taken slot's user: its sink would be called with ours (a second subscriber,
        // such as CUPTI's range profiler next to its Activity API, used to overwrite slot 0's user).
        if (g_sinks[i].sink.load() != nullptr) continue;
        g_sinks[i].user.store(user);
        g_sinks[i].sink.store(sink);
        return static_cast<int>(i);
    }
    return -1;
}

void api_remove_sink(int slot) {
    if (slot >= 0 && slot < static_cast<int>(g_sinks.size())) g_sinks[size_t(slot)].sink.store(nullptr);
}

uint64_t api_device_idle_at() {
    std::lock_guard lock(state().mutex);
    uint64_t idle = 0;
    for (const auto& ctx : state().contexts) idle = std::max(idle, context_done_ns(*ctx));
    return idle;
}
}  // namespace

KernelCost take_launch_annotation() {
    KernelCost cost = t_annotation;
    t_annotation = {};
    return cost;
}

void publish(const TbdsimRecord& record) {
    truth_write(record);
    for (auto& slot : g_sinks) {
        TbdsimRecordSink sink = slot.sink.load();
        if (sink) sink(&record, slot.user.load());
    }
}

const TbdsimPrivateApi* private_api() {
    static const TbdsimPrivateApi api = {sizeof(TbdsimPrivateApi),
                                         now_ns,
                                         api_annotate,
                                         api_add_sink,
                                         api_remove_sink,
                                         api_device_idle_at,
                                         api_annotate_roofline,
                                         api_stream_ready_at,
                                         api_annotate_collective,
                                         runtime_call_boundary,
                                         add_runtime_call_listener};
    return &api;
}

}  // namespace tbdsim::driver
