// The writer: drains every thread's ring into `raw-<pid>.tbdraw` with write(2), on its own thread
// every 5 ms or sooner while rings fill fast (so a process that dies loses at most the last few
// milliseconds), and once
// more at exit or from a fatal-signal handler. It also samples the process's CPU time (~50 ms),
// reports drops, and symbolizes stack frames. Only the writer (or the crash handler holding the
// drain lock) ever consumes rings or touches the file.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tbdprof/collector/back_pressure.h"
#include "tbdprof/collector/own_descriptors.h"
#include "tbdprof/collector/ring_registry.h"
#include "tbdprof/collector/symbolizer.h"
#include "tbdprof/raw_format.h"

namespace tbdprof::collector {

struct WriterIdentity {
    uint32_t pid = 0;
    uint32_t parent_pid = 0;
    uint64_t start_host_ns = 0;  // host monotonic
    uint64_t start_unix_ns = 0;
};

class RawWriter {
public:
    // Something to run on the writer thread every ~100 ms outside the drain lock (CUPTI flush).
    using PeriodicTask = void (*)();

    // Creates (truncates) the file and writes its header. False (errno set) when it cannot.
    bool open(const char* path, const WriterIdentity& identity);
    bool is_open() const { return fd_ >= 0; }

    void set_periodic_task(PeriodicTask task) { periodic_ = task; }
    // Starts the writer thread (once). Safe to call from any thread, never from a signal handler.
    void start_thread();
    // Stops and joins the writer thread.
    void stop_thread();

    // Moves everything in the rings to the file. `symbolize`: also write RawFrames (not from a signal
    // handler). Waits at most `wait_ms` for a drain already in progress. False when it could not.
    bool drain(bool symbolize, int wait_ms);
    // A producer whose ring is full (back_pressure.h): drains at once unless a drain is in progress.
    // Stacks are noted for the writer thread to symbolize; nothing is symbolized here.
    back_pressure::DrainAttempt drain_for_producer();
    // Adds a CPU sample of this process (writer thread or final drain).
    void sample_cpu();

    // fork(): keeps the writer out of its drain while the child copies the process.
    void hold_for_fork(int wait_ms) { held_for_fork_ = lock_drain(wait_ms); }
    void release_after_fork() {
        if (held_for_fork_) unlock_drain();
        held_for_fork_ = false;
    }

    void close();
    // Fork child: the file and the thread belong to the parent; forget them without touching them.
    void abandon_after_fork();

    uint64_t bytes_written() const { return bytes_written_; }

    // A full disk (or any write error): the file is cut back to its last whole record, nothing more is
    // written to it, and the records that could not be written are counted. At exit this writes one
    // RawDropped (WriteFailed) record with that count when the space freed by the cut allows, and says
    // on stderr what was lost otherwise. Call after the last drain.
    void report_write_failure();
    // Appends a RawProcessEnd after the last drain (waits at most `wait_ms` for the drain lock).
    void append_end(raw::EndReason reason, int wait_ms);
    bool write_failed() const { return write_failed_; }

private:
    static void* thread_main(void* self);
    void run();
    bool lock_drain(int wait_ms);
    void unlock_drain() { drain_busy_.store(false, std::memory_order_release); }
    void append(const void* bytes, size_t size);
    // A RawDropped record for the `total - reported` drops of `cause` not yet in the file.
    void report_new_drops(raw::DropCause cause, uint64_t total, uint64_t& reported);
    void flush_output();
    void drain_locked(bool note_stacks, bool symbolize);
    // RawDropped for a ring's drops not yet in the file, with the times of the first and last.
    void report_ring_drops(RingSlot& slot);
    // Writes whole records straight to the file (flushing the buffer first); counts them when it cannot.
    void write_direct(const uint8_t* bytes, size_t size);
    void note_write_failure(int error);
    // Whether fd_ is still our file; reopens it by name when the program closed or replaced the
    // descriptor (own_descriptors.h). False (recording stops, said once) when it cannot.
    bool ensure_own_descriptor();
    // Writes through ensure_own_descriptor; on failure calls note_write_failure. True when all written.
    bool write_own(const uint8_t* bytes, size_t size);

    int fd_ = -1;
    FileIdentity file_;             // what fd_ was opened on
    bool descriptor_lost_ = false;  // the program closed fd_ and the file could not be reopened
    uint32_t reopened_ = 0;
    uint32_t writer_tid_ = 0;
    PeriodicTask periodic_ = nullptr;
    pthread_t thread_{};
    std::atomic<bool> running_{false};
    std::atomic<bool> stop_requested_{false};
    std::atomic<bool> thread_started_{false};
    std::atomic<bool> drain_busy_{false};
    // How long the writer sleeps before its next drain: shorter while rings fill fast (set by each drain).
    std::atomic<uint64_t> next_drain_interval_ns_{0};
    uint64_t last_drain_ns_ = 0;
    bool held_for_fork_ = false;
    uint64_t bytes_written_ = 0;
    // Record accounting for write failures: every append/direct write ends at a record boundary.
    uint64_t records_appended_ = 0;
    uint64_t pending_boundary_ = 0, pending_records_ = 0;      // last boundary, possibly still buffered
    uint64_t committed_boundary_ = 0, records_committed_ = 0;  // last boundary known to be in the file
    bool write_failed_ = false;
    int write_errno_ = 0;
    char path_[4096] = {};
    uint64_t reported_without_ring_ = 0;
    uint64_t reported_stack_full_ = 0;
    Symbolizer symbolizer_;
    size_t out_len_ = 0;
    static constexpr size_t kOutBytes = size_t{1} << 20;
    alignas(64) uint8_t out_[kOutBytes];
};

}  // namespace tbdprof::collector
