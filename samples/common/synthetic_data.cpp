#include "synthetic_data.h"

namespace tbdsample {

SyntheticClassification::SyntheticClassification(int features, int classes, std::uint64_t seed)
    : features_(features), classes_(classes),
      teacher_(static_cast<std::size_t>(features) * static_cast<std::size_t>(classes)),
      generator_(seed ^ 0x5eed5eedULL) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& weight : teacher_) weight = normal(generator_);
}

void SyntheticClassification::next_batch(int batch, float* features, int* labels) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int sample = 0; sample < batch; ++sample) {
        float* x = features + static_cast<std::size_t>(sample) * features_;
        for (int f = 0; f < features_; ++f) x[f] = uniform(generator_);
        int best = 0;
        float best_score = 0.0f;
        for (int c = 0; c < classes_; ++c) {
            const float* row = teacher_.data() + static_cast<std::size_t>(c) * features_;
            float score = 0.0f;
            for (int f = 0; f < features_; ++f) score += row[f] * x[f];
            if (c == 0 || score > best_score) {
                best = c;
                best_score = score;
            }
        }
        labels[sample] = best;
    }
}

}  // namespace tbdsample
