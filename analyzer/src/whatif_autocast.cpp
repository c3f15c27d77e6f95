// Autocast-style mixed precision per tensor (whatif_autocast.h).
#include "whatif_autocast.h"

#include <algorithm>
#include <cmath>

namespace tbdprof::analyzer::whatif {

namespace {

// A half-size copy of `t` that autocast makes for the GEMMs reading it from `begin_ns` to `end_ns`.
PoolTensor copy_of(const PoolTensor& t, int64_t begin_ns, int64_t end_ns) {
    PoolTensor copy;
    copy.segment = t.segment;
    copy.offset = t.offset;
    copy.category = t.category;
    copy.begin_ns = begin_ns;
    copy.end_ns = end_ns;
    copy.least_bytes = t.least_bytes;
    return copy;
}

// The GEMM reads of a weight grouped by training step: autocast caches one copy per forward and
// backward reads it; the optimizer's update (UpdateWindow) ends a step.
std::vector<std::pair<int64_t, int64_t>> reads_by_step(const RecordedRun& run, int64_t process,
                                                       std::vector<int64_t> reads_ns) {
    std::sort(reads_ns.begin(), reads_ns.end());
    const auto windows = run.update_windows.find(process);
    auto step_of = [&](int64_t ns) -> size_t {
        if (windows == run.update_windows.end()) return 0;
        return static_cast<size_t>(std::upper_bound(windows->second.begin(), windows->second.end(), ns,
                                                    [](int64_t t, const UpdateWindow& u) { return t < u.begin_ns; }) -
                                   windows->second.begin());
    };
    std::vector<std::pair<int64_t, int64_t>> out;
    size_t step = SIZE_MAX;
    for (const int64_t ns : reads_ns) {
        if (step_of(ns) != step || out.empty()) out.push_back({ns, ns});
        step = step_of(ns);
        out.back().second = ns;
    }
    return out;
}

}  // namespace

AutocastRequests autocast_requests(const RecordedRun& run, const std::vector<PoolTensor>& tensors,
                                   const std::vector<int64_t>& bytes, double ratio) {
    AutocastRequests out{tensors, bytes};
    for (size_t i = 0; i < tensors.size(); ++i) {
        const PoolTensor& t = tensors[i];
        if (t.library_workspace || t.gemm_reads_ns.empty() || (t.gemm_role & kLowerPrecision)) continue;
        const int64_t copy_bytes = std::llround(static_cast<double>(bytes[i]) * ratio);
        if (t.category == kWeights) {
            for (const auto& [first, last] : reads_by_step(run, run.allocations[t.segment].process, t.gemm_reads_ns)) {
                out.tensors.push_back(copy_of(t, first, last));
                out.bytes.push_back(copy_bytes);
            }
            continue;
        }
        if (t.category != kActivations && t.category != kWorkspace) continue;
        const auto [first, last] = std::minmax_element(t.gemm_reads_ns.begin(), t.gemm_reads_ns.end());
        out.tensors.push_back(copy_of(t, *first, std::max(*last, *first)));
        out.bytes.push_back(copy_bytes);
        // Without other work after the cast, the FP32 tensor's last use is the cast.
        if (!(t.gemm_role & kUsedAfterRead)) {
            out.tensors[i].end_ns = std::clamp(*first, t.begin_ns, t.end_ns);
            out.tensors[i].ends_at_reuse = false;
        }
    }
    return out;
}

bool autocast_applies(const ScenarioSpec& spec, const Model& model) {
    return spec.autocast && spec.precision && model.recorded_precision &&
           *model.recorded_precision == StoragePrecision::fp32 && *spec.precision != StoragePrecision::fp32;
}

double autocast_request_multiplier(int category, bool library_workspace, uint8_t gemm_role, double ratio) {
    if (library_workspace || (category != kActivations && category != kWorkspace)) return 1.0;
    return (gemm_role & kLowerPrecision) ? ratio : 1.0;
}

double autocast_multiplier(int category, bool library_workspace, uint8_t gemm_role, double ratio) {
    if (library_workspace) return 1.0;
    if (category == kWeights) return (gemm_role & kGemmRead) ? 1.0 + ratio : 1.0;
    if (category != kActivations && category != kWorkspace) return 1.0;
    if (gemm_role & kLowerPrecision) return ratio;
    if (!(gemm_role & kGemmRead)) return 1.0;
    return (gemm_role & kUsedAfterRead) ? 1.0 + ratio : ratio;
}

}  // namespace tbdprof::analyzer::whatif
