// The training loop shared by the samples. A TrainingSession owns what every sample needs (label
// writer, stream, allocator, cuBLAS context, parameters); a model registers its parameters with the
// session and implements one micro-batch (input copy, forward, loss, backward). The session runs
//   for each step: zero/prepare gradients; accumulate x micro-batch; optimizer step; free transient
//   gradients; read the loss back (a sync, as loss.item() does); busy host work (GPU idle)
// and prints the one-line summary.
#pragma once

#include "blas.h"
#include "device_memory.h"
#include "labels.h"
#include "options.h"
#include "parameters.h"

namespace tbdsample {

struct MicroBatch {
    int step;
    int index;                  // micro-batch index within the step
    GradientSet& gradients;
    float* loss_total;          // device scalar: add this micro-batch's mean loss / accumulate
    float loss_scale;           // 1 / (batch * accumulate): scale of the loss and of its gradient
};

class TrainingModel {
public:
    virtual ~TrainingModel() = default;
    virtual void train_micro_batch(const MicroBatch& micro_batch) = 0;
};

class TrainingSession {
public:
    TrainingSession(const char* program, const CommonOptions& options);
    ~TrainingSession();
    TrainingSession(const TrainingSession&) = delete;
    TrainingSession& operator=(const TrainingSession&) = delete;

    const CommonOptions& options() const { return options_; }
    cudaStream_t stream() const { return stream_.handle; }
    DeviceAllocator& allocator() { return allocator_; }
    BlasContext& blas() { return blas_; }
    ParameterSet& parameters() { return parameters_; }

    // Trains for options().iterations steps and prints the summary line. Returns the exit status.
    int run(TrainingModel& model);

private:
    // Declared before everything that frees device memory on it, so it is destroyed after them.
    struct OwnedStream {
        OwnedStream();
        ~OwnedStream();
        OwnedStream(const OwnedStream&) = delete;
        OwnedStream& operator=(const OwnedStream&) = delete;
        cudaStream_t handle = nullptr;
    };

    const char* program_;
    CommonOptions options_;
    LabelWriter labels_;
    OwnedStream stream_;
    DeviceAllocator allocator_;
    BlasContext blas_;
    ParameterSet parameters_;
};

// Copies a host batch to a device buffer through pinned staging memory, asynchronously on the
// stream; waits for the previous copy out of the staging buffer before overwriting it.
class InputStager {
public:
    InputStager(std::size_t bytes, cudaStream_t stream);
    ~InputStager();
    InputStager(const InputStager&) = delete;
    InputStager& operator=(const InputStager&) = delete;

    void* host_buffer();  // blocks until the staging buffer is free again
    void copy_to(void* device_destination);

private:
    std::size_t bytes_;
    cudaStream_t stream_;
    void* host_ = nullptr;
    cudaEvent_t copy_done_ = nullptr;
};

// Keeps the CPU busy (not sleeping) for the given time, like data loading or Python overhead would.
void busy_host_work(long microseconds);

}  // namespace tbdsample
