// `tbdprof whatif TRACE ...`: the options turned into WhatIfOptions, the result rendered as a table
// of scenarios (text, markdown) or JSON (scenarios[] with name, peak_bytes, by_category, fits).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tbdprof/cmdline/command.h>
#include <tbdprof/trace/json_writer.h>
#include <tbdprof/trace/safe_text.h>

#include "command_options.h"
#include "document.h"
#include "svg_charts.h"
#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/commands.h"
#include "tbdprof/analyzer/units.h"
#include "tbdprof/analyzer/whatif.h"
#include "whatif_check.h"

namespace tbdprof::analyzer {
namespace {

std::string fit_line(const WhatIfScenario& s, const WhatIfResult& r) {
    if (!r.device_memory_bytes && !s.headroom_bytes) return "device memory unknown (give --device-memory)";
    const std::string headroom = s.headroom_bytes ? format_bytes(*s.headroom_bytes) : "?";
    switch (s.verdict) {
        case FitVerdict::fits:
            return "fits (headroom " + headroom + ")";
        case FitVerdict::borderline:
            return "borderline: within the model's 3% error of the device memory";
        case FitVerdict::does_not_fit:
            return "does not fit (short by " + format_bytes(-*s.headroom_bytes) + ")";
        case FitVerdict::unknown:
            return "device memory unknown";
    }
    return {};
}

// Text and markdown: one row per scenario, the peak and its split by category, the verdict.
std::string render_table(const WhatIfResult& r, bool markdown) {
    std::vector<std::string> header{"scenario", "peak"};
    for (int c = 0; c < kCategoryCount; ++c) header.emplace_back(category_name(c));
    header.emplace_back("headroom");
    std::vector<std::vector<std::string>> rows{header};
    for (const WhatIfScenario& s : r.scenarios) {
        std::vector<std::string> row{s.name, format_bytes(s.peak_bytes)};
        for (int64_t bytes : s.at_peak) row.push_back(format_bytes(bytes));
        row.push_back(s.headroom_bytes ? format_bytes(*s.headroom_bytes) : "-");
        rows.push_back(std::move(row));
    }
    std::vector<size_t> width(header.size(), 0);
    for (const auto& row : rows)
        for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    std::string out = markdown ? "## Memory what-if\n\n" : "Memory what-if\n--------------\n";
    out += "device memory: " + (r.device_memory_bytes ? format_bytes(*r.device_memory_bytes) : "unknown") +
           (r.device_name.empty() ? "" : " (" + trace::printable(r.device_name) + ")") + "\n\n";
    for (size_t k = 0; k < rows.size(); ++k) {
        for (size_t i = 0; i < rows[k].size(); ++i)
            out += markdown ? "| " + rows[k][i] + " "
                            : (i == 0 ? fmt::format("{:<{}}", rows[k][i], width[i])
                                      : fmt::format("  {:>{}}", rows[k][i], width[i]));
        out += markdown ? "|\n" : "\n";
        if (k == 0 && markdown) {
            for (size_t i = 0; i < rows[k].size(); ++i) out += i == 0 ? "|---" : "|---:";
            out += "|\n";
        }
    }
    out += "\n";
    for (const WhatIfScenario& s : r.scenarios) out += (markdown ? "- " : "") + s.name + ": " + fit_line(s, r) + "\n";
    if (!r.cannot_predict.empty()) out += "\ncannot predict: " + r.cannot_predict + "\n";
    for (const std::string& note : r.notes) out += (markdown ? "- note: " : "note: ") + note + "\n";
    return out;
}

// HTML: the report's page (document.h) with the scenarios' table, a bar per scenario split by
// category (the report's chart), the verdicts and the notes.
std::string render_html(const WhatIfResult& r) {
    Document doc;
    doc.title = "Memory what-if";
    doc.intro.push_back("device memory: " +
                        (r.device_memory_bytes ? format_bytes(*r.device_memory_bytes) : std::string("unknown")) +
                        (r.device_name.empty() ? "" : " (" + r.device_name + ")"));
    Section scenarios{"Scenarios", {}, Table{}, {}};
    scenarios.table->header = {"scenario", "peak"};
    for (int c = 0; c < kCategoryCount; ++c) scenarios.table->header.emplace_back(category_name(c));
    scenarios.table->header.emplace_back("headroom");
    scenarios.table->header.emplace_back("verdict");
    scenarios.table->right_aligned.assign(scenarios.table->header.size(), true);
    scenarios.table->right_aligned.front() = scenarios.table->right_aligned.back() = false;
    std::vector<std::string> labels;
    std::vector<CategoryBytes> bars;
    for (const WhatIfScenario& s : r.scenarios) {
        std::vector<std::string> row{s.name, format_bytes(s.peak_bytes)};
        for (int64_t bytes : s.at_peak) row.push_back(format_bytes(bytes));
        row.push_back(s.headroom_bytes ? format_bytes(*s.headroom_bytes) : "-");
        row.push_back(fit_line(s, r));
        scenarios.table->add(std::move(row));
        labels.push_back(s.name);
        bars.push_back(s.at_peak);
    }
    scenarios.charts.push_back(category_bars_chart(labels, bars));
    if (!r.cannot_predict.empty()) scenarios.warnings.push_back("cannot predict: " + r.cannot_predict);
    doc.sections.push_back(std::move(scenarios));
    if (r.checkpoint)
        doc.sections.push_back(Section{"Checkpointing",
                                       {std::to_string(r.checkpoint->layers) + " layers, segments of " +
                                            std::to_string(r.checkpoint->segment_layers) + ": " +
                                            format_bytes(r.checkpoint->recomputed_bytes) +
                                            " of activations recomputed per step, " +
                                            format_number(r.checkpoint->extra_forward_ns_per_step / 1e6) +
                                            " ms more forward per step"},
                                       std::nullopt,
                                       {}});
    if (!r.notes.empty()) doc.sections.push_back(Section{"Notes", r.notes, std::nullopt, {}});
    return to_html(doc);
}

std::string render_json(const WhatIfResult& r) {
    trace::JsonWriter json;
    json.begin_object();
    if (r.device_memory_bytes)
        json.value("device_memory_bytes", *r.device_memory_bytes);
    else
        json.null("device_memory_bytes");
    if (r.precision_recorded) json.value("precision_recorded", storage_precision_name(*r.precision_recorded));
    json.value("granularity_bytes", r.granularity_bytes);
    if (r.checkpoint) {
        json.begin_object("checkpoint");
        json.value("layers", int64_t{r.checkpoint->layers})
            .value("segment_layers", int64_t{r.checkpoint->segment_layers})
            .value("segments", int64_t{r.checkpoint->segments})
            .value("recomputed_bytes", r.checkpoint->recomputed_bytes)
            .value("extra_forward_ns_per_step",
                   static_cast<int64_t>(std::llround(r.checkpoint->extra_forward_ns_per_step)))
            .value("step_ns", static_cast<int64_t>(std::llround(r.checkpoint->step_ns)));
        json.end_object();
    }
    if (r.cannot_predict.empty())
        json.null("cannot_predict");
    else
        json.value("cannot_predict", r.cannot_predict);
    json.begin_array("scenarios");
    for (const WhatIfScenario& s : r.scenarios) {
        json.begin_object();
        json.value("name", s.name).value("peak_bytes", s.peak_bytes).value("peak_ns", s.peak_ns);
        json.value("device_peak_bytes", s.device_peak_bytes);
        json.begin_object("by_category");
        for (int c = 0; c < kCategoryCount; ++c) json.value(category_name(c), s.at_peak[static_cast<size_t>(c)]);
        json.end_object();
        if (s.headroom_bytes)
            json.value("headroom_bytes", *s.headroom_bytes);
        else
            json.null("headroom_bytes");
        if (s.verdict == FitVerdict::unknown)
            json.null("fits");
        else
            json.value("fits", s.verdict == FitVerdict::fits);
        json.value("verdict", fit_verdict_name(s.verdict));
        json.end_object();
    }
    json.end_array();
    json.begin_array("notes");
    for (const std::string& note : r.notes) json.value("", note);
    json.end_array();
    json.end_object();
    return json.str() + "\n";
}

}  // namespace

namespace {

// The option words as given; checked once all are parsed.
struct WhatIfWords {
    std::string batch_size, batch_size_recorded, batch_scale, calibrate_batch_size, precision, precision_recorded, zero,
        ranks, device_memory, checkpoint, zero_bucket;
};

// --checkpoint: "sqrt", "every-K-layers" or "K".
std::string parse_checkpoint(const std::string& text, WhatIfOptions& o) {
    o.checkpoint = true;
    if (text == "sqrt") return {};
    std::string number = text;
    if (text.starts_with("every-") && text.ends_with("-layers")) number = text.substr(6, text.size() - 13);
    int value = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size() || value <= 0 || number.empty())
        return "--checkpoint: '" + text + "' is not sqrt or every-K-layers with K a positive integer";
    o.checkpoint_every_layers = value;
    return {};
}

std::string positive_integer(const std::string& option, const std::string& text, std::optional<int64_t>& out) {
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value <= 0)
        return option + ": '" + text + "' is not a positive integer";
    out = value;
    return {};
}

