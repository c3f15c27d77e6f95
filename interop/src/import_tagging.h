// Imported traces are tagged like recorded ones: the tagger runs on them (by lifetimes and named
// ranges, with its lower confidence, since an import carries no kernel arguments); where the import
// carries PyTorch's own memory categories (a torch.profiler memory-timeline export) those are kept
// as the tags, with PyTorch named as their source.
#pragma once

#include "tbdprof/tagger/tagger.h"
#include "tbdprof/trace/trace_model.h"

#include <string>
#include <vector>

namespace tbdprof::interop {

struct ImportTagging {
    bool tagged = false;            // the tagger ran
    std::string error;              // when it could not (the trace stays valid, untagged)
    size_t pytorch_categories = 0;  // allocations whose category is PyTorch's
    size_t iterations = 0;
};

// Tags the trace at `path` (a complete, not yet published import; `written`: its ranges and
// allocations tables as written, tagger.h), then puts `pytorch` (the categories the import wrote,
// import_model.cpp) back over the tagger's.
ImportTagging tag_imported_trace(const std::string& path, tagger::WrittenRows written,
                                 const std::vector<trace::detail::AllocationCategoryRow>& pytorch);

}  // namespace tbdprof::interop
