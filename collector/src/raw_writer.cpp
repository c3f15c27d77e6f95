#include "tbdprof/collector/capture_gate.h"
#include "tbdprof/collector/raw_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/descriptor_guard.h"
#include "tbdprof/collector/own_descriptors.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/stack_capture.h"
#include "tbdprof/collector/user_messages.h"
#include "tbdprof/raw_format.h"

namespace tbdprof::collector {

namespace {

// The writer wakes every 5 ms, or sooner: each drain measures how fast the busiest ring filled since
// the previous one and sleeps until it would be a quarter full again (at least 0.1 ms). A thread
// launching back to back writes a few hundred MB/s; a fixed long interval let its ring overflow.
constexpr uint64_t kDrainIntervalNs = 5'000'000;
constexpr uint64_t kMinDrainIntervalNs = 100'000;
// Runs of records at least this long go from the ring to the file directly (one copy less).
constexpr size_t kDirectWriteBytes = size_t{64} << 10;
constexpr uint64_t kCpuSampleIntervalNs = 50'000'000;
constexpr uint64_t kPeriodicTaskIntervalNs = 100'000'000;

// Writes from `done` on; `done` says how far it got (a retry after EBADF goes on from there).
bool write_all(int fd, const uint8_t* bytes, size_t size, size_t& done) {
    while (done < size) {
        ssize_t n = ::write(fd, bytes + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

bool write_all(int fd, const uint8_t* bytes, size_t size) {
    size_t done = 0;
    return write_all(fd, bytes, size, done);
}

}  // namespace

bool RawWriter::open(const char* path, const WriterIdentity& identity) {
    // Never an existing file; a high, close-on-exec descriptor (own_descriptors.h).
    {
        descriptor_guard::OpeningWindow window;
        fd_ = open_own(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
        if (fd_ < 0) return false;
        file_ = identity_of(fd_);
        descriptor_guard::publish(fd_);
    }
    // Held while this process records: `tbdprof build` refuses a run directory still written into.
    ::flock(fd_, LOCK_SH | LOCK_NB);
    descriptor_lost_ = false;
    reopened_ = 0;
    std::snprintf(path_, sizeof path_, "%s", path);
    raw::RawFileHeader header{};
    std::memcpy(header.magic, raw::kMagic, sizeof header.magic);
    header.version = raw::kVersion;
    header.pid = identity.pid;
    header.parent_pid = identity.parent_pid;
    header.start_host_ns = identity.start_host_ns;
    header.start_unix_ns = identity.start_unix_ns;
    {
        descriptor_guard::CollectorHold hold;
        if (still_same_file(fd_, file_)) write_all(fd_, reinterpret_cast<const uint8_t*>(&header), sizeof header);
    }
    bytes_written_ = sizeof header;
    records_appended_ = pending_records_ = records_committed_ = 0;
    pending_boundary_ = committed_boundary_ = sizeof header;
    write_failed_ = false;
    write_errno_ = 0;
    return true;
}

void RawWriter::start_thread() {
    bool expected = false;
    if (!thread_started_.compare_exchange_strong(expected, true)) return;
    stop_requested_.store(false);
    // Application signals must never land on the writer thread.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    if (pthread_create(&thread_, nullptr, &RawWriter::thread_main, this) == 0) {
        running_.store(true, std::memory_order_release);
    } else {
        thread_started_.store(false);
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void RawWriter::stop_thread() {
    if (!running_.load(std::memory_order_acquire)) return;
    stop_requested_.store(true, std::memory_order_release);
    pthread_join(thread_, nullptr);
    running_.store(false, std::memory_order_release);
    thread_started_.store(false);
}

void* RawWriter::thread_main(void* self) {
    prctl(PR_SET_NAME, "tbdprof-writer", 0, 0, 0);
    static_cast<RawWriter*>(self)->run();
    return nullptr;
}

void RawWriter::run() {
    uint64_t last_cpu = 0;
    uint64_t last_periodic = host_monotonic_ns();
    while (!stop_requested_.load(std::memory_order_acquire)) {
        const uint64_t interval = next_drain_interval_ns_.load(std::memory_order_relaxed);
        sleep_for_ns(interval != 0 ? interval : kDrainIntervalNs);
        const uint64_t now = host_monotonic_ns();
        capture::on_writer_tick(now);  // --delay/--duration: asks the next hook to open or close
        if (periodic_ != nullptr && now - last_periodic >= kPeriodicTaskIntervalNs) {
            periodic_();  // outside the drain lock: it may emit records (CUPTI buffer completion)
            last_periodic = now;
        }
        if (!lock_drain(1000)) continue;
        if (now - last_cpu >= kCpuSampleIntervalNs) {
            sample_cpu();
            last_cpu = now;
        }
        drain_locked(true, true);
        unlock_drain();
    }
}

bool RawWriter::lock_drain(int wait_ms) {
    const uint64_t deadline = host_monotonic_ns() + static_cast<uint64_t>(wait_ms) * 1000000ull;
    for (;;) {
        bool expected = false;
        if (drain_busy_.compare_exchange_weak(expected, true, std::memory_order_acquire)) return true;
        if (host_monotonic_ns() >= deadline) return false;
        sleep_for_ns(100000);
    }
}

void RawWriter::report_new_drops(raw::DropCause cause, uint64_t total, uint64_t& reported) {
    if (total <= reported) return;
    raw::RawDropped record{};
    record.header = {raw::RecordKind::Dropped, sizeof record, writer_tid_};
    record.count = total - reported;
    record.cause = cause;
    append(&record, sizeof record);
    reported = total;
}

bool RawWriter::drain(bool symbolize, int wait_ms) {
    if (fd_ < 0) return false;
    if (!lock_drain(wait_ms)) return false;
    drain_locked(symbolize, symbolize);
    unlock_drain();
    return true;
}

back_pressure::DrainAttempt RawWriter::drain_for_producer() {
    if (fd_ < 0) return back_pressure::DrainAttempt::Unavailable;
    bool expected = false;
    if (!drain_busy_.compare_exchange_strong(expected, true, std::memory_order_acquire))
        return back_pressure::DrainAttempt::Busy;
    drain_locked(true, false);
    unlock_drain();
    return back_pressure::DrainAttempt::Drained;
}

namespace {

// Records in a span of whole records.
uint64_t count_records(const uint8_t* bytes, size_t size) {
    uint64_t count = 0;
    for (size_t offset = 0; offset + sizeof(raw::RawRecordHeader) <= size;) {
        raw::RawRecordHeader h;
        std::memcpy(&h, bytes + offset, sizeof h);
        if (h.size == 0) break;
        offset += h.size;
        ++count;
    }
    return count;
}

}  // namespace

void RawWriter::append(const void* bytes, size_t size) {
    const auto* p = static_cast<const uint8_t*>(bytes);
    records_appended_ += count_records(p, size);
    if (write_failed_) return;  // counted, never written: the file stays whole up to its cut
    while (size > 0) {
        if (out_len_ == kOutBytes) flush_output();
        if (write_failed_) return;
        const size_t n = size < kOutBytes - out_len_ ? size : kOutBytes - out_len_;
        std::memcpy(out_ + out_len_, p, n);
        out_len_ += n;
        p += n;
        size -= n;
    }
    pending_boundary_ = bytes_written_ + out_len_;
    pending_records_ = records_appended_;
}

bool RawWriter::ensure_own_descriptor() {
    if (fd_ < 0) return false;
    if (still_same_file(fd_, file_)) return true;
    // The program closed our descriptor (or the number now names one of its files): never write,
    // truncate or close through it. Our file is reopened by name, if it is still the same file.
    const int lost = fd_;
    fd_ = -1;
    descriptor_guard::publish(-1);
    descriptor_guard::OpeningWindow window;
    const int again = open_own(path_, O_WRONLY | O_APPEND | O_NOFOLLOW);
    if (again >= 0 && still_same_file(again, file_)) {
        fd_ = again;
        descriptor_guard::publish(fd_);
        ::flock(fd_, LOCK_SH | LOCK_NB);
        if (reopened_++ == 0)
            tell_user(
                "process %d closed or replaced tbdprof's raw file descriptor (%d); tbdprof reopened its file "
                "and wrote nothing into the program's",
                static_cast<int>(getpid()), lost);
        return true;
    }
    if (again >= 0) ::close(again);
    descriptor_lost_ = true;
    write_failed_ = true;
    write_errno_ = EBADF;
    out_len_ = 0;
    tell_user(
        "process %d closed tbdprof's raw file descriptor (%d) and %s cannot be reopened: recording of this "
        "process stops here; nothing was written into the program's files",
        static_cast<int>(getpid()), lost, path_);
    return false;
}

bool RawWriter::write_own(const uint8_t* bytes, size_t size) {
    descriptor_guard::CollectorHold hold;  // from the check to the end of the write
    size_t done = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (!ensure_own_descriptor()) return false;
        if (write_all(fd_, bytes, size, done)) return true;
        if (errno != EBADF) break;  // EBADF: closed between the check and the write; check again
    }
    note_write_failure(errno);
    return false;
}

void RawWriter::flush_output() {
    if (out_len_ == 0 || write_failed_ || fd_ < 0) {
        out_len_ = 0;
        return;
    }
    if (!write_own(out_, out_len_)) return;
    bytes_written_ += out_len_;
    out_len_ = 0;
    if (pending_boundary_ <= bytes_written_) {
        committed_boundary_ = pending_boundary_;
        records_committed_ = pending_records_;
    }
}

void RawWriter::write_direct(const uint8_t* bytes, size_t size) {
    flush_output();  // keeps the file in order
    records_appended_ += count_records(bytes, size);
    if (write_failed_ || fd_ < 0) return;
    if (!write_own(bytes, size)) return;
    bytes_written_ += size;
    committed_boundary_ = pending_boundary_ = bytes_written_;
    records_committed_ = pending_records_ = records_appended_;
}

void RawWriter::note_write_failure(int error) {
    // Cut back to the last whole record: a later reader stops at a clean end, and the cut may free
    // the room that the final count record needs.
    descriptor_guard::CollectorHold hold;
    if (ensure_own_descriptor() && ftruncate(fd_, static_cast<off_t>(committed_boundary_)) == 0)
        bytes_written_ = committed_boundary_;
    write_failed_ = true;
    write_errno_ = error;
    out_len_ = 0;
    if (descriptor_lost_) return;  // said in ensure_own_descriptor
    // At once: the user may want to stop a long run whose recording has ended.
    tell_user_now("cannot write %s (%s): recording of this process stops here; what was written is kept", path_,
                  std::strerror(error));
}

void RawWriter::report_write_failure() {
    if (!write_failed_) return;
    const uint64_t lost = records_appended_ - records_committed_;
    raw::RawDropped record{};
    record.header = {raw::RecordKind::Dropped, sizeof record, writer_tid_};
    record.count = lost;
    record.cause = raw::DropCause::WriteFailed;
    descriptor_guard::CollectorHold hold;
    if (!descriptor_lost_ && ensure_own_descriptor() &&
        ::lseek(fd_, static_cast<off_t>(committed_boundary_), SEEK_SET) >= 0 &&
        write_all(fd_, reinterpret_cast<const uint8_t*>(&record), sizeof record)) {
        committed_boundary_ += sizeof record;
        return;
    }
    tell_user("%llu records of process %d could not be written (%s); the trace lacks them",
              static_cast<unsigned long long>(lost), static_cast<int>(getpid()), std::strerror(write_errno_));
}

void RawWriter::append_end(raw::EndReason reason, int wait_ms) {
    if (fd_ < 0 || !lock_drain(wait_ms)) return;
    if (writer_tid_ == 0) writer_tid_ = static_cast<uint32_t>(syscall(SYS_gettid));
    raw::RawProcessEnd record{};
    record.header = {raw::RecordKind::ProcessEnd, sizeof record, writer_tid_};
    record.reason = reason;
    record.host_ns = host_monotonic_ns();
    const back_pressure::Totals held = back_pressure::totals();
    record.ring_held_ns = held.ring_held_ns;
    record.cupti_held_ns = held.cupti_held_ns;
    record.ring_holds = held.ring_holds;
    record.cupti_holds = held.cupti_holds;
    append(&record, sizeof record);
    flush_output();
    unlock_drain();
}

void RawWriter::report_ring_drops(RingSlot& slot) {
    const uint64_t dropped = slot.dropped.load(std::memory_order_relaxed);
    if (dropped <= slot.dropped_reported) return;
    raw::RawDropped record{};
    record.header = {raw::RecordKind::Dropped, sizeof record, slot.tid};
    record.count = dropped - slot.dropped_reported;
    record.cause = raw::DropCause::RingFull;
    record.last_host_ns = slot.last_drop_ns.load(std::memory_order_relaxed);
    record.first_host_ns = slot.first_drop_ns.exchange(0, std::memory_order_relaxed);
    if (record.first_host_ns == 0) record.first_host_ns = record.last_host_ns;
    append(&record, sizeof record);
    slot.dropped_reported = dropped;
}

void RawWriter::drain_locked(bool note_stacks, bool symbolize) {
    if (writer_tid_ == 0) writer_tid_ = static_cast<uint32_t>(syscall(SYS_gettid));
    size_t fullest = 0, capacity = 0;  // bytes waiting in the fullest ring: what arrived since the last drain
    ring_registry().for_each_used([&](RingSlot& slot, SlotState state) {
        const size_t used = slot.ring.used();
        if (used > fullest) fullest = used;
        capacity = slot.ring.capacity();
        slot.ring.consume([&](const uint8_t* bytes, size_t size) {
            if (size >= kDirectWriteBytes && fd_ >= 0) {
                write_direct(bytes, size);
            } else {
                append(bytes, size);
            }
            if (!note_stacks) return;
            for (size_t offset = 0; offset < size;) {
                raw::RawRecordHeader h;
                std::memcpy(&h, bytes + offset, sizeof h);
                if (h.kind == raw::RecordKind::Stack && h.size >= sizeof(raw::RawStack)) {
                    raw::RawStack stack;
                    std::memcpy(&stack, bytes + offset, sizeof stack);
                    const uint32_t depth = static_cast<uint32_t>((h.size - sizeof stack) / sizeof(uint64_t));
                    const auto* ips = reinterpret_cast<const uint64_t*>(bytes + offset + sizeof stack);
                    symbolizer_.note_stack({ips, stack.depth < depth ? stack.depth : depth});
                }
                offset += h.size;
            }
        });
        report_ring_drops(slot);
        // A retired ring is empty now (its thread is gone): the slot can be reused.
        if (state == SlotState::Retired) ring_registry().release(slot);
    });
    const uint64_t now = host_monotonic_ns();
    uint64_t interval = kDrainIntervalNs;
    if (fullest > 0 && last_drain_ns_ != 0 && now > last_drain_ns_) {
        // Time for the fullest ring to reach a quarter of its size at the rate it just filled.
        const double ns_to_quarter = static_cast<double>(capacity / 4) * static_cast<double>(now - last_drain_ns_) /
                                     static_cast<double>(fullest);
        if (ns_to_quarter < static_cast<double>(interval)) interval = static_cast<uint64_t>(ns_to_quarter);
        if (interval < kMinDrainIntervalNs) interval = kMinDrainIntervalNs;
    }
    last_drain_ns_ = now;
    next_drain_interval_ns_.store(interval, std::memory_order_relaxed);

    report_new_drops(raw::DropCause::RingFull, globals().threads_without_ring.load(std::memory_order_relaxed),
                     reported_without_ring_);
    report_new_drops(raw::DropCause::StackTableFull, stack_table_full_count(), reported_stack_full_);
    if (symbolize) {
        symbolizer_.emit_pending(writer_tid_, [this](const void* bytes, size_t size) { append(bytes, size); });
    }
    flush_output();
}

void RawWriter::sample_cpu() {
    // /proc/self/stat: fields 14 and 15 (utime, stime) in clock ticks, after the ")" of the command.
    char text[1024];
    ssize_t n = 0;
    {
        descriptor_guard::OpeningWindow window;
        const int fd = open_own("/proc/self/stat", O_RDONLY);
        if (fd < 0) return;
        n = ::read(fd, text, sizeof text - 1);
        ::close(fd);
    }
    if (n <= 0) return;
    text[n] = '\0';
    const char* p = std::strrchr(text, ')');
    if (p == nullptr) return;
    unsigned long long utime = 0, stime = 0;
    // After ")": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
    if (std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return;
    const long ticks = sysconf(_SC_CLK_TCK);
    const uint64_t ns_per_tick = ticks > 0 ? kNsPerSecond / static_cast<uint64_t>(ticks) : 10000000ull;
    raw::RawCpuSample sample{};
    if (writer_tid_ == 0) writer_tid_ = static_cast<uint32_t>(syscall(SYS_gettid));
    sample.header = {raw::RecordKind::CpuSample, sizeof sample, writer_tid_};
    sample.host_ns = host_monotonic_ns();
    sample.user_cpu_duration_ns = utime * ns_per_tick;
    sample.system_cpu_duration_ns = stime * ns_per_tick;
    append(&sample, sizeof sample);
}

void RawWriter::close() {
    {
        descriptor_guard::CollectorHold hold;
        if (fd_ >= 0 && still_same_file(fd_, file_)) ::close(fd_);  // never a descriptor of the program's
        fd_ = -1;
    }
    descriptor_guard::publish(-1);
}

void RawWriter::abandon_after_fork() {
    // Our copy of the descriptor only (the parent's stays open), unless the number is the program's now.
    descriptor_guard::reset_after_fork();
    close();
    running_.store(false);
    thread_started_.store(false);
    stop_requested_.store(false);
    drain_busy_.store(false);
    held_for_fork_ = false;
    next_drain_interval_ns_.store(0);
    last_drain_ns_ = 0;
    out_len_ = 0;
    writer_tid_ = 0;
    reported_without_ring_ = 0;
    reported_stack_full_ = 0;
    // The parent's writer thread may have been inside these containers: start from fresh ones.
    new (&symbolizer_) Symbolizer();
}

}  // namespace tbdprof::collector
