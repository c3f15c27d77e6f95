// CUPTI_ACTIVITY_KIND_RUNTIME records. The simulated runtime says when each of its outermost calls
// begins and ends (TbdsimPrivateApi::runtime_call_boundary). A call's record carries the correlation
// id of the work it enqueued through the driver (cupti_activity.h: "identical to the correlation ID in
// the driver and runtime API activity record"), and is written when the call ends: after the DRIVER
// record of that work, whose call ended first. The external correlation records in front of it are
// the ids in force when the runtime call began, so a tool that pushes an id only around the driver
// call (as tbdprof's driver-level hooks do) finds it on the DRIVER record's correlation alone.
// Only calls that enqueue work get a record here; real CUPTI writes one for every call.
#pragma once

#include <cstdint>

#include "record_translation.h"

namespace tbdsim::cupti {

// A runtime call begins on the calling thread (at host time `host_ns`, the client's clock).
void begin_runtime_call(uint64_t host_ns);
// Work with `correlation_id` was enqueued on the calling thread: inside a runtime call it is that
// call's; outside one (a direct driver call) nothing is noted.
void note_runtime_work(uint32_t correlation_id);
// The calling thread's runtime call ends at `host_ns`: its records, external correlations first when
// `with_correlations`, go to `out` (none when the call enqueued nothing or never began).
void end_runtime_call(uint64_t host_ns, bool with_correlations, RecordBytes& out);

}  // namespace tbdsim::cupti
