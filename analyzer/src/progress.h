// Progress on stderr for long scans: silent for the first second and when disabled (stderr is not a
// terminal, or --quiet), then one self-overwriting line (cmdline/progress.h).
#pragma once

#include <tbdprof/cmdline/progress.h>

#include <cstdint>

namespace tbdprof::analyzer {

class Progress {
public:
    explicit Progress(bool enabled);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // Cheap enough to call every few hundred thousand rows.
    void update(const char* stage, int64_t done, int64_t total);
    void finish();

private:
    cmdline::ProgressLine line_;
};

}  // namespace tbdprof::analyzer
