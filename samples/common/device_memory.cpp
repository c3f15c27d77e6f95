#include "device_memory.h"

#include "check.h"

#include <algorithm>
#include <cstdio>

namespace tbdsample {

DeviceAllocator::DeviceAllocator(AllocMode mode, cudaStream_t stream, LabelWriter& labels)
    : mode_(mode), stream_(stream), labels_(labels) {
    if (mode_ == AllocMode::pool) {
        labels_.enable_timestamps();
        pool_ = std::make_unique<CachingPool>(labels_);
    }
}

DeviceAllocator::~DeviceAllocator() {
    if (!live_.empty())
        std::fprintf(stderr, "%s: %zu device allocations (%zu bytes) were never freed\n",
                     program_name(), live_.size(), live_bytes_);
}

void* DeviceAllocator::allocate(std::size_t bytes, Category category) {
    void* pointer = nullptr;
    if (mode_ == AllocMode::pool)
        pointer = pool_->allocate(bytes);
    else if (mode_ == AllocMode::async)
        CUDA_CHECK(cudaMallocAsync(&pointer, bytes, stream_));
    else
        CUDA_CHECK(cudaMalloc(&pointer, bytes));
    // Two live allocations at one address would make the labels ambiguous; it cannot happen unless
    // the allocator underneath is broken, and then we want to know.
    if (!live_.emplace(pointer, bytes).second)
        fail_message("device allocator returned an address that is still live", __FILE__, __LINE__);
    live_bytes_ += bytes;
    if (live_bytes_ > peak_bytes_) peak_bytes_ = live_bytes_;
    labels_.record_alloc(pointer, bytes, category);
    return pointer;
}

void DeviceAllocator::release(void* pointer) {
    auto found = live_.find(pointer);
    if (found == live_.end())
        fail_message("release of a pointer this allocator does not own", __FILE__, __LINE__);
    // The label goes first: once freed, the address may be handed out again by another thread's
    // allocation, and the file must show this free before that alloc.
    labels_.record_free(pointer);
    live_bytes_ -= found->second;
    live_.erase(found);
    if (mode_ == AllocMode::pool)
        pool_->release(pointer);  // reusable at once: all work runs on the one stream
    else if (mode_ == AllocMode::async)
        CUDA_CHECK(cudaFreeAsync(pointer, stream_));
    else
        CUDA_CHECK(cudaFree(pointer));
}

void TensorScope::release(void* pointer) {
    auto found = std::find(owned_.begin(), owned_.end(), pointer);
    if (found == owned_.end()) return;
    owned_.erase(found);
    allocator_.release(pointer);
}

void TensorScope::release_all() {
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) allocator_.release(*it);
    owned_.clear();
}

}  // namespace tbdsample
