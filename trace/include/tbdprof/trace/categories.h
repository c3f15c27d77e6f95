// The one table of memory categories (../shared/notes/definitions.md): their names as stored in
// allocation_categories.category and allocation_subranges.category, the order reports list them in,
// and the colour every chart (the HTML report, the viewer) draws them in. "untagged" is not stored:
// it is what a reader calls an allocation the tagger has not labelled.
#pragma once

#include <array>
#include <string_view>

namespace tbdprof::trace {

enum class Category : int { weights, gradients, optimizer_state, activations, workspace, input, other, untagged };
inline constexpr int kCategoryCount = 8;
inline constexpr int kStoredCategoryCount = 7;  // all but untagged

inline constexpr std::array<const char*, kCategoryCount> kCategoryNames = {
    "weights", "gradients", "optimizer_state", "activations", "workspace", "input", "other", "untagged"};

// "#rrggbb"; mid-tone hues that stay readable on light and dark backgrounds.
inline constexpr std::array<const char*, kCategoryCount> kCategoryColors = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                                            "#59a14f", "#edc948", "#b07aa1", "#9d9d9d"};

constexpr const char* category_name(Category category) {
    return kCategoryNames[static_cast<int>(category)];
}

// Empty text is untagged; a name this build does not know counts as other.
constexpr Category category_from_text(std::string_view text) {
    if (text.empty()) return Category::untagged;
    for (int i = 0; i < kStoredCategoryCount; ++i) {
        if (text == kCategoryNames[i]) return static_cast<Category>(i);
    }
    return Category::other;
}

}  // namespace tbdprof::trace
