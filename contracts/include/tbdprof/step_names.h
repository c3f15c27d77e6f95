// Which NVTX range names mark a training step: the one matcher the tagger, the report and the
// collector's `--steps` share. Header-only, among the stage-0 contracts (contracts/), so that no stage
// depends on a later one for it.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tbdprof::steps {

// ASCII letters lowered, every other byte kept: what std::tolower does in the "C" locale tbdprof's
// commands run in, without its call per byte (this runs on every range of a trace).
inline std::string lowercase(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return out;
}

// The name without its trailing step number and the separators before it, lower case:
// "ProfilerStep#12" -> "profilerstep", "Train step 3" -> "train step", "iteration_7" -> "iteration".
inline std::string step_family(std::string_view name) {
    size_t end = name.size();
    while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
    while (end > 0 && std::string_view("#_-: ").find(name[end - 1]) != std::string_view::npos) --end;
    return lowercase(name.substr(0, end));
}

// A family names a step when its last word is a step word: "step", "iteration", "iter",
// "profilerstep" (PyTorch), "train step", "training_step", "Train step" all do; "stepper" does not.
inline bool is_step_family(const std::string& family) {
    size_t start = family.find_last_of(" _-:#.");
    std::string last = start == std::string::npos ? family : family.substr(start + 1);
    return last == "step" || last == "iteration" || last == "iter" || last == "profilerstep" || last == "trainstep";
}

// A numbered step name ("Train step 3", "ProfilerStep#5"), or a bare step word ("step",
// "train_step"). Unnumbered names that merely contain "step" ("Optimizer.step#SGD.step") are not.
inline bool looks_like_step(std::string_view name) {
    bool numbered = !name.empty() && std::isdigit(static_cast<unsigned char>(name.back()));
    // Lowering keeps lengths and separators: most names (every operator of an import) are ruled out
    // by the length of the word that would have to be a step word, before any copy is made.
    const size_t max_word = 13;  // "training_step"
    if (!numbered && name.size() > max_word) return false;
    std::string family = step_family(name);
    if (numbered) return is_step_family(family);
    std::string whole = lowercase(name);
    return whole == "step" || whole == "iteration" || whole == "train_step" || whole == "training_step" ||
           whole == "train step";
}

// Glob match with '*' (any run) and '?' (one character), case-sensitive.
inline bool glob_match(std::string_view pattern, std::string_view text) {
    size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p, ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++, mark = t;
        } else if (star != std::string_view::npos) {
            p = star + 1, t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

// `--iteration-range P`: an exact name, a prefix ("Train step" matches "Train step 0"), or a pattern
// with '*' and '?'.
inline bool matches_iteration_range(std::string_view name, std::string_view wanted) {
    if (wanted.empty()) return looks_like_step(name);
    if (wanted.find_first_of("*?") != std::string_view::npos) return glob_match(wanted, name);
    return name.substr(0, wanted.size()) == wanted;
}

struct NamedRange {
    int64_t process = 0, begin_ns = 0, end_ns = 0;
    std::string name;
};

struct StepRanges {
    int64_t process = 0;
    std::string family;                              // empty: no range marks a step
    std::vector<std::pair<int64_t, int64_t>> spans;  // sorted, never overlapping
};

// The steps NVTX ranges mark, the one rule for the tagger and the report: ranges whose names match
// (matches_iteration_range), grouped by family (the name without its number, or `wanted` itself),
// on one process; the (family, process) with the most spans wins, the first in name and process
// order on ties. Nested or overlapping markers are dropped, so steps never overlap.
inline StepRanges step_ranges(const std::vector<NamedRange>& ranges, std::string_view wanted) {
    std::map<std::string, std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>>> families;
    for (const NamedRange& r : ranges)
        if (r.end_ns > r.begin_ns && matches_iteration_range(r.name, wanted))
            families[wanted.empty() ? step_family(r.name) : std::string(wanted)][r.process].emplace_back(r.begin_ns,
                                                                                                         r.end_ns);
    StepRanges best;
    for (auto& [family, by_process] : families) {
        for (auto& [process, spans] : by_process) {
            std::sort(spans.begin(), spans.end());
            std::vector<std::pair<int64_t, int64_t>> clean;
            for (const auto& s : spans)
                if (clean.empty() || s.first >= clean.back().second) clean.push_back(s);
            if (clean.size() > best.spans.size()) best = {process, family, std::move(clean)};
        }
    }
    return best;
}

}  // namespace tbdprof::steps
