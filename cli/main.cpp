// tbdprof: records a CUDA program's GPU activity and memory into a SQLite trace.
#include <tbdprof/trace/output_file.h>
#include "fleet_command.h"
#include "options.h"
#include "record.h"
#include "subcommands.h"
#include "trace_build.h"
#include "view_command.h"

#include <tbdprof/cmdline/suggest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace {

using Subcommand = int (*)(int, char**);

constexpr std::pair<const char*, Subcommand> kSubcommands[] = {
    {"report", tbdprof::cli::report_command}, {"compare", tbdprof::cli::compare_command},
    {"diff", tbdprof::cli::diff_command},     {"check", tbdprof::cli::check_command},
    {"tag", tbdprof::cli::tag_command},       {"import", tbdprof::cli::import_command},
    {"export", tbdprof::cli::export_command}, {"view", tbdprof::cli::view_command},
    {"fleet", tbdprof::cli::fleet_command},   {"build", tbdprof::cli::build_command},
    {"whatif", tbdprof::cli::whatif_command}, {"merge", tbdprof::cli::merge_command},
};

// `tbdprof NAME ...` for the commands that work on traces; recording is the default.
Subcommand find_subcommand(const char* name) {
    for (const auto& [n, f] : kSubcommands)
        if (std::strcmp(n, name) == 0) return f;
    return nullptr;
}

// `tbdprof reprot x`: a word that names no program but is one typo away from a subcommand is a
// misspelled subcommand, not a program to record.
bool runnable(const std::string& word) {
    if (word.find('/') != std::string::npos) return ::access(word.c_str(), F_OK) == 0;
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "";
    size_t start = 0;
    while (start <= dirs.size()) {
        const size_t colon = dirs.find(':', start);
        const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (::access(((dir.empty() ? "." : dir) + "/" + word).c_str(), X_OK) == 0) return true;
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return false;
}

std::string misspelled_subcommand(const char* word) {
    if (word[0] == '-' || std::strcmp(word, "record") == 0 || runnable(word)) return {};
    std::vector<std::string> names{"record"};
    for (const auto& entry : kSubcommands) names.emplace_back(entry.first);
    return tbdprof::cmdline::closest_match(word, names);
}

int run(int argc, char** argv) {
    if (argc > 1) {
        if (Subcommand command = find_subcommand(argv[1])) {
            // Not for a recording: the program must get its descriptors exactly as they were given.
            tbdprof::trace::guard_standard_streams();
            return command(argc - 1, argv + 1);
        }
        if (const std::string near = misspelled_subcommand(argv[1]); !near.empty()) {
            std::fprintf(stderr, "tbdprof: unknown subcommand '%s' (did you mean %s?)\n", argv[1], near.c_str());
            return 2;
        }
    }
    // `tbdprof record ...` and `tbdprof ...` are the same; the options parser sees its own name first.
    const bool record_word = argc > 1 && std::strcmp(argv[1], "record") == 0;
    tbdprof::cli::RecordOptions options;
    if (const auto status = tbdprof::cli::parse_record_command_line(argc - (record_word ? 1 : 0),
                                                                    argv + (record_word ? 1 : 0), options))
        return *status;
    return tbdprof::cli::record(options);
}

}  // namespace

int main(int argc, char** argv) {
    // Out of memory anywhere: unwound (not std::terminate), so every OutputFile removes its temporary
    // and lock on the way out (a build's own out-of-memory message names the raw files to keep).
    try {
        return run(argc, argv);
    } catch (const std::bad_alloc&) {
        std::fputs("tbdprof: out of memory; stopped (no output file was left half-written)\n", stderr);
        return 1;
    }
}
