// Pooled segments' tensors in the pool's order (whatif_pool_tensors.h).
#include "whatif_pool_tensors.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "tbdprof/analyzer/report.h"
#include "tbdprof/trace/categories.h"
#include "tbdprof/trace/tables.h"
#include "whatif_mapped.h"
#include "whatif_pool.h"
#include "whatif_pool_uses.h"

namespace tbdprof::analyzer {
namespace {

// Bounds the (tensor, later tensor) pairs examined per segment for continued requests; a segment
// with more keeps its tensors' recovered lives (the replay check then says whether they still fit).
constexpr size_t kContinuationWorkLimit = 4'000'000;

// Drops the tensors `dropped` marks, keeping the others' order.
void erase_marked(std::vector<PoolTensor>& tensors, const std::vector<bool>& dropped) {
    size_t kept = 0;
    for (size_t i = 0; i < tensors.size(); ++i)
        if (!dropped[i]) tensors[kept++] = tensors[i];
    tensors.resize(kept);
}

bool share_bytes(const PoolTensor& a, const PoolTensor& b) {
    return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

bool by_begin(const PoolTensor& a, const PoolTensor& b) {
    if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
    return a.offset < b.offset;
}

// A tensor placed on bytes another still seems to hold ends the other's life there (the pool had
// released it). Tensors sorted by begin; at most the tensors live at one moment are examined.
void end_at_reuse(std::vector<PoolTensor>& tensors) {
    std::vector<size_t> live;
    for (size_t t = 0; t < tensors.size(); ++t) {
        const PoolTensor& next = tensors[t];
        std::erase_if(live, [&](size_t r) {
            PoolTensor& held = tensors[r];
            if (held.end_ns <= next.begin_ns) return true;
            if (held.begin_ns < next.begin_ns && share_bytes(held, next)) {
                held.end_ns = next.begin_ns;
                held.ends_at_reuse = true;
                return true;
            }
            return false;
        });
        live.push_back(t);
    }
}

// The first tensor placed on any byte of tensors[i] after it (tensors sorted by begin, lives on one
// byte disjoint); SIZE_MAX: none, or two at once (which one continues it is unknown).
size_t next_occupant(const std::vector<PoolTensor>& tensors, const std::vector<bool>& merged, size_t i, size_t& work) {
    for (size_t j = i + 1; j < tensors.size() && work < kContinuationWorkLimit; ++j, ++work) {
        if (merged[j] || !share_bytes(tensors[i], tensors[j]) || tensors[j].begin_ns < tensors[i].end_ns) continue;
        for (size_t k = j + 1; k < tensors.size() && tensors[k].begin_ns == tensors[j].begin_ns; ++k)
            if (!merged[k] && share_bytes(tensors[i], tensors[k])) return SIZE_MAX;
        return j;
    }
    return SIZE_MAX;
}

bool step_local(int category) {
    using trace::Category;
    return category == static_cast<int>(Category::input) || category == static_cast<int>(Category::activations) ||
           category == static_cast<int>(Category::workspace);
}

// A tensor recovered again on the same bytes with the same category, nothing placed there in
// between, is the one request continued: its life runs to the last such recovery. With
// `join_step_local` false, only tensors of a fixed size (weights, gradients, optimizer state, other).
void join_continued(std::vector<PoolTensor>& tensors, bool join_step_local) {
    std::vector<bool> merged(tensors.size(), false);
    size_t work = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (merged[i] || (!join_step_local && step_local(tensors[i].category))) continue;
        for (size_t j = next_occupant(tensors, merged, i, work); j != SIZE_MAX;
             j = next_occupant(tensors, merged, i, work)) {
            const PoolTensor& s = tensors[j];
            if (s.offset != tensors[i].offset || s.bytes != tensors[i].bytes || s.category != tensors[i].category)
                break;
            if (s.end_ns >= tensors[i].end_ns) {
                tensors[i].end_ns = s.end_ns;
                tensors[i].ends_at_reuse = s.ends_at_reuse;
            }
            merged[j] = true;
        }
    }
    erase_marked(tensors, merged);
}

// Device addresses where work of a known size starts: library calls' operands, copies, sets.
std::unordered_set<int64_t> sized_addresses(const TraceFile& trace) {
    std::unordered_set<int64_t> out;
    auto add = [&](const char* table, const char* sql) {
        if (!trace::has_table(trace.db, table)) return;
        trace::Statement rows(trace.db, sql);
        while (rows.step())
            if (!rows.is_null(0)) out.insert(rows.column_int(0));
    };
    add("library_calls",
        "SELECT a FROM library_calls UNION SELECT b FROM library_calls UNION SELECT c FROM library_calls "
        "UNION SELECT workspace FROM library_calls WHERE workspace_bytes > 0");
    add("copies", "SELECT src FROM copies UNION SELECT dst FROM copies");
    add("sets", "SELECT dst FROM sets");
    return out;
}

std::unordered_map<int64_t, int64_t> allocation_addresses(const TraceFile& trace) {
    std::unordered_map<int64_t, int64_t> out;
    trace::Statement rows(trace.db, "SELECT id, address FROM allocations");
    while (rows.step()) out[rows.column_int(0)] = rows.column_int(1);
    return out;
}

// Whose use `use` is: the live tensor (keyed by offset) whose bytes hold it; SIZE_MAX: none.
size_t user_of(const std::map<int64_t, size_t>& live, const std::vector<PoolTensor>& tensors, const SegmentUse& use) {
    auto it = live.upper_bound(use.offset_bytes);
    if (it == live.begin()) return SIZE_MAX;
    --it;
    const PoolTensor& t = tensors[it->second];
    return use.offset_bytes < t.offset + t.bytes ? it->second : SIZE_MAX;
}

// Per process: the recorded steps' [begin, end) (the iterations the tagger stored), by begin.
using StepSpans = std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>>;
StepSpans read_step_spans(const TraceFile& trace) {
    StepSpans out;
    if (!trace::has_table(trace.db, "iterations")) return out;
    trace::RowReader<trace::IterationRow> rows(trace.db);
    for (trace::IterationRow row; rows.next(row);)
        if (row.end_ns > row.begin_ns) out[row.process].push_back({row.begin_ns, row.end_ns});
    for (auto& [process, spans] : out) std::sort(spans.begin(), spans.end());
    return out;
}

// A call's workspace inside a segment, as the pool holds it: the tagger ends it at its call (nothing
// is carried out of a workspace: docs/tagging.md, change 25), but PyTorch's pool keeps the block
// until the space serves another request; the replay was made against workspaces held to the end of
// their step, which end_at_reuse then cuts where the next tensor takes their bytes (docs/tagging.md,
// change 19: the expandable segments' replay packs the freed gap otherwise). Returns the step's end,
// or `end_ns` outside the steps.
int64_t held_workspace_end(const StepSpans& steps, int64_t process, int64_t begin_ns, int64_t end_ns) {
    const auto found = steps.find(process);
    if (found == steps.end()) return end_ns;
    const auto& spans = found->second;
    auto after = std::upper_bound(spans.begin(), spans.end(), std::pair{begin_ns, INT64_MAX});
    if (after == spans.begin() || std::prev(after)->second <= begin_ns) return end_ns;
    return std::max(end_ns, std::prev(after)->second);
}

// The library calls' workspaces in segments counted whole as a library workspace, one request per call.
void read_workspace_requests(const TraceFile& trace, const std::vector<Allocation>& allocations, size_t real_count,
                             const std::unordered_map<int64_t, int64_t>& address, PoolReadings& out) {
    std::unordered_map<int64_t, size_t> workspace_index;
    for (size_t i = 0; i < real_count; ++i)
        if (allocations[i].real && !allocations[i].by_subrange && allocations[i].rule == "library-workspace")
            workspace_index[allocations[i].id] = i;
    if (workspace_index.empty() || !trace::has_table(trace.db, "library_calls")) return;
    std::unordered_set<size_t> used;
    trace::RowReader<trace::LibraryCallRow> calls(trace.db);
    for (trace::LibraryCallRow row; calls.next(row);) {
        if (!row.workspace_allocation || !row.workspace || !row.workspace_bytes || *row.workspace_bytes <= 0) continue;
        const auto found = workspace_index.find(*row.workspace_allocation);
        const auto base = address.find(*row.workspace_allocation);
        if (found == workspace_index.end() || base == address.end()) continue;
        const Allocation& segment = allocations[found->second];
        PoolTensor t;
        t.segment = found->second;
        t.offset = *row.workspace - base->second;
        t.bytes = *row.workspace_bytes;
        if (t.offset < 0 || t.offset + t.bytes > segment.bytes) continue;
        t.begin_ns = std::clamp(row.begin_ns, segment.alloc_ns, segment.free_ns);
        t.end_ns = std::clamp(std::max(row.end_ns, t.begin_ns), t.begin_ns, segment.free_ns);
        t.category = static_cast<int>(trace::Category::workspace);
        t.library_workspace = true;
        out.workspaces.push_back(t);
        used.insert(found->second);
    }
    out.workspace_segments.assign(used.begin(), used.end());
    std::sort(out.workspace_segments.begin(), out.workspace_segments.end());
    if (!trace::has_table(trace.db, "kernel_allocations")) return;
    trace::Statement outside(
        trace.db,
        "SELECT DISTINCT ka.allocation FROM kernel_allocations ka JOIN kernels k ON k.id = ka.kernel "
        "WHERE k.library_call IS NULL");
    while (outside.step())
        if (const auto found = workspace_index.find(outside.column_int(0));
            found != workspace_index.end() && used.contains(found->second))
            out.workspace_used_outside_calls = true;
}

// Per process: the library calls' [begin, end), by begin.
std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> read_library_calls(const TraceFile& trace) {
    std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> out;
    if (!trace::has_table(trace.db, "library_calls")) return out;
    trace::RowReader<trace::LibraryCallRow> calls(trace.db);
    for (trace::LibraryCallRow row; calls.next(row);)
        if (row.end_ns >= row.begin_ns) out[row.process].push_back({row.begin_ns, row.end_ns});
    for (auto& [process, spans] : out) std::sort(spans.begin(), spans.end());
    return out;
}

struct SegmentPlace {
    size_t head = 0;            // the segment's index among the allocations
    int64_t offset = 0;         // of the allocation in its segment
    int64_t segment_bytes = 0;  // the segment's bytes
};

// Where allocation `index` lies: in its mapped segment (a page of PyTorch's expandable segments), or
// it is its own segment.
SegmentPlace place_in_segment(const MappedSegments& mapped, size_t index, int64_t bytes) {
    const auto found = mapped.place.find(index);
    if (found == mapped.place.end()) return {index, 0, bytes};
    return {found->second.head, found->second.offset, mapped.bytes.at(found->second.head)};
}

// A tensor across two mapped pages is written by the tagger as one row in each: the rows meeting
// at a page's start with the same life and category are one tensor again.
void join_across_pages(std::vector<PoolTensor>& tensors, const std::vector<int64_t>& page_offsets) {
    std::sort(tensors.begin(), tensors.end(), [](const PoolTensor& a, const PoolTensor& b) {
        if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
        if (a.end_ns != b.end_ns) return a.end_ns < b.end_ns;
        if (a.category != b.category) return a.category < b.category;
        return a.offset < b.offset;
    });
    size_t kept = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (kept > 0) {
            PoolTensor& last = tensors[kept - 1];
            const PoolTensor& t = tensors[i];
            const int64_t meet = last.offset + last.bytes;
            if (meet == t.offset && last.begin_ns == t.begin_ns && last.end_ns == t.end_ns &&
                last.category == t.category && std::binary_search(page_offsets.begin(), page_offsets.end(), meet)) {
                last.bytes += t.bytes;
                last.bound = t.bound;
                continue;
            }
        }
        tensors[kept++] = tensors[i];
    }
    tensors.resize(kept);
}

// Uses keyed by mapped page, moved to their segment (the head's id) at the page's offset there.
std::unordered_map<int64_t, std::vector<SegmentUse>> uses_by_segment(
    std::unordered_map<int64_t, std::vector<SegmentUse>> uses, const MappedSegments& mapped,
    const std::vector<Allocation>& allocations) {
    std::unordered_map<int64_t, size_t> index_of;
    for (const auto& [index, place] : mapped.place) index_of[allocations[index].id] = index;
    std::unordered_map<int64_t, std::vector<SegmentUse>> out;
    for (auto& [id, list] : uses) {
        const auto found = index_of.find(id);
        if (found == index_of.end()) {
            out[id] = std::move(list);
            continue;
        }
        const MappedPlace& place = mapped.place.at(found->second);
        auto& into = out[allocations[place.head].id];
        for (SegmentUse u : list) into.push_back({u.offset_bytes + place.offset, u.trace_ns, u.library});
    }
    for (auto& [id, list] : out)
        std::stable_sort(list.begin(), list.end(),
                         [](const SegmentUse& x, const SegmentUse& y) { return x.trace_ns < y.trace_ns; });
    return out;
}

// The largest request the segment's pool serves: a mapped segment of 2 MiB pages is the small pool's
// (requests up to 1 MiB), one of larger pages the large pool's.
int64_t largest_request(const MappedSegments& mapped, size_t segment, int64_t segment_bytes) {
    const auto page = mapped.page_bytes.find(segment);
    if (page == mapped.page_bytes.end()) return largest_request_in_segment(segment_bytes);
    return page->second == (int64_t{2} << 20) ? largest_request_in_segment(page->second) : mapped.bytes.at(segment);
}

// Whether `use`, inside `t`'s bytes while it lives, is a use of `t`: workspace data in a large-pool
// block is used only where work outside the library calls names its address (end_at_last_use,
// whatif_pool_tensors.h); the next call's own use of the block is its workspace's. The small pool's
// 1 MiB workspaces stay held as model point 6 holds them (docs/whatif.md).
bool uses_tensor(const PoolTensor& t, const SegmentUse& use) {
    return !t.workspace_data || t.bytes <= kPoolSmallRequestBytes || (use.offset_bytes == t.offset && !use.library);
}

}  // namespace

