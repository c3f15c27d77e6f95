// Progress of the long scans, reported through the caller's callback (AnalysisOptions::progress;
// tbdprof draws it as a line on a terminal): nothing when the caller gave none.
#pragma once

#include <cstdint>

#include "tbdprof/analyzer/analyze.h"

namespace tbdprof::analyzer {

class Progress {
public:
    explicit Progress(const AnalysisProgress& report) : report_(report) {}
    ~Progress() { finish(); }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // Cheap enough to call every few hundred thousand rows.
    void update(const char* stage, int64_t done, int64_t total) {
        if (report_) report_(stage, done, total);
    }
    void finish() {
        if (report_) report_(nullptr, 0, 0);
    }

private:
    const AnalysisProgress& report_;
};

}  // namespace tbdprof::analyzer
