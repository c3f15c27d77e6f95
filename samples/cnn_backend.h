// The cuDNN backend (graph) API for the CNN sample, used the way cuDNN front ends use it: tensors
// with unique ids, operation descriptors, an operation graph, engine heuristics (the first engine
// whose numerical notes match the math choice: tensor cores or not), an execution plan, and a variant
// pack per execution. Each plan's workspace, when it needs one, is allocated for that execution
// (category workspace) and freed after it.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "common/device_memory.h"

namespace tbdsample {

class BackendPlan {
public:
    BackendPlan(cudnnHandle_t handle, bool tensor_cores);
    ~BackendPlan();
    BackendPlan(const BackendPlan&) = delete;
    BackendPlan& operator=(const BackendPlan&) = delete;

    // A float tensor of these dims (packed, row-major); returns its unique id.
    int64_t tensor(const std::vector<int64_t>& dims, bool is_virtual = false);
    enum class Pass { forward, backward_data, backward_filter };
    // A 3x3, stride 1, padding 1 convolution. forward: (x, w) -> y; backward_data: (dy, w) -> dx;
    // backward_filter: (x, dy) -> dw.
    void convolution(Pass pass, int64_t in, int64_t second, int64_t out, float beta = 0.0f);
    void matmul(int64_t a, int64_t b, int64_t c);
    void pointwise(cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t y);  // b < 0: none
    void finalize();
    void execute(DeviceAllocator& allocator, const std::vector<std::pair<int64_t, void*>>& pointers) const;

private:
    cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type);
    cudnnBackendDescriptor_t tensor_descriptor(int64_t uid) const;

    cudnnHandle_t handle_;
    bool tensor_cores_;
    std::vector<cudnnBackendDescriptor_t> owned_;
    std::vector<std::pair<int64_t, cudnnBackendDescriptor_t>> tensors_;
    std::vector<cudnnBackendDescriptor_t> operations_;
    cudnnBackendDescriptor_t plan_ = nullptr;
    int64_t workspace_bytes_ = 0;
    int64_t next_uid_ = 1;
};

}  // namespace tbdsample
