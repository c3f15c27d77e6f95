// Parsing and printing sizes, durations and rates. Parsers return an error sentence instead of a
// value when the text is not understood, so a command can print it and exit 2.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace tbdprof::analyzer {

template <class T>
struct Parsed {
    T value{};
    std::string error;  // empty on success
    bool ok() const { return error.empty(); }
};

// "12GiB", "500MB", "1.5 GiB", "1048576" (bytes). KiB/MiB/GiB/TiB are powers of 1024, KB/MB/GB/TB
// powers of 1000; case-insensitive.
Parsed<int64_t> parse_bytes(std::string_view text);
// "250ms", "1.5s", "800us", "100ns", "2min"; a unit is required.
Parsed<int64_t> parse_duration_ns(std::string_view text);
// "0.8" or "80%": a fraction in [0, 1].
Parsed<double> parse_fraction(std::string_view text);

std::string format_bytes(int64_t bytes);        // "1.50 GiB"
std::string format_duration_ns(double ns);      // "12.3 ms"
std::string format_flops(double flops);         // "1.23 TFLOP"
std::string format_rate(double flops_per_s);    // "1.23 TFLOP/s"
std::string format_percent(double fraction);    // "87.5%"
std::string format_number(double value, int digits = 3);

}  // namespace tbdprof::analyzer
