#include "tbdprof/collector/capture_gate.h"
#include "tbdprof/collector/cupti_consumer.h"

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/symbol_lookup.h"
#include "tbdprof/collector/user_messages.h"
#include "tbdprof/raw_format.h"

namespace tbdprof::collector::cupti {

std::atomic<int> g_state{static_cast<int>(State::NotTried)};

namespace {

// Buffers handed to CUPTI: a fixed size, as many as CUPTI asks for up to TBDPROF_MAX_BUFFER_MB
// (back_pressure.h: past half of it the launching threads are held until the device catches up, so
// the limit is reached only when that does not help); past the limit CUPTI drops records and counts
// them (reported as CuptiBuffers drops with the times of the refused requests).
constexpr size_t kBufferBytes = size_t{2} << 20;

struct CuptiApi {
    decltype(&cuptiActivityEnable) enable = nullptr;
    decltype(&cuptiActivityDisable) disable = nullptr;
    decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
    decltype(&cuptiActivityFlushAll) flush_all = nullptr;
    decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
    decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
    decltype(&cuptiActivityPushExternalCorrelationId) push_external = nullptr;
    decltype(&cuptiActivityPopExternalCorrelationId) pop_external = nullptr;
    decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;
    decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
    decltype(&cuptiSubscribe) subscribe = nullptr;
    decltype(&cuptiSubscribe_v2) subscribe_v2 = nullptr;  // CUDA 13: names the other subscriber
};

CuptiApi g_api;
DeviceClock g_device_clock;  // CUPTI's timestamps -> host monotonic

// Buffers CUPTI handed back, kept for the next request instead of freed: a fresh 2 MiB buffer costs
// 512 page faults as CUPTI fills it, which on a launch-bound loop was ~10 faults per thousand
// launches, paid inside the launching thread. At most kSpareBuffers are kept (the memory of a burst
// beyond them goes back to the system); requests are rare (one per few thousand records), so a mutex
// is fine.
constexpr int kSpareBuffers = 64;
std::mutex g_spare_mutex;
uint8_t* g_spare[kSpareBuffers];
int g_spare_count = 0;

uint8_t* take_spare_buffer() {
    std::lock_guard lock(g_spare_mutex);
    return g_spare_count > 0 ? g_spare[--g_spare_count] : nullptr;
}

void recycle_buffer(uint8_t* buffer) {
    {
        std::lock_guard lock(g_spare_mutex);
        if (g_spare_count < kSpareBuffers) {
            g_spare[g_spare_count++] = buffer;
            return;
        }
    }
    std::free(buffer);
}
thread_local bool t_starting = false;

uint64_t CUPTIAPI host_monotonic_timestamp() {
    return host_monotonic_ns();
}

bool load_api() {
    void* library = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        // CUDA 12's CUPTI has other activity record layouts than the CUDA 13 ones read here.
        if (void* cuda12 = dlopen("libcudart.so.12", RTLD_LAZY | RTLD_NOLOAD); cuda12 != nullptr) {
            dlclose(cuda12);
            tell_user("the program uses CUDA 12; tbdprof reads CUDA 13's CUPTI only, "
                      "so it records with host-side timing");
        }
        return false;
    }
    return resolve(library, "cuptiActivityEnable", g_api.enable) &&
           resolve(library, "cuptiActivityDisable", g_api.disable) &&
           resolve(library, "cuptiActivityRegisterCallbacks", g_api.register_callbacks) &&
           resolve(library, "cuptiActivityFlushAll", g_api.flush_all) &&
           resolve(library, "cuptiActivityGetNextRecord", g_api.next_record) &&
           resolve(library, "cuptiActivityGetNumDroppedRecords", g_api.dropped_records) &&
           resolve(library, "cuptiActivityPushExternalCorrelationId", g_api.push_external) &&
           resolve(library, "cuptiActivityPopExternalCorrelationId", g_api.pop_external) &&
           resolve(library, "cuptiGetTimestamp", g_api.get_timestamp) &&
           (resolve(library, "cuptiActivityRegisterTimestampCallback", g_api.register_timestamp) || true) &&
           (resolve(library, "cuptiSubscribe_v2", g_api.subscribe_v2) || true) &&
           (resolve(library, "cuptiSubscribe", g_api.subscribe) || true);
}

void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// CUPTI has one subscriber per process, and every client is to subscribe before profiling. We
// subscribe and keep the subscription (enabling no callback): when another tool (torch.profiler,
// Nsight, a program tracing itself) already holds CUPTI, its Activity API settings and buffers must
// not be replaced by ours, so we say so once and record with host-side timing instead.
bool claim_cupti() {
    CUpti_SubscriberHandle handle = nullptr;
    CUptiResult result = CUPTI_SUCCESS;
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 16] = {};
    if (g_api.subscribe_v2 != nullptr) {
        CUpti_SubscriberParams params{};
        params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        params.subscriberName = "tbdprof";
        params.oldSubscriberName = holder;
        params.oldSubscriberSize = sizeof holder;
        result = g_api.subscribe_v2(&handle, ignore_callback, nullptr, &params);
    } else if (g_api.subscribe != nullptr) {
        result = g_api.subscribe(&handle, ignore_callback, nullptr);
    }
    if (result == CUPTI_SUCCESS) return true;
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && holder[0] != '\0') {
        tell_user("another tool holds CUPTI (%s); recording with host-side timing", holder);
    } else if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        tell_user("another tool holds CUPTI; recording with host-side timing");
    } else {
        tell_user("CUPTI refused a subscriber (error %d); recording with host-side timing", static_cast<int>(result));
    }
    return false;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *max_records = 0;
    *buffer = nullptr;
    *size = 0;
    if (!back_pressure::take_cupti_buffer(kBufferBytes)) {
        back_pressure::note_cupti_refusal();
        return;
    }
    void* memory = take_spare_buffer();
    if (memory == nullptr) memory = std::aligned_alloc(8, kBufferBytes);
    if (memory == nullptr) {
        back_pressure::give_back_cupti_buffer(kBufferBytes);
        back_pressure::note_cupti_refusal();
        return;
    }
    *buffer = static_cast<uint8_t*>(memory);
    *size = kBufferBytes;
}

