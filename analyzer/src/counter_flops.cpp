#include "counter_flops.h"

#include <string>
#include <string_view>
#include <unordered_map>

namespace tbdprof::analyzer {

bool flop_metric(std::string_view metric, Precision& precision, double& flops_per_count) {
    struct Known {
        std::string_view name;
        Precision precision;
        double flops;
    };
    static constexpr Known kKnown[] = {
        {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", Precision::fp32, 1},
        {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", Precision::fp32, 1},
        {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", Precision::fp32, 2},
        {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", Precision::tf32, 1},
        {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", Precision::fp16, 1},
        {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", Precision::bf16, 1},
    };
    for (const Known& known : kKnown) {
        if (known.name != metric) continue;
        precision = known.precision;
        flops_per_count = known.flops;
        return true;
    }
    return false;
}

std::vector<CounterKernel> load_counter_kernels(const ReadOnlyDatabase& db, int64_t begin_ns, int64_t end_ns,
                                                bool everything) {
    std::vector<CounterKernel> kernels;
    if (db.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kernel_metrics'") == 0)
        return kernels;
    Query query(db,
                "SELECT k.id, k.device, k.function, k.library_call, k.duration_ns, k.start_ns, s.text, m.value "
                "FROM kernel_metrics AS m JOIN kernels AS k ON k.id = m.kernel JOIN strings AS s ON s.id = m.metric "
                "ORDER BY k.id");
    std::unordered_map<std::string, std::pair<Precision, double>> metric_cache;
    while (query.step()) {
        const int64_t id = query.integer(0), start = query.integer(5);
        if (!everything && (start < begin_ns || start >= end_ns)) continue;
        const std::string metric = query.text(6);
        auto known = metric_cache.find(metric);
        if (known == metric_cache.end()) {
            Precision precision = Precision::other;
            double per_count = 0;
            if (!flop_metric(metric, precision, per_count)) per_count = 0;
            known = metric_cache.emplace(metric, std::make_pair(precision, per_count)).first;
        }
        if (known->second.second == 0) continue;  // not a FLOP metric
        if (kernels.empty() || kernels.back().kernel != id) {
            CounterKernel kernel;
            kernel.kernel = id;
            kernel.device = query.integer(1);
            kernel.function = query.integer(2);
            kernel.library_call = query.is_null(3) ? -1 : query.integer(3);
            kernel.duration_ns = query.is_null(4) ? 0 : query.integer(4);
            kernel.available = true;
            kernels.push_back(kernel);
        }
        CounterKernel& kernel = kernels.back();
        if (query.is_null(7)) {
            kernel.available = false;
            continue;
        }
        kernel.flops[static_cast<size_t>(known->second.first)] += query.real(7) * known->second.second;
    }
    return kernels;
}

}  // namespace tbdprof::analyzer
