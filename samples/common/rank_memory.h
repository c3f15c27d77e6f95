// What the multi-rank samples (dp_train, pp_train) share: NCCL calls checked like CUDA's, and device
// memory that writes a label line for each allocation and free (labels.h).
#pragma once

#include "check.h"
#include "labels.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>

#define NCCL_CHECK(call)                                                                         \
    do {                                                                                         \
        ncclResult_t tbd_nccl_result_ = (call);                                                  \
        if (tbd_nccl_result_ != ncclSuccess)                                                     \
            ::tbdsample::fail_message(ncclGetErrorString(tbd_nccl_result_), __FILE__, __LINE__); \
    } while (0)

namespace tbdsample {

// cudaMalloc / cudaFree of floats, with a label line for each.
class LabelledMemory {
public:
    float* allocate(std::size_t count, Category category) {
        void* p = nullptr;
        CUDA_CHECK(cudaMalloc(&p, count * sizeof(float)));
        labels_.record_alloc(p, count * sizeof(float), category);
        return static_cast<float*>(p);
    }
    void release(float* p) {
        labels_.record_free(p);
        CUDA_CHECK(cudaFree(p));
    }
    LabelWriter& labels() { return labels_; }

private:
    LabelWriter labels_;
};

}  // namespace tbdsample