void end_at_last_use(std::vector<PoolTensor>& tensors, const std::vector<SegmentUse>& uses) {
    struct Edge {
        int64_t trace_ns;
        int kind;  // 0: a life ends, 1: one begins; at one instant ends first (the next tensor takes the bytes)
        size_t tensor;
    };
    std::vector<Edge> edges;
    for (size_t t = 0; t < tensors.size(); ++t) {
        if (tensors[t].end_ns <= tensors[t].begin_ns) continue;
        edges.push_back({tensors[t].begin_ns, 1, t});
        edges.push_back({tensors[t].end_ns, 0, t});
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
        return x.trace_ns != y.trace_ns ? x.trace_ns < y.trace_ns : x.kind < y.kind;
    });
    std::vector<int64_t> last_use(tensors.size(), INT64_MIN);
    std::map<int64_t, size_t> live;  // offset -> tensor; a pooled byte holds one tensor at a time
    size_t next_use = 0;
    for (const Edge& edge : edges) {
        // Uses queued before this instant belong to the tensors live until it.
        for (; next_use < uses.size() && uses[next_use].trace_ns < edge.trace_ns; ++next_use) {
            const size_t user = user_of(live, tensors, uses[next_use]);
            if (user != SIZE_MAX && uses_tensor(tensors[user], uses[next_use]))
                last_use[user] = std::max(last_use[user], uses[next_use].trace_ns);
        }
        const int64_t offset = tensors[edge.tensor].offset;
        if (edge.kind == 1) {
            live[offset] = edge.tensor;
        } else if (const auto held = live.find(offset); held != live.end() && held->second == edge.tensor) {
            live.erase(held);
        }
    }
    for (size_t t = 0; t < tensors.size(); ++t)
        if (last_use[t] != INT64_MIN && last_use[t] < tensors[t].end_ns) {
            tensors[t].end_ns = std::max(tensors[t].begin_ns, last_use[t]);
            tensors[t].ends_at_reuse = false;
        }
}

