#include "tbdprof/collector/descriptor_guard.h"

#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace tbdprof::collector::descriptor_guard {
namespace {

std::atomic<int> g_published{-1};
// The thread that holds the guard (0: none); how deep it is nested on that thread.
std::atomic<long> g_owner{0};
thread_local int t_depth = 0;
// Set by the guard's holder while it opens and uses a descriptor of its own.
std::atomic<bool> g_opening{false};
// Program calls that passed begin_unguarded and have not ended yet.
std::atomic<int> g_unguarded_calls{0};

// Everything waited for here is one system call: yield, then sleep briefly. After ~2 s something
// is wrong (a holder stopped in a debugger, a thread that died holding it): go on rather than hang
// the program or the writer.
constexpr int kYields = 64;
constexpr long kSleepNs = 50'000;
constexpr int kSleeps = 40'000;

template <class Done>
bool wait_until(Done done) {
    for (int attempt = 0; attempt < kYields + kSleeps; ++attempt) {
        if (done()) return true;
        if (attempt < kYields) {
            sched_yield();
        } else {
            timespec pause{0, kSleepNs};
            nanosleep(&pause, nullptr);
        }
    }
    return false;
}

bool acquire() {
    const long self = static_cast<long>(::syscall(SYS_gettid));
    if (g_owner.load(std::memory_order_acquire) == self) {
        ++t_depth;
        return true;
    }
    const bool taken = wait_until([self] {
        long expected = 0;
        return g_owner.compare_exchange_weak(expected, self, std::memory_order_acquire);
    });
    if (taken) t_depth = 1;
    return taken;
}

void release() {
    if (--t_depth == 0) g_owner.store(0, std::memory_order_release);
}

bool touches_published(unsigned low, unsigned high) {
    const int fd = g_published.load();
    return fd >= 0 && static_cast<unsigned>(fd) >= low && static_cast<unsigned>(fd) <= high;
}

}  // namespace

void publish(int fd) {
    g_published.store(fd);
}

CollectorHold::CollectorHold() : taken_(acquire()) {}
CollectorHold::~CollectorHold() {
    if (taken_) release();
}

// The flag first, then the count (both sequentially consistent), mirrored in begin_unguarded: a
// program call either sees the flag and waits for the guard, or is counted here and waited for.
OpeningWindow::OpeningWindow() : was_open_(g_opening.load()) {
    g_opening.store(true);
    wait_until([] { return g_unguarded_calls.load() == 0; });
}

OpeningWindow::~OpeningWindow() {
    g_opening.store(was_open_);
}

bool begin_unguarded(unsigned low, unsigned high) {
    g_unguarded_calls.fetch_add(1);
    if (!g_opening.load() && !touches_published(low, high)) return true;
    g_unguarded_calls.fetch_sub(1);
    return false;
}

void end_unguarded() {
    g_unguarded_calls.fetch_sub(1);
}

ProgramCall::ProgramCall() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved_mask_);
    taken_ = acquire();
}

ProgramCall::~ProgramCall() {
    if (taken_) release();
    pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
}

void reset_after_fork() {
    g_owner.store(0);
    t_depth = 0;
    g_opening.store(false);
    g_unguarded_calls.store(0);
}

}  // namespace tbdprof::collector::descriptor_guard
