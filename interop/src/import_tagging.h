// Imported traces are tagged like recorded ones: the tagger runs on them (by lifetimes and named
// ranges, with its lower confidence, since an import carries no kernel arguments); where the import
// carries PyTorch's own memory categories (a torch.profiler memory-timeline export) those are kept
// as the tags, with PyTorch named as their source.
#pragma once

#include <string>

namespace tbdprof::interop {

// How an allocation_categories row names PyTorch as the source of its category.
inline constexpr const char* kPyTorchCategoryRule = "pytorch-memory-timeline";
inline constexpr const char* kPyTorchCategoryReason = "PyTorch categorized it (torch.profiler memory timeline)";
inline constexpr double kPyTorchCategoryConfidence = 0.9;

struct ImportTagging {
    bool tagged = false;            // the tagger ran
    std::string error;              // when it could not (the trace stays valid, untagged)
    size_t pytorch_categories = 0;  // allocations whose category is PyTorch's
    size_t iterations = 0;
};

// Tags the trace at `path` (a complete, not yet published import).
ImportTagging tag_imported_trace(const std::string& path);

}  // namespace tbdprof::interop
