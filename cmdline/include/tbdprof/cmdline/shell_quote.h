// The one way tbdprof writes a word of a command the user may paste into a shell (the "build it
// with: tbdprof build DIR -o OUT" hints): quoted so that the shell reads the word back as it was,
// whatever it holds (`-o 'my run; rm x.sqlite'` must not run `rm x.sqlite` when pasted).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::cmdline {

// Plain words (letters, digits, _ @ % + = : , . / -) stay as they are; others are put in single
// quotes, a quote inside written '\''. A word with control characters (a newline, an escape) is
// written $'...' with \xHH escapes instead (bash, zsh, ksh), so the terminal shows no raw control.
std::string shell_quote(std::string_view word);

// The words quoted and joined with spaces.
std::string shell_command(const std::vector<std::string>& words);

}  // namespace tbdprof::cmdline
