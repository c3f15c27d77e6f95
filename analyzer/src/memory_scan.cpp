// Memory: replay device allocations and frees in time order over the whole run. Peak live bytes,
// the category split at that moment, each category's own maximum, a downsampled timeline, and the
// largest allocations live at the peak with their call stacks. Pooled segments with tagged sub-ranges
// (allocation_subranges) count by their tensors: a segment's bytes are 'untagged' (unattributed pool
// space) except where a sub-range lives, whose bytes count in its own category meanwhile.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "analysis_parts.h"

namespace tbdprof::analyzer {
namespace {

struct Allocation {
    int64_t id, device, bytes, alloc_ns, free_ns;  // free_ns INT64_MAX: never freed
    int64_t stack;                                  // -1: none
    int category;
    bool freed;
    bool real = true;      // false: a sub-range, or the pool space it takes from its segment
    int listed_category = 0;  // category shown in the largest-allocations list
};

struct Event {
    int64_t time;
    int order;      // at equal times: frees of older allocations, then allocations, then zero-lifetime frees
    uint32_t index;
    bool is_alloc() const { return order == 1; }
};

std::vector<std::string> load_stack(const ReadOnlyDatabase& db, int64_t stack) {
    std::vector<std::string> frames;
    Query query(db,
                "SELECT s.text, m.text, f.ip, f.offset FROM stack_frames AS sf JOIN frames AS f ON f.id = sf.frame "
                "LEFT JOIN strings AS s ON s.id = f.symbol LEFT JOIN strings AS m ON m.id = f.module "
                "WHERE sf.stack = ?1 ORDER BY sf.position LIMIT 64");
    query.bind(1, stack);
    while (query.step()) {
        std::string frame = query.is_null(0) ? std::string() : query.text(0);
        if (frame.empty()) {
            char buffer[40];
            std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(query.integer(2)));
            frame = buffer;
        }
        if (!query.is_null(1)) {
            std::string module = query.text(1);
            const size_t slash = module.rfind('/');
            if (slash != std::string::npos) module = module.substr(slash + 1);
            frame += " (" + module + ")";
        }
        frames.push_back(std::move(frame));
    }
    return frames;
}

// Sub-ranges of pooled segments: each adds its bytes to its category while it lives and takes them
// from the segment's unattributed ('untagged') bytes. Times are clamped into the segment's life.
// Returns the number of segments counted at sub-range level.
size_t add_subranges(const TraceFile& trace, std::vector<Allocation>& allocations) {
    if (!trace.db->has_table("allocation_subranges")) return 0;
    std::unordered_map<int64_t, size_t> segment_index;
    for (size_t i = 0; i < allocations.size(); ++i) segment_index[allocations[i].id] = i;
    std::unordered_set<int64_t> segments;
    Query query(*trace.db, "SELECT allocation, bytes, begin_ns, end_ns, category FROM allocation_subranges");
    while (query.step()) {
        auto found = segment_index.find(query.integer(0));
        const int64_t bytes = query.integer(1);
        if (found == segment_index.end() || bytes <= 0) continue;
        Allocation& segment = allocations[found->second];
        if (bytes > segment.bytes) continue;  // cannot fit: ignore rather than count bytes twice
        const int64_t begin = std::clamp(query.integer(2), segment.alloc_ns, segment.free_ns);
        const int64_t end = std::clamp(std::max(query.integer(3), begin), begin, segment.free_ns);
        if (segments.insert(segment.id).second) segment.category = kUntagged;
        Allocation tensor = segment;
        tensor.bytes = bytes;
        tensor.alloc_ns = begin;
        tensor.free_ns = end;
        tensor.freed = true;
        tensor.real = false;
        tensor.category = category_index(query.is_null(4) ? std::string() : query.text(4));
        Allocation taken = tensor;  // the pool space it occupies: negative untagged bytes meanwhile
        taken.bytes = -bytes;
        taken.category = kUntagged;
        allocations.push_back(tensor);
        allocations.push_back(taken);
        if (allocations.size() >= UINT32_MAX / 2) break;
    }
    return segments.size();
}

}  // namespace

