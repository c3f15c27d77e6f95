#include "progress.h"

namespace tbdprof::analyzer {

Progress::Progress(bool enabled) : line_("tbdprof", enabled, std::chrono::seconds(1)) {}

Progress::~Progress() {
    finish();
}

void Progress::update(const char* stage, int64_t done, int64_t total) {
    line_.update(stage, total > 0 ? static_cast<double>(done) / static_cast<double>(total) : -1.0);
}

void Progress::finish() {
    line_.clear();
}

}  // namespace tbdprof::analyzer
