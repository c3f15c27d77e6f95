#include "call_tallies.h"

#include <algorithm>
#include <climits>

namespace tbdprof::analyzer {

CallTally& CallTallies::operator[](int64_t id) {
    if (!started_) {
        started_ = true;
        base_ = id;
    }
    // Ids are never negative here (the scan tallies only ids >= 0), so the difference cannot overflow.
    const int64_t offset = id - base_;
    if (offset < 0 || offset >= span_) {
        auto [it, inserted] = sparse_.try_emplace(id);
        if (inserted) it->second = CallTally{};
        return it->second;
    }
    if (static_cast<size_t>(offset) >= dense_.size()) dense_.resize(static_cast<size_t>(offset) + 1, CallTally{});
    return dense_[static_cast<size_t>(offset)];
}

std::vector<std::pair<int64_t, const CallTally*>> CallTallies::sorted() const {
    std::vector<std::pair<int64_t, const CallTally*>> out;
    for (const auto& [id, tally] : sparse_)
        if (tally.count > 0) out.emplace_back(id, &tally);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const size_t sparse_count = out.size();
    for (size_t i = 0; i < dense_.size(); ++i)
        if (dense_[i].count > 0) out.emplace_back(base_ + static_cast<int64_t>(i), &dense_[i]);
    std::inplace_merge(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(sparse_count), out.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

namespace {

void add_share(MixedShares& shares, int64_t id, int64_t function, int64_t window_ns, int64_t window_count) {
    MixedShare& share = shares[{id, function}];
    add_saturating(share.window_ns, window_ns);
    share.window_count += window_count;
}

void add_piece_shares(int64_t id, const MixedShares& piece_shares, MixedShares& shares) {
    for (auto it = piece_shares.lower_bound({id, INT64_MIN}); it != piece_shares.end() && it->first.first == id; ++it)
        add_share(shares, id, it->first.second, it->second.window_ns, it->second.window_count);
}

}  // namespace

void add_piece(int64_t id, const CallTally& piece, const MixedShares& piece_shares, CallTally& call,
               MixedShares& shares) {
    if (call.count == 0) {
        call = piece;
        if (piece.mixed) add_piece_shares(id, piece_shares, shares);
        return;
    }
    // Every piece before this one ran `call.function` alone: that is the function's share so far.
    const bool becomes_mixed = !call.mixed && (piece.mixed || piece.function != call.function);
    if (becomes_mixed) add_share(shares, id, call.function, call.window_ns, call.window_count);
    call.count += piece.count;
    add_saturating(call.total_ns, piece.total_ns);
    add_saturating(call.window_ns, piece.window_ns);
    call.window_count += piece.window_count;
    if (becomes_mixed) call.mixed = true;
    if (!call.mixed) return;
    if (piece.mixed)
        add_piece_shares(id, piece_shares, shares);
    else
        add_share(shares, id, piece.function, piece.window_ns, piece.window_count);
}

void OpenCalls::add(const CallTallies& tallies, const MixedShares& shares) {
    const std::vector<std::pair<int64_t, const CallTally*>> pieces = tallies.sorted();
    std::vector<std::pair<int64_t, CallTally>> merged;
    merged.reserve(size() + pieces.size());
    auto open = calls_.begin() + static_cast<std::ptrdiff_t>(front_);
    for (const auto& [id, piece] : pieces) {
        for (; open != calls_.end() && open->first < id; ++open) merged.push_back(*open);
        if (open == calls_.end() || open->first != id)
            merged.emplace_back(id, CallTally{});
        else
            merged.push_back(*open++);
        add_piece(id, *piece, shares, merged.back().second, shares_);
    }
    merged.insert(merged.end(), open, calls_.end());
    calls_ = std::move(merged);
    front_ = 0;
}

const CallTally* OpenCalls::take(int64_t id) {
    while (front_ < calls_.size() && calls_[front_].first < id) ++front_;
    if (front_ == calls_.size() || calls_[front_].first != id) return nullptr;
    return &calls_[front_++].second;
}

void OpenCalls::drop_below(int64_t id) {
    while (front_ < calls_.size() && calls_[front_].first < id) ++front_;
    calls_.erase(calls_.begin(), calls_.begin() + static_cast<std::ptrdiff_t>(front_));
    front_ = 0;
    shares_.erase(shares_.begin(), shares_.lower_bound({id, INT64_MIN}));
}

}  // namespace tbdprof::analyzer
