#include "sim_holes.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>

namespace tbdprof::cli {
namespace {

// A program calls at most every exported function once per process: a bound on what is read.
constexpr size_t kMaxLines = 100000;

bool is_name(const std::string& text) {
    if (text.empty() || text.size() > 200) return false;
    return std::ranges::all_of(text, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

std::vector<trace::UnmodelledCall> read_unmodelled_calls(const std::string& run_dir) {
    std::vector<trace::UnmodelledCall> calls;
    std::ifstream in(run_dir + "/" + kNotModelledFile);
    std::set<std::string> seen;
    std::string line;
    for (size_t n = 0; n < kMaxLines && std::getline(in, line); ++n) {
        const size_t first = line.find('\t');
        const size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
        if (second == std::string::npos) continue;
        std::string function = line.substr(first + 1, second - first - 1), result = line.substr(second + 1);
        // Names and results are the simulator's own identifiers and short words: anything else is
        // not a line of this format (a cut line, another writer).
        if (!is_name(function) || result.empty() || result.size() > 64 || !seen.insert(function).second) continue;
        calls.push_back({std::move(function), std::move(result)});
    }
    return calls;
}

}  // namespace tbdprof::cli
