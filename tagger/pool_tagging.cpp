#include "pool_tagging.h"

#include "nvtx_regions.h"
#include "output_slots.h"
#include "overwrite_cuts.h"
#include "rewritten_tenants.h"
#include "subranges.h"
#include "training_steps.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

bool same_boundaries(const IterationSet& a, const IterationSet& b) {
    if (a.iterations.size() != b.iterations.size()) return false;
    for (size_t i = 0; i < a.iterations.size(); ++i)
        if (a.iterations[i].first_work != b.iterations[i].first_work ||
            a.iterations[i].end_work != b.iterations[i].end_work)
            return false;
    return true;
}

// A sub-range that, inside iterations, only the optimizer's kernels touch.
std::vector<bool> optimizer_only(const TraceModel& v, const TagResult& r) {
    std::vector<bool> only(v.allocations.size(), true), touched(v.allocations.size(), false);
    for (size_t w = 0; w < v.work.size(); ++w) {
        const WorkItem& item = v.work[w];
        if (item.kind != WorkItem::Kind::Kernel) continue;  // copies and sets say nothing about roles
        for (const Touch& t : item.touches) {
            touched[size_t(t.allocation)] = true;
            if (!r.optimizer_work[w]) only[size_t(t.allocation)] = false;
        }
    }
    for (size_t a = 0; a < only.size(); ++a) only[a] = only[a] && touched[a];
    return only;
}

// Whether other work used bytes of `head`'s or `next`'s extent between the two (work indices
// strictly between head's last use and next's first): then the space was free in between and the
// two are not one tensor carried over (an optimizer's per-step temporaries, which a caching allocator
// puts at the same address each step while the next step's activations take that space meanwhile).
bool space_used_between(const SubRangeSet& set, size_t head, size_t next) {
    constexpr size_t kMaxScan = 20000;  // bounds the cost on huge pools: past it, assume unused
    const SubRange& a = set.ranges[head];
    const SubRange& b = set.ranges[next];
    // Only bytes known to be used count: an extent without size evidence runs to the next start in
    // use and may cover free space.
    auto used = [](const SubRange& r) { return uint64_t(std::max<int64_t>(std::min(r.known_bytes, r.bytes), 1)); };
    const uint64_t lo = a.offset, hi = a.offset + std::max(used(a), used(b));
    size_t first = head;
    while (first > 0 && set.ranges[first - 1].segment == a.segment) --first;
    for (size_t j = first, scanned = 0; j < set.ranges.size() && scanned < kMaxScan; ++j, ++scanned) {
        const SubRange& o = set.ranges[j];
        if (o.segment != a.segment || o.offset >= hi) break;
        if (o.merged || o.bytes <= 0 || o.offset + used(o) <= lo || j == head || j == next) continue;
        if (o.last_work > a.last_work && o.first_work < b.first_work) return true;
    }
    return false;
}

// Splitting an address at every step that writes it first also cuts optimizer state (read and
// updated in place by one kernel per step, which access hints cannot tell from a plain write) into
// one piece per step. Once the rules have found the optimizer, consecutive pieces of one address
// that only the optimizer touches are one tensor carried over from step to step, unless other
// tensors used that space between them.
bool merge_optimizer_chains(const TraceModel& v, const TagResult& r, const std::vector<int32_t>& index,
                            SubRangeSet& set) {
    std::vector<bool> only = optimizer_only(v, r);
    bool merged = false;
    size_t head = set.ranges.size();
    for (size_t i = 0; i < set.ranges.size(); ++i) {
        const SubRange& range = set.ranges[i];
        if (range.bytes <= 0 || index[i] == kNone) continue;
        bool eligible = only[size_t(index[i])];
        if (eligible && head < set.ranges.size() && set.ranges[head].segment == range.segment &&
            set.ranges[head].offset == range.offset && !space_used_between(set, head, i)) {
            merge_subranges(set, head, i);
            merged = true;
            continue;
        }
        head = eligible ? i : set.ranges.size();
    }
    if (merged) assign_extents(v, set);
    return merged;
}

// Per allocation of a derived model: the first and last work item that touches it, the kernels that
// touch it, and whether a product call (a library call with two inputs: a GEMM) reads it as an input.
struct UsesOf {
    std::vector<uint32_t> first, last;
    std::vector<bool> product_read;
    std::vector<std::vector<uint32_t>> kernels;
};

UsesOf uses_of(const TraceModel& v) {
    UsesOf u{std::vector<uint32_t>(v.allocations.size(), UINT32_MAX), std::vector<uint32_t>(v.allocations.size(), 0),
             std::vector<bool>(v.allocations.size(), false), std::vector<std::vector<uint32_t>>(v.allocations.size())};
    for (size_t w = 0; w < v.work.size(); ++w) {
        for (const Touch& t : v.work[w].touches) {
            if (v.work[w].kind == WorkItem::Kind::Kernel) u.kernels[size_t(t.allocation)].push_back(uint32_t(w));
            u.first[size_t(t.allocation)] = std::min(u.first[size_t(t.allocation)], uint32_t(w));
            u.last[size_t(t.allocation)] = std::max(u.last[size_t(t.allocation)], uint32_t(w));
        }
        if (v.work[w].library_call == kNone) continue;
        const LibraryCall& c = v.library_calls[size_t(v.work[w].library_call)];
        if (c.b == kNone) continue;
        for (int32_t input : {c.a, c.b})
            if (input != kNone) u.product_read[size_t(input)] = true;
    }
    return u;
}

