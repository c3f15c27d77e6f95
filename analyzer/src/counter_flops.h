// FLOPs from hardware counters (`tbdprof record --metrics flops`, the kernel_metrics table): each
// kernel's FLOPs by precision from the CUPTI metrics that say which precision they count.
//   FP32 = fadd + fmul + 2 * ffma   (smsp__sass_thread_inst_executed_op_{fadd,fmul,ffma}_pred_on.sum)
//   TF32, FP16, BF16 = the tensor path's math operations (sm__ops_path_tensor_src_{tf32,fp16,bf16}_dst_fp32.sum)
// A kernel whose rows hold a NULL (CUPTI could not count it) has no counter FLOPs: not available.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tbdprof/analyzer/report.h"
#include "tbdprof/trace/sqlite_handle.h"

namespace tbdprof::analyzer {

struct CounterKernel {
    int64_t kernel = 0, device = 0, function = 0;
    int64_t library_call = -1;  // -1: launched outside any library call
    int64_t duration_ns = 0;
    bool available = false;  // every FLOP metric recorded had a value
    std::array<double, kPrecisionCount> flops{};
};

// The kernels with counter rows whose start lies in [begin_ns, end_ns) (every one when `everything`);
// empty for traces without the table or without rows.
std::vector<CounterKernel> load_counter_kernels(const trace::Database& db, int64_t begin_ns, int64_t end_ns,
                                                bool everything);

// Which precision a FLOP metric counts, and how many FLOPs one count is (2 for an FMA); false for
// metrics that are not FLOP metrics.
bool flop_metric(std::string_view metric, Precision& precision, double& flops_per_count);

}  // namespace tbdprof::analyzer
