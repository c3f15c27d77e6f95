#include "tbdprof/cmdline/progress.h"

#include "tbdprof/cmdline/terminal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace tbdprof::cmdline {

std::string progress_text(std::string_view who, std::string_view stage, double fraction, double elapsed_seconds,
                          size_t width) {
    std::string text = fmt::format("{}: {}", who, stage);
    if (fraction >= 0) text += fmt::format(" {:.0f}%", std::clamp(fraction, 0.0, 1.0) * 100.0);
    text += fmt::format(" ({:.1f} s)", elapsed_seconds);
    // One column short of the width: a line that fills the terminal would wrap on some.
    if (width > 1 && text.size() >= width) text.resize(width - 1);
    return text;
}

bool progress_wanted(bool quiet) {
    return !quiet && is_terminal(stderr);
}

ProgressLine::ProgressLine(std::string who, bool enabled, std::chrono::milliseconds delay)
    : who_(std::move(who)), enabled_(enabled), start_(std::chrono::steady_clock::now()), delay_(delay) {}

ProgressLine::~ProgressLine() {
    clear();
}

void ProgressLine::update(std::string_view stage, double fraction) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < delay_) return;
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    // \r and "erase to the end of the line": the line overwrites itself.
    std::fprintf(stderr, "\r%s\033[K",
                 progress_text(who_, stage, fraction, elapsed, static_cast<size_t>(output_width(stderr))).c_str());
    std::fflush(stderr);
}

void ProgressLine::clear() {
    if (!shown_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
}

}  // namespace tbdprof::cmdline
