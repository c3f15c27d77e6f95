// Activation checkpointing of the tensors inside a caching pool's segments (whatif_checkpoint.h,
// docs/whatif.md "Checkpointing"). A framework's caching allocator keeps the saved activations in its
// segments, so the saved activations are the pool's tensors (whatif_pool_tensors.h), not allocations:
// a checkpointed one is released to the pool after its last forward use, and requested again when
// backward first reads one of its segment's saved activations (the recomputation). The pool's
// replay (whatif_pool_replay.h) then places every request, so a released block serves the requests
// after it and the segments reserved are those of the changed order, not a sum of bytes.
//
// Accesses are found inside the segments: a kernel's pointer argument at its offset, a library
// call's operand at its address; the tensor they touch is the one placed there at that time (a
// pooled byte holds one tensor at a time).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "tbdprof/trace/categories.h"
#include "whatif_checkpoint.h"

namespace tbdprof::analyzer::checkpoint_detail {
namespace {

constexpr int kWeights = static_cast<int>(trace::Category::weights);
constexpr int kActivations = static_cast<int>(trace::Category::activations);

// The pool's tensors by segment, to find the one an access touched.
class TensorIndex {
public:
    TensorIndex(const std::vector<PoolTensor>& tensors, const MappedSegments& mapped)
        : tensors_(tensors), mapped_(mapped) {
        for (size_t i = 0; i < tensors.size(); ++i) by_segment_[tensors[i].segment].push_back(i);
    }

