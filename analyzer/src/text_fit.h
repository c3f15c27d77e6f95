// Fitting text to a width: eliding in the middle (names) or at the end (call stacks, innermost
// frame first), wrapping sentences. Widths count UTF-8 code points.
#pragma once

#include <string>
#include <vector>

namespace tbdprof::analyzer {

size_t display_width(const std::string& text);

// `text` cut to `width` with "..." in the middle: "void gemm_kernel<...>(float*, int)" keeps both ends.
std::string elide_middle(const std::string& text, size_t width);
// A demangled C++ name cut to `width` by what matters least first: the parameter list becomes
// "(...)", then leading scopes ("ns::(anonymous namespace)::", with a return type before them) go,
// then template argument lists become "<...>" (outermost first); only then is the rest elided in
// the middle. Text that does
// not look like a C++ name (no "::" and no call parentheses right after a name) is elided in the
// middle as it is. "tbdsample::(anonymous namespace)::adam_update(float*, float const*, long)" at
// 16 columns: "adam_update(...)".
std::string shorten_symbol(const std::string& text, size_t width);
// `text` cut to `width` keeping its start: for call stacks, whose innermost frames come first.
std::string elide_end(const std::string& text, size_t width);
// `text` broken at spaces into lines of at most `width` (continuation lines indented by `indent`);
// a word longer than a line is elided in the middle.
std::vector<std::string> wrap_words(const std::string& text, size_t width, size_t indent = 2);

}  // namespace tbdprof::analyzer
