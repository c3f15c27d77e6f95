// What the collector tells the user, without ever writing into the middle of the program's output.
//
//   tell_user      the usual case: appended to the run directory's messages file; `tbdprof` prints
//                  it once, after the program has exited, on a fresh line. When the file cannot be
//                  written (a full or read-only run directory) it goes out as tell_user_now does.
//   tell_user_now  for a problem the user must see while the program runs (recording has stopped):
//                  on stderr at once, starting with a newline unless stderr is known to be at the
//                  start of a line (tbdprof/user_messages.h). Never raises SIGPIPE; a stderr that
//                  cannot be written drops the message. errno is kept.
//
// Text without the "tbdprof: " prefix and without a trailing newline; printf-style.
#pragma once

namespace tbdprof::collector {

// From initialize_from_environment: the run directory (TBDPROF_RUN_DIR), copied.
void set_message_dir(const char* run_dir);

void tell_user(const char* format, ...) __attribute__((format(printf, 1, 2)));
void tell_user_now(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace tbdprof::collector