void join_views(std::vector<PoolTensor>& tensors, int64_t smallest) {
    if (smallest <= 1) return;
    std::unordered_multimap<int64_t, size_t> piece_at;  // offset -> pieces too small for the pool
    std::vector<size_t> order;
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].bytes < smallest && !tensors[i].library_workspace) {
            piece_at.emplace(tensors[i].offset, i);
            order.push_back(i);
        }
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        return std::pair{tensors[x].offset, tensors[x].begin_ns} < std::pair{tensors[y].offset, tensors[y].begin_ns};
    });
    std::vector<bool> joined(tensors.size(), false);
    for (size_t head : order) {
        if (joined[head]) continue;
        // The head is the lowest piece of its run; each next piece starts where the run ends and
        // lives while the last one does.
        for (size_t last = head;;) {
            PoolTensor& into = tensors[head];
            const auto [from, to] = piece_at.equal_range(into.offset + into.bytes);
            const auto next = std::find_if(from, to, [&](const auto& entry) {
                const PoolTensor& p = tensors[entry.second];
                return !joined[entry.second] && entry.second != head && p.begin_ns < tensors[last].end_ns &&
                       tensors[last].begin_ns < p.end_ns;
            });
            if (next == to) break;
            const PoolTensor& piece = tensors[next->second];
            into.bytes += piece.bytes;
            into.begin_ns = std::min(into.begin_ns, piece.begin_ns);
            if (piece.end_ns > into.end_ns) {
                into.end_ns = piece.end_ns;
                into.ends_at_reuse = piece.ends_at_reuse;
            }
            into.bound = piece.bound;
            joined[next->second] = true;
            last = next->second;
        }
    }
    erase_marked(tensors, joined);
}

