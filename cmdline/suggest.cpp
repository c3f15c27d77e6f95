#include "tbdprof/cmdline/suggest.h"

#include <algorithm>

namespace tbdprof::cmdline {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
    const size_t limit = std::min<size_t>(3, std::max<size_t>(1, word.size() / 3));
    std::string best;
    size_t best_distance = limit + 1;
    for (const std::string& candidate : candidates) {
        const size_t d = edit_distance(word, candidate);
        if (d < best_distance) {
            best_distance = d;
            best = candidate;
        }
    }
    return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    const std::string match = closest_match(word, candidates);
    return match.empty() ? std::string() : " (did you mean " + match + "?)";
}

}  // namespace tbdprof::cmdline
