#include "external_correlation.h"

#include <array>
#include <vector>

namespace tbdsim::cupti {
namespace {

using Stacks = std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE>;

Stacks& this_thread_stacks() {
    thread_local Stacks stacks;
    return stacks;
}

}  // namespace

bool valid_external_kind(CUpti_ExternalCorrelationKind kind) {
    return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID && kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

void push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id) { this_thread_stacks()[kind].push_back(id); }

bool pop_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* last_id) {
    std::vector<uint64_t>& stack = this_thread_stacks()[kind];
    if (stack.empty()) return false;
    if (last_id != nullptr) *last_id = stack.back();
    stack.pop_back();
    return true;
}

void add_external_correlations_of_this_thread(uint32_t correlation_id, RecordBytes& out) {
    const Stacks& stacks = this_thread_stacks();
    for (int kind = CUPTI_EXTERNAL_CORRELATION_KIND_INVALID + 1; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++kind) {
        if (!stacks[kind].empty()) {
            add_external_correlation_record(static_cast<CUpti_ExternalCorrelationKind>(kind), stacks[kind].back(),
                                            correlation_id, out);
        }
    }
}

}  // namespace tbdsim::cupti