void request_before_calls(std::vector<PoolTensor>& tensors, const std::vector<std::pair<int64_t, int64_t>>& calls) {
    for (PoolTensor& t : tensors) {
        if (t.library_workspace) continue;
        auto after = std::upper_bound(calls.begin(), calls.end(), std::pair{t.begin_ns, INT64_MIN});
        if (after == calls.begin()) continue;
        const auto& [begin_ns, end_ns] = *std::prev(after);
        if (t.begin_ns <= end_ns) t.begin_ns = begin_ns;
    }
}

void join_written_once(std::vector<PoolTensor>& tensors) {
    std::stable_sort(tensors.begin(), tensors.end(), by_begin);
    std::vector<bool> merged(tensors.size(), false);
    size_t work = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const PoolTensor& once = tensors[i];
        if (once.end_ns != once.begin_ns || once.bound || once.library_workspace) continue;
        const size_t j = next_occupant(tensors, merged, i, work);
        if (j == SIZE_MAX || tensors[j].offset != once.offset || tensors[j].bytes != once.bytes || tensors[j].bound ||
            tensors[j].library_workspace)
            continue;
        tensors[j].begin_ns = once.begin_ns;
        merged[i] = true;
    }
    erase_marked(tensors, merged);
    std::stable_sort(tensors.begin(), tensors.end(), by_begin);
}