// Whether kernel `w`'s touch of allocation `a` converts it for a product: the same kernel is the
// first to touch another buffer, used within one step, that a product call reads as an input (a
// parameter cast to the precision a layer computes in: rules' converted-for-products).
bool converts_for_product(const TraceModel& v, const UsesOf& uses, const std::vector<int>& step, uint32_t w,
                          int32_t a) {
    const WorkItem& item = v.work[w];
    if (item.kind != WorkItem::Kind::Kernel || item.library_call != kNone) return false;
    // Before the step's first product call, a kernel that makes a fresh buffer of the step from a
    // parameter reads it for forward (an embedding's gather, through a pointer not marked const)
    // whatever reads that buffer next; backward's kernels, which write gradients, come later.
    auto before_products = [&] {
        for (uint32_t k = w; k-- > 0 && step[k] == step[w];)
            if (v.work[k].library_call != kNone && v.library_calls[size_t(v.work[k].library_call)].b != kNone)
                return false;
        return true;
    };
    return std::any_of(item.touches.begin(), item.touches.end(), [&](const Touch& t) {
        const auto b = size_t(t.allocation);
        return t.allocation != a && uses.first[b] == w && step[w] >= 0 && step[uses.last[b]] == step[w] &&
               (uses.product_read[b] || before_products());
    });
}

// Whether every kernel that touches piece `a` is the update's or converts it for a product: the
// piece of one step of a parameter the steps convert (the rules' converted-for-products asks the
// same of the whole buffer). A forward result that an elementwise kernel makes and a GEMM reads is
// also "converted" by its first use, but other work writes or reads it besides.
bool only_converted_or_updated(const TraceModel& v, const UsesOf& uses, const TagResult& r,
                               const std::vector<int>& step, int32_t a) {
    const std::vector<uint32_t>& kernels = uses.kernels[size_t(a)];
    return !kernels.empty() && std::all_of(kernels.begin(), kernels.end(), [&](uint32_t w) {
        return r.optimizer_work[w] || converts_for_product(v, uses, step, w, a);
    });
}

// A parameter that every step first converts for its products (autocast copies an FP32 weight into a
// BF16 tensor for the GEMMs, through a pointer the trace cannot call read-only) is written first in
// each step, so the derivation cuts it into one piece per step, each living one step: never a
// weight (a parameter outlives the steps). Consecutive pieces of one address are one tensor carried
// over when the update wrote the earlier one last, the later one's first use converts it for a
// product, and no other tensor used the space in between.
bool join_converted_parameters(const TraceModel& v, const TagResult& r, const IterationSet& its,
                               const std::vector<int32_t>& index, SubRangeSet& set) {
    std::vector<int> step(v.work.size(), -1);
    for (size_t i = 0; i < its.iterations.size(); ++i)
        for (size_t w = its.iterations[i].first_work; w < its.iterations[i].end_work && w < v.work.size(); ++w)
            if (v.work[w].process == its.iterations[i].process) step[w] = static_cast<int>(i);
    const UsesOf uses = uses_of(v);
    bool merged = false;
    size_t head = set.ranges.size();
    for (size_t i = 0; i < set.ranges.size(); ++i) {
        const SubRange& range = set.ranges[i];
        if (range.merged || range.bytes <= 0 || index[i] == kNone) continue;
        if (head < set.ranges.size() && set.ranges[head].segment == range.segment &&
            set.ranges[head].offset == range.offset && r.optimizer_work[set.ranges[head].last_work] &&
            !r.optimizer_work[set.ranges[head].first_work] && !r.optimizer_work[range.first_work] &&
            converts_for_product(v, uses, step, range.first_work, index[i]) &&
            only_converted_or_updated(v, uses, r, step, index[i]) && !space_used_between(set, head, i)) {
            merge_subranges(set, head, i);
            merged = true;
            continue;
        }
        head = i;
    }
    if (merged) assign_extents(v, set);
    return merged;
}

// Whether pointer use `u` is an input operand (A or B) of a product call (a library call with two
// inputs: a GEMM, a convolution).
bool product_input(const TraceModel& m, const PointerUse& u) {
    const int32_t call = m.work[u.work].library_call;
    if (call == kNone) return false;
    return m.library_calls[size_t(call)].b != kNone && (u.operand_of_call.a || u.operand_of_call.b);
}

