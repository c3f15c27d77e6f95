// The program's ranges whose name contains a word ("optimizer"), indexed by time: whether a moment
// of a process lies inside one, in log time. Matching every range's name again for every question
// made tagging an import with millions of operator ranges quadratic (docs/benchmarks.md, "Tagging
// a large import").
#pragma once

#include "model.h"

#include <string_view>
#include <vector>

namespace tbdprof::tagger {

class RangesNamed {
public:
    // `word` in lower case; names are matched without regard to case ("Optimizer.step#SGD.step").
    RangesNamed(const std::vector<Range>& ranges, std::string_view word);

    // Whether some range of `process` so named has begin_ns <= trace_ns <= end_ns.
    bool contain(int32_t process, int64_t trace_ns) const;

private:
    struct Entry {
        int32_t process = 0;
        int64_t begin_ns = 0;
        int64_t max_end_ns = 0;  // the latest end of this process's ranges that begin no later
    };
    std::vector<Entry> entries_;  // by (process, begin_ns)
};

}  // namespace tbdprof::tagger