// Each word given turned into its value; an error sentence for the first bad one.
std::string apply_words(const CLI::App& app, const WhatIfWords& w, WhatIfOptions& o) {
    std::string error;
    auto given = [&](const char* name) { return app.count(name) > 0 && error.empty(); };
    if (given("--batch-size")) error = positive_integer("--batch-size", w.batch_size, o.batch_size);
    if (given("--batch-size-recorded"))
        error = positive_integer("--batch-size-recorded", w.batch_size_recorded, o.batch_size_recorded);
    if (given("--calibrate-batch-size"))
        error = positive_integer("--calibrate-batch-size", w.calibrate_batch_size, o.calibrate_batch_size);
    if (given("--batch-scale")) {
        double value = 0;
        auto [end, ec] = std::from_chars(w.batch_scale.data(), w.batch_scale.data() + w.batch_scale.size(), value);
        if (ec != std::errc() || end != w.batch_scale.data() + w.batch_scale.size() || !(value > 0))
            error = "--batch-scale: '" + w.batch_scale + "' is not a positive number";
        o.batch_scale = value;
    }
    for (auto [name, word, out] : {std::tuple{"--precision", &w.precision, &o.precision},
                                   std::tuple{"--precision-recorded", &w.precision_recorded, &o.precision_recorded}}) {
        if (!given(name)) continue;
        *out = parse_storage_precision(*word);
        if (!*out) error = std::string(name) + ": '" + *word + "' is not one of bf16, fp16, fp32";
    }
    if (given("--zero")) {
        if (w.zero != "1" && w.zero != "2" && w.zero != "3")
            error = "--zero: '" + w.zero + "' is not 1, 2 or 3";
        else
            o.zero_stage = w.zero[0] - '0';
    }
    std::optional<int64_t> ranks;
    if (given("--ranks") && (error = positive_integer("--ranks", w.ranks, ranks)).empty()) o.ranks = *ranks;
    if (given("--checkpoint")) error = parse_checkpoint(w.checkpoint, o);
    if (given("--zero-bucket")) {
        const Parsed<int64_t> bytes = parse_bytes(w.zero_bucket);
        if (!bytes.ok() || bytes.value < 0)
            error = "--zero-bucket: " + (bytes.ok() ? "must not be negative" : bytes.error);
        else
            o.zero_bucket_bytes = bytes.value;
    }
    if (given("--device-memory")) {
        const Parsed<int64_t> bytes = parse_bytes(w.device_memory);
        if (!bytes.ok() || bytes.value <= 0)
            error = "--device-memory: " + (bytes.ok() ? "must be positive" : bytes.error);
        else
            o.device_memory_bytes = bytes.value;
    }
    return error;
}

