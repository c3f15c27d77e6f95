// Gradient buckets, the P3 view (docs/analyzer.md, "Gradient buckets (P3)"): what the trace says about
// each all-reduce and reduce-scatter and the uses of its buffers (communication_buckets_read.cpp), the
// figures per bucket and round (communication_buckets.cpp), and their section and JSON
// (communication_buckets_render.cpp). Internal to the analyzer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "communication.h"
#include "tbdprof/trace/json_writer.h"
#include "trace_file.h"

namespace tbdprof::analyzer {

// The category of memory at a place and a moment: the tensor's (a pooled segment's sub-range live
// then) where there is one, else the allocation's; empty when untagged (communication_buckets_tags.cpp).
class MemoryTags {
public:
    explicit MemoryTags(const TraceFile& trace);
    std::string_view category(int64_t allocation, int64_t offset, int64_t trace_ns) const;
    bool gradients(int64_t allocation, int64_t offset, int64_t trace_ns) const {
        return category(allocation, offset, trace_ns) == "gradients";
    }

private:
    struct Subrange {
        int64_t offset, bytes, begin_ns, end_ns;
        std::string category;
    };
    std::unordered_map<int64_t, std::string> allocations_;
    std::unordered_map<int64_t, std::vector<Subrange>> subranges_;  // per segment, by offset
};

// One use of an allocation by a kernel (its own pointer argument, or its library call's operand) or a
// copy, in device time.
struct BufferAccess {
    int64_t begin_ns = 0, end_ns = 0;
    int64_t launch_ns = 0;  // host launch: the use could not have started earlier
    int64_t process = 0, stream = 0;
    int64_t offset = 0;  // pointer - allocation address
    bool write = false;
    bool from_gradients = false;  // a write whose inputs include gradient-tagged memory: a copy of gradients
};

// An all-reduce or reduce-scatter with its kernel, as recorded.
struct CollectiveCall {
    int64_t process = 0, device = 0;
    int64_t start_ns = 0, end_ns = 0;
    std::string op;
    int64_t input_allocation = -1, input_offset = 0, input_bytes = 0;  // allocation -1: in none
    int64_t output_allocation = -1, output_offset = 0, output_bytes = 0;
    std::string input_category;  // the input's sub-range's category, else its allocation's; "" untagged
};

struct BucketInputs {
    std::vector<CollectiveCall> collectives;                // over the whole run, in start order
    std::map<int64_t, std::vector<BufferAccess>> accesses;  // by allocation, in start order
    int64_t grouped = 0;  // calls inside NCCL groups: their kernel is the group's, not theirs
    std::string missing;  // why the trace cannot say (columns an older trace lacks); empty: it can
};

// Collectives and the uses of their buffers. Communication kernels (is_comm by function id) are no use.
BucketInputs read_bucket_inputs(const TraceFile& trace, const std::vector<bool>& is_comm);

// The ends of the kernels other than communication kernels on each stream that a use runs on, in start
// order: what the stream had to do before that use.
std::map<std::pair<int64_t, int64_t>, std::vector<Stretch>> read_stream_kernels(
    const TraceFile& trace, const std::vector<bool>& is_comm, const std::vector<std::pair<int64_t, int64_t>>& streams);

// Fills report.communication's buckets and rounds, and a note for collectives the tags do not identify.
// `read_kernels` gives the ranks' kernels with their unions; it is called only when the trace has
// what the view needs.
void scan_buckets(const TraceFile& trace, const std::vector<bool>& is_comm,
                  const std::function<std::vector<RankKernels>()>& read_kernels, Report& report);

// JSON keys "buckets", "bucket_rounds", "overlap_savings_bound_per_round_s" and
// "unidentified_collectives" inside "communication".
void buckets_json(trace::JsonWriter& json, const CommunicationMetrics& m);

}  // namespace tbdprof::analyzer
