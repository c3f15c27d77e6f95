#include "command_options.h"

#include <tbdprof/trace/output_file.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>

namespace tbdprof::analyzer {

const std::vector<std::string> kAnalysisOptionNames = {"window", "iteration-range", "batch-size", "top"};

ParsedArgs parse_args(int argc, char** argv, const std::vector<std::string>& with_value,
                      const std::vector<std::string>& flags) {
    ParsedArgs parsed;
    auto known = [](const std::vector<std::string>& list, const std::string& name) {
        return std::find(list.begin(), list.end(), name) != list.end();
    };
    bool options_done = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (options_done || arg == "-" || arg.empty() || arg[0] != '-') {
            parsed.positional.push_back(arg);
            continue;
        }
        if (arg == "--") {
            options_done = true;
            continue;
        }
        if (arg == "-h" || arg == "--help") {
            parsed.help = true;
            continue;
        }
        std::string name, value;
        bool has_value = false;
        if (arg == "-o") {
            name = "output";
        } else if (arg.rfind("--", 0) == 0) {
            name = arg.substr(2);
            if (const size_t eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name = name.substr(0, eq);
                has_value = true;
            }
        } else {
            parsed.error = "unknown option " + arg;
            return parsed;
        }
        if (known(flags, name)) {
            if (has_value) {
                parsed.error = "--" + name + " takes no value";
                return parsed;
            }
            parsed.options.emplace_back(name, "");
            continue;
        }
        if (!known(with_value, name)) {
            parsed.error = "unknown option " + arg;
            return parsed;
        }
        if (!has_value) {
            if (i + 1 >= argc) {
                parsed.error = "option " + arg + " needs a value";
                return parsed;
            }
            value = argv[++i];
        }
        parsed.options.emplace_back(name, value);
    }
    return parsed;
}

namespace {

bool parse_positive(const std::string& text, int64_t& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && out > 0;
}

}  // namespace

std::string apply_analysis_option(AnalysisOptions& options, const std::string& name, const std::string& value) {
    if (name == "window") {
        const auto window = parse_window(value);
        if (!window) return "--window: '" + value + "' is not one of steady, iterations, all";
        options.window = *window;
    } else if (name == "iteration-range") {
        if (value.empty()) return "--iteration-range: give a range name";
        options.iteration_range = value;
    } else if (name == "batch-size") {
        int64_t batch = 0;
        if (!parse_positive(value, batch)) return "--batch-size: '" + value + "' is not a positive integer";
        options.batch_size = batch;
    } else if (name == "top") {
        int64_t top = 0;
        if (!parse_positive(value, top) || top > 10000) return "--top: '" + value + "' is not an integer in 1..10000";
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
    return trace::write_output_file(path, text, trace::OutputRules{.force = force, .inputs = inputs, .allow_stream = true});
}

}  // namespace tbdprof::analyzer
