#include "analysis_options.h"

#include <tbdprof/trace/output_file.h>

#include <charconv>
#include <cstdio>
#include <fstream>

namespace tbdprof::cli {
// The code moved here from the analyzer with the option tables; it names the analyzer's types as
// it did there.
using namespace tbdprof::analyzer;

namespace {

bool parse_positive(const std::string& text, int64_t& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && out > 0;
}

}  // namespace

void add_analysis_options(CLI::App& app, AnalysisWords& words) {
    app.add_option("--window", words.window,
                   "analysis window: steady (default: every iteration but the first; the whole run when there "
                   "are no iterations), iterations or all")
        ->option_text("W");
    app.add_option("--iteration-range", words.iteration_range, "ranges with this name mark iterations")
        ->option_text("NAME");
    app.add_option("--batch-size", words.batch_size, "samples per iteration, for samples/s")->option_text("N");
    app.add_option("--top", words.top, "kernels in the top list (default 10)")->option_text("N");
}

std::string apply_analysis_options(const CLI::App& app, const AnalysisWords& words, AnalysisOptions& options) {
    if (app.count("--window") > 0) {
        const auto window = parse_window(words.window);
        if (!window) return "--window: '" + words.window + "' is not one of steady, iterations, all";
        options.window = *window;
    }
    if (app.count("--iteration-range") > 0) {
        if (words.iteration_range.empty()) return "--iteration-range: give a range name";
        options.iteration_range = words.iteration_range;
    }
    if (app.count("--batch-size") > 0) {
        int64_t batch = 0;
        if (!parse_positive(words.batch_size, batch))
            return "--batch-size: '" + words.batch_size + "' is not a positive integer";
        options.batch_size = batch;
    }
    if (app.count("--top") > 0) {
        int64_t top = 0;
        if (!parse_positive(words.top, top) || top > 10000)
            return "--top: '" + words.top + "' is not an integer in 1..10000";
        options.top_kernels = static_cast<int>(top);
    }
    return {};
}

std::string apply_format_option(Format& format, const std::string& value) {
    const auto parsed = parse_format(value);
    if (!parsed) return "--format: '" + value + "' is not one of text, markdown, json, html";
    format = *parsed;
    return {};
}

std::string write_output(const std::string& path, const std::string& text, bool force,
                         const std::vector<std::string>& inputs) {
    if (path.empty() || path == "-") {
        if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
            return "cannot write to standard output";
        }
        return {};
    }
    return trace::write_output_file(path, text,
                                    trace::OutputRules{.force = force, .inputs = inputs, .allow_stream = true});
}

}  // namespace tbdprof::cli
