// A growable array in fixed chunks: appending never copies what is stored (no 2x peak while a
// 10-million-row table is read), and indexing stays O(1).
#pragma once

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
        if ((size_ & (kChunk - 1)) == 0) chunks_.push_back(std::make_unique<T[]>(kChunk));
        chunks_.back()[size_ & (kChunk - 1)] = value;
        ++size_;
    }
    const T& operator[](size_t i) const { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    T& operator[](size_t i) { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    size_t bytes() const { return chunks_.size() * kChunk * sizeof(T); }

private:
    std::vector<std::unique_ptr<T[]>> chunks_;
    size_t size_ = 0;
};

}  // namespace tbdprof::viewer
