#include "progress.h"

namespace tbdprof::analyzer {

Progress::Progress(const AnalysisProgress& report) : report_(report) {}

Progress::~Progress() {
    finish();
}

void Progress::update(const char* stage, int64_t done, int64_t total) {
    if (report_) report_(stage, done, total);
}

void Progress::finish() {
    if (report_) report_(nullptr, 0, 0);
}

}  // namespace tbdprof::analyzer