// Whether the update takes the tensor for several: one of its kernels points inside it as well as at
// its start (a fused update lists each of its tensors from its start), after other work of the step
// used it. What backward wrote there (an activation gradient a GEMM wrote, as large as the GEMM's
// output) was then freed, and the update's own temporaries, each as large as a parameter, took the
// space; a weight gradient is as large as its weight, and the update reads it from its start. The
// call that wrote it does not count as that other work: a weight gradient a GEMM wrote that nothing
// but the update used is the update's input, whatever stale pointers the update's argument structs
// carry into it (PyTorch's foreach metadata keeps addresses of earlier launches in unused slots).
bool update_splits_extent(const TraceModel& m, const TagResult& r, const std::vector<int>& step,
                          const std::vector<size_t>& uses, size_t first_update) {
    if (uses.empty()) return false;
    uint64_t start = UINT64_MAX;
    for (size_t index : uses) start = std::min(start, m.pointer_uses[index].offset);
    bool used_before = false, at_start = false, inside = false;
    for (size_t index : uses) {
        const PointerUse& u = m.pointer_uses[index];
        if (step[u.work] != step[first_update]) continue;
        if (!r.optimizer_work[u.work]) {
            used_before |= u.work < first_update && !library_output(m, u);
            continue;
        }
        if (m.work[u.work].kind != WorkItem::Kind::Kernel) continue;
        at_start |= u.offset == start;
        inside |= u.offset != start;
    }
    return used_before && at_start && inside;
}

// What the cuts at the update need beyond the model and the tags: per work item its step (-1 outside
// the steps) and how many sub-ranges tagged gradients it reads from their start; per kernel word
// whether it is an output word (output_slots.h).
struct UpdateCutContext {
    std::vector<int> step;
    std::vector<bool> outputs;
    std::vector<int> gradients_read;
};

UpdateCutContext update_cut_context(const TraceModel& m, const TagResult& r, const IterationSet& its,
                                    const std::vector<int32_t>& index, const SubRangeSet& set) {
    UpdateCutContext c{std::vector<int>(m.work.size(), -1), output_slots(m), std::vector<int>(m.work.size(), 0)};
    for (size_t i = 0; i < its.iterations.size(); ++i)
        for (size_t w = its.iterations[i].first_work; w < its.iterations[i].end_work && w < m.work.size(); ++w)
            if (m.work[w].process == its.iterations[i].process) c.step[w] = static_cast<int>(i);
    std::vector<int32_t> last_counted(m.work.size(), kNone);
    for (size_t u = 0; u < set.owner.size(); ++u) {
        const int32_t piece = set.owner[u];
        const PointerUse& use = m.pointer_uses[u];
        if (piece == kNone || index[size_t(piece)] == kNone || use.work >= m.work.size() ||
            use.offset != set.ranges[size_t(piece)].offset || last_counted[use.work] == piece ||
            r.tags[size_t(index[size_t(piece)])].category != "gradients" || !reads_value(m, c.outputs, use))
            continue;
        last_counted[use.work] = piece;
        ++c.gradients_read[use.work];
    }
    return c;
}

// Where the value the update reads at the sub-range's start was made, for a cut at `first_update`:
// the last write of the start, earlier in that step, by a plain kernel through an output word
// (output_slots.h: a new value, not an in-place update), when the update's first use of the start
// reads it (a word that never starts a value, or the pointer in several words: in place). Under
// autocast backward writes a BF16 weight gradient (a GEMM's output, read by a cast), the allocator
// places the FP32 gradient the cast makes at the same address, and clipping and the optimizer read
// that: the gradient begins at the cast's write, not at the update. `first_update` where the update
// makes a value of its own at the start (its temporaries took the space) or no such write is found.
size_t update_input_made(const TraceModel& m, const TagResult& r, const UpdateCutContext& c,
                         const std::vector<size_t>& uses, size_t first_update) {
    const std::vector<int>& step = c.step;
    const std::vector<bool>& outputs = c.outputs;
    uint64_t start = UINT64_MAX;
    uint32_t first_work = UINT32_MAX;
    for (size_t index : uses) {
        start = std::min(start, m.pointer_uses[index].offset);
        first_work = std::min(first_work, m.pointer_uses[index].work);
    }
    const PointerUse* update_use = nullptr;  // the update's first use of the start
    size_t made = first_update;
    for (size_t index : uses) {
        const PointerUse& u = m.pointer_uses[index];
        if (u.offset != start) continue;
        if (r.optimizer_work[u.work]) {
            if (!update_use || u.work < update_use->work) update_use = &u;
            continue;
        }
        const WorkItem& w = m.work[u.work];
        if (u.work >= first_update || step[u.work] != step[first_update] || w.kind != WorkItem::Kind::Kernel ||
            w.library_call != kNone || u.slot >= outputs.size() || !outputs[u.slot])
            continue;
        made = made == first_update ? u.work : std::max<size_t>(made, u.work);
    }
    if (!update_use || made == first_update || made == first_work) return first_update;
    // A gradient is read by nothing but the update and the work that serves it: clipping's norm takes
    // the step's gradients together, one launch reading several. A value that other work reads
    // after it was made (a backward kernel reading one activation gradient) is backward's own, whose
    // space the update's temporaries took once it was freed.
    for (size_t index : uses) {
        const PointerUse& u = m.pointer_uses[index];
        if (u.offset == start && u.work > made && u.work < first_update && c.gradients_read[u.work] < 2)
            return first_update;
    }
    const bool update_reads = update_use->slot == kSeveralSlots || reads_value(m, outputs, *update_use);
    return update_reads ? made : first_update;
}

