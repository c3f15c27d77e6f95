// tbdprof: records a CUDA program's GPU activity and memory into a SQLite trace.
#include "options.h"
#include "record.h"

#include <tbdprof/trace/schema.h>
#include <tbdprof/trace/version.h>

#include <cstdio>

int main(int argc, char** argv) {
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