raw::CopyKind copy_kind_of(uint8_t cupti_kind) {
    switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return raw::CopyKind::HostToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return raw::CopyKind::DeviceToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return raw::CopyKind::DeviceToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return raw::CopyKind::HostToHost;
    default: return raw::CopyKind::Default;
    }
}

// TBDPROF_TEST_DROP_CORRELATION_EVERY=N (tests only, docs/reliability.md): every N-th CUPTI
// correlation record is dropped and counted as a CuptiBuffers drop, as CUPTI does under pressure,
// to test that the builder stores such work once. 0 (unset): never.
uint64_t forced_drop_interval() {
    static const uint64_t every = [] {
        const char* text = std::getenv("TBDPROF_TEST_DROP_CORRELATION_EVERY");
        return text != nullptr ? std::strtoull(text, nullptr, 10) : 0ull;
    }();
    return every;
}
std::atomic<uint64_t> g_correlations_seen{0};

// Whether this correlation record is one the test knob drops.
bool force_drop() {
    const uint64_t every = forced_drop_interval();
    return every != 0 && g_correlations_seen.fetch_add(1, std::memory_order_relaxed) % every == every - 1;
}

// TBDPROF_TEST_DROPPED_CORRELATIONS=PATH (tests only, with the knob above): each dropped record is
// also appended to PATH as "CORRELATION_ID EXTERNAL_ID", the answer a test checks the builder's
// pairing of the work against (tests/reliability/lost_pairing_check.cpp).
void note_forced_drop(const CUpti_ActivityExternalCorrelation& e) {
    static const int fd = [] {
        const char* path = std::getenv("TBDPROF_TEST_DROPPED_CORRELATIONS");
        return path != nullptr ? ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    }();
    if (fd >= 0) {
        dprintf(fd, "%u %llu\n", e.correlationId, static_cast<unsigned long long>(e.externalId));
    }
}

// What kernel, copy and set records share (CUPTI names these fields alike in each), on the host clock.
template <class Activity>
raw::RawDeviceActivity device_activity(const Activity& a) {
    raw::RawDeviceActivity out{};
    out.start_host_ns = g_device_clock.host_monotonic_ns(a.start);
    out.end_host_ns = g_device_clock.host_monotonic_ns(a.end);
    out.correlation_id = a.correlationId;
    out.stream_id = a.streamId;
    out.device = static_cast<int32_t>(a.deviceId);
    out.context_id = a.contextId;
    return out;
}