// Whether work other than the update reads the value at the piece's start after its first use and
// before the update, one tensor at a time (reads_value; not clipping's norm over the gradients): a
// gradient is read by nothing but the update and what serves it, so that value was backward's.
bool read_before_update(const TraceModel& m, const TagResult& r, const UpdateCutContext& c,
                        const std::vector<size_t>& uses, size_t first_update) {
    uint64_t start = UINT64_MAX;
    uint32_t first_work = UINT32_MAX;
    for (size_t index : uses) {
        start = std::min(start, m.pointer_uses[index].offset);
        first_work = std::min(first_work, m.pointer_uses[index].work);
    }
    return std::any_of(uses.begin(), uses.end(), [&](size_t index) {
        const PointerUse& u = m.pointer_uses[index];
        return u.offset == start && u.work > first_work && u.work < first_update && !r.optimizer_work[u.work] &&
               c.step[u.work] == c.step[first_update] && c.gradients_read[u.work] < 2 && reads_value(m, c.outputs, u);
    });
}

// Where to cut a sub-range that a product call consumed before the update used its bytes: the
// update's first work item using it, or where the value the update reads was made there
// (update_input_made); or where a library call overwrote what the step read before
// (overwrite_cuts.h); v.work.size(): no cut. `uses`: the sub-range's pointer uses; `before`: those
// of the pieces only rewrite cuts set apart from it (rewritten_tenants.h), whose product reads count.
size_t update_after_product_read(const TraceModel& m, const TagResult& r, const UpdateCutContext& c,
                                 const std::vector<size_t>& uses, const std::vector<size_t>& before, bool& made_there) {
    made_there = false;
    const std::vector<int>& step = c.step;
    size_t first_update = r.optimizer_work.size();
    for (size_t index : uses) {
        const PointerUse& u = m.pointer_uses[index];
        if (m.work[u.work].kind == WorkItem::Kind::Kernel && r.optimizer_work[u.work])
            first_update = std::min<size_t>(first_update, u.work);
    }
    if (first_update == r.optimizer_work.size()) return first_update;
    auto product_read = [&](const std::vector<size_t>& list) {
        return std::any_of(list.begin(), list.end(), [&](size_t index) {
            const PointerUse& u = m.pointer_uses[index];
            return u.work < first_update && step[u.work] == step[first_update] && !r.optimizer_work[u.work] &&
                   product_input(m, u);
        });
    };
    // Read by a product in a piece before: this piece's own value is the gradient unless other work
    // consumed it before the update (read_before_update).
    const bool earlier = !product_read(uses) && product_read(before);
    if (earlier && !read_before_update(m, r, c, uses, first_update)) return r.optimizer_work.size();
    if (earlier || product_read(uses)) {
        const size_t made = update_input_made(m, r, c, uses, first_update);
        made_there = made != first_update;
        return made;
    }
    if (update_splits_extent(m, r, step, uses, first_update)) {
        const size_t made = update_input_made(m, r, c, uses, first_update);
        made_there = made != first_update;
        return made;
    }
    return overwrite_after_read(m, r, step, uses, first_update);
}

// Whether `u` writes its tensor whole: a set, a copy into it, or a library call's output it does
// not read first.
bool writes_whole(const TraceModel& m, const PointerUse& u) {
    if (u.access != Access::Write) return false;
    const WorkItem& w = m.work[u.work];
    if (w.kind == WorkItem::Kind::Set || w.kind == WorkItem::Kind::CopyDtoD || w.kind == WorkItem::Kind::CopyHtoD)
        return true;
    if (w.library_call == kNone) return false;
    return !m.library_calls[size_t(w.library_call)].output_read && u.operand_of_call.c;
}

// Per (segment, offset): the work items that wrote the address whole, in launch order.
using WholeWrites = std::unordered_map<uint64_t, std::vector<uint32_t>>;
uint64_t address_key(const PointerUse& u) {
    return (uint64_t(uint32_t(u.allocation)) << 40) ^ u.offset;
}

WholeWrites whole_writes(const TraceModel& m) {
    WholeWrites writes;
    for (const PointerUse& u : m.pointer_uses)
        if (writes_whole(m, u)) writes[address_key(u)].push_back(u.work);
    for (auto& [key, works] : writes) std::sort(works.begin(), works.end());
    return writes;
}

// Whether the tensor's address was written whole earlier in the step of its first use (or by that
// use): its contents were made in the step, not carried in from the one before, so it is no weight
// (a weight's first use in a step reads what the last update left).
bool made_in_step(const TraceModel& m, const WholeWrites& writes, const std::vector<int>& step,
                  const std::vector<size_t>& uses) {
    const PointerUse* first = nullptr;
    for (size_t index : uses)
        if (!first || m.pointer_uses[index].work < first->work) first = &m.pointer_uses[index];
    if (!first || step[first->work] < 0) return false;
    auto found = writes.find(address_key(*first));
    if (found == writes.end()) return false;
    auto after = std::upper_bound(found->second.begin(), found->second.end(), first->work);
    return after != found->second.begin() && step[*std::prev(after)] == step[first->work];
}

