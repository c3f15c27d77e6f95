// Option parsing shared by the subcommands: "--name value", "--name=value", "-o FILE", "--" ends
// options. Errors are sentences for the user (the command prints them with its usage and exits 2).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/render.h"

namespace tbdprof::analyzer {

struct ParsedArgs {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::string>> options;  // (name without dashes, value) in order
    bool help = false;
    std::string error;
};

// `with_value`: option names that take a value; `flags`: names that take none.
ParsedArgs parse_args(int argc, char** argv, const std::vector<std::string>& with_value,
                      const std::vector<std::string>& flags);

// Options every reading command accepts: --window, --iteration-range, --batch-size, --top.
// Returns an error sentence for a bad value; ignores other names.
std::string apply_analysis_option(AnalysisOptions& options, const std::string& name, const std::string& value);
std::string apply_format_option(Format& format, const std::string& value);
extern const std::vector<std::string> kAnalysisOptionNames;

// Writes `text` to `path`, or stdout when path is empty or "-"; returns an error sentence.
std::string write_output(const std::string& path, const std::string& text, bool force,
                         const std::vector<std::string>& inputs);

}  // namespace tbdprof::analyzer
