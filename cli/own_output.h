// tbdprof's lines after the program it ran has exited. The program shares tbdprof's stderr and may
// have ended without a newline; tbdprof's first line after it must not continue the program's last
// line. The rule (docs/collector.md, "Messages"): when stderr is a regular file, tbdprof reads back
// its last byte and adds a newline only if that byte is not one; on a terminal or pipe, which cannot
// be read back, tbdprof's output after the program always starts with one empty line.
#pragma once

#include <string>

namespace tbdprof::cli {

// From record, once the program has exited: the next line of tbdprof's starts a fresh line.
void program_has_run();

// Writes the newline that program_has_run asked for, once. Every line tbdprof prints after the
// program goes through say(), or calls this first (the progress line, the summary).
void begin_own_output();

// begin_own_output, then "tbdprof: TEXT\n" on stderr.
void say(const std::string& text);

}  // namespace tbdprof::cli
