// The device timeline: places work on streams following CUDA's ordering rules, gives it a duration
// from the cost model, and tells the record sinks (CUPTI) and the ground-truth file about it.
#pragma once

#include "driver_state.h"

#include <simgpu/private_api.h>

namespace tbdsim::driver {

uint64_t now_ns();                  // CLOCK_MONOTONIC in ns: the device and host clock
void wait_until_ns(uint64_t t);     // sleeps in wall-clock time until now_ns() >= t

// Cost model (documented in docs/simgpu.md).
struct KernelCost {
    double flops = 0;
    uint32_t precision = TBDSIM_PRECISION_NONE;
    double bytes = 0;  // device-memory traffic, when the library said (annotate_next_launch_roofline)
    // A collective (annotate_next_launch_collective): starts at its arrival, ends when resolve_end says.
    uint64_t arrival_ns = 0;
    uint64_t (*resolve_end)(uint64_t start_ns, void* user) = nullptr;
    void* resolve_user = nullptr;
};
uint64_t kernel_duration_ns(const Device& device, const uint32_t grid[3], const uint32_t block[3],
                            const KernelCost& cost);
uint64_t copy_duration_ns(const Device& device, TbdsimCopyKind kind, uint64_t bytes);
uint64_t memset_duration_ns(const Device& device, uint64_t bytes);
constexpr uint64_t kLaunchLatencyNs = 4000;  // host enqueue to earliest device start

// The earliest device time work on `stream` may start, given stream order and the legacy default
// stream's implicit synchronization with blocking streams. Caller holds the state mutex.
uint64_t stream_ready_ns(const Stream& stream);
// Device time when everything enqueued on `stream` (including implied dependencies) has finished.
uint64_t stream_done_ns(const Stream& stream);
// Device time when everything enqueued in `context` has finished.
uint64_t context_done_ns(const Context& context);

// Places a work item of `duration` on `stream` and returns its [start, end). Caller holds the mutex.
std::pair<uint64_t, uint64_t> place_work(Stream& stream, uint64_t duration_ns);
// Places a kernel of `cost` on `stream` for its modelled duration.
std::pair<uint64_t, uint64_t> place_kernel(Stream& stream, const uint32_t grid[3], const uint32_t block[3],
                                           const KernelCost& cost);
// A collective in two steps: its start (max of its arrival and the stream's readiness; the stream is
// busy from then), and, once the caller's resolver has the end, the end (at least the smallest kernel
// duration after the start; the stream is busy until then). Caller holds the mutex for each.
std::pair<uint64_t, uint64_t> start_collective(Stream& stream, const KernelCost& cost);
uint64_t finish_collective(Stream& stream, uint64_t start_ns, uint64_t end_ns);

// Correlation ids are process-wide and never reused.
uint32_t next_correlation_id();

// Hands a finished record to the sinks and the truth file. Call WITHOUT the state mutex held: sinks
// may call back into the driver.
void publish(const TbdsimRecord& record);

// The private API table handed out by cuGetExportTable.
const TbdsimPrivateApi* private_api();
// Takes the annotation left by annotate_next_launch on this thread (and clears it).
KernelCost take_launch_annotation();

// Ground truth (TBDSIM_TRUTH): called by publish(); each line is written at once.
void truth_write(const TbdsimRecord& record);
// cuProfilerStart/Stop: a `profiler` line with the next correlation id (see docs/simgpu.md).
void truth_write_profiler(bool start, uint32_t next_correlation);

}  // namespace tbdsim::driver
