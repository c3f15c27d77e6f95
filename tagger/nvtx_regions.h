// Regions the program names: a sub-allocator that registers the tensors inside its allocations with
// NVTX's memory extension (the trace's memory_regions) says where each tensor lies and how long it
// lives, which the tagger otherwise infers from the pointers the work used (subranges.h). In an
// allocation that holds registered regions, the regions take the place of the inferred sub-ranges:
// pointer uses inside a region while it is registered are that region's; the others keep their
// inferred sub-range. The ordinary rules then tag every region; a region whose name begins with a
// category name (docs/tagging.md, "Regions the program names") takes that category instead, under
// the rule `nvtx-region-name`.
#pragma once

#include "model.h"
#include "rules.h"
#include "subranges.h"

#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tbdprof::trace {
class Database;
}

namespace tbdprof::tagger {

// The rule name of a category a region's name gave.
inline constexpr const char* kRegionNameRule = "nvtx-region-name";

// The category a region's name announces: a stored category name ("weights", "gradients",
// "optimizer_state", "activations", "workspace", "input", "other"), exactly and in lower case, either
// the whole name or followed by ':' or '/' ("weights:fc1.W", "optimizer_state/adam_m/fc1").
// Anything else ("weightsX", "Weights:fc1", "w:fc1", "") announces nothing.
std::optional<std::string_view> category_of_region_name(std::string_view name);

// Reads memory_regions into model.regions (those in device allocations of the model, sorted by
// allocation then offset) and marks the model pooled when there are any, so that load_model keeps
// the pointer uses regions are built from. `alloc_index`: allocations.id -> index in the model.
void load_registered_regions(const trace::Database& db, const std::unordered_map<int64_t, int32_t>& alloc_index,
                             TraceModel& model);

// derive_subranges, then the registered regions in place of the inferred sub-ranges where there are
// any. `region_of_range` receives, per sub-range of the result, its index in model.regions or kNone.
SubRangeSet derive_with_regions(const TraceModel& model, const IterationSet& iterations,
                                std::vector<int32_t>& region_of_range);

// Before the segment rows are decided (pool_tagging.cpp's collect): the tags of regions whose name
// announces a category become that category. `virtual_index` as with_subranges gives it.
void apply_region_names(const TraceModel& model, const std::vector<int32_t>& region_of_range,
                        const std::vector<int32_t>& virtual_index, TagResult& result);

// After collect: region sub-ranges live from registration to unregistration (when the program said),
// and the result counts them. `set` and `virtual_index` as given to collect.
void finish_region_rows(const TraceModel& model, const SubRangeSet& set, const std::vector<int32_t>& region_of_range,
                        const std::vector<int32_t>& virtual_index, TagResult& result);

}  // namespace tbdprof::tagger
