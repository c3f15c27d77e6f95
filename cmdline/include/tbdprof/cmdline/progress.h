// A progress line on stderr for long work (importing, building a trace, reports on large traces):
// one self-overwriting line, only when stderr is a terminal and --quiet was not given, and only
// once the work has taken a moment (short runs print nothing).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace tbdprof::cmdline {

// "tbdprof import: parsing 37% (12.3 s)", cut to `width`. fraction < 0: unknown (no percentage).
std::string progress_text(std::string_view who, std::string_view stage, double fraction, double elapsed_seconds,
                          size_t width);

// True when a progress line makes sense: stderr is a terminal and the user did not ask for quiet.
bool progress_wanted(bool quiet);

class ProgressLine {
public:
    // who: "tbdprof import"; enabled: progress_wanted(quiet), typically.
    ProgressLine(std::string who, bool enabled, std::chrono::milliseconds delay = std::chrono::milliseconds(500));
    ~ProgressLine();
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    // Cheap when called often: redraws at most ten times a second.
    void update(std::string_view stage, double fraction = -1);
    // Erases the line (before other output, and at the end).
    void clear();

private:
    std::string who_;
    bool enabled_;
    bool shown_ = false;
    std::chrono::steady_clock::time_point start_, last_;
    std::chrono::milliseconds delay_;
};

}  // namespace tbdprof::cmdline