// A gradient is read by nothing but the update (and the work that serves it, such as clipping): a
// product call (a GEMM, a convolution) reads activations, activation gradients and weights, never a
// weight gradient. A tensor the rules took for a gradient that a product call read as an input
// earlier in the step is two tensors at one address: data of forward and backward, whose space a
// caching allocator handed to the update's own temporaries once it was freed (AdamW's square roots
// of the second moments, made inside optimizer.step()). It is cut where the update begins to use it.
bool split_update_reuse(const TraceModel& m, const TagResult& r, const IterationSet& its,
                        const std::vector<int32_t>& index, std::vector<int32_t>& regions, SubRangeSet& set) {
    const UpdateCutContext c = update_cut_context(m, r, its, index, set);
    std::vector<std::vector<size_t>> uses(set.ranges.size());
    for (size_t u = 0; u < set.owner.size(); ++u)
        if (set.owner[u] != kNone) uses[size_t(set.owner[u])].push_back(u);
    const WholeWrites writes = whole_writes(m);
    bool split = false;
    for (size_t i = set.ranges.size(); i-- > 0;) {  // last first: the indices before i stay valid
        if (index[i] == kNone || regions[i] != kNone) continue;
        const std::string& category = r.tags[size_t(index[i])].category;
        if (category != "gradients" && !(category == "weights" && made_in_step(m, writes, c.step, uses[i]))) continue;
        bool made_there = false;
        size_t cut = update_after_product_read(m, r, c, uses[i], uses_before_rewrites(set, uses, i), made_there);
        if (cut == r.optimizer_work.size() || !split_subrange(m, set, i, uint32_t(cut))) continue;
        regions.insert(regions.begin() + std::ptrdiff_t(i) + 1, kNone);
        split = true;
        // The update's input begins at the plain kernel's write: its size is unknown, and the
        // pointers inside the piece it was cut from are other tensors the allocator placed there:
        // other work's, then the update's own (its temporaries, or the next tensor of its list).
        if (!made_there) continue;
        for (const std::vector<bool>& stays : {r.optimizer_work, std::vector<bool>()}) {
            const size_t peeled = peel_interior(m, set, i + 1, stays);
            if (peeled != SIZE_MAX) regions.insert(regions.begin() + std::ptrdiff_t(peeled), kNone);
        }
    }
    if (split) assign_extents(m, set);
    return split;
}

// Whether the rules' tag leaves a piece open to a cut where a kernel rewrote its start: an
// activation, or a gradient made in the step and read by the update (change 40: backward's data
// the allocator placed there earlier in the step, read and dropped before the gradient was made,
// joined it; the update reads only the last value).
bool cut_candidate(const Tag& tag) {
    return tag.category == "activations" ||
           (tag.category == "gradients" && tag.rule == "produced-in-step-read-by-update");
}

// An activation's piece holds several tensors where a kernel wrote a new value into its start after
// the value there was read (output_slots.h): a caching allocator hands the space an operation freed
// to the next operation's result or temporary at once, and a kernel that takes its pointers in a
// struct shows no copy or library call there to cut at. Only pieces the rules took for activations
// or for gradients backward wrote in the step are cut (cut_candidate; weights and optimizer state
// are rewritten in place by design), each at every such write; the pieces are tagged again.
// `cut_before` receives, per sub-range after the splits, whether it is the later part of a cut
// (rejoin_same_role_cuts).
bool split_rewritten_activations(const TraceModel& m, const TagResult& r, const std::vector<int32_t>& index,
                                 std::vector<int32_t>& regions, std::vector<bool>& cut_before, SubRangeSet& set) {
    cut_before.assign(set.ranges.size(), false);
    const std::vector<bool> outputs = output_slots(m);
    std::vector<std::vector<size_t>> uses(set.ranges.size());
    for (size_t u = 0; u < set.owner.size(); ++u)
        if (set.owner[u] != kNone) uses[size_t(set.owner[u])].push_back(u);
    bool split = false;
    for (size_t i = set.ranges.size(); i-- > 0;) {  // last first: the indices before i stay valid
        if (index[i] == kNone || regions[i] != kNone || !cut_candidate(r.tags[size_t(index[i])])) continue;
        const std::vector<uint32_t> cuts = rewrite_cuts(m, r, outputs, uses[i]);
        for (size_t c = cuts.size(); c-- > 0;) {  // latest first: each split keeps the earlier part at i
            if (!split_subrange(m, set, i, cuts[c])) continue;
            regions.insert(regions.begin() + std::ptrdiff_t(i) + 1, kNone);
            cut_before.insert(cut_before.begin() + std::ptrdiff_t(i) + 1, true);
            split = true;
        }
    }
    if (split) assign_extents(m, set);
    return split;
}