// Returns false when the record was dropped (the test knob).
bool convert(ThreadState& thread, const CUpti_Activity* record) {
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        raw::RawDeviceActivity out = device_activity(*k);
        out.name_string = k->name != nullptr ? intern_string(thread, k->name) : 0;
        emit_record(thread, raw::RecordKind::DeviceKernel, out);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        raw::RawDeviceActivity out = device_activity(*c);
        out.bytes = c->bytes;
        out.copy_kind = static_cast<uint8_t>(copy_kind_of(c->copyKind));
        emit_record(thread, raw::RecordKind::DeviceCopy, out);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* s = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        raw::RawDeviceActivity out = device_activity(*s);
        out.bytes = s->bytes;
        emit_record(thread, raw::RecordKind::DeviceSet, out);
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) break;
        if (force_drop()) {
            note_forced_drop(*e);
            return false;
        }
        raw::RawCorrelation out{};
        out.correlation_id = e->correlationId;
        out.sequence = e->externalId;
        emit_record(thread, raw::RecordKind::Correlation, out);
        break;
    }
    default: break;
    }
    return true;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                               size_t valid_size) {
    ThreadState& thread = thread_state();
    size_t forced = 0;
    if (buffer != nullptr && valid_size > 0) {
        CUpti_Activity* record = nullptr;
        while (g_api.next_record(buffer, valid_size, &record) == CUPTI_SUCCESS)
            forced += convert(thread, record) ? 0 : 1;
    }
    size_t dropped = 0;
    if (g_api.dropped_records(context, stream_id, &dropped) != CUPTI_SUCCESS) dropped = 0;
    dropped += forced;
    if (dropped > 0) {
        raw::RawDropped out{};
        out.count = dropped;
        out.cause = raw::DropCause::CuptiBuffers;
        back_pressure::take_cupti_refusal_times(out.first_host_ns, out.last_host_ns);
        if (out.last_host_ns == 0)
            out.first_host_ns = out.last_host_ns = host_monotonic_ns();  // the test knob's drops: now
        emit_record(thread, raw::RecordKind::Dropped, out);
    }
    if (buffer != nullptr) {
        recycle_buffer(buffer);
        back_pressure::give_back_cupti_buffer(kBufferBytes);
    }
}

void emit_clock_source(raw::ClockSource source) {
    ThreadState& thread = thread_state();
    raw::RawClockSource out{};
    out.source = source;
    out.cupti_offset_ns = static_cast<uint64_t>(g_device_clock.host_minus_device_ns);
    emit_record(thread, raw::RecordKind::ClockSource, out);
}

// The API record kinds enabled beside the work: real CUPTI writes external correlation records only in
// front of API records (cupti_activity.h, cuptiActivityPushExternalCorrelationId), so without one of
// them no device record can be joined by id and every join falls back to order. Both by default, as the
// work launched through the runtime shares one id with its runtime and its driver API record ("the
// driver and runtime API activity record", CUpti_ActivityMemcpy6), and only the driver record's
// external correlation carries the id our driver-level hooks push (the trace builder prefers it).
// TBDPROF_CUPTI_API_RECORDS=driver|runtime|none narrows it, to compare them on a device
// (docs/collector.md). The API records themselves are skipped when read.
struct ApiRecordKinds {
    bool runtime = true;
    bool driver = true;
};
ApiRecordKinds api_record_kinds() {
    static const ApiRecordKinds kinds = [] {
        const char* text = std::getenv("TBDPROF_CUPTI_API_RECORDS");
        if (text == nullptr) return ApiRecordKinds{};
        if (std::strcmp(text, "runtime") == 0) return ApiRecordKinds{true, false};
        if (std::strcmp(text, "driver") == 0) return ApiRecordKinds{false, true};
        if (std::strcmp(text, "none") == 0) return ApiRecordKinds{false, false};
        return ApiRecordKinds{};  // "both", or a value not understood: the default
    }();
    return kinds;
}

