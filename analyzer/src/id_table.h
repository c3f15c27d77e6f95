// Per-id accumulators: a dense vector for the ids a well-formed trace has (small, consecutive), a
// hash map for anything else, so sparse or corrupt ids cannot make the analyzer allocate gigabytes.
#pragma once

#include <algorithm>
#include <cstdint>
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

}  // namespace tbdprof::analyzer
