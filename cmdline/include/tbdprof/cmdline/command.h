// One `tbdprof` subcommand's command line, on CLI11: each subcommand declares its option table on
// a Command, and every subcommand gets the same conventions: -o/--output, --force, --format,
// --quiet, --help, --version where they apply; usage errors are one line on stderr,
// "tbdprof NAME: ...", with exit status 2, and a misspelled option gets "(did you mean --format?)".
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::cmdline {

inline constexpr int kUsageError = 2;

// "tbdprof 1.2.3 (trace format 7)": what --version prints, for every subcommand.
std::string version_line();

class Command {
public:
    // name: "report" ("" for the bare `tbdprof`); usage: the synopsis after "usage: "; description:
    // a paragraph for --help.
    Command(std::string name, std::string usage, std::string description);

    CLI::App& app() { return app_; }

    // The shared options, with the same names and help everywhere.
    CLI::Option* add_output(std::string& path, const std::string& help = "write to FILE (default: standard output)");
    CLI::Option* add_force(bool& force);
    // --format F: one of `choices`; a bad value is a usage error naming them.
    CLI::Option* add_format(std::string& format, const std::vector<std::string>& choices, const std::string& help);
    CLI::Option* add_quiet(bool& quiet, const std::string& help = "print nothing but errors (no progress, no summary)");
    CLI::Option* add_wide(bool& wide);

    // Everything after the options starts the program to run (`tbdprof record`): the first word that
    // is not an option, or everything after `--`, lands in positional() untouched.
    void stop_at_first_positional();

    // nullopt: parsed, the command goes on. Otherwise the exit status: 0 after --help/--version
    // (printed on stdout), 2 after a usage error (printed on stderr as one line).
    std::optional<int> parse(int argc, char** argv);

    // The words that are not options, in order (after `--` too).
    const std::vector<std::string>& positional() const { return positional_; }

    // "tbdprof NAME: message" on stderr; returns 2.
    int usage_error(std::string_view message) const;
    // "tbdprof NAME: message" on stderr (control characters made visible); returns `status`.
    int fail(std::string_view message, int status) const;
    // "tbdprof NAME" ("tbdprof" for the bare command).
    std::string prefix() const;

    std::string help_text() const;

private:
    std::vector<std::string> option_names() const;
    std::string name_;
    CLI::App app_;
    bool prefix_mode_ = false;
    std::vector<std::string> positional_;
};

}  // namespace tbdprof::cmdline