void scan_memory(const TraceFile& trace, const AnalysisOptions& options, Report& report) {
    MemoryMetrics& memory = report.memory;
    std::vector<Allocation> allocations;
    // No device has 2^50 bytes (1 PiB): a row saying so is damaged or made up, and summing it could
    // overflow the totals. Such rows are reported, not summed.
    constexpr int64_t kMaxAllocationBytes = int64_t{1} << 50;
    int64_t absurd = 0;
    {
        Query query(*trace.db,
                    "SELECT a.id, a.device, a.bytes, a.alloc_ns, a.free_ns, c.category, a.stack "
                    "FROM allocations AS a LEFT JOIN allocation_categories AS c ON c.allocation = a.id "
                    "WHERE a.kind IN ('device', 'device_async', 'managed')");
        while (query.step()) {
            const int64_t bytes = query.integer(2);
            if (bytes <= 0) continue;
            if (bytes > kMaxAllocationBytes) {
                ++absurd;
                continue;
            }
            Allocation a{};
            a.id = query.integer(0);
            a.device = query.integer(1);
            a.bytes = bytes;
            a.alloc_ns = query.integer(3);
            a.freed = !query.is_null(4);
            a.free_ns = a.freed ? std::max(query.integer(4), a.alloc_ns) : INT64_MAX;
            a.category = category_index(query.is_null(5) ? std::string() : query.text(5));
            a.listed_category = a.category;
            a.stack = query.is_null(6) ? -1 : query.integer(6);
            if (a.category != kUntagged) memory.tagged = true;
            allocations.push_back(a);
            if (allocations.size() >= UINT32_MAX / 2) break;  // event indices are 32-bit
        }
    }
    memory.allocations = static_cast<int64_t>(allocations.size());
    if (absurd > 0)
        report.notes.push_back(std::to_string(absurd) + " allocation rows claim more than 1 PiB: left out of every figure");
    const size_t subrange_segments = add_subranges(trace, allocations);
    if (allocations.empty()) {
        report.notes.push_back("the trace has no device allocations: memory figures are zero");
        return;
    }
    if (!memory.tagged) {
        report.notes.push_back("allocations are not tagged with categories yet: all memory is 'untagged'");
    }
    // The tagger says when the program allocates pooled segments (a caching allocator): categories are
    // then per segment, not per tensor.
    if (trace.db->has_table("run_notes")) {
        Query note(*trace.db, "SELECT value FROM run_notes WHERE key = 'memory_breakdown'");
        if (note.step()) report.notes.push_back("memory breakdown at " + note.text(0));
    }
    if (subrange_segments > 0)
        report.notes.push_back("inside the " + std::to_string(subrange_segments) +
                               " pooled segments tagged by sub-range, 'untagged' bytes are unattributed pool space: "
                               "cached free blocks, or tensors no pointer was seen in");

    std::vector<Event> events;
    events.reserve(allocations.size() * 2);
    for (uint32_t i = 0; i < allocations.size(); ++i) {
        const Allocation& a = allocations[i];
        events.push_back({a.alloc_ns, 1, i});
        if (a.freed) events.push_back({a.free_ns, a.free_ns == a.alloc_ns ? 2 : 0, i});
    }
    // A sub-range and the pool space it takes change at the same moments. Among equal times and
    // kinds, decreases go first, so the pair never lifts the total above the segment for a moment
    // (which would count as a peak). Real allocations are unaffected: their frees all decrease and
    // their allocations all increase.
    auto decreases = [&](const Event& e) {
        const int64_t bytes = allocations[e.index].bytes;
        return e.is_alloc() ? bytes < 0 : bytes > 0;
    };
    std::sort(events.begin(), events.end(), [&](const Event& x, const Event& y) {
        if (x.time != y.time) return x.time < y.time;
        if (x.order != y.order) return x.order < y.order;
        if (decreases(x) != decreases(y)) return decreases(x);
        return x.index < y.index;
    });

    // Timeline: at most `timeline_points` buckets over the run; each keeps the moment of its highest
    // total, so the chart shows every peak.
    const int64_t run_end = std::max<int64_t>({report.run.duration_ns, events.back().time, 1});
    const int points = std::max(2, options.timeline_points);
    const int64_t bucket_ns = std::max<int64_t>(1, run_end / points + 1);
    int64_t current_bucket = INT64_MIN;
    MemoryPoint pending;
    int64_t pending_total = -1;

    CategoryBytes live{};
    int64_t total = 0;
    std::map<int64_t, std::pair<int64_t, int64_t>> device_live;  // device -> (live, peak)
    size_t peak_position = 0;
    bool have_peak = false;
    std::vector<uint32_t> alloc_position(allocations.size(), UINT32_MAX), free_position(allocations.size(), UINT32_MAX);

    for (size_t position = 0; position < events.size(); ++position) {
        const Event& event = events[position];
        const Allocation& a = allocations[event.index];
        const int64_t delta = event.is_alloc() ? a.bytes : -a.bytes;
        (event.is_alloc() ? alloc_position : free_position)[event.index] = static_cast<uint32_t>(position);
        live[static_cast<size_t>(a.category)] += delta;
        total += delta;
        auto& [device_bytes, device_peak] = device_live[a.device];
        device_bytes += delta;
        device_peak = std::max(device_peak, device_bytes);
        for (int c = 0; c < kCategoryCount; ++c) memory.category_max[c] = std::max(memory.category_max[c], live[c]);
        if (total > memory.peak_bytes) {
            memory.peak_bytes = total;
            memory.peak_ns = event.time;
            memory.at_peak = live;
            peak_position = position;
            have_peak = true;
        }
        const int64_t bucket = event.time / bucket_ns;
        if (bucket != current_bucket) {
            if (pending_total >= 0) memory.timeline.push_back(pending);
            current_bucket = bucket;
            pending_total = -1;
        }
        if (total > pending_total) {
            pending = {event.time, live};
            pending_total = total;
        }
    }
    if (pending_total >= 0) memory.timeline.push_back(pending);
    if (memory.timeline.back().t_ns < report.run.duration_ns) {
        memory.timeline.push_back({report.run.duration_ns, live});  // the state at the end of the run
    }
    for (const auto& [device, state] : device_live) memory.device_peaks.emplace_back(device, state.second);

    // Largest allocations live at the peak: allocated at or before it, freed after it.
    std::vector<uint32_t> live_at_peak;
    if (have_peak) {
        for (uint32_t i = 0; i < allocations.size(); ++i) {
            if (!allocations[i].real) continue;  // the segment is listed, not its tensors
            if (alloc_position[i] <= peak_position && (free_position[i] == UINT32_MAX || free_position[i] > peak_position)) {
                live_at_peak.push_back(i);
            }
        }
    }
    const size_t count = std::min(live_at_peak.size(), static_cast<size_t>(std::max(0, options.largest_allocations)));
    std::partial_sort(live_at_peak.begin(), live_at_peak.begin() + static_cast<std::ptrdiff_t>(count), live_at_peak.end(),
                      [&](uint32_t x, uint32_t y) {
                          return allocations[x].bytes != allocations[y].bytes ? allocations[x].bytes > allocations[y].bytes
                                                                              : allocations[x].id < allocations[y].id;
                      });
    for (size_t i = 0; i < count; ++i) {
        const Allocation& a = allocations[live_at_peak[i]];
        LargeAllocation large;
        large.id = a.id;
        large.device = a.device;
        large.bytes = a.bytes;
        large.alloc_ns = a.alloc_ns;
        if (a.freed) large.free_ns = a.free_ns;
        large.category = a.listed_category;
        if (a.stack >= 0) large.stack = load_stack(*trace.db, a.stack);
        memory.largest_at_peak.push_back(std::move(large));
    }
}

}  // namespace tbdprof::analyzer
