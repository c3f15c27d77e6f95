// Kineto writes "ts" and "dur" in microseconds, as integers or decimals with nanosecond fractions
// (1712195495505543.250). A double holds such a timestamp only to ~0.25 us, so the decimal text is
// converted to integer nanoseconds digit by digit.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tbdprof::interop {

// "123.4567" (microseconds) -> 123457 (nanoseconds, rounded half away from zero). Accepts a sign, an
// exponent and surrounding whitespace; nullopt when the text is not a number or overflows.
std::optional<int64_t> microseconds_text_to_ns(std::string_view text);

}  // namespace tbdprof::interop
