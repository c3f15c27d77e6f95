#include "external_correlation.h"

#include <array>
#include <vector>

namespace tbdsim::cupti {
namespace {

constexpr int kKinds = CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;

// The innermost id of each kind lives in a trivially constructible thread_local, so the common
// push/launch/pop round trip touches no constructor guard and no heap: clients such as tbdprof
// push around every launch, and a CUPTI that costs more than the launch it describes would distort
// exactly the overhead the tools built on it are judged by. Ids below the innermost one (nested
// pushes) spill into a vector that only nesting ever touches.
struct Innermost {
    uint32_t depth[kKinds];  // ids pushed, per kind
    uint32_t nonempty;       // bit k: depth[k] > 0
    uint64_t top[kKinds];    // innermost id, per kind (valid when depth > 0)
};
static_assert(kKinds <= 32);

thread_local constinit Innermost t_innermost{};

std::vector<uint64_t>& spilled(int kind) {
    thread_local std::array<std::vector<uint64_t>, kKinds> below_innermost;
    return below_innermost[kind];
}

// Nesting only: out of line, handed the thread's block, so the common path looks its address up once.
[[gnu::noinline, gnu::cold]] void push_nested(Innermost& stacks, int kind, uint64_t id) {
    spilled(kind).push_back(stacks.top[kind]);
    stacks.top[kind] = id;
    ++stacks.depth[kind];
}
[[gnu::noinline, gnu::cold]] void pop_nested(Innermost& stacks, int kind) {
    std::vector<uint64_t>& below = spilled(kind);
    stacks.top[kind] = below.back();
    below.pop_back();
    --stacks.depth[kind];
}

}  // namespace

bool valid_external_kind(CUpti_ExternalCorrelationKind kind) {
    return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID && kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

void push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id) {
    Innermost& stacks = t_innermost;
    if (stacks.depth[kind] > 0) return push_nested(stacks, kind, id);
    stacks.top[kind] = id;
    stacks.depth[kind] = 1;
    stacks.nonempty |= 1u << kind;
}

bool pop_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* last_id) {
    Innermost& stacks = t_innermost;
    const uint32_t depth = stacks.depth[kind];
    if (depth == 0) return false;
    const uint64_t id = stacks.top[kind];
    if (depth > 1) {
        pop_nested(stacks, kind);
    } else {
        stacks.depth[kind] = 0;
        stacks.nonempty &= ~(1u << kind);
    }
    // Stored last: the caller's pointer could alias anything, and the stack is updated by then.
    if (last_id != nullptr) *last_id = id;
    return true;
}

namespace {
template <class Ids>
void add_correlations(const Ids& ids, uint32_t correlation_id, RecordBytes& out) {
    for (uint32_t pending = ids.nonempty; pending != 0; pending &= pending - 1) {
        const int kind = __builtin_ctz(pending);  // ascending kinds, as before
        add_external_correlation_record(static_cast<CUpti_ExternalCorrelationKind>(kind), ids.top[kind], correlation_id,
                                        out);
    }
}
}  // namespace

void add_external_correlations_of_this_thread(uint32_t correlation_id, RecordBytes& out) {
    add_correlations(t_innermost, correlation_id, out);
}

ExternalIds external_ids_of_this_thread() {
    const Innermost& stacks = t_innermost;
    ExternalIds ids;
    ids.nonempty = stacks.nonempty;
    for (int kind = 0; kind < kKinds; ++kind)
        if (stacks.depth[kind] > 0) ids.top[kind] = stacks.top[kind];
    return ids;
}

void add_external_correlations(const ExternalIds& ids, uint32_t correlation_id, RecordBytes& out) {
    add_correlations(ids, correlation_id, out);
}

}  // namespace tbdsim::cupti
