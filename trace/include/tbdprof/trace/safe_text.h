// Strings read from a trace (kernel names, the command line, device names) come from the recorded
// program or from whoever made the file: they may hold terminal escape sequences or invalid UTF-8.
// Every output that shows them goes through one of these.
#pragma once

#include <string>
#include <string_view>

namespace tbdprof::trace {

// Invalid UTF-8 replaced by U+FFFD (one per maximal invalid subsequence), everything else kept: for
// JSON and HTML, which must be valid UTF-8.
std::string valid_utf8(std::string_view text);

// valid_utf8, and control characters shown instead of acted on: C0 controls other than newline and
// tab, DEL and the C1 controls (U+0080..U+009F) become "\xHH" or "\u00HH". For anything a terminal
// may show (text and Markdown reports, summaries).
std::string printable(std::string_view text);

}  // namespace tbdprof::trace
