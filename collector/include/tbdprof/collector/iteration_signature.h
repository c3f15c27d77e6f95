// --steps without NVTX step ranges: training steps told apart in-process by the kernels launched.
// The first launches (up to kLearnLaunches) are kept as a sequence of CUfunction handles; every 64
// launches until one is found, the period of that sequence is looked for, as the tagger
// does after the run (the first quarter, set-up, left out; at most 2% of positions may differ;
// the best-matching period, then the smallest nearly as good). The step's signature is then the
// kernel that occurs exactly once per period and was launched first in the program; step k begins
// at its k-th launch (0-based), counting from the program's first launch. Afterwards each launch
// costs one comparison and, for the signature kernel, one increment. All calls are made under the
// capture gate's lock.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tbdprof::collector {

class StepSignature {
public:
    static constexpr size_t kLearnLaunches = 4096;
    static constexpr size_t kRecognizeEvery = 64;  // launches between attempts

    struct Step {
        int64_t index;     // the step this launch belongs to; -1 while learning or without a period
        bool starts_step;  // this launch is the signature kernel: a step begins with it
    };
    Step on_launch(const void* function);
    void reset();

    // Exposed for tests: the period of `sequence[0, n)` as described above, 0 when there is none.
    static size_t find_period(const uint64_t* sequence, size_t n);

private:
    void recognize();

    uint64_t learned_[kLearnLaunches] = {};
    size_t count_ = 0;
    bool gave_up_ = false;
    uint64_t signature_ = 0;  // 0 = not recognized yet
    int64_t signature_launches_ = 0;
};

StepSignature& step_signature();

}  // namespace tbdprof::collector
