#include "kernel_stage.h"

namespace tbdprof::trace::detail {

void KernelStage::add_kernel(const KernelRow& row, int64_t origin) {
    kernels_.add({row, origin});
    without_duration_ += row.duration_ns ? 0 : 1;
}

void KernelStage::for_each_kernel(const std::function<void(const KernelRow&, int64_t origin)>& visit) {
    int64_t id = 0;
    kernels_.for_each([&](const StagedKernel& staged) {
        KernelRow row = staged.row;
        row.id = ++id;
        visit(row, staged.origin);
    });
}

void KernelStage::add_edge(const EdgeRow& edge) {
    edges_.add(edge);
}

void KernelStage::for_each_edge(const std::function<void(const EdgeRow&)>& visit) {
    unique_edges_ = 0;
    EdgeRow last;
    const EdgeOrder before;
    edges_.for_each([&](const EdgeRow& edge) {
        // Equal keys arrive in the order added: the first is kept.
        if (unique_edges_ > 0 && !before(last, edge)) return;
        last = edge;
        ++unique_edges_;
        visit(edge);
    });
}

}  // namespace tbdprof::trace::detail