    // The tensor holding the touched byte when the work was queued; SIZE_MAX: none.
    size_t find(const SegmentTouch& touch) const {
        size_t segment = touch.allocation;
        int64_t offset = touch.offset;
        if (const auto page = mapped_.place.find(touch.allocation); page != mapped_.place.end()) {
            segment = page->second.head;  // a mapped page: the tensors are placed in its segment
            offset += page->second.offset;
        }
        const auto found = by_segment_.find(segment);
        if (found == by_segment_.end()) return SIZE_MAX;
        for (size_t i : found->second) {
            const PoolTensor& t = tensors_[i];
            if (offset >= t.offset && offset < t.offset + t.bytes && touch.trace_ns >= t.begin_ns &&
                touch.trace_ns <= t.end_ns)
                return i;
        }
        return SIZE_MAX;
    }

private:
    const std::vector<PoolTensor>& tensors_;
    const MappedSegments& mapped_;
    std::unordered_map<size_t, std::vector<size_t>> by_segment_;
};

struct TensorAccess {
    int first_layer = 0, last_layer = 0;  // forward
    int64_t last_forward_ns = 0;
    int64_t first_backward_ns = INT64_MAX;
    int64_t last_forward_write_ns = INT64_MIN;
    std::vector<int64_t> writer_calls;  // library calls that wrote it in forward
};

bool within(int64_t time, Span span) {
    return time >= span.first && time <= span.second;
}

// Per activation tensor touched in this iteration's forward: its layers, last forward access, first
// backward access and forward writes.
std::unordered_map<size_t, TensorAccess> tensor_accesses(const CheckpointFacts& facts, const TensorIndex& index,
                                                         const std::vector<PoolTensor>& tensors,
                                                         const ForwardLayers& layers, Span forward, Span backward) {
    std::unordered_map<size_t, TensorAccess> out;
    auto first = std::lower_bound(facts.segment_touches.begin(), facts.segment_touches.end(), forward.first,
                                  [](const SegmentTouch& t, int64_t time) { return t.trace_ns < time; });
    for (auto touch = first; touch != facts.segment_touches.end() && touch->trace_ns <= backward.second; ++touch) {
        const bool in_forward = within(touch->trace_ns, forward);
        if (!in_forward && !within(touch->trace_ns, backward)) continue;
        const size_t tensor = index.find(*touch);
        if (tensor == SIZE_MAX || tensors[tensor].category != kActivations) continue;
        if (in_forward) {
            const int layer = layers.layer_at(touch->trace_ns);
            auto [it, fresh] =
                out.try_emplace(tensor, TensorAccess{layer, layer, touch->trace_ns, INT64_MAX, INT64_MIN, {}});
            TensorAccess& a = it->second;
            a.last_layer = std::max(a.last_layer, layer);
            a.last_forward_ns = std::max(a.last_forward_ns, touch->trace_ns);
            if (touch->writes) {
                a.last_forward_write_ns = std::max(a.last_forward_write_ns, touch->trace_ns);
                if (touch->library_call >= 0) a.writer_calls.push_back(touch->library_call);
            }
        } else if (const auto it = out.find(tensor); it != out.end()) {
            it->second.first_backward_ns = std::min(it->second.first_backward_ns, touch->trace_ns);
        }
    }
    return out;
}

// A library call's accesses in one iteration: the weights units it reads (a whole allocation, or a
// pool tensor: kTensorUnit + its index) and whether it writes a gradient.
constexpr int64_t kTensorUnit = int64_t{1} << 40;

struct CallAccess {
    int64_t first_ns = INT64_MAX, last_ns = INT64_MIN;
    std::vector<int64_t> weights;
    bool writes_gradient = false;
};

std::map<int64_t, CallAccess> call_accesses(const CheckpointFacts& facts, const std::vector<Allocation>& allocations,
                                            const PooledTensors* pooled) {
    constexpr int kGradients = static_cast<int>(trace::Category::gradients);
    std::map<int64_t, CallAccess> calls;
    auto add = [&](int64_t call, int64_t time, int category, int64_t unit, bool writes) {
        CallAccess& c = calls[call];
        c.first_ns = std::min(c.first_ns, time);
        c.last_ns = std::max(c.last_ns, time);
        if (category == kWeights && !writes) c.weights.push_back(unit);
        if (category == kGradients && writes) c.writes_gradient = true;
    };
    for (const AllocationTouch& t : facts.touches)
        if (t.library_call >= 0)
            add(t.library_call, t.trace_ns, allocations[t.allocation].category, static_cast<int64_t>(t.allocation),
                t.writes);
    if (pooled) {
        const TensorIndex index(pooled->tensors, pooled->mapped);
        for (const SegmentTouch& t : facts.segment_touches) {
            if (t.library_call < 0) continue;
            const size_t tensor = index.find(t);
            if (tensor != SIZE_MAX)
                add(t.library_call, t.trace_ns, pooled->tensors[tensor].category,
                    kTensorUnit + static_cast<int64_t>(tensor), t.writes);
        }
    }
    return calls;
}

}  // namespace

void align_phases(CheckpointFacts& facts, const std::vector<Allocation>& allocations, const PooledTensors* pooled) {
    const std::map<int64_t, CallAccess> by_id = call_accesses(facts, allocations, pooled);
    std::vector<const CallAccess*> calls;
    for (const auto& entry : by_id) calls.push_back(&entry.second);
    std::sort(calls.begin(), calls.end(),
              [](const CallAccess* x, const CallAccess* y) { return x->first_ns < y->first_ns; });
    for (size_t i = 0; i < facts.forward.size(); ++i) {
        Span& forward = facts.forward[i];
        Span& backward = facts.backward[i];
        std::unordered_set<int64_t> read;  // weights units forward's calls read
        for (const CallAccess* call : calls) {
            if (call->first_ns > backward.second) break;
            // A call begins before the kernels it launches: one whose kernels begin forward is forward's.
            if (call->first_ns < forward.first && call->last_ns >= forward.first) forward.first = call->first_ns;
            if (call->first_ns < forward.first) continue;
            const bool again = std::any_of(call->weights.begin(), call->weights.end(),
                                           [&](int64_t unit) { return read.count(unit) > 0; });
            if (call->writes_gradient || again) {
                forward.second = call->first_ns - 1;
                backward.first = call->first_ns;
                break;
            }
            read.insert(call->weights.begin(), call->weights.end());
        }
    }
}

void add_pooled_layer_starts(const CheckpointFacts& facts, const PooledTensors& pooled, Span forward,
                             std::vector<std::pair<int64_t, int64_t>>& starts) {
    const TensorIndex index(pooled.tensors, pooled.mapped);
    std::unordered_set<int64_t> calls;
    for (const auto& start : starts) calls.insert(start.second);
    for (const SegmentTouch& touch : facts.segment_touches) {
        if (!within(touch.trace_ns, forward) || touch.library_call < 0 || calls.count(touch.library_call)) continue;
        const size_t tensor = index.find(touch);
        if (tensor == SIZE_MAX || pooled.tensors[tensor].category != kWeights) continue;
        starts.emplace_back(touch.trace_ns, touch.library_call);
        calls.insert(touch.library_call);
    }
    std::stable_sort(starts.begin(), starts.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
}

namespace {

// One activation (a whole allocation, or a pool tensor: kTensorUnit + its index) read in forward:
// its bytes and every forward access, with the library call that made it.
struct ForwardUnit {
    int64_t bytes = 0;
    std::vector<std::pair<int64_t, int64_t>> accesses;  // (time, library call), sorted
};

struct ForwardAccesses {
    std::map<std::pair<int64_t, int64_t>, ForwardUnit> units;  // (unit, value)
    std::vector<std::pair<int64_t, int64_t>> touches;          // every forward access (time, library call), sorted
};

ForwardAccesses forward_accesses(const CheckpointFacts& facts, const std::vector<Allocation>& allocations,
                                 const PooledTensors* pooled, Span forward) {
    ForwardAccesses out;
    // A library call's output operand is written whole: the activation holds a new value from then on
    // (a pooled block the tagger recovered as one tensor can hold several values in turn).
    std::map<int64_t, int64_t> values;  // unit -> values begun by an output operand
    auto add = [&](int64_t unit, int64_t bytes, int64_t time, int64_t call, bool written_whole) {
        int64_t& value = values[unit];
        if (written_whole) ++value;
        ForwardUnit& u = out.units[{unit, value}];
        u.bytes = bytes;
        u.accesses.emplace_back(time, call);
    };
    for (const AllocationTouch& t : facts.touches) {
        if (!within(t.trace_ns, forward)) continue;
        out.touches.emplace_back(t.trace_ns, t.library_call);
        const Allocation& a = allocations[t.allocation];
        if (a.category == kActivations)
            add(static_cast<int64_t>(t.allocation), a.bytes, t.trace_ns, t.library_call, t.operand && t.writes);
    }
    if (pooled) {
        const TensorIndex index(pooled->tensors, pooled->mapped);
        for (const SegmentTouch& t : facts.segment_touches) {
            if (!within(t.trace_ns, forward)) continue;
            out.touches.emplace_back(t.trace_ns, t.library_call);
            const size_t tensor = index.find(t);
            if (tensor != SIZE_MAX && pooled->tensors[tensor].category == kActivations)
                add(kTensorUnit + static_cast<int64_t>(tensor), pooled->tensors[tensor].bytes, t.trace_ns,
                    t.library_call, t.operand && t.writes);
        }
    }
    std::sort(out.touches.begin(), out.touches.end());
    for (auto& [unit, u] : out.units) std::sort(u.accesses.begin(), u.accesses.end());
    return out;
}

// A cut before the operation at `time` (a kernel, or a library call and its kernels) ahead of a
// layer's weights call `layer_call` (time, call): the activations accessed before it and at or after
// it (what a checkpoint there keeps), each with whether that operation reads it and so does work
// after the layer's call (a block's input: its first operation and its residual add read it; not so
// for one only piped into the next operations, or passing over the operation).
struct Cut {
    int64_t time = 0;
    int64_t crossing_bytes = 0;
    std::map<std::pair<int64_t, int64_t>, bool> crossing;  // unit -> read on
};

Cut cut_before(const ForwardAccesses& accesses, int64_t time, int64_t call, std::pair<int64_t, int64_t> layer_call) {
    Cut cut;
    cut.time = time;
    auto in_operation = [&](const std::pair<int64_t, int64_t>& access) {
        return access.first == time || (call >= 0 && access.second == call);
    };
    for (const auto& [unit, u] : accesses.units) {
        if (u.accesses.front().first >= time || u.accesses.back().first < time) continue;
        cut.crossing_bytes += u.bytes;
        const bool here = std::any_of(u.accesses.begin(), u.accesses.end(), in_operation);
        const bool later = std::any_of(u.accesses.begin(), u.accesses.end(), [&](const auto& access) {
            return access.first > layer_call.first && access.second != layer_call.second && !in_operation(access);
        });
        cut.crossing[unit] = here && later;
    }
    return cut;
}

// Whether every activation that crosses this cut but not all of `cuts` is read on (those crossing
// every cut, such as a pooled block recovered as one tensor over several values, do not choose).
bool read_on(const Cut& cut, const std::vector<Cut>& cuts) {
    bool any = false;
    for (const auto& crossing : cut.crossing) {
        // The entry, not a structured binding: clang 14 (the fuzz build) cannot capture a binding.
        const bool everywhere = std::all_of(cuts.begin(), cuts.end(),
                                            [&](const Cut& other) { return other.crossing.count(crossing.first) > 0; });
        if (everywhere) continue;
        if (!crossing.second) return false;
        any = true;
    }
    return any;
}

}  // namespace

void move_layer_starts_to_cuts(const CheckpointFacts& facts, const std::vector<Allocation>& allocations,
                               const PooledTensors* pooled, Span forward,
                               std::vector<std::pair<int64_t, int64_t>>& starts) {
    if (starts.size() < 2) return;
    const ForwardAccesses accesses = forward_accesses(facts, allocations, pooled, forward);
    const std::vector<std::pair<int64_t, int64_t>> calls = starts;  // (time, library call) of each layer's call
    for (size_t i = 1; i < calls.size(); ++i) {
        // Candidates: the operations after the previous layer's call (not its own kernels) up to this
        // layer's call, each judged once (a kernel touches several units at one time).
        std::vector<Cut> cuts;
        for (const auto& [time, call] : accesses.touches) {
            if (time <= calls[i - 1].first || time > calls[i].first || (call >= 0 && call == calls[i - 1].second))
                continue;
            if (cuts.empty() || cuts.back().time != time) cuts.push_back(cut_before(accesses, time, call, calls[i]));
        }
        int64_t fewest = INT64_MAX;
        for (const Cut& cut : cuts) fewest = std::min(fewest, cut.crossing_bytes);
        // The earliest of the fewest bytes where the operation after the cut and work after the layer's
        // call read every crossing activation; none: at the call, as without this rule.
        int64_t chosen = calls[i].first;
        for (auto cut = cuts.rbegin(); cut != cuts.rend(); ++cut)
            if (cut->crossing_bytes == fewest && read_on(*cut, cuts)) chosen = cut->time;
        starts[i].first = chosen;
    }
}

int64_t plan_pooled_iteration(const CheckpointFacts& facts, const PooledTensors& pooled, const ForwardLayers& layers,
                              Span forward, Span backward, int segment_layers, int segments, CheckpointPlan& plan,
                              std::map<int, RecomputeCut>& cuts) {
    const TensorIndex index(pooled.tensors, pooled.mapped);
    const auto accesses = tensor_accesses(facts, index, pooled.tensors, layers, forward, backward);
    std::map<int, std::vector<size_t>> dropped;  // segment -> tensors
    for (const auto& [tensor, access] : accesses) {
        const PoolTensor& t = pooled.tensors[tensor];
        const int segment = access.first_layer / segment_layers;
        // Saved for backward: requested in this forward, held past its end, read by backward.
        const bool saved = t.begin_ns >= forward.first && t.begin_ns <= forward.second && t.end_ns > forward.second &&
                           access.first_backward_ns != INT64_MAX;
        if (saved && segment < segments - 1 && access.last_layer / segment_layers == segment)
            dropped[segment].push_back(tensor);
    }
    int64_t bytes = 0;
    for (auto& [segment, members] : dropped) {
        std::sort(members.begin(), members.end());
        RecomputeCut& cut = cuts[segment];
        int64_t recompute_ns = INT64_MAX;
        for (size_t tensor : members) {
            const TensorAccess& access = accesses.at(tensor);
            recompute_ns = std::min(recompute_ns, access.first_backward_ns);
            cut.cutoff_ns = std::max(cut.cutoff_ns, access.last_forward_write_ns);
            cut.writer_calls.insert(access.writer_calls.begin(), access.writer_calls.end());
        }
        for (size_t tensor : members) {
            PoolTensor& t = plan.pool_tensors[tensor];
            PoolTensor again = t;
            t.end_ns = std::max(t.begin_ns, accesses.at(tensor).last_forward_ns);
            bytes += t.bytes;
            again.begin_ns = recompute_ns;
            again.end_ns = std::max(again.end_ns, recompute_ns);
            plan.pool_tensors.push_back(again);  // last: it may move the tensors `t` refers into
            plan.pool_origin.push_back(tensor);
            ++plan.recomputed_allocations;
        }
    }
    return bytes;
}

}  // namespace tbdprof::analyzer::checkpoint_detail
