#include "runtime_calls.h"

#include <array>
#include <atomic>
#include <mutex>

namespace tbdsim::driver {
namespace {

// A few fixed slots, read without a lock on every runtime call: listeners are added once (CUPTI's
// session) and never removed, as the record sinks' slots are only reused when freed.
struct ListenerSlot {
    std::atomic<TbdsimRuntimeCallListener> listener{nullptr};
    std::atomic<void*> user{nullptr};
};
std::array<ListenerSlot, 4> g_listeners;
std::mutex g_listener_mutex;  // adders only

}  // namespace

void runtime_call_boundary(int entering) {
    for (auto& slot : g_listeners) {
        TbdsimRuntimeCallListener listener = slot.listener.load(std::memory_order_acquire);
        if (listener != nullptr) listener(entering, slot.user.load(std::memory_order_relaxed));
    }
}

int add_runtime_call_listener(TbdsimRuntimeCallListener listener, void* user) {
    if (listener == nullptr) return -1;
    std::lock_guard lock(g_listener_mutex);
    for (size_t i = 0; i < g_listeners.size(); ++i) {
        if (g_listeners[i].listener.load() != nullptr) continue;
        g_listeners[i].user.store(user, std::memory_order_relaxed);
        g_listeners[i].listener.store(listener, std::memory_order_release);
        return static_cast<int>(i);
    }
    return -1;
}

}  // namespace tbdsim::driver
