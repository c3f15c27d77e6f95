// The training loop shared by the samples. A TrainingSession owns what every sample needs (label
// writer, stream, allocator, cuBLAS context, parameters); a model registers its parameters with the
// session and implements one micro-batch (input copy, forward, loss, backward). The session runs
//   for each step: zero/prepare gradients; accumulate x micro-batch; optimizer step; free transient
//   gradients; read the loss back (a sync, as loss.item() does); busy host work (GPU idle)
// With --nvtx each step is an NVTX range "step" and the optimizer step a range "optimizer" in it.
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

// An NVTX push/pop range (nvtxRangePushA/nvtxRangePop) around a part of a step, when the program
// runs with --nvtx; does nothing otherwise. Without a tool attached (NVTX_INJECTION64_PATH unset)
// the NVTX calls themselves are no-ops.
class NvtxRange {
public:
    NvtxRange(bool enabled, const char* name);
    ~NvtxRange() { end(); }
    NvtxRange(const NvtxRange&) = delete;
    NvtxRange& operator=(const NvtxRange&) = delete;

    void end();  // closes the range early (once)

private:
    bool open_;
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

    // A range named `name` when --nvtx was given (models mark "forward" and "backward" with it).
    NvtxRange range(const char* name) const { return NvtxRange(options_.nvtx, name); }

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
