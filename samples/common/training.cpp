#include "training.h"

#include "check.h"

#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace tbdsample {
TrainingSession::OwnedStream::OwnedStream() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking));
}

TrainingSession::OwnedStream::~OwnedStream() {
    CUDA_CHECK(cudaStreamSynchronize(handle));
    CUDA_CHECK(cudaStreamDestroy(handle));
}

TrainingSession::TrainingSession(const char* program, const CommonOptions& options)
    : program_(program), options_(options), labels_(), stream_(),
      allocator_(options.alloc, stream_.handle, labels_),
      blas_(allocator_, stream_.handle, options.workspace_bytes, options.math),
      parameters_(allocator_, stream_.handle, options.seed) {}

TrainingSession::~TrainingSession() = default;

int TrainingSession::run(TrainingModel& model) {
    GradientSet gradients(parameters_, options_.grad, allocator_, stream_.handle);
    Optimizer optimizer(parameters_, options_, allocator_, stream_.handle);
    // The loss read back each step: a 4-byte device scalar that is none of the tensor categories.
    float* loss_total = allocator_.allocate_array<float>(1, Category::other);
    void* loss_host_memory = nullptr;
    CUDA_CHECK(cudaMallocHost(&loss_host_memory, sizeof(float)));
    auto* loss_host = static_cast<float*>(loss_host_memory);
    const float loss_scale =
        1.0f / (static_cast<float>(options_.batch) * static_cast<float>(options_.accumulate));

    auto start = std::chrono::steady_clock::now();
    float loss = 0.0f;
    for (int step = 0; step < options_.iterations; ++step) {
        NvtxRange step_range = range("step");
        CUDA_CHECK(cudaMemsetAsync(loss_total, 0, sizeof(float), stream_.handle));
        gradients.begin_step();
        for (int micro = 0; micro < options_.accumulate; ++micro)
            model.train_micro_batch(MicroBatch{step, micro, gradients, loss_total, loss_scale});
        {
            NvtxRange optimizer_range = range("optimizer");
            optimizer.step(gradients);
        }
        gradients.end_step();
        CUDA_CHECK(cudaMemcpyAsync(loss_host, loss_total, sizeof(float), cudaMemcpyDeviceToHost, stream_.handle));
        CUDA_CHECK(cudaStreamSynchronize(stream_.handle));
        loss = *loss_host;
        busy_host_work(options_.host_work_us);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_.handle));
    double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    allocator_.release(loss_total);
    CUDA_CHECK(cudaFreeHost(loss_host));
    if (!std::isfinite(loss)) std::fprintf(stderr, "%s: warning: final loss is not finite\n", program_);
    std::printf("%s: iterations=%d final_loss=%.6f elapsed_ms=%.1f peak_device_bytes=%zu\n", program_,
                options_.iterations, static_cast<double>(loss), elapsed_ms, allocator_.peak_bytes());
    return 0;
}

NvtxRange::NvtxRange(bool enabled, const char* name) : open_(enabled) {
    if (open_) nvtxRangePushA(name);
}

void NvtxRange::end() {
    if (!open_) return;
    open_ = false;
    nvtxRangePop();
}

InputStager::InputStager(std::size_t bytes, cudaStream_t stream) : bytes_(bytes), stream_(stream) {
    CUDA_CHECK(cudaMallocHost(&host_, bytes_));
    CUDA_CHECK(cudaEventCreateWithFlags(&copy_done_, cudaEventDisableTiming));
}

InputStager::~InputStager() {
    cudaEventSynchronize(copy_done_);
    cudaEventDestroy(copy_done_);
    cudaFreeHost(host_);
}

void* InputStager::host_buffer() {
    // An event never recorded counts as complete, so the first call does not wait.
    CUDA_CHECK(cudaEventSynchronize(copy_done_));
    return host_;
}

void InputStager::copy_to(void* device_destination) {
    CUDA_CHECK(cudaMemcpyAsync(device_destination, host_, bytes_, cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaEventRecord(copy_done_, stream_));
}

void busy_host_work(long microseconds) {
    if (microseconds <= 0) return;
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(microseconds);
    volatile unsigned long spin = 0;  // volatile: the loop is the work, it must not be optimized away
    while (std::chrono::steady_clock::now() < until) spin = spin + 1;
}

}  // namespace tbdsample
