// Which NVTX range names look like a training step: the rule the tagger uses for iterations from
// NVTX (tagger/iterations.cpp, looks_like_step), shared here so that the collector's --steps
// counts the same ranges. `ProfilerStep#N`, and `step`, `iteration`, `train_step`,
// `training_step`, alone or followed by ' ', '#', '_' or a digit; case-insensitive.
#pragma once

#include <cctype>
#include <string_view>

namespace tbdprof {

inline bool looks_like_step_name(std::string_view name) {
    auto lower_starts_with = [&](std::string_view word) {
        if (name.size() < word.size()) return false;
        for (size_t i = 0; i < word.size(); ++i)
            if (std::tolower(static_cast<unsigned char>(name[i])) != word[i]) return false;
        return true;
    };
    if (lower_starts_with("profilerstep#")) return true;
    for (std::string_view word : {"step", "iteration", "train_step", "training_step"}) {
        if (!lower_starts_with(word)) continue;
        if (name.size() == word.size()) return true;
        const char next = name[word.size()];
        if (next == ' ' || next == '#' || next == '_' || std::isdigit(static_cast<unsigned char>(next))) return true;
    }
    return false;
}

}  // namespace tbdprof
