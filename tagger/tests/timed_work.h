// Made-up models for the tagger's unit tests: work items on a simple clock.
#pragma once

#include "model.h"

#include <utility>
#include <vector>

namespace tbdprof::tagger::test {

// A work item enqueued at `now`, running from now+5 to now+10 ns; advances the clock by 20 ns, so
// consecutive items never overlap and keep their order.
inline WorkItem timed_work(WorkItem::Kind kind, int32_t function, int64_t& now) {
    WorkItem w;
    w.kind = kind;
    w.launch_ns = now;
    w.start_ns = now + 5;
    w.end_ns = now + 10;
    now += 20;
    w.function = function;
    return w;
}

// Work appended to a made-up model on its clock: a kernel with its touches; a set or host-to-device
// copy writing one buffer; a GEMM reading a and b and writing c (a library call with its kernel).
inline void add_work(TraceModel& model, int64_t& now, WorkItem::Kind kind, int32_t function,
                     std::vector<Touch> touches) {
    WorkItem item = timed_work(kind, function, now);
    item.touches = std::move(touches);
    model.work.push_back(std::move(item));
}

inline void add_gemm(TraceModel& model, int64_t& now, int32_t a, int32_t b, int32_t c) {
    LibraryCall call;
    call.a = a, call.b = b, call.c = c;
    model.library_calls.push_back(call);
    WorkItem item = timed_work(WorkItem::Kind::Kernel, 100, now);
    item.library_call = static_cast<int32_t>(model.library_calls.size() - 1);
    item.touches = {{a, Access::Read}, {b, Access::Read}, {c, Access::Write}};
    model.work.push_back(std::move(item));
}

}  // namespace tbdprof::tagger::test
