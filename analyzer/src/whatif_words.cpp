// The what-if options' words turned into WhatIfOptions: one home for what each option means and
// which values it takes, shared by `tbdprof whatif` (whose option table, help and usage are the
// CLI's), `tbdprof check --whatif "OPTIONS"` and the viewer's --whatif, which links no option parser.
#include <charconv>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tbdprof/analyzer/units.h"
#include "tbdprof/analyzer/whatif.h"

namespace tbdprof::analyzer {
namespace {

std::string positive_integer(std::string_view option, const std::string& text, std::optional<int64_t>& out) {
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value <= 0)
        return std::string(option) + ": '" + text + "' is not a positive integer";
    out = value;
    return {};
}

// --checkpoint: "sqrt", "every-K-layers" or "K".
std::string checkpoint(const std::string& text, WhatIfOptions& o) {
    o.checkpoint = true;
    if (text == "sqrt") return {};
    std::string number = text;
    if (text.starts_with("every-") && text.ends_with("-layers")) number = text.substr(6, text.size() - 13);
    int value = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size() || value <= 0)
        return "--checkpoint: '" + text + "' is not sqrt or every-K-layers with K a positive integer";
    o.checkpoint_every_layers = value;
    return {};
}

std::string batch_scale(const std::string& text, WhatIfOptions& o) {
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !(value > 0))
        return "--batch-scale: '" + text + "' is not a positive number";
    o.batch_scale = value;
    return {};
}

std::string precision(std::string_view option, const std::string& text, std::optional<StoragePrecision>& out) {
    out = parse_storage_precision(text);
    return out ? std::string() : std::string(option) + ": '" + text + "' is not one of bf16, fp16, fp32";
}

// `--precision`: bf16 and fp16 are autocast-style mixed precision, bf16-pure and fp16-pure every
// weight, gradient and activation stored at it (docs/whatif.md, "Precision").
std::string precision_mode(const std::string& text, WhatIfOptions& o) {
    const std::string_view suffix = "-pure";
    const bool pure = text.size() > suffix.size() && text.ends_with(suffix);
    o.precision = parse_storage_precision(pure ? text.substr(0, text.size() - suffix.size()) : text);
    if (!o.precision || (pure && *o.precision == StoragePrecision::fp32))
        return "--precision: '" + text + "' is not one of bf16, fp16 (autocast), bf16-pure, fp16-pure, fp32";
    o.precision_autocast = !pure && *o.precision != StoragePrecision::fp32;
    return {};
}

std::string bytes_option(std::string_view option, const std::string& text, bool zero_allowed, int64_t& out) {
    const Parsed<int64_t> bytes = parse_bytes(text);
    if (!bytes.ok()) return std::string(option) + ": " + bytes.error;
    if (bytes.value < 0 || (bytes.value == 0 && !zero_allowed))
        return std::string(option) + (zero_allowed ? ": must not be negative" : ": must be positive");
    out = bytes.value;
    return {};
}

}  // namespace

const std::vector<std::string_view>& whatif_option_names() {
    static const std::vector<std::string_view> names = {
        "--batch-size",     "--batch-size-recorded", "--batch-scale",  "--calibrate", "--calibrate-batch-size",
        "--precision",      "--precision-recorded",  "--zero",         "--ranks",     "--zero-bucket",
        "--zero-partition", "--checkpoint",          "--device-memory"};
    return names;
}

std::string apply_whatif_option(std::string_view name, const std::string& value, WhatIfOptions& o) {
    if (name == "--batch-size") return positive_integer(name, value, o.batch_size);
    if (name == "--batch-size-recorded") return positive_integer(name, value, o.batch_size_recorded);
    if (name == "--calibrate-batch-size") return positive_integer(name, value, o.calibrate_batch_size);
    if (name == "--batch-scale") return batch_scale(value, o);
    if (name == "--calibrate") return (o.calibrate_path = value), std::string();
    if (name == "--precision") return precision_mode(value, o);
    if (name == "--precision-recorded") return precision(name, value, o.precision_recorded);
    if (name == "--checkpoint") return checkpoint(value, o);
    if (name == "--zero-bucket") return bytes_option(name, value, true, o.zero_bucket_bytes);
    if (name == "--device-memory") {
        int64_t bytes = 0;
        std::string error = bytes_option(name, value, false, bytes);
        if (error.empty()) o.device_memory_bytes = bytes;
        return error;
    }
    if (name == "--zero") {
        if (value != "1" && value != "2" && value != "3") return "--zero: '" + value + "' is not 1, 2 or 3";
        o.zero_stage = value[0] - '0';
        return {};
    }
    if (name == "--zero-partition") {
        if (value != "even" && value != "tensors") return "--zero-partition: '" + value + "' is not even or tensors";
        o.zero_partition_tensors = value == "tensors";
        return {};
    }
    if (name == "--ranks") {
        std::optional<int64_t> ranks;
        std::string error = positive_integer(name, value, ranks);
        if (error.empty()) o.ranks = *ranks;
        return error;
    }
    return "unknown what-if option '" + std::string(name) + "'";
}

std::string parse_whatif_words(const std::string& text, WhatIfOptions& options) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string word; in >> word;) words.push_back(word);
    if (words.empty()) return "--whatif: give the what-if options, e.g. \"--batch-size 64 --batch-size-recorded 32\"";
    for (size_t i = 0; i < words.size(); ++i) {
        std::string name = words[i], value;
        if (const size_t equals = name.find('='); name.starts_with("--") && equals != std::string::npos) {
            value = name.substr(equals + 1);
            name.resize(equals);
        } else if (!name.starts_with("--")) {
            return "--whatif '" + text + "': '" + name + "' is not an option (options start with --)";
        } else if (i + 1 < words.size()) {
            value = words[++i];
        } else {
            return "--whatif '" + text + "': " + name + " needs a value";
        }
        if (std::string error = apply_whatif_option(name, value, options); !error.empty()) return "--whatif: " + error;
    }
    return {};
}

}  // namespace tbdprof::analyzer
