// A growable array in fixed chunks: appending never copies what is stored beyond the first chunk (no
// 2x peak while a 10-million-row table is read), and indexing stays O(1).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace tbdprof::viewer {

template <class T>
class Chunked {
public:
    static constexpr size_t kShift = 16;
    static constexpr size_t kChunk = size_t{1} << kShift;

    void push_back(const T& value) {
        const size_t slot = size_ & (kChunk - 1);
        if (slot == 0) {
            // Only the first chunk starts small: a row of a few items (one of 100 000 streams) must not
            // take a whole chunk each (1.25 MiB a row took 23 GB). Later chunks come when it is full.
            const size_t capacity = chunks_.empty() ? kFirstCapacity : kChunk;
            chunks_.push_back(std::make_unique_for_overwrite<T[]>(capacity));
            last_capacity_ = capacity;
        } else if (slot == last_capacity_) {
            grow_last(std::min(kChunk, last_capacity_ * 2));
        }
        chunks_.back()[slot] = value;
        ++size_;
    }
    const T& operator[](size_t i) const { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    T& operator[](size_t i) { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    size_t bytes() const { return chunks_.empty() ? 0 : ((chunks_.size() - 1) * kChunk + last_capacity_) * sizeof(T); }

private:
    static constexpr size_t kFirstCapacity = 16;

    // The first chunk, while it grows to a whole one: copied once per doubling (at most kChunk items).
    void grow_last(size_t capacity) {
        auto bigger = std::make_unique_for_overwrite<T[]>(capacity);
        std::copy(chunks_.back().get(), chunks_.back().get() + last_capacity_, bigger.get());
        chunks_.back() = std::move(bigger);
        last_capacity_ = capacity;
    }

    std::vector<std::unique_ptr<T[]>> chunks_;
    size_t size_ = 0;
    size_t last_capacity_ = 0;  // of chunks_.back()
};

}  // namespace tbdprof::viewer
