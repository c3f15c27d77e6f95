// Model parameters, their gradients and the optimizer, shared by the training samples.
//  - ParameterSet: the weights (category weights), allocated before training, initialised on the device.
//  - GradientSet: one gradient per parameter (category gradients), either persistent (allocated once,
//    zeroed with cudaMemset at the start of each step) or transient (allocated on first use in
//    backward, freed after the optimizer step). acquire() tells the backward code whether to overwrite
//    (beta 0) or accumulate (beta 1), which is how gradient accumulation over micro-batches and over
//    the time steps of an RNN works without extra zeroing.
//  - Optimizer: SGD (with or without momentum) or Adam; its state (category optimizer_state) is
//    allocated lazily at the first step, like PyTorch's optimizers do.
#pragma once

#include "device_memory.h"
#include "options.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tbdsample {

struct Parameter {
    std::string name;
    float* values = nullptr;
    std::size_t count = 0;
};

class ParameterSet {
public:
    ParameterSet(DeviceAllocator& allocator, cudaStream_t stream, std::uint64_t seed);
    ~ParameterSet();
    ParameterSet(const ParameterSet&) = delete;
    ParameterSet& operator=(const ParameterSet&) = delete;

    // Allocates and initialises uniform in [-init_scale, init_scale]; returns the parameter's index.
    std::size_t add(std::string name, std::size_t count, float init_scale);
    // Allocates and fills with `value` (a normalisation gain starts at 1); returns the index.
    std::size_t add_constant(std::string name, std::size_t count, float value);
    const Parameter& operator[](std::size_t index) const { return parameters_.at(index); }
    std::size_t size() const { return parameters_.size(); }

private:
    DeviceAllocator& allocator_;
    cudaStream_t stream_;
    std::uint64_t seed_;
    std::vector<Parameter> parameters_;
};

// Where backward writes one parameter's gradient, and whether it adds to what is there.
struct GradientTarget {
    float* values;
    float beta;  // 0: overwrite (first write this step), 1: accumulate
};

class GradientSet {
public:
    GradientSet(const ParameterSet& parameters, GradMode mode, DeviceAllocator& allocator,
                cudaStream_t stream);
    ~GradientSet();
    GradientSet(const GradientSet&) = delete;
    GradientSet& operator=(const GradientSet&) = delete;

    void begin_step();                          // persistent: cudaMemset to zero
    GradientTarget acquire(std::size_t index);  // transient: allocates on first use in the step
    const float* gradient(std::size_t index) const;
    void end_step();                            // transient: frees every gradient

private:
    const ParameterSet& parameters_;
    GradMode mode_;
    DeviceAllocator& allocator_;
    cudaStream_t stream_;
    std::vector<float*> gradients_;
    std::vector<bool> written_this_step_;
};

class Optimizer {
public:
    Optimizer(const ParameterSet& parameters, const CommonOptions& options, DeviceAllocator& allocator,
              cudaStream_t stream);
    ~Optimizer();
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    void step(const GradientSet& gradients);

private:
    bool needs_state() const;
    std::size_t shard_count(std::size_t index) const;  // elements of parameter `index` this process updates

    const ParameterSet& parameters_;
    OptimizerKind kind_;
    float learning_rate_;
    float momentum_;
    DeviceAllocator& allocator_;
    cudaStream_t stream_;
    int steps_taken_ = 0;
    int shards_ = 1;
    std::vector<float*> first_state_;   // SGD velocity or Adam first moment
    std::vector<float*> second_state_;  // Adam second moment
};

}  // namespace tbdsample
