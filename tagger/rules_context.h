// The tagging rules' shared state (rules.cpp and the passes split from it): what each allocation's
// lifetime and touches are, the data flow (which holds the iteration of each work item), the tags
// being built. Internal to the tagger.
#pragma once

#include "dataflow.h"
#include "rules.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tbdprof::tagger::rules {

enum class Lifetime { Persistent, Transient, Setup, Teardown, Between, Unknown };

struct Facts {
    Lifetime lifetime = Lifetime::Unknown;
    int iteration = -1;                              // Transient: the iteration it lives in
    std::vector<std::pair<size_t, Access>> touches;  // (work index, access), in launch order
    int h2d_iterations = 0;
    bool first_touch_h2d = false;
    bool gemm_read = false;  // A or B of a library call inside an iteration
    bool library_workspace = false;
};

struct Context {
    const TraceModel& m;
    const IterationSet& its;
    std::vector<Facts> facts;
    std::vector<bool> optimizer_work;
    std::vector<Tag> tags;
    DataFlow flow = {};
    std::vector<bool> shared_temporary = {};  // per allocation: a temporary several works of one operation share
};

inline bool is_write(const WorkItem& w, Access a) {
    return a == Access::Write || (w.kind == WorkItem::Kind::Kernel && a == Access::Unknown);
}

// Whether allocation `a` has been tagged a weight (a parameter the update writes).
inline bool is_weight(const Context& c, int32_t a) {
    return c.tags[size_t(a)].category == "weights";
}

// Index range of iteration `it`'s touches in a buffer's touch list.
inline std::pair<size_t, size_t> touches_in(const Context& c, const FlowFacts& f, int it) {
    size_t begin = 0;
    while (begin < f.touches.size() && c.flow.work_iteration[f.touches[begin].work] != it) ++begin;
    size_t end = begin;
    while (end < f.touches.size() && c.flow.work_iteration[f.touches[end].work] == it) ++end;
    return {begin, end};
}

// Range names are matched without regard to case ("Optimizer.step#SGD.step").
inline char lower_char(char ch) {
    return (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
}

// `text` with its ASCII letters lowered (as steps::lowercase), in `buffer` where it fits, else in
// `spill`: range names were lowered into a new string each, for every range of a trace in each
// search (3% of an import's instructions, most of it the allocations).
class LoweredName {
public:
    std::string_view operator()(std::string_view text) {
        char* out = buffer_;
        if (text.size() > sizeof(buffer_)) {
            spill_.resize(text.size());
            out = spill_.data();
        }
        for (size_t i = 0; i < text.size(); ++i) out[i] = lower_char(text[i]);
        return {out, text.size()};
    }

private:
    char buffer_[256];
    std::string spill_;
};

// Forward, backward and optimizer phases of every iteration (phases.cpp), from the program's own
// ranges where it names them, else from the tags and the update found.
void find_phases(Context& c, TagResult& result);

}  // namespace tbdprof::tagger::rules
