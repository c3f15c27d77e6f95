#include "tbdprof/collector/stack_capture.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <link.h>

#include <atomic>

namespace tbdprof::collector {

namespace {

constexpr int kMaxDepth = 128;
// Frames of the hook itself, unwound and then dropped (they are the collector's own code).
constexpr int kExtraFrames = 8;

LockFreeHashSet<1 << 16> g_known_stacks;
std::atomic<uint64_t> g_table_full{0};
uint64_t g_own_low = 0;
uint64_t g_own_high = 0;
// libunwind's own frames (unw_backtrace, and its slow path on a first call) are not the program's.
uint64_t g_unwinder_low = 0;
uint64_t g_unwinder_high = 0;

struct ModuleRange {
    uintptr_t base = 0;
    CodeRange code;
};

int find_module_range(dl_phdr_info* info, size_t, void* data) {
    auto* range = static_cast<ModuleRange*>(data);
    if (info->dlpi_addr != range->base) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
        const uint64_t start = info->dlpi_addr + ph.p_vaddr;
        if (range->code.low == 0 || start < range->code.low) range->code.low = start;
        if (start + ph.p_memsz > range->code.high) range->code.high = start + ph.p_memsz;
    }
    return 1;
}

// A stack's id: a hash of its instruction pointers a word at a time (a byte-wise hash cost ~1200
// instructions for 24 frames, a quarter of an allocation's recording). Multiply-xorshift mixing per
// word; the depth seeds it so that a stack and its prefix differ. Never 0 (0 means "no stack").
uint64_t stack_hash(const uint64_t* ips, uint32_t depth) {
    uint64_t h = 0x9ae16a3b2f90404full ^ (depth * 0xc2b2ae3d27d4eb4full);
    for (uint32_t i = 0; i < depth; ++i) {
        h ^= ips[i];
        h *= 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h == 0 ? 1 : h;
}

}  // namespace

CodeRange code_range_of(const void* address) {
    Dl_info info{};
    if (dladdr(address, &info) == 0) return {};
    ModuleRange range;
    range.base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    dl_iterate_phdr(find_module_range, &range);
    return range.code;
}

void set_own_code_range(uint64_t low, uint64_t high) {
    g_own_low = low;
    g_own_high = high;
    const CodeRange unwinder = code_range_of(reinterpret_cast<const void*>(&unw_backtrace));
    g_unwinder_low = unwinder.low;
    g_unwinder_high = unwinder.high;
}

uint64_t stack_table_full_count() { return g_table_full.load(std::memory_order_relaxed); }

void reset_stack_table_after_fork() {
    g_known_stacks.clear();
    g_table_full.store(0, std::memory_order_relaxed);
}

uint64_t capture_stack(ThreadState& thread) {
    const int depth = globals().stack_depth < kMaxDepth ? globals().stack_depth : kMaxDepth;
    if (depth <= 0) return 0;
    void* frames[kMaxDepth + kExtraFrames];
    const int captured = unw_backtrace(frames, depth + kExtraFrames);
    uint64_t ips[kMaxDepth];
    uint32_t kept = 0;
    for (int i = 0; i < captured && kept < static_cast<uint32_t>(depth); ++i) {
        const auto ip = reinterpret_cast<uint64_t>(frames[i]);
        if ((ip >= g_own_low && ip < g_own_high) || (ip >= g_unwinder_low && ip < g_unwinder_high)) continue;
        ips[kept++] = ip;
    }
    return record_stack(thread, ips, kept);
}

uint64_t record_stack(ThreadState& thread, const uint64_t* ips, uint32_t depth) {
    if (depth == 0) return 0;
    const uint64_t id = stack_hash(ips, depth);
    switch (g_known_stacks.insert(id)) {
    case InsertResult::Present: return id;
    case InsertResult::Full: g_table_full.fetch_add(1, std::memory_order_relaxed); return 0;
    case InsertResult::Inserted: break;
    }
    const size_t size = sizeof(raw::RawStack) + depth * sizeof(uint64_t);
    uint8_t* p = reserve_record(thread, raw::RecordKind::Stack, size);
    if (p == nullptr) return id;  // counted as a ring drop; the builder sees an unknown stack id
    raw::RawStack stack{};
    stack.id = id;
    stack.depth = depth;
    std::memcpy(p + sizeof(raw::RawRecordHeader),
                reinterpret_cast<const uint8_t*>(&stack) + sizeof(raw::RawRecordHeader),
                sizeof stack - sizeof(raw::RawRecordHeader));
    std::memcpy(p + sizeof stack, ips, depth * sizeof(uint64_t));
    commit_record(thread, size);
    return id;
}

}  // namespace tbdprof::collector
