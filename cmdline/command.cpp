#include "tbdprof/cmdline/command.h"

#include "tbdprof/cmdline/suggest.h"
#include "tbdprof/cmdline/terminal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tbdprof/trace/safe_text.h>
#include <tbdprof/trace/schema.h>
#include <tbdprof/version.h>

#include <cstdio>
#include <memory>

namespace tbdprof::cmdline {
namespace {

// --help: our synopsis line ("usage: tbdprof report TRACE ..."), the description, then CLI11's
// option table, its descriptions wrapped to the terminal's width.
class HelpFormatter : public CLI::Formatter {
public:
    explicit HelpFormatter(std::string usage) : usage_(std::move(usage)) {}

    std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
        const size_t width = static_cast<size_t>(output_width(stdout));
        std::string text = "usage: " + usage_ + "\n";
        if (!app->get_description().empty()) text += "\n" + app->get_description() + "\n";
        text += "\noptions:\n";
        for (const CLI::Option* option : app->get_options()) {
            std::string names;
            for (const std::string& s : option->get_snames()) names += (names.empty() ? "-" : ", -") + s;
            for (const std::string& l : option->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
            const std::string& value = option->get_option_text();
            if (!value.empty()) names += (value[0] == '[' ? "" : " ") + value;
            text += wrap_entry("  " + names, option->get_description(), width);
        }
        if (!app->get_footer().empty()) text += "\n" + app->get_footer() + "\n";
        return text;
    }

private:
    static constexpr size_t kColumn = 28;

    // "  --name VALUE   description..." with the description's words wrapped under its column.
    static std::string wrap_entry(std::string head, const std::string& description, size_t width) {
        std::string out;
        if (head.size() + 2 > kColumn) {
            out = head + "\n";
            head.clear();
        }
        std::string line = head + std::string(kColumn - head.size(), ' ');
        bool line_has_word = false;
        size_t start = 0;
        while (start < description.size()) {
            size_t end = description.find(' ', start);
            if (end == std::string::npos) end = description.size();
            const std::string word = description.substr(start, end - start);
            start = end + 1;
            if (word.empty()) continue;
            if (line_has_word && line.size() + 1 + word.size() > width) {
                out += line + "\n";
                line = std::string(kColumn, ' ');
                line_has_word = false;
            }
            line += (line_has_word ? " " : "") + word;
            line_has_word = true;
        }
        return out + line + "\n";
    }

    std::string usage_;
};

// "--stacks: 1 required TEXT missing" -> "--stacks needs a value"; CLI11's other messages already
// begin with the option's name.
std::string user_message(const CLI::ParseError& e) {
    const std::string what = e.what();
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
        const size_t colon = what.find(':');
        if (colon != std::string::npos && what.find("missing", colon) != std::string::npos)
            return what.substr(0, colon) + " needs a value";
    }
    return what;
}

}  // namespace

std::string version_line() {
    return fmt::format("tbdprof {} (trace format {})", kProductVersion, trace::kTraceFormatVersion);
}

Command::Command(std::string name, std::string usage, std::string description)
    : name_(std::move(name)), app_(std::move(description), name_.empty() ? "tbdprof" : "tbdprof " + name_) {
    app_.formatter(std::make_shared<HelpFormatter>(std::move(usage)));
    app_.set_help_flag("-h,--help", "show this text");
    app_.set_version_flag("--version", version_line(), "show the tbdprof version and the trace format version");
    // Unknown options are ours to report (with a suggestion); positionals are collected below.
    app_.allow_extras();
}

CLI::Option* Command::add_output(std::string& path, const std::string& help) {
    return app_.add_option("-o,--output", path, help)->option_text("FILE");
}

CLI::Option* Command::add_force(bool& force) {
    return app_.add_flag("--force", force, "replace FILE if it exists (never a device, a FIFO or an input)");
}

CLI::Option* Command::add_format(std::string& format, const std::vector<std::string>& choices,
                                 const std::string& help) {
    auto check = [choices](std::string& value) -> std::string {
        for (const std::string& c : choices)
            if (value == c) return {};
        return fmt::format("unknown format '{}' (want {})", value, fmt::join(choices, ", "));
    };
    return app_.add_option("--format", format, help)->option_text("F")->check(CLI::Validator(check, ""));
}

CLI::Option* Command::add_quiet(bool& quiet, const std::string& help) {
    return app_.add_flag("-q,--quiet", quiet, help);
}

CLI::Option* Command::add_wide(bool& wide) {
    return app_.add_flag("--wide", wide, "full names and call stacks, whatever the terminal's width");
}

void Command::stop_at_first_positional() {
    prefix_mode_ = true;
    app_.prefix_command();
}

std::vector<std::string> Command::option_names() const {
    std::vector<std::string> names;
    for (const CLI::Option* option : app_.get_options()) {
        for (const std::string& l : option->get_lnames()) names.push_back("--" + l);
        for (const std::string& s : option->get_snames()) names.push_back("-" + s);
    }
    return names;
}

std::optional<int> Command::parse(int argc, char** argv) {
    try {
        app_.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::fputs(help_text().c_str(), stdout);
        return 0;
    } catch (const CLI::CallForVersion&) {
        std::printf("%s\n", version_line().c_str());
        return 0;
    } catch (const CLI::ParseError& e) {
        return usage_error(user_message(e));
    }
    // What CLI11 left: words that are not options, unknown options, and `--`.
    bool options_done = false;
    for (const std::string& word : app_.remaining()) {
        if (!options_done && word == "--") {
            options_done = true;
            continue;
        }
        if (!options_done && word.size() > 1 && word[0] == '-') {
            const std::string name = word.substr(0, word.find('='));
            return usage_error(
                fmt::format("unknown option '{}'{}", trace::printable(word), did_you_mean(name, option_names())));
        }
        if (prefix_mode_) options_done = true;  // the program's own words from here on
        positional_.push_back(word);
    }
    return std::nullopt;
}

std::string Command::prefix() const {
    return name_.empty() ? "tbdprof" : "tbdprof " + name_;
}

int Command::usage_error(std::string_view message) const {
    std::fprintf(stderr, "%s: %.*s\n", prefix().c_str(), static_cast<int>(message.size()), message.data());
    return kUsageError;
}

int Command::fail(std::string_view message, int status) const {
    std::fprintf(stderr, "%s: %s\n", prefix().c_str(), trace::printable(std::string(message)).c_str());
    return status;
}

std::string Command::help_text() const {
    std::string text = app_.help();
    if (text.empty() || text.back() != '\n') text += '\n';
    return text;
}

}  // namespace tbdprof::cmdline
