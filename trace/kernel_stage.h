// The build's kernel rows and kernel -> allocation edges, kept on disk instead of in memory: rows are
// added as they are made and come back in the trace's order, sorted outside memory (spill_sorter.h).
// Kernel ids are device start order across processes (then process, then the order the rows were
// made in), so numbering them is a merge of sorted runs, not a sort of every kernel held in memory.
// The build's memory per kernel then no longer includes a row (120 B) and its edges (4 x 32 B with
// four pointer arguments): docs/benchmarks.md, "Trace build memory".
#pragma once

#include "spill_sorter.h"
#include "tbdprof/trace/trace_model.h"

#include <cstdint>
#include <functional>

namespace tbdprof::trace::detail {

class KernelStage {
public:
    // What a row came from, so that the build can find its kernel id once rows are numbered.
    static constexpr int64_t kNoOrigin = -1;

    KernelStage() = default;
    KernelStage(const KernelStage&) = delete;
    KernelStage& operator=(const KernelStage&) = delete;

    // Adds a kernel row (its id is ignored: ids are given by the rows' order). `origin` is the
    // builder's own note of where the row came from (kNoOrigin: nothing), read back with it.
    void add_kernel(const KernelRow& row, int64_t origin);
    // Calls `visit(row, origin)` for every row in id order, with row.id set. Rows may not be added
    // once they were visited.
    void for_each_kernel(const std::function<void(const KernelRow&, int64_t origin)>& visit);

    // Adds an edge of a numbered kernel. Of edges with one key (kernel, param, param_word) the first
    // added is kept, as the table's key allows one.
    void add_edge(const EdgeRow& edge);
    // Edges in key order, one per key.
    void for_each_edge(const std::function<void(const EdgeRow&)>& visit);

    uint64_t kernels() const { return kernels_.size(); }
    // Edges the last for_each_edge visited (one per key).
    uint64_t edges() const { return unique_edges_; }
    uint64_t kernels_without_duration() const { return without_duration_; }

private:
    struct StagedKernel {
        KernelRow row;
        int64_t origin;
    };
    // Start, then process; rows equal in both keep the order they were added (the sorter is stable).
    struct KernelOrder {
        bool operator()(const StagedKernel& a, const StagedKernel& b) const {
            return a.row.start_ns != b.row.start_ns ? a.row.start_ns < b.row.start_ns : a.row.process < b.row.process;
        }
    };
    struct EdgeOrder {
        bool operator()(const EdgeRow& a, const EdgeRow& b) const {
            if (a.kernel != b.kernel) return a.kernel < b.kernel;
            if (a.param != b.param) return a.param < b.param;
            return a.param_word < b.param_word;
        }
    };
    // Buffers of 16 MiB each: memory the stage holds whatever the run's length.
    static constexpr size_t kBufferBytes = size_t{16} << 20;

    SpillSorter<StagedKernel, KernelOrder> kernels_{kBufferBytes / sizeof(StagedKernel)};
    SpillSorter<EdgeRow, EdgeOrder> edges_{kBufferBytes / sizeof(EdgeRow)};
    uint64_t without_duration_ = 0;
    uint64_t unique_edges_ = 0;
};

}  // namespace tbdprof::trace::detail
