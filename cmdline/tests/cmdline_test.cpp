// Unit tests of the command-line helpers every subcommand shares: suggestions for mistyped words,
// words quoted for a shell (read back by a real shell), and what the output may assume about where it
// goes (width, colour), on a pipe and on a real pseudo-terminal.
#include <doctest/doctest.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tbdprof/cmdline/shell_quote.h"
#include "tbdprof/cmdline/suggest.h"
#include "tbdprof/cmdline/terminal.h"

using namespace tbdprof::cmdline;

namespace {

// What bash reads back from `printf %s QUOTED`: the word itself when the quoting is right.
std::string read_back_by_shell(const std::string& quoted) {
    const std::string command = "bash -c " + shell_quote("printf %s " + quoted);
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buffer[256];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    ::pclose(pipe);
    return out;
}

// A pseudo-terminal of a given width, its terminal end as a stream; closed on destruction.
struct PseudoTerminal {
    int controller = -1;
    FILE* stream = nullptr;
    explicit PseudoTerminal(unsigned short columns) {
        int terminal = -1;
        winsize size{};
        size.ws_col = columns;
        size.ws_row = 40;
        REQUIRE(::openpty(&controller, &terminal, nullptr, nullptr, &size) == 0);
        stream = ::fdopen(terminal, "w");
        REQUIRE(stream != nullptr);
    }
    ~PseudoTerminal() {
        std::fclose(stream);
        ::close(controller);
    }
};

}  // namespace

TEST_CASE("suggestions: the nearest name within a third of the word, at most 3 edits") {
    const std::vector<std::string> options{"--format", "--output", "--force", "--window"};
    CHECK(closest_match("--fromat", options) == "--format");
    CHECK(closest_match("--outptu", options) == "--output");
    CHECK(closest_match("--zzzzzzz", options).empty());
    CHECK(closest_match("ab", {"xy"}).empty());  // a short word: one edit at most
    CHECK(did_you_mean("--windwo", options) == " (did you mean --window?)");
    CHECK(did_you_mean("--nothing-like-it", options).empty());
}

TEST_CASE("shell quoting: plain words stay, others read back by bash as they were") {
    CHECK(shell_quote("run-1/out.sqlite") == "run-1/out.sqlite");
    CHECK(shell_quote("") == "''");
    CHECK(shell_quote("a b") == "'a b'");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("a\nb") == "$'a\\x0ab'");
    for (const std::string word :
         {"my run; rm x.sqlite", "it's $HOME `id`", "tab\there", "new\nline", "\\'\"", "*", "--", ""}) {
        CHECK(read_back_by_shell(shell_quote(word)) == word);
    }
    CHECK(shell_command({"tbdprof", "build", "dir with space", "-o", "x;y"}) ==
          "tbdprof build 'dir with space' -o 'x;y'");
}

TEST_CASE("width and colour: a pipe gets 100 columns and no colour; COLUMNS wins when it is a sane number") {
    ::unsetenv("COLUMNS");
    ::unsetenv("NO_COLOR");
    int ends[2];
    REQUIRE(::pipe(ends) == 0);
    FILE* pipe = ::fdopen(ends[1], "w");
    REQUIRE(pipe != nullptr);
    CHECK(output_width(pipe) == kDefaultWidth);
    CHECK_FALSE(use_colour(pipe));
    CHECK_FALSE(is_terminal(pipe));
    ::setenv("COLUMNS", "132", 1);
    CHECK(output_width(pipe) == 132);
    for (const char* odd : {"12", "abc", "80x", "100000"}) {
        ::setenv("COLUMNS", odd, 1);
        CHECK(output_width(pipe) == kDefaultWidth);
    }
    ::unsetenv("COLUMNS");
    std::fclose(pipe);
    ::close(ends[0]);
}

TEST_CASE("width and colour on a terminal: its width, colour unless NO_COLOR is set") {
    ::unsetenv("COLUMNS");
    ::unsetenv("NO_COLOR");
    PseudoTerminal terminal(77);
    CHECK(is_terminal(terminal.stream));
    CHECK(output_width(terminal.stream) == 77);
    CHECK(use_colour(terminal.stream));
    ::setenv("NO_COLOR", "1", 1);
    CHECK_FALSE(use_colour(terminal.stream));
    ::setenv("NO_COLOR", "", 1);  // set but empty: no-color.org says it does not count
    CHECK(use_colour(terminal.stream));
    ::unsetenv("NO_COLOR");
    ::setenv("COLUMNS", "abc", 1);  // not a number: the terminal's width
    CHECK(output_width(terminal.stream) == 77);
    ::unsetenv("COLUMNS");
}

TEST_CASE("headings: an underlined line in bold, other text as it was") {
    const std::string text = "Memory\n======\npeak 3 GiB\n";
    const std::string bold = bold_headings(text);
    CHECK(bold != text);
    CHECK(bold.find("\x1b[1mMemory") != std::string::npos);
    CHECK(bold.find("peak 3 GiB") != std::string::npos);
    CHECK(bold_headings("no heading here\n") == "no heading here\n");
}
