#include "own_output.h"

#include <unistd.h>

#include <cstdio>

#include <tbdprof/user_messages.h>

namespace tbdprof::cli {
namespace {

bool g_fresh_line_owed = false;

}  // namespace

void program_has_run() {
    g_fresh_line_owed = true;
}

void begin_own_output() {
    if (!g_fresh_line_owed) return;
    g_fresh_line_owed = false;
    // Decided now, not when the program ended: what its children wrote meanwhile counts too.
    if (!user_messages::ends_with_newline(STDERR_FILENO)) std::fputc('\n', stderr);
}

void say(const std::string& text) {
    begin_own_output();
    std::fprintf(stderr, "tbdprof: %s\n", text.c_str());
}

}  // namespace tbdprof::cli
