#include "parameters.h"

#include "check.h"
#include "kernels.h"

#include <cmath>

namespace tbdsample {

ParameterSet::ParameterSet(DeviceAllocator& allocator, cudaStream_t stream, std::uint64_t seed)
    : allocator_(allocator), stream_(stream), seed_(seed) {}

ParameterSet::~ParameterSet() {
    for (auto it = parameters_.rbegin(); it != parameters_.rend(); ++it) allocator_.release(it->values);
}

std::size_t ParameterSet::add(std::string name, std::size_t count, float init_scale) {
    Parameter parameter{std::move(name), allocator_.allocate_array<float>(count, Category::weights), count};
    // Each parameter gets its own stream of random values: seed and index together.
    launch_init_uniform(parameter.values, count, init_scale, seed_ * 1000003ULL + parameters_.size(),
                        stream_);
    parameters_.push_back(std::move(parameter));
    return parameters_.size() - 1;
}

std::size_t ParameterSet::add_constant(std::string name, std::size_t count, float value) {
    Parameter parameter{std::move(name), allocator_.allocate_array<float>(count, Category::weights), count};
    launch_fill(parameter.values, count, value, stream_);
    parameters_.push_back(std::move(parameter));
    return parameters_.size() - 1;
}

GradientSet::GradientSet(const ParameterSet& parameters, GradMode mode, DeviceAllocator& allocator,
                         cudaStream_t stream)
    : parameters_(parameters), mode_(mode), allocator_(allocator), stream_(stream),
      gradients_(parameters.size(), nullptr), written_this_step_(parameters.size(), false) {
    if (mode_ == GradMode::persistent) {
        for (std::size_t i = 0; i < parameters_.size(); ++i)
            gradients_[i] = allocator_.allocate_array<float>(parameters_[i].count, Category::gradients);
    }
}

GradientSet::~GradientSet() {
    for (auto it = gradients_.rbegin(); it != gradients_.rend(); ++it)
        if (*it != nullptr) allocator_.release(*it);
}

void GradientSet::begin_step() {
    for (std::size_t i = 0; i < gradients_.size(); ++i) {
        written_this_step_[i] = false;
        if (mode_ == GradMode::persistent)
            CUDA_CHECK(cudaMemsetAsync(gradients_[i], 0, parameters_[i].count * sizeof(float), stream_));
    }
}

GradientTarget GradientSet::acquire(std::size_t index) {
    if (gradients_.at(index) == nullptr)
        gradients_[index] = allocator_.allocate_array<float>(parameters_[index].count, Category::gradients);
    // Persistent gradients were zeroed, so backward always adds; transient ones hold garbage until
    // their first write of the step.
    float beta = (mode_ == GradMode::persistent || written_this_step_[index]) ? 1.0f : 0.0f;
    written_this_step_[index] = true;
    return {gradients_[index], beta};
}

const float* GradientSet::gradient(std::size_t index) const {
    if (gradients_.at(index) == nullptr || !written_this_step_[index])
        fail_message("optimizer step on a parameter that got no gradient this step", __FILE__, __LINE__);
    return gradients_[index];
}

void GradientSet::end_step() {
    if (mode_ != GradMode::transient) return;
    for (std::size_t i = gradients_.size(); i-- > 0;) {
        if (gradients_[i] != nullptr) allocator_.release(gradients_[i]);
        gradients_[i] = nullptr;
    }
}

Optimizer::Optimizer(const ParameterSet& parameters, const CommonOptions& options,
                     DeviceAllocator& allocator, cudaStream_t stream)
    : parameters_(parameters), kind_(options.optimizer), learning_rate_(resolved_learning_rate(options)),
      momentum_(options.momentum), allocator_(allocator), stream_(stream), shards_(options.optimizer_shards) {}

Optimizer::~Optimizer() {
    for (auto it = second_state_.rbegin(); it != second_state_.rend(); ++it) allocator_.release(*it);
    for (auto it = first_state_.rbegin(); it != first_state_.rend(); ++it) allocator_.release(*it);
}

bool Optimizer::needs_state() const { return kind_ == OptimizerKind::adam || momentum_ != 0.0f; }

std::size_t Optimizer::shard_count(std::size_t index) const {
    const std::size_t shards = static_cast<std::size_t>(shards_);
    return (parameters_[index].count + shards - 1) / shards;
}

void Optimizer::step(const GradientSet& gradients) {
    ++steps_taken_;
    if (needs_state() && first_state_.empty()) {
        // Lazily, at the first step, as PyTorch does; zeroed because the first update reads them.
        for (std::size_t i = 0; i < parameters_.size(); ++i) {
            std::size_t bytes = shard_count(i) * sizeof(float);
            first_state_.push_back(allocator_.allocate_array<float>(shard_count(i), Category::optimizer_state));
            CUDA_CHECK(cudaMemsetAsync(first_state_.back(), 0, bytes, stream_));
            if (kind_ == OptimizerKind::adam) {
                second_state_.push_back(allocator_.allocate_array<float>(shard_count(i), Category::optimizer_state));
                CUDA_CHECK(cudaMemsetAsync(second_state_.back(), 0, bytes, stream_));
            }
        }
    }
    AdamHyper adam{learning_rate_, 0.9f, 0.999f, 1e-8f, 0.0f, 0.0f};
    if (kind_ == OptimizerKind::adam) {
        adam.bias_correction1 = 1.0f - std::pow(adam.beta1, static_cast<float>(steps_taken_));
        adam.bias_correction2 = 1.0f - std::pow(adam.beta2, static_cast<float>(steps_taken_));
    }
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
        const Parameter& parameter = parameters_[i];
        const float* grad = gradients.gradient(i);
        if (kind_ == OptimizerKind::adam)
            launch_adam(parameter.values, grad, first_state_[i], second_state_[i], shard_count(i), adam, stream_);
        else if (momentum_ != 0.0f)
            launch_sgd_momentum(parameter.values, grad, first_state_[i], shard_count(i), learning_rate_,
                                momentum_, stream_);
        else
            launch_sgd(parameter.values, grad, shard_count(i), learning_rate_, stream_);
    }
}

}  // namespace tbdsample
