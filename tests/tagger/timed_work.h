// Made-up models for the tagger's unit tests: work items on a simple clock.
#pragma once

#include "model.h"

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

}  // namespace tbdprof::tagger::test
