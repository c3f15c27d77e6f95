#include "runtime_api_records.h"

#include "external_correlation.h"

namespace tbdsim::cupti {
namespace {

// A call enqueues one piece of work, or several sharing an id (a graph launch); a few slots suffice,
// the rest of a call that enqueues more under distinct ids is not described (not seen in the runtime).
constexpr int kWorkPerCall = 4;

struct RuntimeCall {
    bool open = false;
    uint64_t begin_host_ns = 0;
    ExternalIds ids_at_begin;
    uint32_t correlation_ids[kWorkPerCall] = {};
    int work_count = 0;
};

thread_local constinit RuntimeCall t_call{};

}  // namespace

void begin_runtime_call(uint64_t host_ns) {
    RuntimeCall& call = t_call;
    call.open = true;
    call.begin_host_ns = host_ns;
    call.ids_at_begin = external_ids_of_this_thread();
    call.work_count = 0;
}

void note_runtime_work(uint32_t correlation_id) {
    RuntimeCall& call = t_call;
    if (!call.open) return;
    if (call.work_count > 0 && call.correlation_ids[call.work_count - 1] == correlation_id) return;
    if (call.work_count < kWorkPerCall) call.correlation_ids[call.work_count++] = correlation_id;
}

void end_runtime_call(uint64_t host_ns, bool with_correlations, RecordBytes& out) {
    RuntimeCall& call = t_call;
    if (!call.open) return;
    call.open = false;
    for (int i = 0; i < call.work_count; ++i) {
        if (with_correlations) add_external_correlations(call.ids_at_begin, call.correlation_ids[i], out);
        add_api_record(CUPTI_ACTIVITY_KIND_RUNTIME, call.correlation_ids[i], call.begin_host_ns, host_ns, out);
    }
}

}  // namespace tbdsim::cupti