void switch_api_records(bool enable) {
    const ApiRecordKinds kinds = api_record_kinds();
    for (auto [kind, wanted] :
         {std::pair{CUPTI_ACTIVITY_KIND_RUNTIME, kinds.runtime}, std::pair{CUPTI_ACTIVITY_KIND_DRIVER, kinds.driver}}) {
        if (!wanted) continue;
        if (enable)
            g_api.enable(kind);
        else
            g_api.disable(kind);
    }
}

bool enable_activity() {
    // TBDPROF_CUPTI=0: leave CUPTI to another tool (or measure the collector without it).
    if (const char* setting = std::getenv("TBDPROF_CUPTI"); setting != nullptr && std::strcmp(setting, "0") == 0) {
        return false;
    }
    if (!load_api()) return false;
    if (!claim_cupti()) return false;
    if (g_api.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return false;
    // Our clock when CUPTI lets us supply it; otherwise the offset between the clocks, measured once.
    if (g_api.register_timestamp != nullptr && g_api.register_timestamp(host_monotonic_timestamp) == CUPTI_SUCCESS) {
        g_device_clock = DeviceClock{};
    } else {
        uint64_t device_now_ns = 0;
        const uint64_t host_before_ns = host_monotonic_ns();
        if (g_api.get_timestamp(&device_now_ns) != CUPTI_SUCCESS) return false;
        const uint64_t host_after_ns = host_monotonic_ns();
        g_device_clock = DeviceClock::from_readings(host_before_ns, device_now_ns, host_after_ns);
    }
    // Kernels are essential; another subscriber (Nsight, torch.profiler) makes this fail.
    if (g_api.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) return false;
    g_api.enable(CUPTI_ACTIVITY_KIND_MEMCPY);
    g_api.enable(CUPTI_ACTIVITY_KIND_MEMSET);
    if (g_api.enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) != CUPTI_SUCCESS) {
        g_api.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        g_api.disable(CUPTI_ACTIVITY_KIND_MEMCPY);
        g_api.disable(CUPTI_ACTIVITY_KIND_MEMSET);
        return false;
    }
    switch_api_records(true);  // a kind refused only means joins by order (ApiRecordKinds)
    return true;
}

// Capture windows (capture_gate.h): kernel, copy and set activity only while a window is open, so
// that outside one the driver does no CUPTI record keeping per launch (external correlation too:
// the ids a thread keeps pushed stay pushed while the kind is off).
void switch_activity(bool enable) {
    if (!active()) return;
    for (CUpti_ActivityKind kind :
         {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
          CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}) {
        if (enable) g_api.enable(kind);
        else g_api.disable(kind);
    }
    switch_api_records(enable);
}

}  // namespace

void start() {
    if (t_starting) return;  // CUPTI's own driver lookups come back through our hooks
    int expected = static_cast<int>(State::NotTried);
    if (!g_state.compare_exchange_strong(expected, static_cast<int>(State::Starting))) {
        // Another thread is starting it: wait, so that our next launch is seen by CUPTI.
        while (g_state.load(std::memory_order_acquire) == static_cast<int>(State::Starting)) {
            sched_yield();
        }
        return;
    }
    t_starting = true;
    const bool ok = enable_activity();
    t_starting = false;
    emit_clock_source(ok ? raw::ClockSource::Cupti : raw::ClockSource::HostOnly);
    g_state.store(static_cast<int>(ok ? State::Active : State::Unavailable), std::memory_order_release);
    if (ok) back_pressure::set_cupti_flusher([] { flush(false); });
    if (ok && capture::controlled()) {
        // Enabled above so that another subscriber is detected the usual way; off until a window opens.
        capture::set_activity_switch(switch_activity);
        if (!capture::is_open()) switch_activity(false);
    }
}

void push_correlation(uint64_t sequence) {
    g_api.push_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, sequence);
}

void tag_thread(ThreadState& thread) {
    if (thread.tid == 0) thread.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    thread.cupti_thread_tag = raw::kThreadCorrelationTag | thread.tid;
    g_api.push_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, thread.cupti_thread_tag);
}

void pop_correlation() {
    uint64_t last = 0;
    g_api.pop_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

void flush(bool forced) {
    if (!active()) return;
    g_api.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void disable_after_fork() {
    if (g_state.load() == static_cast<int>(State::NotTried)) return;  // a child may start its own
    g_state.store(static_cast<int>(State::Unavailable));
}

}  // namespace tbdprof::collector::cupti