// The parts of a cut (split_rewritten_activations) that the rules, tagging them again, both took for
// activations, or both for gradients, are joined again: a cut is kept only where it sets apart a
// tensor of another role (an operation's temporary, backward's data before a gradient). Two
// activations at one address are two tensors all the same, but apart they change no category, only
// lives: each activation is held until its space is used again (end_times), so the earlier part
// ends sooner, which moved the what-if's replay of a pool by a page, and a piece cut short no longer
// showed that a table was converted for its products (join_converted_parameters; docs/tagging.md,
// change 32).
bool rejoin_same_role_cuts(const TagResult& r, const std::vector<int32_t>& index, const std::vector<bool>& cut_before,
                           SubRangeSet& set) {
    auto category = [&](size_t i) -> std::string_view {
        return index[i] == kNone ? std::string_view() : std::string_view(r.tags[size_t(index[i])].category);
    };
    auto same_role = [&](size_t i, size_t j) {
        return (category(i) == "activations" || category(i) == "gradients") && category(i) == category(j);
    };
    std::vector<bool> join(std::min(cut_before.size(), set.ranges.size()), false);
    for (size_t j = 1; j < join.size(); ++j) join[j] = cut_before[j] && same_role(j, j - 1);
    return merge_into_previous(set, join) > 0;
}

// Whether a tensor was in use during a steady step (every step but the first when there are three
// or more, as for the data flow: the first step differs by lazy initialisation, moments zeroed,
// master copies made).
bool used_in_steady_step(const SubRangeTag& tensor, const IterationSet& its) {
    for (size_t i = its.iterations.size() >= 3 ? 1 : 0; i < its.iterations.size(); ++i) {
        const Iteration& step = its.iterations[i];
        if (tensor.begin_ns < step.end_ns && tensor.end_ns >= step.begin_ns) return true;
    }
    return false;
}