void add_whatif_options(CLI::App& app, WhatIfWords& w, WhatIfOptions& o) {
    app.add_option("--batch-size", w.batch_size, "the batch size to predict")->option_text("N");
    app.add_option("--batch-size-recorded", w.batch_size_recorded, "the recorded run's batch size")->option_text("N");
    app.add_option("--batch-scale", w.batch_scale, "the batch scaled by X instead of given sizes")->option_text("X");
    app.add_option("--calibrate", o.calibrate_path, "the same program recorded at another batch size")
        ->option_text("OTHER_TRACE");
    app.add_option("--calibrate-batch-size", w.calibrate_batch_size, "the calibration run's batch size")
        ->option_text("N");
    app.add_option("--precision", w.precision, "weights, gradients, activations at bf16, fp16 or fp32")
        ->option_text("P");
    app.add_option("--precision-recorded", w.precision_recorded,
                   "the recorded run's precision (default: from its GEMM operand types)")
        ->option_text("P");
    app.add_option("--zero", w.zero, "ZeRO stage: 1 optimizer state, 2 also gradients, 3 also weights")
        ->option_text("1|2|3");
    app.add_option("--ranks", w.ranks, "ranks the ZeRO stage shards over")->option_text("N");
    app.add_option("--zero-bucket", w.zero_bucket, "ZeRO's reduce-scatter and all-gather bucket (default 25MiB)")
        ->option_text("SIZE");
    app.add_option("--checkpoint", w.checkpoint,
                   "activation checkpointing: one checkpoint per K layers, or per sqrt(layers)")
        ->option_text("every-K-layers|sqrt");
    app.add_option("--device-memory", w.device_memory, "memory of one device (default: the trace's)")
        ->option_text("SIZE");
}

}  // namespace

