// "did you mean --format?": the closest of a list of names to a misspelled one.
#pragma once

#include <string>
#include <vector>

namespace tbdprof::cmdline {

// The candidate nearest to `word` by edit distance, when near enough to be a likely typo (at most a
// third of the word's length, and at most 3 edits); empty otherwise.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean X?)" or "" when nothing is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace tbdprof::cmdline