// The segment's own row: the category holding most of its tensors' bytes. When some tensors were in
// use in the steady steps, only those count: what a segment holds in the first step (optimizer state
// being initialised piece by piece, each piece looking like a one-off temporary) is not its role.
Tag dominant_tag(const std::vector<SubRangeTag>& tags, size_t begin, size_t end, const IterationSet& its) {
    bool any_steady = false;
    for (size_t i = begin; i < end && !any_steady; ++i) any_steady = used_in_steady_step(tags[i], its);
    std::map<std::string, double> weight;
    double total = 0;
    for (size_t i = begin; i < end; ++i) {
        if (any_steady && !used_in_steady_step(tags[i], its)) continue;
        // Bytes only, not bytes over time: times differ between runs of the same program and the
        // segment's row must not flip with them.
        double w = double(tags[i].bytes);
        weight[tags[i].tag.category] += w;
        total += w;
    }
    auto best = std::max_element(weight.begin(), weight.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    double share = total > 0 ? best->second / total : 0;
    char reason[240];
    std::snprintf(reason, sizeof reason,
                  "a pooled segment: %.0f%% of the bytes of its tensors %sare %s "
                  "(allocation_subranges lists them)",
                  share * 100, any_steady ? "used in the steady steps " : "", best->first.c_str());
    return {best->first, std::min(0.6, share), "pooled-segment-dominant", reason,
            std::to_string(end - begin) + " tensors inside (allocation_subranges has the evidence of each)"};
}

// Whether `u` is the workspace operand of its work's library call (the call's kernel pointing at
// the workspace it was given).
bool call_workspace(const TraceModel& m, const PointerUse& u) {
    return m.work[u.work].library_call != kNone && u.operand_of_call.workspace;
}

// Per sub-range: every use of it is a library call's workspace, scratch of that call.
std::vector<bool> scratch_of_calls(const TraceModel& m, const SubRangeSet& set) {
    std::vector<bool> scratch(set.ranges.size(), true), used(set.ranges.size(), false);
    for (size_t u = 0; u < set.owner.size(); ++u) {
        const int32_t owner = set.owner[u];
        if (owner == kNone) continue;
        used[size_t(owner)] = true;
        if (!call_workspace(m, m.pointer_uses[u])) scratch[size_t(owner)] = false;
    }
    for (size_t i = 0; i < scratch.size(); ++i) scratch[i] = scratch[i] && used[i];
    return scratch;
}

// When a tensor's memory is given back is not in the trace: only its last use is. A tensor used
// within one step is held at most until its space is used again or the step ends (frameworks
// release step-local tensors by then, and the samples at the end of each micro-batch's scope);
// taking that as its end brings the breakdown closer to what the allocator holds than the last use
// would. Not a call's workspace (scratch_of_calls): nothing is carried out of it, so it is dead once
// its last call is done; held on, it covered the tensor the allocator put in its space next, which
// a caching allocator hands out before that tensor's first use (change 25). The what-if holds such
// workspaces itself as it did before (analyzer/src/whatif_pool_tensors.cpp, change 19).
std::vector<int64_t> end_times(const TraceModel& m, const SubRangeSet& set, const IterationSet& its) {
    const std::vector<bool> scratch = scratch_of_calls(m, set);
    std::vector<int> iteration(m.work.size(), -1);
    for (size_t i = 0; i < its.iterations.size(); ++i)
        for (size_t w = its.iterations[i].first_work; w < its.iterations[i].end_work && w < m.work.size(); ++w)
            if (m.work[w].process == its.iterations[i].process) iteration[w] = static_cast<int>(i);
    std::vector<int64_t> end(set.ranges.size(), 0);
    for (size_t i = 0; i < set.ranges.size(); ++i) {
        const SubRange& r = set.ranges[i];
        if (r.merged) continue;
        const WorkItem& last = m.work[r.last_work];
        end[i] = std::max(last.end_ns, last.launch_ns);
        int step = iteration[r.first_work];
        if (step < 0 || iteration[r.last_work] != step || scratch[i]) continue;
        int64_t limit = its.iterations[size_t(step)].end_ns;
        for (size_t j = 0; j < set.ranges.size(); ++j) {  // later users of the same bytes
            const SubRange& o = set.ranges[j];
            if (o.merged || o.segment != r.segment || o.first_work <= r.last_work ||
                o.offset >= r.offset + uint64_t(r.bytes) || r.offset >= o.offset + uint64_t(o.bytes))
                continue;
            limit = std::min(limit, m.work[o.first_work].launch_ns);
        }
        end[i] = std::max(end[i], limit);
    }
    return end;
}

// The end of memory never freed: the run's end, at least the last work's (a model without its run
// row). One pass over the work, taken only when some held piece needs it.
int64_t run_end_or_last_work_ns(const TraceModel& m) {
    int64_t end = m.run_end_ns;
    for (const WorkItem& w : m.work) end = std::max({end, w.end_ns, w.launch_ns});
    return end;
}

// Weights and optimizer state are values the update leaves for a later step (definitions.md): their
// last use says when the trace's work stopped, not that the program let them go. The last step's
// weights after its update are read by no kernel of the trace (a checkpoint save, the caller, or no
// one) and are still held. So a piece of those roles that no later tensor replaced (nothing placed on
// any of its bytes after its last use) holds its value until its segment is freed or the run ends.
// Other roles keep their ends: an activation or a gradient is dead after its last reader, and a
// caching allocator may hand its block on at once (end_times).
// The byte intervals of one segment covered by the pieces placed so far, kept merged: begin -> end.
class CoveredBytes {
public:
    void add(uint64_t begin, uint64_t end) {
        auto it = by_begin_.upper_bound(begin);
        if (it != by_begin_.begin() && std::prev(it)->second >= begin) --it;  // touches the one before
        while (it != by_begin_.end() && it->first <= end) {                   // swallow what it touches
            begin = std::min(begin, it->first);
            end = std::max(end, it->second);
            it = by_begin_.erase(it);
        }
        by_begin_.emplace(begin, end);
    }
    bool overlaps(uint64_t begin, uint64_t end) const {
        auto it = by_begin_.lower_bound(end);  // the last interval starting before `end` decides
        return it != by_begin_.begin() && std::prev(it)->second > begin;
    }

private:
    std::map<uint64_t, uint64_t> by_begin_;
};

void hold_carried_state(const TraceModel& m, const SubRangeSet& set, const std::vector<int32_t>& index,
                        const TagResult& r, std::vector<int64_t>& end) {
    const auto live = [&](size_t i) { return !set.ranges[i].merged && set.ranges[i].bytes > 0; };
    const auto carried = [&](size_t i) {
        if (index[i] == kNone || !live(i)) return false;
        const std::string& category = r.tags[size_t(index[i])].category;
        return category == "weights" || category == "optimizer_state";
    };
    std::optional<int64_t> run_end_ns;
    const auto held_until_ns = [&](const Allocation& segment) {  // its segment's free, else the run's end
        if (segment.free_ns) return *segment.free_ns;
        if (!run_end_ns) run_end_ns = run_end_or_last_work_ns(m);
        return *run_end_ns;
    };
    // One segment at a time (ranges are by segment), a sweep back in time: the held pieces by last
    // use, latest first; before each, every piece first used after that last use is added to the
    // covered bytes. Linear in the segment's pieces (times a log), where comparing each held piece
    // with every other piece grew with the run's length times the parameters in the segment.
    std::vector<size_t> held, later;
    for (size_t first = 0; first < set.ranges.size();) {
        size_t last = first;
        while (last < set.ranges.size() && set.ranges[last].segment == set.ranges[first].segment) ++last;
        held.clear();
        later.clear();
        for (size_t i = first; i < last; ++i) {
            if (carried(i)) held.push_back(i);
            if (live(i)) later.push_back(i);
        }
        const auto by = [&](auto field) {
            return [&, field](size_t a, size_t b) { return set.ranges[a].*field > set.ranges[b].*field; };
        };
        std::sort(held.begin(), held.end(), by(&SubRange::last_work));
        std::sort(later.begin(), later.end(), by(&SubRange::first_work));
        CoveredBytes covered;
        size_t next = 0;
        for (size_t i : held) {
            const SubRange& piece = set.ranges[i];
            for (; next < later.size() && set.ranges[later[next]].first_work > piece.last_work; ++next) {
                const SubRange& tenant = set.ranges[later[next]];
                covered.add(tenant.offset, tenant.offset + uint64_t(tenant.bytes));
            }
            if (!covered.overlaps(piece.offset, piece.offset + uint64_t(piece.bytes)))
                end[i] = std::max(end[i], held_until_ns(m.allocations[size_t(piece.segment)]));
        }
        first = last;
    }
}

TagResult collect(const TraceModel& m, const TraceModel& v, const SubRangeSet& set, const std::vector<int32_t>& index,
                  const IterationSet& its, TagResult&& r) {
    TagResult result;
    result.phases = std::move(r.phases);
    result.optimizer_work = std::move(r.optimizer_work);
    result.tags = std::vector<Tag>(r.tags.begin(), r.tags.begin() + std::ptrdiff_t(m.allocations.size()));
    std::vector<int64_t> ends = end_times(m, set, its);
    hold_carried_state(m, set, index, r, ends);
    for (size_t i = 0; i < set.ranges.size(); ++i) {
        if (index[i] == kNone) continue;
        const SubRange& range = set.ranges[i];
        const Allocation& a = v.allocations[size_t(index[i])];
        result.subranges.push_back({range.segment, range.offset, range.bytes, a.alloc_ns, std::max(ends[i], a.alloc_ns),
                                    r.tags[size_t(index[i])]});
    }
    // An allocation is multi-tensor only when the tensors inside play different roles. One whose
    // tensors all play one role (an arena of parameters, a batch addressed image by image) is one
    // tensor of that role: its own row takes that role and the rule of its largest tensor, and it
    // is not counted as a multi-tensor segment. Its rows stay: in a caching allocator's segment
    // they leave the cached free space unattributed.
    std::vector<bool> has(m.allocations.size(), false);
    for (size_t begin = 0; begin < result.subranges.size();) {
        size_t end = begin;
        int32_t segment = result.subranges[begin].segment;
        bool one_role = true;
        size_t largest = begin;
        while (end < result.subranges.size() && result.subranges[end].segment == segment) {
            one_role &= result.subranges[end].tag.category == result.subranges[begin].tag.category;
            if (result.subranges[end].bytes > result.subranges[largest].bytes) largest = end;
            ++end;
        }
        has[size_t(segment)] = true;
        if (one_role) {
            Tag whole = result.subranges[largest].tag;
            whole.evidence = "one role for all " + std::to_string(end - begin) + " tensors inside; the largest: " +
                             whole.evidence;
            result.tags[size_t(segment)] = whole;
            ++result.single_role_segments;
        } else {
            result.tags[size_t(segment)] = dominant_tag(result.subranges, begin, end, its);
            ++result.segments_with_subranges;
        }
        begin = end;
    }

    for (size_t a = 0; a < m.allocations.size(); ++a)
        if (!has[a] && m.allocations[a].distinct_offsets >= kPooledOffsets) ++result.segments_without_subranges;
    result.segment_level = result.segments_without_subranges > 0;
    return result;
}

}  // namespace

