#include "tbdprof/analyzer/units.h"

#include <fmt/format.h>

#include "tbdprof/step_names.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>

namespace tbdprof::analyzer {
namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

// Splits "1.5GiB" into 1.5 and "gib". Fails when there is no leading number.
bool split_number(std::string_view text, double& number, std::string& unit) {
    text = trim(text);
    const char* begin = text.data();
    const char* end = begin + text.size();
    auto [rest, ec] = std::from_chars(begin, end, number);
    if (ec != std::errc() || rest == begin || !std::isfinite(number)) return false;
    unit = steps::lowercase(trim(std::string_view(rest, static_cast<size_t>(end - rest))));
    return true;
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

struct Unit {
    std::string_view name;
    double scale;
};

// number times its unit's scale, rounded; an error past int64's range; none when unit is not in units.
std::optional<Parsed<int64_t>> scaled_by_unit(std::string_view text, double number, std::string_view unit,
                                              std::span<const Unit> units, const char* too_large) {
    const auto u = std::ranges::find(units, unit, &Unit::name);
    if (u == units.end()) return std::nullopt;
    const double scaled = std::round(number * u->scale);
    if (scaled > 9.2e18) return Parsed<int64_t>{0, quoted(text) + too_large};
    return Parsed<int64_t>{static_cast<int64_t>(scaled), {}};
}

}  // namespace

Parsed<int64_t> parse_bytes(std::string_view text) {
    double number = 0;
    std::string unit;
    if (!split_number(text, number, unit) || number < 0) {
        return {0, quoted(text) + " is not a size (examples: 12GiB, 500MB, 1048576)"};
    }
    static constexpr Unit units[] = {{"", 1},          {"b", 1},           {"kib", 1024.0},
                                     {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
                                     {"kb", 1e3},      {"mb", 1e6},        {"gb", 1e9},
                                     {"tb", 1e12},     {"k", 1024.0},      {"m", 1048576.0},
                                     {"g", 1073741824.0}};
    if (auto bytes = scaled_by_unit(text, number, unit, units, " is too large")) return *bytes;
    return {0, quoted(text) + ": unknown size unit '" + unit + "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"};
}

Parsed<int64_t> parse_duration_ns(std::string_view text) {
    double number = 0;
    std::string unit;
    if (!split_number(text, number, unit) || number < 0) {
        return {0, quoted(text) + " is not a duration (examples: 250ms, 1.5s, 800us)"};
    }
    static constexpr Unit units[] = {{"ns", 1},     {"us", 1e3},  {"µs", 1e3}, {"ms", 1e6},
                                     {"s", 1e9},    {"sec", 1e9}, {"min", 60e9}};
    if (unit.empty()) return {0, quoted(text) + " needs a unit (ns, us, ms, s, min)"};
    if (auto ns = scaled_by_unit(text, number, unit, units, " is too long")) return *ns;
    return {0, quoted(text) + ": unknown time unit '" + unit + "' (use ns, us, ms, s, min)"};
}

Parsed<double> parse_fraction(std::string_view text) {
    double number = 0;
    std::string unit;
    if (!split_number(text, number, unit)) return {0, quoted(text) + " is not a number (examples: 0.8, 80%)"};
    if (unit == "%") number /= 100.0;
    else if (!unit.empty()) return {0, quoted(text) + ": expected a fraction like 0.8 or a percentage like 80%"};
    if (number < 0 || number > 1) return {0, quoted(text) + " is outside 0..1 (0%..100%)"};
    return {number, {}};
}

namespace {

std::string scaled(double value, const char* const* prefixes, int count, double step, const char* suffix) {
    int index = 0;
    double magnitude = std::fabs(value);
    while (index + 1 < count && magnitude >= step) {
        value /= step;
        magnitude /= step;
        ++index;
    }
    if (index == 0 && std::floor(value) == value) return fmt::format("{:.0f} {}{}", value, prefixes[index], suffix);
    return fmt::format("{:.2f} {}{}", value, prefixes[index], suffix);
}

}  // namespace

std::string format_bytes(int64_t bytes) {
    static const char* const prefixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
    return scaled(static_cast<double>(bytes), prefixes, 6, 1024.0, "B");
}

std::string format_flops(double flops) {
    static const char* const prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
    return scaled(flops, prefixes, 7, 1000.0, "FLOP");
}

std::string format_rate(double flops_per_s) { return format_flops(flops_per_s) + "/s"; }

std::string format_duration_ns(double ns) {
    const double magnitude = std::fabs(ns);
    if (magnitude >= 1e9) return fmt::format("{:.3f} s", ns * 1e-9);
    if (magnitude >= 1e6) return fmt::format("{:.3f} ms", ns * 1e-6);
    if (magnitude >= 1e3) return fmt::format("{:.3f} us", ns * 1e-3);
    return fmt::format("{:.0f} ns", ns);
}

std::string format_percent(double fraction) {
    return fmt::format("{:.2f}%", fraction * 100.0);
}

std::string format_number(double value, int digits) {
    return fmt::format("{:.{}g}", value, digits);
}

}  // namespace tbdprof::analyzer
