#include <string_view>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

namespace {
// Report order: the categories of docs/definitions.md, then allocations nobody has tagged yet.
constexpr const char* kNames[kCategoryCount] = {"weights",   "gradients", "optimizer_state", "activations",
                                                "workspace", "input",     "other",           "untagged"};
}  // namespace

const char* category_name(int index) {
    return index >= 0 && index < kCategoryCount ? kNames[index] : "other";
}

int category_index(std::string_view name) {
    if (name.empty()) return kUntagged;
    for (int i = 0; i < kCategoryCount; ++i) {
        if (name == kNames[i]) return i;
    }
    return 6;  // a category this build does not know counts as "other"
}

}  // namespace tbdprof::analyzer