TagResult tag_model(const TraceModel& m, const std::string& range_name, IterationSet& its) {
    its = detect_iterations(m, range_name);
    if (!m.pooled) {
        TagResult r = tag_allocations(m, its);
        if (count_set_apart_spans_that_train(m, r, its)) r = tag_allocations(m, its);
        if (set_apart_steps_without_training(m, r, its)) r = tag_allocations(m, its);
        return r;
    }
    std::vector<int32_t> regions;  // per sub-range: the registered region it is (nvtx_regions.h)
    SubRangeSet set = derive_with_regions(m, its, regions);
    std::vector<int32_t> index;
    TraceModel v = with_subranges(m, set, index);
    // Segments live all run, so they cannot tell where a step may start without cutting short-lived
    // buffers; the tensors inside them can. Detect again, and derive again if the steps moved.
    IterationSet better = detect_iterations(v, range_name);
    // ... unless that finds fewer steps (the tensors' uses can make a validation pass look like
    // part of a step): a boundary may move, the count may not drop.
    if (!same_boundaries(its, better) && better.iterations.size() >= its.iterations.size()) {
        its = std::move(better);
        set = derive_with_regions(m, its, regions);
        v = with_subranges(m, set, index);
    }
    TagResult r = tag_allocations(v, its);
    // The steps changed: the tensors (cut per step) and their tags follow.
    auto tag_again = [&] {
        set = derive_with_regions(m, its, regions);
        v = with_subranges(m, set, index);
        r = tag_allocations(v, its);
    };
    if (count_set_apart_spans_that_train(v, r, its)) tag_again();
    if (set_apart_steps_without_training(v, r, its)) tag_again();
    if (split_update_reuse(m, r, its, index, regions, set)) {
        v = with_subranges(m, set, index);
        r = tag_allocations(v, its);
    }
    std::vector<bool> cut_before;
    if (split_rewritten_activations(m, r, index, regions, cut_before, set)) {
        v = with_subranges(m, set, index);
        r = tag_allocations(v, its);
        if (rejoin_same_role_cuts(r, index, cut_before, set)) {
            assign_extents(m, set);
            v = with_subranges(m, set, index);
            r = tag_allocations(v, its);
        }
    }
    if (merge_optimizer_chains(v, r, index, set)) {
        v = with_subranges(m, set, index);
        r = tag_allocations(v, its);
    }
    if (join_converted_parameters(v, r, its, index, set)) {
        v = with_subranges(m, set, index);
        r = tag_allocations(v, its);
    }
    apply_region_names(m, regions, index, r);
    TagResult result = collect(m, v, set, index, its, std::move(r));
    finish_region_rows(m, set, regions, index, result);
    return result;
}

}  // namespace tbdprof::tagger
