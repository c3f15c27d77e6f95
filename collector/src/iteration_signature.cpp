#include "tbdprof/collector/iteration_signature.h"

namespace tbdprof::collector {

namespace {
constinit IterationSignature g_signature{};
constexpr double kTolerance = 0.02;  // a few data-dependent kernels may differ per iteration
}  // namespace

IterationSignature& iteration_signature() {
    return g_signature;
}

void IterationSignature::reset() {
    count_ = 0;
    gave_up_ = false;
    signature_ = 0;
    signature_launches_ = 0;
}

size_t IterationSignature::find_period(const uint64_t* sequence, size_t n) {
    const size_t skip = n / 4;
    double best = 1.0;
    size_t best_period = 0;
    // Two passes without allocating: the best ratio, then the smallest period nearly as good.
    for (int pass = 0; pass < 2; ++pass) {
        for (size_t p = 1; p <= (n - skip) / 3; ++p) {  // at least three repetitions after set-up
            const size_t compared = n - p - skip;
            const auto allowed = static_cast<size_t>(kTolerance * static_cast<double>(compared));
            size_t mismatches = 0;
            for (size_t i = skip; i + p < n && mismatches <= allowed; ++i) mismatches += sequence[i] != sequence[i + p];
            if (mismatches > allowed) continue;
            const double ratio = static_cast<double>(mismatches) / static_cast<double>(compared);
            if (pass == 0 && ratio < best) best = ratio;
            if (pass == 1 && ratio <= best + 0.002) {
                best_period = p;
                break;
            }
        }
        if (pass == 0 && best >= 1.0) return 0;
    }
    return best_period;
}

void IterationSignature::recognize() {
    const size_t period = find_period(learned_, count_);
    if (period == 0) {
        if (count_ == kLearnLaunches) gave_up_ = true;
        return;
    }
    // One period of the steady part; its kernels that occur once in it, launched earliest overall.
    const size_t begin = count_ - period;
    for (size_t first = 0; first < count_ && signature_ == 0; ++first) {
        const uint64_t candidate = learned_[first];
        size_t in_period = 0;
        for (size_t i = begin; i < count_; ++i) in_period += learned_[i] == candidate ? 1 : 0;
        if (in_period == 1) signature_ = candidate;
    }
    if (signature_ == 0) {
        gave_up_ = count_ == kLearnLaunches;
        return;
    }
    for (size_t i = 0; i < count_; ++i) signature_launches_ += learned_[i] == signature_ ? 1 : 0;
}

IterationSignature::Iteration IterationSignature::on_launch(const void* function) {
    const auto key = reinterpret_cast<uint64_t>(function);
    if (signature_ != 0) {
        if (key != signature_) return {signature_launches_ - 1, false};
        return {signature_launches_++, true};
    }
    if (gave_up_ || count_ == kLearnLaunches) return {-1, false};
    learned_[count_++] = key;
    if (count_ % kRecognizeEvery == 0) recognize();
    return {-1, false};
}

}  // namespace tbdprof::collector
