// Device memory a framework's own tools cannot see (docs/analyzer.md, "Memory the framework cannot
// see"): computed from the trace (framework_unseen.cpp), rendered as a report section and in JSON
// (framework_unseen_render.cpp). Internal to the analyzer.
#pragma once

#include <cstdint>
#include <vector>

#include "document.h"
#include "tbdprof/analyzer/report.h"
#include "tbdprof/trace/json_writer.h"
#include "tbdprof/trace/sqlite_handle.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {

// An allocation row as the estimate reads it: device memory (not mapped host memory) of 1 byte to
// 1 PiB, as the memory scan's limit. 64 bytes, the optional columns as values and bits: these are
// held beside the memory scan's own rows (with three std::optional members, 88 bytes, a report's
// peak memory rose by 4.3 MiB on a generated trace of 44,036 allocations).
struct UnseenAllocation {
    enum Present : uint8_t { kThread = 1, kFreeNs = 2, kStack = 4 };
    int64_t id = 0, process = 0, bytes = 0, alloc_ns = 0;
    int64_t thread_value = 0, free_ns_value = 0, stack_value = 0;
    uint8_t present = 0;          // Present bits
    bool stream_ordered = false;  // kind device_async

    trace::OptionalInt thread() const { return optional(kThread, thread_value); }
    trace::OptionalInt free_ns() const { return optional(kFreeNs, free_ns_value); }
    trace::OptionalInt stack() const { return optional(kStack, stack_value); }

private:
    trace::OptionalInt optional(Present bit, int64_t value) const {
        return (present & bit) != 0 ? trace::OptionalInt(value) : std::nullopt;
    }
};

// Appends `row` to `allocations` when the estimate counts it. The memory scan hands each row it
// reads here (read_device_allocations), so the allocations table is read once per report.
void collect_unseen_allocation(const trace::AllocationRow& row, std::vector<UnseenAllocation>& allocations);

// `allocations`: every row collect_unseen_allocation() kept, in id order. `peak_trace_ns`: the
// memory scan's peak moment (MemoryMetrics::peak_trace_ns). Not present without a pool.
FrameworkUnseenMemory framework_unseen_memory(const trace::Database& db, int64_t peak_trace_ns,
                                              std::vector<UnseenAllocation> allocations);

// The "Memory the framework cannot see" section (text, markdown, HTML), for a present result.
Section framework_unseen_section(const FrameworkUnseenMemory& unseen);

// JSON key "framework_unseen": null when not present.
void framework_unseen_json(trace::JsonWriter& json, const FrameworkUnseenMemory& unseen);

}  // namespace tbdprof::analyzer
