// What the text output may assume about where it goes: the width to fit, whether colour is wanted,
// whether progress lines make sense.
#pragma once

#include <cstdio>
#include <string>

namespace tbdprof::cmdline {

inline constexpr int kDefaultWidth = 100;

// The width text output should fit: COLUMNS when set to a number, else the terminal's width when
// `stream` is a terminal, else 100.
int output_width(std::FILE* stream);

// Colour (ANSI escapes) only on a terminal, and never when NO_COLOR is set (no-color.org).
bool use_colour(std::FILE* stream);

bool is_terminal(std::FILE* stream);

// Text headings (a line underlined by a line of '=' or '-' as long) in bold, for a colour terminal.
std::string bold_headings(const std::string& text);

}  // namespace tbdprof::cmdline
