// What the collector in the program had to say (the run directory's messages file, written as
// tbdprof/user_messages.h describes), printed after the program has exited, before the summary.
#pragma once

#include <string>

namespace tbdprof::cli {

// Each distinct message once, in the order first said, as "tbdprof: TEXT", with "(in N processes)"
// when several processes said it. Control characters are shown, not acted on. Nothing when the
// file is absent.
void print_collector_messages(const std::string& run_dir);

}  // namespace tbdprof::cli