void keep_workspace_data(std::vector<PoolTensor>& tensors, const std::vector<SegmentUse>& matrix_operands) {
    std::set<std::pair<int64_t, int64_t>> workspace_extents;  // (offset, bytes)
    for (const PoolTensor& t : tensors)
        if (t.library_workspace) workspace_extents.insert({t.offset, t.bytes});
    if (workspace_extents.empty()) return;
    // A call's workspace is private to the call: a tensor a library call takes as a matrix operand
    // during its life is the program's, whatever bytes it shares with an earlier workspace.
    auto a_matrix_operand = [&](const PoolTensor& t) {
        return std::any_of(matrix_operands.begin(), matrix_operands.end(), [&](const SegmentUse& u) {
            return u.offset_bytes >= t.offset && u.offset_bytes < t.offset + t.bytes && u.trace_ns >= t.begin_ns &&
                   u.trace_ns <= t.end_ns;
        });
    };
    // The library's data exists only once its call wrote it: the tensor on those bytes just before this
    // one must be a call's workspace on exactly its extent (a program's tensor placed there before any
    // call's workspace, as a forward activation of a step's first layers, is the program's request).
    // Or the library's data there just before, on that extent: a value the tagger set apart from it
    // (a kernel rewriting what other work read, docs/tagging.md change 45) lies in the same block.
    // Decided in the order the tensors begin, so such a chain follows its first link.
    std::vector<size_t> order(tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return tensors[a].begin_ns < tensors[b].begin_ns; });
    const std::vector<PoolTensor> recovered = tensors;
    auto follows_a_workspace = [&](const PoolTensor& t) {
        const PoolTensor* before = nullptr;
        size_t before_index = 0;
        for (size_t i = 0; i < recovered.size(); ++i)
            if (recovered[i].begin_ns < t.begin_ns && share_bytes(recovered[i], t) &&
                (!before || recovered[i].begin_ns > before->begin_ns)) {
                before = &recovered[i];
                before_index = i;
            }
        return before && (before->library_workspace || tensors[before_index].workspace_data) &&
               before->offset == t.offset && before->bytes == t.bytes;
    };
    for (size_t i : order) {
        PoolTensor& t = tensors[i];
        if (!t.library_workspace && workspace_extents.contains({t.offset, t.bytes}) && !a_matrix_operand(t) &&
            follows_a_workspace(t))
            t.library_workspace = t.workspace_data = true;
    }
}

int64_t least_request_bytes(int64_t largest) {
    return largest > kPoolSmallRequestBytes ? kPoolSmallRequestBytes + 1 : 1;
}

void order_by_placement(std::vector<PoolTensor>& tensors, bool join_step_local) {
    std::stable_sort(tensors.begin(), tensors.end(), by_begin);
    end_at_reuse(tensors);
    join_continued(tensors, join_step_local);
}

