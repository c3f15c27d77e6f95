// Synthetic classification data made on the host, one batch per call, so every iteration has a real
// host-to-device copy of fresh input. Labels come from a fixed random "teacher" (the arg-max of a
// linear projection), so the task is learnable and the loss falls on a real GPU. (The simulated GPU
// models kernel time without computing, so there the loss stays whatever the buffers hold.)
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace tbdsample {

class SyntheticClassification {
public:
    SyntheticClassification(int features, int classes, std::uint64_t seed);

    // Fills features[batch * features] (sample-major) in [-1, 1) and labels[batch] in [0, classes).
    void next_batch(int batch, float* features, int* labels);

    int features() const { return features_; }

private:
    int features_;
    int classes_;
    std::vector<float> teacher_;  // [classes, features]
    std::mt19937_64 generator_;
};

}  // namespace tbdsample
