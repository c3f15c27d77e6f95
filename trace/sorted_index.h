// A map from 64-bit keys to small values for the builder's per-event joins (CUPTI correlation id ->
// our sequence, sequence -> launch index), stored as one sorted array: 16 bytes an entry where a
// std::unordered_map node and its bucket take about 40, with the same find/contains/size interface.
// Filled with add() in any order, then finish() once before the first lookup.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tbdprof::trace::detail {

template <class Value>
class SortedIndex {
public:
    using Entry = std::pair<uint64_t, Value>;

    void reserve(size_t n) { entries_.reserve(n); }
    void add(uint64_t key, Value value) { entries_.emplace_back(key, value); }

    // Sorts by key; of entries with one key the one added last is kept (as assigning to a map would).
    void finish() {
        finish([](const Value&) { return false; });
    }
    // As finish(), except that of entries with one key the last one whose value is `preferred` is kept
    // when there is one.
    template <class Preferred>
    void finish(Preferred preferred) {
        const auto by_key = [](const Entry& a, const Entry& b) { return a.first < b.first; };
        if (!std::is_sorted(entries_.begin(), entries_.end(), by_key))
            std::stable_sort(entries_.begin(), entries_.end(), by_key);
        size_t kept = 0;
        for (size_t first = 0; first < entries_.size();) {
            size_t last = first;
            while (last + 1 < entries_.size() && entries_[last + 1].first == entries_[first].first) ++last;
            size_t chosen = last;
            for (size_t i = last; i > first && !preferred(entries_[chosen].second); --i)
                if (preferred(entries_[i - 1].second)) chosen = i - 1;
            entries_[kept++] = entries_[chosen];
            first = last + 1;
        }
        entries_.resize(kept);
        entries_.shrink_to_fit();
    }

    const Entry* find(uint64_t key) const {
        auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                                   [](const Entry& e, uint64_t k) { return e.first < k; });
        return it != entries_.end() && it->first == key ? &*it : end();
    }
    const Entry* end() const { return entries_.data() + entries_.size(); }
    // An entry's position (0 .. size() - 1), for erase_marked.
    size_t position(const Entry* entry) const { return static_cast<size_t>(entry - entries_.data()); }
    // Erases the entries whose position is marked (`marked` has size() elements) and gives back the
    // memory they took; the others keep their order.
    void erase_marked(const std::vector<bool>& marked) {
        size_t kept = 0;
        for (size_t i = 0; i < entries_.size(); ++i)
            if (!marked[i]) entries_[kept++] = entries_[i];
        entries_.resize(kept);
        entries_.shrink_to_fit();
    }
    bool contains(uint64_t key) const { return find(key) != end(); }
    size_t size() const { return entries_.size(); }
    bool empty() const { return entries_.empty(); }

private:
    std::vector<Entry> entries_;
};

}  // namespace tbdprof::trace::detail
