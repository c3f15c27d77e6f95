// The data-flow model of a run: per iteration, the work in launch order and, per buffer (an
// allocation, or a tensor inside one turned into an allocation of a derived model), how each
// touch used it. The roles in tagger/rules.cpp are decided from these facts, not from lifetimes.
#pragma once

#include "iterations.h"
#include "model.h"
#include "work_iterations.h"

#include <cstdint>
#include <vector>

namespace tbdprof::tagger {

// How one work item used a buffer. Known: Read (a library input operand, a pointer-to-const
// parameter, a copy's source), Overwrite (a set, a copy's destination, a library output operand),
// Workspace (a library call's workspace). Modify: a non-const pointer (written, maybe read first).
// Unknown: extern "C" kernels and pointers inside structs.
enum class Use : uint8_t { Read, Overwrite, Modify, Unknown, Workspace };

Use use_of(const TraceModel& m, const WorkItem& w, const Touch& t);
inline bool writes(Use u) {
    return u == Use::Overwrite || u == Use::Modify || u == Use::Unknown || u == Use::Workspace;
}

struct FlowTouch {
    uint32_t work = 0;
    Use use = Use::Unknown;
    bool reads_first = false;  // Touch::reads_first: a kernel write that reads the value first
};

// What the flow says about one buffer across the iterations that decide (the steady ones, all but
// the first when there are three or more and the buffer is used in them; else all it is used in).
struct FlowFacts {
    std::vector<FlowTouch> touches;      // every touch, in launch order
    uint32_t iterations_used = 0;        // deciding iterations with a touch by a kernel or library call
    uint32_t carried_in = 0;             // ... whose first kernel/library touch reads it (state from before)
    uint32_t updated_after_read = 0;     // ... carried in and then written by a kernel later in the step
    uint32_t temp_episodes = 0;          // write -> single adjacent read episodes ...
    uint32_t other_episodes = 0;         // ... and every other pattern of use (in deciding iterations)
    uint32_t most_temp_episodes = 0;     // the most temporary episodes in one deciding iteration
    bool h2d = false;                    // overwritten by a host-to-device copy inside an iteration
    bool kernel_written = false;         // written by a kernel or library call inside an iteration
    bool written_in_iterations = false;  // written by anything (sets and copies too) inside one
};

struct DataFlow {
    WorkIterations work_iteration;    // per work item: its iteration, -1 outside
    std::vector<bool> deciding;       // per iteration: counts for the roles
    std::vector<FlowFacts> buffers;   // per allocation of the model
};

DataFlow build_data_flow(const TraceModel& m, const IterationSet& its);

// Write-then-read episodes of touches [begin, end): a write, then the reads of what it wrote (an
// extern "C" kernel of unknown access right after the write taken as its consumer). A temporary
// episode is one write read once by the work right after it, at most one kernel between; every other
// pattern, a read of a value from elsewhere or a library's own workspace use, is other.
struct WriteEpisodes {
    uint32_t temporary = 0, other = 0;
};
WriteEpisodes count_write_episodes(const TraceModel& m, const std::vector<FlowTouch>& touches, size_t begin,
                                   size_t end);

}  // namespace tbdprof::tagger
