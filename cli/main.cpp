// tbdprof: records a CUDA program's GPU activity and memory into a SQLite trace.
#include "options.h"
#include "record.h"
#include "trace_build.h"
#include "view_command.h"

#include <tbdprof/analyzer/commands.h>
#include <tbdprof/interop/commands.h>
#include <tbdprof/tagger/tagger.h>

#include <tbdprof/trace/schema.h>
#include <tbdprof/trace/version.h>

#include <cstdio>
#include <cstring>
#include <utility>

namespace {

using Subcommand = int (*)(int, char**);

// `tbdprof NAME ...` for the commands that work on traces; recording is the default.
Subcommand find_subcommand(const char* name) {
    static const std::pair<const char*, Subcommand> table[] = {
        {"report", tbdprof::analyzer::report_command}, {"compare", tbdprof::analyzer::compare_command},
        {"diff", tbdprof::analyzer::diff_command},     {"check", tbdprof::analyzer::check_command},
        {"tag", tbdprof::tagger::tag_command},         {"import", tbdprof::interop::import_command},
        {"export", tbdprof::interop::export_command},
        {"view", tbdprof::cli::view_command},
        {"build", tbdprof::cli::build_command},
    };
    for (const auto& [n, f] : table)
        if (std::strcmp(n, name) == 0) return f;
    return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1)
        if (Subcommand command = find_subcommand(argv[1])) return command(argc - 1, argv + 1);
    using tbdprof::cli::ParsedCommandLine;
    std::vector<std::string> args(argv + 1, argv + argc);
    const ParsedCommandLine parsed = tbdprof::cli::parse_command_line(args);
    switch (parsed.action) {
        case ParsedCommandLine::Action::Help:
            std::fputs(tbdprof::cli::usage_text().c_str(), stdout);
            return 0;
        case ParsedCommandLine::Action::Version:
            std::printf("tbdprof %s (trace format %d)\n", tbdprof::trace::kProductVersion,
                        tbdprof::trace::kTraceFormatVersion);
            return 0;
        case ParsedCommandLine::Action::UsageError:
            std::fprintf(stderr, "tbdprof: %s\n", parsed.error.c_str());
            return 2;
        case ParsedCommandLine::Action::Record:
            return tbdprof::cli::record(parsed.record);
    }
    return 2;
}
