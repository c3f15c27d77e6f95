// --steps without NVTX step ranges: training iterations told apart in-process by the kernels launched.
// The first launches (up to kLearnLaunches) are kept as a sequence of CUfunction handles; every 64
// launches until one is found, the period of that sequence is looked for, as the tagger
// does after the run (the first quarter, set-up, left out; at most 2% of positions may differ;
// the best-matching period, then the smallest nearly as good). The iteration's signature is then
// the kernel that occurs exactly once per period and was launched first in the program; iteration k begins
// at its k-th launch (0-based), counting from the program's first launch. Afterwards each launch
// costs one comparison and, for the signature kernel, one increment. All calls are made under the
// capture gate's lock.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tbdprof::collector {

class IterationSignature {
public:
    static constexpr size_t kLearnLaunches = 4096;
    static constexpr size_t kRecognizeEvery = 64;  // launches between attempts

    struct Iteration {
        int64_t index;          // the iteration this launch belongs to; -1 while learning or without a period
        bool starts_iteration;  // this launch is the signature kernel: an iteration begins with it
    };
    Iteration on_launch(const void* function);
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

IterationSignature& iteration_signature();

}  // namespace tbdprof::collector
