#include "time_order.h"

#include <algorithm>
#include <array>
#include <utility>

namespace tbdprof::interop {
namespace {

// 11-bit digits: a 2,048-entry count table stays in L1, and a span of up to 2^33 ns (8.6 s) takes
// three passes.
constexpr unsigned kDigitBits = 11;
constexpr uint64_t kDigitMask = (uint64_t{1} << kDigitBits) - 1;

// The time as an offset from the earliest one: unsigned, so the digits order it.
uint64_t offset_of(const TimeKey& key, int64_t earliest_ns) {
    return static_cast<uint64_t>(key.time_ns) - static_cast<uint64_t>(earliest_ns);
}

// One stable counting pass on the digit at `shift`: `from` into `to`.
void counting_pass(const std::vector<TimeKey>& from, std::vector<TimeKey>& to, int64_t earliest_ns, unsigned shift) {
    std::array<size_t, kDigitMask + 1> starts{};
    for (const TimeKey& key : from) ++starts[(offset_of(key, earliest_ns) >> shift) & kDigitMask];
    size_t next = 0;
    for (size_t& start : starts) next += std::exchange(start, next);
    for (const TimeKey& key : from) to[starts[(offset_of(key, earliest_ns) >> shift) & kDigitMask]++] = key;
}

}  // namespace

void stable_sort_by_time(std::vector<TimeKey>& keys) {
    if (keys.size() < 2) return;
    const auto [earliest, latest] = std::minmax_element(
        keys.begin(), keys.end(), [](const TimeKey& a, const TimeKey& b) { return a.time_ns < b.time_ns; });
    const int64_t earliest_ns = earliest->time_ns;
    const uint64_t span = offset_of(*latest, earliest_ns);
    std::vector<TimeKey> scratch(keys.size());
    // Digits above the span's highest bit are zero for every key: those passes would move nothing.
    for (unsigned shift = 0; shift < 64 && (span >> shift) != 0; shift += kDigitBits) {
        counting_pass(keys, scratch, earliest_ns, shift);
        keys.swap(scratch);
    }
}

}  // namespace tbdprof::interop
