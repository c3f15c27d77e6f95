#include "progress.h"

#include <cstdio>

namespace tbdprof::analyzer {

Progress::Progress(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { finish(); }

void Progress::update(const char* stage, int64_t done, int64_t total) {
    if (!enabled_) return;
    if (!shown_ && std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
    shown_ = true;
    const double percent = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0;
    std::fprintf(stderr, "\rtbdprof: %s %5.1f%%   ", stage, percent > 100.0 ? 100.0 : percent);
    std::fflush(stderr);
}

void Progress::finish() {
    if (shown_) {
        std::fprintf(stderr, "\r%60s\r", "");
        std::fflush(stderr);
        shown_ = false;
    }
}

}  // namespace tbdprof::analyzer