std::string parse_whatif_words(const std::string& text, WhatIfOptions& options) {
    if (text.find_first_not_of(" \t") == std::string::npos)
        return "--whatif: give the what-if options, e.g. \"--batch-size 64 --batch-size-recorded 32\"";
    CLI::App app("what-if options");
    WhatIfWords words;
    add_whatif_options(app, words, options);
    std::vector<std::string> args;  // CLI11 takes them last first
    std::istringstream in(text);
    for (std::string word; in >> word;) args.push_back(word);
    std::reverse(args.begin(), args.end());
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        return "--whatif '" + text + "': " + e.what();
    }
    std::string error = apply_words(app, words, options);
    return error.empty() ? error : "--whatif: " + error;
}

int whatif_command(int argc, char** argv) {
    cmdline::Command command(
        "whatif",
        "tbdprof whatif TRACE [--batch-size N --batch-size-recorded M | --batch-scale X]\n"
        "       [--calibrate OTHER_TRACE --calibrate-batch-size K] [--precision bf16|fp16|fp32]\n"
        "       [--checkpoint every-K-layers|sqrt] [--zero 1|2|3 --ranks N] [--device-memory 80GiB]\n"
        "       [--format text|markdown|json|html] [-o FILE]",
        "The peak device memory of a recorded run at another batch size, precision, ZeRO\n"
        "sharding or activation checkpointing, from its tagged timeline of allocations replayed (docs/whatif.md).");
    CLI::App& app = command.app();
    WhatIfWords words;
    WhatIfOptions options;
    std::string format = "text", output;
    bool force = false;
    command.add_format(format, {"text", "markdown", "json", "html"}, "text (default), markdown, json or html");
    command.add_output(output);
    command.add_force(force);
    add_whatif_options(app, words, options);
    if (const auto status = command.parse(argc, argv)) return *status;
    const std::vector<std::string>& inputs = command.positional();
    if (inputs.size() != 1) return command.usage_error("give exactly one trace file (see tbdprof whatif --help)");
    if (std::string error = apply_words(app, words, options); !error.empty()) return command.usage_error(error);
    WhatIfResult result;
    try {
        result = predict_memory(inputs[0], options);
    } catch (const std::invalid_argument& e) {
        return command.usage_error(e.what());
    } catch (const std::exception& e) {
        return command.fail(e.what(), 2);
    }
    const std::string text = format == "json"   ? render_json(result)
                             : format == "html" ? render_html(result)
                                                : render_table(result, format == "markdown");
    std::vector<std::string> read = inputs;
    if (!options.calibrate_path.empty()) read.push_back(options.calibrate_path);
    if (std::string error =
            write_output(output,
                         format == "json" || format == "html" ? trace::valid_utf8(text) : trace::printable(text),
                         force, read);
        !error.empty())
        return command.fail(error, 2);
    return result.cannot_predict.empty() ? 0 : 3;
}

}  // namespace tbdprof::analyzer