PoolReadings read_pool_tensors(const TraceFile& trace, const std::vector<Allocation>& allocations, size_t real_count) {
    std::unordered_map<int64_t, size_t> segment_index;
    for (size_t i = 0; i < real_count; ++i)
        if (allocations[i].by_subrange) segment_index[allocations[i].id] = i;
    std::map<size_t, std::vector<PoolTensor>> by_segment;  // ordered: the same trace gives the same tensors
    if (segment_index.empty()) return {};
    PoolReadings out;
    out.mapped = join_mapped_segments(trace, allocations, real_count);
    const std::unordered_set<int64_t> sized = sized_addresses(trace);
    const std::unordered_map<int64_t, int64_t> address = allocation_addresses(trace);
    const StepSpans steps = read_step_spans(trace);
    trace::RowReader<trace::SubrangeRow> rows(trace.db, {.tag_texts = false});
    for (trace::SubrangeRow row; rows.next(row);) {
        const auto found = segment_index.find(row.allocation);
        if (found == segment_index.end() || row.bytes <= 0) continue;
        const Allocation& page = allocations[found->second];  // the segment, or one mapped page of it
        if (row.offset < 0 || row.offset >= page.bytes || row.bytes > page.bytes) continue;
        const SegmentPlace where = place_in_segment(out.mapped, found->second, page.bytes);
        PoolTensor t;
        t.segment = where.head;
        t.offset = where.offset + row.offset;
        t.bytes = std::min(row.bytes, page.bytes - row.offset);
        t.begin_ns = std::clamp(row.begin_ns, page.alloc_ns, page.free_ns);
        t.end_ns = std::clamp(std::max(row.end_ns, t.begin_ns), t.begin_ns, page.free_ns);
        t.category = category_index(row.category);
        t.library_workspace = row.rule == "library-workspace" || row.rule == "library-handle-workspace";
        if (row.rule == "library-workspace")
            t.end_ns = std::min(held_workspace_end(steps, page.process, t.begin_ns, t.end_ns), page.free_ns);
        const auto base = address.find(row.allocation);
        t.bound = t.offset + t.bytes == where.segment_bytes && base != address.end() &&
                  !sized.contains(base->second + row.offset);
        by_segment[where.head].push_back(t);
    }
    for (auto& [head, pages] : out.mapped.page_offsets)
        if (const auto tensors = by_segment.find(head); tensors != by_segment.end())
            join_across_pages(tensors->second, pages);
    std::unordered_map<int64_t, int64_t> segment_address;
    for (const auto& [id, index] : segment_index)
        if (const auto base = address.find(id); base != address.end()) segment_address[id] = base->second;
    auto uses = read_segment_uses(trace, segment_address);
    if (!out.mapped.empty()) uses = uses_by_segment(std::move(uses), out.mapped, allocations);
    auto matrix_operands = read_matrix_operand_uses(trace, segment_address);
    if (!out.mapped.empty()) matrix_operands = uses_by_segment(std::move(matrix_operands), out.mapped, allocations);
    read_workspace_requests(trace, allocations, real_count, address, out);
    const auto calls = read_library_calls(trace);
    const std::vector<std::pair<int64_t, int64_t>> no_calls;
    const std::vector<SegmentUse> no_uses;
    for (bool join_step_local : {false, true}) {
        std::vector<PoolTensor>& reading = join_step_local ? out.held : out.released;
        for (auto [index, tensors] : by_segment) {
            const auto process_calls = calls.find(allocations[index].process);
            request_before_calls(tensors, process_calls == calls.end() ? no_calls : process_calls->second);
            order_by_placement(tensors, join_step_local);
            const auto operands = matrix_operands.find(allocations[index].id);
            keep_workspace_data(tensors, operands == matrix_operands.end() ? no_uses : operands->second);
            if (const auto used = uses.find(allocations[index].id); used != uses.end())
                end_at_last_use(tensors, used->second);
            join_written_once(tensors);
            // An extent over what the segment's pool serves is the tagger's bound, not the request.
            const int64_t largest = largest_request(out.mapped, index, allocations[index].bytes);
            const int64_t least = least_request_bytes(largest);
            join_views(tensors, least);
            for (PoolTensor& t : tensors) {
                t.bytes = std::min(t.bytes, largest);
                t.least_bytes = least;
            }
            reading.insert(reading.end(), tensors.begin(), tensors.end());
        }
    }
    return out;
}

}  // namespace tbdprof::analyzer
