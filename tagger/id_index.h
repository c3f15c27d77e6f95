// Trace ids to their index in an array the tagger loaded (kernels, library calls), kept in as little
// memory as the ids allow.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace tbdprof::tagger {

// Trace ids to their index in a loaded array. Builder-written traces number rows 1..n without gaps in
// the order they are loaded: then no table is kept at all; ids in ascending order keep 8 bytes a row
// (searched); others a hash map.
class IdIndex {
public:
    void add(int64_t id) {
        if (dense_ && (count_ == 0 || id == first_ + static_cast<int64_t>(count_))) {
            if (count_++ == 0) first_ = id;
            return;  // no id stored while they run without gaps
        }
        if (dense_) {  // the first gap: the ids so far are first_, first_ + 1, ...
            dense_ = false;
            ids_.reserve(count_ + 1);
            for (size_t i = 0; i < count_; ++i) ids_.push_back(first_ + static_cast<int64_t>(i));
        }
        ascending_ = ascending_ && (ids_.empty() || id > ids_.back());
        ids_.push_back(id);
        ++count_;
    }
    // Called once every row is added.
    void finish() {
        if (dense_ || ascending_) return;
        for (size_t i = 0; i < ids_.size(); ++i) map_.try_emplace(ids_[i], i);  // ids are primary keys
        std::vector<int64_t>().swap(ids_);
    }
    std::optional<size_t> find(int64_t id) const {
        if (dense_) {
            if (id < first_ || id - first_ >= static_cast<int64_t>(count_)) return std::nullopt;
            return static_cast<size_t>(id - first_);
        }
        if (!ascending_) {
            auto it = map_.find(id);
            return it == map_.end() ? std::nullopt : std::optional<size_t>(it->second);
        }
        auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
        if (it == ids_.end() || *it != id) return std::nullopt;
        return static_cast<size_t>(it - ids_.begin());
    }

private:
    std::vector<int64_t> ids_;
    std::unordered_map<int64_t, size_t> map_;
    bool dense_ = true, ascending_ = true;
    int64_t first_ = 0;
    size_t count_ = 0;
};

}  // namespace tbdprof::tagger
