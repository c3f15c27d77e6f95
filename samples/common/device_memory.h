// Device memory for the samples, allocated per tensor the way a framework without a caching
// allocator does it: every tensor is its own cudaMalloc (or stream-ordered cudaMallocAsync) and is
// freed when its life ends; or (--alloc pool) from a caching allocator that hands out sub-ranges of
// pooled segments, as PyTorch does. Each allocation carries its category, which goes to the label file.
#pragma once

#include "caching_pool.h"
#include "labels.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

namespace tbdsample {

enum class AllocMode { direct, async, pool };

class DeviceAllocator {
public:
    DeviceAllocator(AllocMode mode, cudaStream_t stream, LabelWriter& labels);
    ~DeviceAllocator();  // reports (does not free) allocations still live: that is a program bug
    DeviceAllocator(const DeviceAllocator&) = delete;
    DeviceAllocator& operator=(const DeviceAllocator&) = delete;

    void* allocate(std::size_t bytes, Category category);
    void release(void* pointer);

    template <typename T>
    T* allocate_array(std::size_t count, Category category) {
        return static_cast<T*>(allocate(count * sizeof(T), category));
    }

    std::size_t live_bytes() const { return live_bytes_; }
    std::size_t peak_bytes() const { return peak_bytes_; }

private:
    AllocMode mode_;
    cudaStream_t stream_;
    LabelWriter& labels_;
    std::unique_ptr<CachingPool> pool_;  // pool mode only
    std::unordered_map<void*, std::size_t> live_;
    std::size_t live_bytes_ = 0;
    std::size_t peak_bytes_ = 0;
};

// Tensors whose life is one scope of the program (a micro-batch's activations, for example):
// everything allocated through the scope is freed, newest first, by release_all() or the destructor.
class TensorScope {
public:
    explicit TensorScope(DeviceAllocator& allocator) : allocator_(allocator) {}
    ~TensorScope() { release_all(); }
    TensorScope(const TensorScope&) = delete;
    TensorScope& operator=(const TensorScope&) = delete;

    template <typename T>
    T* allocate(std::size_t count, Category category) {
        T* pointer = allocator_.allocate_array<T>(count, category);
        owned_.push_back(pointer);
        return pointer;
    }
    void release_all();
    // Frees one tensor of the scope now (one allocated through it).
    void release(void* pointer);

private:
    DeviceAllocator& allocator_;
    std::vector<void*> owned_;
};

}  // namespace tbdsample
