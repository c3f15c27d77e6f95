#include "tbdprof/collector/range_recorder.h"

#include <atomic>

#include "tbdprof/collector/capture_gate.h"
#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/recorder.h"

namespace tbdprof::collector::ranges {
namespace {

// A thread's open push/pop ranges, innermost last. Every domain has its own NVTX stack, but
// programs nest domains properly almost always, so one stack tagged by domain serves them all: a
// pop takes the innermost entry of its domain. Trivially destructible (static TLS, initial-exec).
struct OpenPush {
    uint64_t begin_host_ns;
    uint64_t name_string;
    uint64_t domain_string;
};
struct PushStack {
    OpenPush entries[kMaxDepth];
    int size;      // entries in use
    int overflow;  // pushes beyond kMaxDepth not kept (their pops only count down)
};
thread_local constinit PushStack t_pushes{};

// Start/end ranges: slot = id % kMaxOpenStartEnd. `id` is published last (release) and claimed
// with a CAS at the end, so a range is written once even if two threads end it.
struct OpenStart {
    std::atomic<uint64_t> id;
    std::atomic<uint64_t> begin_host_ns;
    std::atomic<uint64_t> name_string;
    std::atomic<uint64_t> domain_string;
    std::atomic<uint32_t> tid;
};
constinit OpenStart g_starts[kMaxOpenStartEnd];
constinit std::atomic<uint64_t> g_next_start_id{1};

void write_range(ThreadState& thread, raw::RangeKind kind, uint64_t begin_host_ns, uint64_t end_host_ns, uint64_t name,
                 uint64_t domain, uint32_t begin_tid, int depth) {
    raw::RawRange r{};
    r.begin_host_ns = begin_host_ns;
    r.end_host_ns = end_host_ns;
    r.name_string = name;
    r.domain_string = domain;
    r.begin_tid = begin_tid;
    r.range_kind = kind;
    r.depth = static_cast<uint8_t>(depth);
    emit_record(thread, raw::RecordKind::Range, r);
}

// Level of the next range of `domain` on this thread's stack.
int level_in_domain(const PushStack& stack, uint64_t domain) {
    int level = 0;
    for (int i = 0; i < stack.size; ++i) level += stack.entries[i].domain_string == domain ? 1 : 0;
    return level;
}

}  // namespace

int push(uint64_t name_string, uint64_t domain_string) {
    if (!collector_enabled()) return -1;
    PushStack& stack = t_pushes;
    if (stack.size == kMaxDepth) {
        ++stack.overflow;
        return kMaxDepth + stack.overflow - 1;
    }
    const int level = level_in_domain(stack, domain_string);
    capture::on_range_begin(name_string);  // may open a capture window (nvtx:NAME, --steps)
    stack.entries[stack.size++] = OpenPush{host_monotonic_ns(), name_string, domain_string};
    return level;
}

int pop(uint64_t domain_string) {
    if (!collector_enabled()) return -1;
    const uint64_t now = host_monotonic_ns();
    PushStack& stack = t_pushes;
    if (stack.overflow > 0) {
        --stack.overflow;
        return kMaxDepth + stack.overflow;
    }
    int index = stack.size - 1;
    while (index >= 0 && stack.entries[index].domain_string != domain_string) --index;
    if (index < 0) return -1;
    const OpenPush open = stack.entries[index];
    for (int i = index; i + 1 < stack.size; ++i) stack.entries[i] = stack.entries[i + 1];
    --stack.size;
    const int level = level_in_domain(stack, domain_string);
    // Ranges are recorded inside capture windows only; the range that closes one is inside it.
    if (capture::is_open()) {
        ThreadState& thread = thread_state();
        write_range(thread, raw::RangeKind::PushPop, open.begin_host_ns, now, open.name_string, open.domain_string, 0,
                    index);
    }
    capture::on_range_end(open.name_string);
    return level;
}

uint64_t start(uint64_t name_string, uint64_t domain_string) {
    if (!collector_enabled()) return 0;
    ThreadState& thread = thread_state();
    if (thread.tid == 0) attach_thread_ring(thread);  // the tid, which end() may need on another thread
    capture::on_range_begin(name_string);
    const uint64_t id = g_next_start_id.fetch_add(1, std::memory_order_relaxed);
    OpenStart& slot = g_starts[id % kMaxOpenStartEnd];
    slot.id.store(0, std::memory_order_relaxed);
    slot.begin_host_ns.store(host_monotonic_ns(), std::memory_order_relaxed);
    slot.name_string.store(name_string, std::memory_order_relaxed);
    slot.domain_string.store(domain_string, std::memory_order_relaxed);
    slot.tid.store(thread.tid, std::memory_order_relaxed);
    slot.id.store(id, std::memory_order_release);
    return id;
}

void end(uint64_t id) {
    if (id == 0 || !collector_enabled()) return;
    const uint64_t now = host_monotonic_ns();
    OpenStart& slot = g_starts[id % kMaxOpenStartEnd];
    uint64_t expected = id;
    if (slot.id.load(std::memory_order_acquire) != id) return;
    const uint64_t begin = slot.begin_host_ns.load(std::memory_order_relaxed);
    const uint64_t name = slot.name_string.load(std::memory_order_relaxed);
    const uint64_t domain = slot.domain_string.load(std::memory_order_relaxed);
    const uint32_t tid = slot.tid.load(std::memory_order_relaxed);
    if (!slot.id.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
    if (capture::is_open()) write_range(thread_state(), raw::RangeKind::StartEnd, begin, now, name, domain, tid, 0);
    capture::on_range_end(name);
}

void mark(uint64_t name_string, uint64_t domain_string) {
    if (!collector_enabled()) return;
    if (!capture::is_open()) return;
    const uint64_t now = host_monotonic_ns();
    write_range(thread_state(), raw::RangeKind::Mark, now, now, name_string, domain_string, 0, 0);
}

}  // namespace tbdprof::collector::ranges
