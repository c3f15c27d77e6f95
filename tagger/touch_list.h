// The buffers one work item touches. The model holds one work item per kernel of the run, so this
// list is one pointer (8 bytes, where a std::vector takes 24): its length and capacity live in front
// of the touches, in the same heap block, and an item that touches nothing allocates nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <new>
#include <utility>
#include <vector>

namespace tbdprof::tagger {

enum class Access : uint8_t { Unknown, Read, Write };  // Write means written (and maybe read)

struct Touch {
    int32_t allocation;  // index into TraceModel::allocations
    Access access;
    // A plain kernel's pointers to it, inside a pooled segment, all lie in words that never start a
    // value (output_slots.h): whatever the kernel writes there, it first reads what the tensor held.
    bool reads_first = false;
    // Inside a pooled segment: every pointer of the work into this tensor lies above its start (a
    // slice of it, or a tensor the extents could not set apart), so the work need not touch the
    // bytes another work's pointer into it addresses.
    bool inside = false;
};

class TouchList {
public:
    TouchList() = default;
    TouchList(std::initializer_list<Touch> touches) { append(touches.begin(), touches.size()); }
    // Implicit, so that a std::vector<Touch> (tests, made-up models) can be assigned as before.
    TouchList(const std::vector<Touch>& touches) { append(touches.data(), touches.size()); }  // NOLINT
    TouchList(const TouchList& other) { append(other.begin(), other.size()); }
    TouchList(TouchList&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
    TouchList& operator=(const TouchList& other) {
        if (this != &other) {
            clear();
            append(other.begin(), other.size());
        }
        return *this;
    }
    TouchList& operator=(TouchList&& other) noexcept {
        if (this != &other) {
            std::free(block_);
            block_ = std::exchange(other.block_, nullptr);  // `other` is left empty, as a moved-from vector
        }
        return *this;
    }
    ~TouchList() { std::free(block_); }

    size_t size() const { return block_ ? block_->size : 0; }
    bool empty() const { return size() == 0; }
    Touch* begin() { return items(); }
    Touch* end() { return items() + size(); }
    const Touch* begin() const { return items(); }
    const Touch* end() const { return items() + size(); }
    Touch& operator[](size_t i) { return items()[i]; }
    const Touch& operator[](size_t i) const { return items()[i]; }
    Touch& front() { return items()[0]; }
    const Touch& front() const { return items()[0]; }
    Touch& back() { return items()[size() - 1]; }
    const Touch& back() const { return items()[size() - 1]; }

    void push_back(Touch touch) {
        if (size() == capacity()) reserve(capacity() < 2 ? 2 : capacity() * 2);
        items()[block_->size++] = touch;
    }
    // Keeps the block: an item cleared is usually refilled at once.
    void clear() {
        if (block_) block_->size = 0;
    }
    // std::erase_if for this list: removes the touches `pred` accepts, keeping the others' order.
    template <class Pred>
    size_t erase_if(Pred pred) {
        Touch* kept = std::remove_if(begin(), end(), pred);
        const auto removed = static_cast<size_t>(end() - kept);
        if (block_) block_->size -= static_cast<uint32_t>(removed);
        return removed;
    }

private:
    struct Header {
        uint32_t size;
        uint32_t capacity;
    };
    static_assert(sizeof(Header) == sizeof(Touch) && alignof(Header) >= alignof(Touch),
                  "touches follow the header in one block");

    size_t capacity() const { return block_ ? block_->capacity : 0; }
    // The touches start right after the header (malloc'd storage: Touch is an implicit-lifetime type).
    Touch* items() const { return block_ ? reinterpret_cast<Touch*>(block_ + 1) : nullptr; }

    void reserve(size_t capacity) {
        const auto size = static_cast<uint32_t>(this->size());
        void* grown = std::realloc(block_, sizeof(Header) + capacity * sizeof(Touch));
        if (!grown) throw std::bad_alloc();
        block_ = static_cast<Header*>(grown);
        block_->size = size;
        block_->capacity = static_cast<uint32_t>(capacity);
    }
    void append(const Touch* touches, size_t count) {
        if (count == 0) return;
        if (size() + count > capacity()) reserve(size() + count);
        std::copy(touches, touches + count, items() + size());
        block_->size += static_cast<uint32_t>(count);
    }

    Header* block_ = nullptr;
};

}  // namespace tbdprof::tagger
