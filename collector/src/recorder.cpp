#include "tbdprof/collector/recorder.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/stack_capture.h"

namespace tbdprof::collector {

namespace {

// 8 MiB per thread (~58000 launch records). A thread launching back to back on the simulated GPU
// writes up to ~600 MB/s, so its ring lasts ~14 ms: the writer's 5 ms between drains before it
// notices the rate and drains faster, plus scheduling delays on a loaded machine. On a real GPU
// launches are slower and the ring lasts far longer. Pages are touched only as records arrive
// (MAP_NORESERVE), so a thread that records little costs little memory.
constexpr size_t kRingBytes = size_t{8} << 20;

LockFreeHashSet<1 << 16> g_interned_strings;

pthread_key_t g_exit_key;
pthread_once_t g_exit_key_once = PTHREAD_ONCE_INIT;

// Runs when a thread with a ring exits: the writer drains what is left and frees the slot.
void on_thread_exit(void* value) {
    auto* thread = static_cast<ThreadState*>(value);
    if (thread == nullptr || thread->slot == nullptr) return;
    if (thread->generation != globals().fork_generation.load(std::memory_order_relaxed)) return;  // parent's slot
    ring_registry().retire(thread->slot);
    thread->slot = nullptr;
}

void make_exit_key() { pthread_key_create(&g_exit_key, on_thread_exit); }

}  // namespace

constinit CollectorGlobals g_collector_globals;
constinit RingRegistry g_ring_registry(kRingBytes);
thread_local constinit ThreadState t_thread_state;

void refresh_thread_state(ThreadState& thread) {
    thread.slot = nullptr;
    thread.tid = 0;
    thread.device = -1;
    thread.cupti_thread_tag = 0;  // CUPTI is off in a fork child (disable_after_fork)
    thread.generation = globals().fork_generation.load(std::memory_order_relaxed);
}

bool attach_thread_ring(ThreadState& thread) {
    if (thread.tid == 0) thread.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    thread.slot = ring_registry().acquire(thread.tid);
    if (thread.slot == nullptr) return false;
    pthread_once(&g_exit_key_once, make_exit_key);
    pthread_setspecific(g_exit_key, &thread);

    char name[17] = {};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    raw::RawThreadInfo info{};
    info.name_string = intern_string(thread, name);
    info.first_seen_host_ns = host_monotonic_ns();
    emit_record(thread, raw::RecordKind::ThreadInfo, info);
    return true;
}

bool emit_string(ThreadState& thread, uint64_t id, std::string_view text) {
    // A record's size is 16 bits: longer text (rare: giant template names) is cut.
    constexpr size_t kMaxText = 65535 - sizeof(raw::RawString) - 8;
    if (text.size() > kMaxText) text = text.substr(0, kMaxText);
    const size_t size = (sizeof(raw::RawString) + text.size() + 7) & ~size_t{7};
    uint8_t* p = reserve_record(thread, raw::RecordKind::String, size);
    if (p == nullptr) return false;
    raw::RawString s{};
    s.id = id;
    s.length = static_cast<uint32_t>(text.size());
    std::memcpy(p + sizeof(raw::RawRecordHeader), reinterpret_cast<const uint8_t*>(&s) + sizeof(raw::RawRecordHeader),
                sizeof s - sizeof(raw::RawRecordHeader));
    std::memcpy(p + sizeof s, text.data(), text.size());
    std::memset(p + sizeof s + text.size(), 0, size - sizeof s - text.size());
    commit_record(thread, size);
    return true;
}

uint64_t intern_string(ThreadState& thread, std::string_view text) {
    const uint64_t id = string_id_of(text);
    // A full table only means the text may be written more than once under the same id.
    if (g_interned_strings.insert(id) != InsertResult::Present) {
        if (!emit_string(thread, id, text)) {
            // Not written: let a later caller try again rather than leave the id without text.
            // (The set has no erase; a rare lost string shows as an unknown name.)
        }
    }
    return id;
}

void reset_recorder_after_fork() {
    g_interned_strings.clear();
    reset_stack_table_after_fork();
    ring_registry().reset_after_fork();
    globals().fork_generation.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tbdprof::collector
