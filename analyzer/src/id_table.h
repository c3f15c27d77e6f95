// Per-id accumulators: a dense vector for the ids a well-formed trace has (small, consecutive), a
// hash map for anything else, so sparse or corrupt ids cannot make the analyzer allocate gigabytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace tbdprof::analyzer {

inline constexpr int64_t kDenseIdLimit = int64_t{1} << 25;

template <class T>
class IdTable {
public:
    static constexpr int64_t kDenseLimit = kDenseIdLimit;

    explicit IdTable(int64_t max_id) {
        if (max_id >= 0 && max_id < kDenseLimit) dense_.resize(static_cast<size_t>(max_id) + 1);
    }
    T& operator[](int64_t id) {
        if (id >= 0 && id < static_cast<int64_t>(dense_.size())) return dense_[static_cast<size_t>(id)];
        return sparse_[id];
    }
    // Never inserts: nullptr for an id outside the dense range that was never stored.
    T* find(int64_t id) { return const_cast<T*>(static_cast<const IdTable&>(*this).find(id)); }
    const T* find(int64_t id) const {
        if (id >= 0 && id < static_cast<int64_t>(dense_.size())) return &dense_[static_cast<size_t>(id)];
        auto it = sparse_.find(id);
        return it == sparse_.end() ? nullptr : &it->second;
    }
    template <class F>
    void for_each(F&& f) {
        for (size_t i = 0; i < dense_.size(); ++i) f(static_cast<int64_t>(i), dense_[i]);
        for (auto& [id, value] : sparse_) f(id, value);
    }
    // Ascending ids, so sums over them do not depend on how the hash map was filled.
    template <class F>
    void for_each_in_order(F&& f) const {
        for (size_t i = 0; i < dense_.size(); ++i) f(static_cast<int64_t>(i), dense_[i]);
        std::vector<int64_t> ids;
        ids.reserve(sparse_.size());
        for (const auto& entry : sparse_) ids.push_back(entry.first);
        std::sort(ids.begin(), ids.end());
        for (int64_t id : ids) f(id, sparse_.at(id));
    }

private:
    std::vector<T> dense_;
    std::unordered_map<int64_t, T> sparse_;
};

// The same for records whose all-zero bytes mean "nothing yet": the dense part comes from calloc,
// whose pages the kernel maps lazily, so a part of the scan that touches only some ids pays memory
// for those only.
template <class T>
class ZeroedIdTable {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    explicit ZeroedIdTable(int64_t max_id) {
        if (max_id >= 0 && max_id < kDenseIdLimit) {
            size_ = static_cast<size_t>(max_id) + 1;
            dense_.reset(static_cast<T*>(std::calloc(size_, sizeof(T))));
            if (!dense_) throw std::bad_alloc();
        }
    }
    T& operator[](int64_t id) {
        if (id >= 0 && static_cast<uint64_t>(id) < size_) return dense_.get()[id];
        auto [it, inserted] = sparse_.try_emplace(id);
        if (inserted) it->second = T{};
        return it->second;
    }
    const T* find(int64_t id) const {
        if (id >= 0 && static_cast<uint64_t>(id) < size_) return dense_.get() + id;
        auto it = sparse_.find(id);
        return it == sparse_.end() ? nullptr : &it->second;
    }

private:
    struct Free {
        void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T, Free> dense_;
    size_t size_ = 0;
    std::unordered_map<int64_t, T> sparse_;
};

}  // namespace tbdprof::analyzer
