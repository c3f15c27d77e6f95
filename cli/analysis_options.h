// The options every reading command (report, compare, diff, check) shares, on the subcommand's
// CLI11 option table: --window, --iteration-range, --batch-size, --top; and writing the result.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include <tbdprof/analyzer/analyze.h>
#include <tbdprof/analyzer/render.h>

namespace tbdprof::cli {

// The words as given; checked by apply_analysis_options once all are parsed.
struct AnalysisWords {
    std::string window, iteration_range, batch_size, top;
};

void add_analysis_options(CLI::App& app, AnalysisWords& words);
// Returns an error sentence for a bad value, empty when fine.
std::string apply_analysis_options(const CLI::App& app, const AnalysisWords& words, analyzer::AnalysisOptions& options);
std::string apply_format_option(analyzer::Format& format, const std::string& value);

// Writes `text` to `path`, or stdout when path is empty or "-"; returns an error sentence.
std::string write_output(const std::string& path, const std::string& text, bool force,
                         const std::vector<std::string>& inputs);

}  // namespace tbdprof::cli
