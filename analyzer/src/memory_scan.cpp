// Memory: replay device allocations and frees in time order over the whole run. Peak live bytes,
// the category split at that moment, each category's own maximum, a downsampled timeline, and the
// largest allocations live at the peak with their call stacks. Pooled segments with tagged sub-ranges
// (allocation_subranges) count by their tensors: a segment's bytes are 'untagged' (unattributed pool
// space) except where a sub-range lives, whose bytes count in its own category meanwhile.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "analysis_parts.h"
#include "memory_allocations.h"
#include "memory_subranges.h"
#include "process_ranks.h"
#include "tbdprof/analyzer/tag_plausibility.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

// A tag without a recorded confidence counts as low: nothing vouches for it.
bool low_confidence(int category, std::optional<double> confidence) {
    return category != kUntagged && (!confidence || *confidence < kLowTagConfidence);
}

std::vector<std::string> load_stack(const trace::Database& db, int64_t stack) {
    std::vector<std::string> frames;
    for (const trace::StackFrame& frame : trace::read_stack(db, stack, 64)) frames.push_back(frame.text());
    return frames;
}

constexpr size_t kOverlapWorkLimit = 4'000'000;  // (byte piece, sub-range) pairs examined per allocation

}  // namespace

SubRangeSummary add_subranges(const TraceFile& trace, std::vector<Allocation>& allocations) {
    SubRangeSummary summary;
    std::unordered_map<int64_t, size_t> segment_index;
    for (size_t i = 0; i < allocations.size(); ++i) segment_index[allocations[i].id] = i;
    std::map<size_t, std::vector<SubRange>> by_segment;  // ordered: the same trace gives the same events
    trace::RowReader<trace::SubrangeRow> rows(trace.db, {.tag_texts = false});
    for (trace::SubrangeRow row; rows.next(row);) {
        auto found = segment_index.find(row.allocation);
        if (found == segment_index.end() || row.bytes <= 0) continue;
        const Allocation& segment = allocations[found->second];
        if (row.bytes > segment.bytes) continue;  // cannot fit: ignore rather than count bytes twice
        SubRange range;
        range.id = row.id;
        range.offset = row.offset;
        range.bytes = row.bytes;
        range.begin_ns = std::clamp(row.begin_ns, segment.alloc_ns, segment.free_ns);
        range.end_ns = std::clamp(std::max(row.end_ns, range.begin_ns), range.begin_ns, segment.free_ns);
        range.category = category_index(row.category);
        range.low_confidence = low_confidence(range.category, row.confidence);
        by_segment[found->second].push_back(range);
    }
    for (auto& [index, ranges] : by_segment) {
        const int64_t segment_bytes = allocations[index].bytes;
        ResolvedSubRanges resolved = resolve_subranges(std::move(ranges), segment_bytes, kOverlapWorkLimit);
        if (resolved.too_many) {
            ++summary.too_many;  // counted whole, in the allocation's own category
            continue;
        }
        if (resolved.pieces.empty()) continue;
        ++summary.segments;
        if (resolved.overlapped) ++summary.overlapping;
        Allocation& segment = allocations[index];
        segment.category = kUntagged;
        segment.low_confidence = false;
        segment.by_subrange = true;
        const Allocation base = segment;
        for (const AttributedPiece& piece : resolved.pieces) {
            Allocation tensor = base;
            tensor.bytes = piece.bytes;
            tensor.alloc_ns = piece.begin_ns;
            tensor.free_ns = piece.end_ns;
            tensor.freed = true;
            tensor.real = false;
            tensor.by_subrange = false;
            tensor.segment = static_cast<int64_t>(index);
            tensor.category = piece.category;
            tensor.low_confidence = piece.low_confidence;
            Allocation taken = tensor;  // the space it occupies: negative untagged bytes meanwhile
            taken.bytes = -piece.bytes;
            taken.category = kUntagged;
            taken.low_confidence = false;
            allocations.push_back(tensor);
            allocations.push_back(taken);
        }
        if (allocations.size() >= UINT32_MAX / 2) break;
    }
    return summary;
}

// Allocations addressed at many offsets that the tagger left whole (no sub-ranges): asked only when
// the tagger says some are (its memory_breakdown note mentions "segment level").
std::vector<int64_t> whole_pooled_allocations(TraceFile& trace) {
    std::vector<int64_t> ids;
    if (!trace::has_table(trace.db, "run_notes") || !trace::has_table(trace.db, "kernel_allocations")) return ids;
    const std::optional<std::string> note = trace::read_note(trace.db, "memory_breakdown");
    if (!note || note->find("segment level") == std::string::npos) return ids;
    const std::string sql = std::string("SELECT allocation FROM kernel_allocations WHERE 1") +
                            (trace::has_table(trace.db, "allocation_subranges")
                                 ? " AND allocation NOT IN (SELECT allocation FROM allocation_subranges)"
                                 : "") +
                            " GROUP BY allocation HAVING count(DISTINCT offset) >= 16";
    trace::Statement rows(trace.db, sql);
    while (rows.step()) ids.push_back(rows.column_int(0));
    return ids;
}

namespace {

// Tensors the program registered itself (NVTX memory regions; docs/tagging.md, "Regions the program
// names"): how many sub-ranges are its word, not inferred, and how many took their name's category.
std::string registered_regions_note(TraceFile& trace) {
    if (!trace::has_table(trace.db, "memory_regions") || !trace::has_table(trace.db, "allocation_subranges")) return {};
    const int64_t regions = trace.db.query_int("SELECT count(*) FROM memory_regions WHERE allocation IS NOT NULL");
    if (regions == 0) return {};
    const int64_t named =
        trace.db.query_int("SELECT count(*) FROM allocation_subranges WHERE rule = 'nvtx-region-name'");
    return "the program registered " + std::to_string(regions) +
           " regions (tensors) inside allocations (NVTX memory extension); " + std::to_string(named) +
           " tensors tagged by the category their region's name begins with";
}

}  // namespace

std::vector<Allocation> read_device_allocations(const TraceFile& trace, std::optional<int64_t> device, int64_t& absurd,
                                                std::vector<UnseenAllocation>* unseen) {
    // No device has 2^50 bytes (1 PiB): a row saying so is damaged or made up, and summing it could
    // overflow the totals. Such rows are reported, not summed.
    constexpr int64_t kMaxAllocationBytes = int64_t{1} << 50;
    std::vector<Allocation> allocations;
    trace::RowReader<trace::AllocationRow> rows(trace.db, {.tag_texts = false});
    // Sized once: grown by doubling beside the rows below, it raised a report's peak memory by twice
    // its size (8 MiB on a generated trace of 44,036 allocations).
    if (unseen && trace::has_table(trace.db, "allocations"))
        unseen->reserve(static_cast<size_t>(trace.db.query_int("SELECT count(*) FROM allocations")));
    for (trace::AllocationRow row; rows.next(row);) {
        if (unseen) collect_unseen_allocation(row, *unseen);
        if (allocations.size() >= UINT32_MAX / 2) {  // event indices are 32-bit
            if (unseen) continue;
            break;
        }
        if (!trace::is_device_memory(row.kind) || row.bytes <= 0) continue;
        if (row.bytes > kMaxAllocationBytes) {
            ++absurd;
            continue;
        }
        if (device && row.device != *device) continue;
        Allocation a{};
        a.id = row.id;
        a.device = row.device;
        a.process = row.process;
        a.bytes = row.bytes;
        a.alloc_ns = row.alloc_ns;
        a.freed = row.free_ns.has_value();
        a.free_ns = a.freed ? std::max(*row.free_ns, a.alloc_ns) : INT64_MAX;
        a.category = category_index(row.category);
        a.listed_category = a.category;
        a.stack = row.stack.value_or(-1);
        a.rule = row.rule;
        a.confidence = row.confidence;
        a.low_confidence = low_confidence(a.category, a.confidence);
        a.real = true;
        allocations.push_back(std::move(a));
    }
    return allocations;
}

std::vector<Event> ordered_events(const std::vector<Allocation>& allocations) {
    std::vector<Event> events;
    events.reserve(allocations.size() * 2);
    for (uint32_t i = 0; i < allocations.size(); ++i) {
        const Allocation& a = allocations[i];
        events.push_back({a.alloc_ns, 1, i});
        if (a.freed) events.push_back({a.free_ns, a.free_ns == a.alloc_ns ? 2 : 0, i});
    }
    std::sort(events.begin(), events.end(), [&](const Event& x, const Event& y) {
        if (x.trace_ns != y.trace_ns) return x.trace_ns < y.trace_ns;
        if (x.order != y.order) return x.order < y.order;
        return x.index < y.index;
    });
    return events;
}

namespace {

// What the breakdown's granularity is, from what the trace holds (not repeated from the tagger's
// note, which may describe allocations the sub-ranges already cover).
void add_granularity_notes(TraceFile& trace, const SubRangeSummary& subranges, Report& report) {
    if (subranges.segments > 0) {
        report.notes.push_back(
            "memory breakdown at sub-range level (inferred) inside " + std::to_string(subranges.segments) +
            " allocations: tensors recovered from the pointers the work used; their 'untagged' bytes are space "
            "that no tensor in use covered at that moment");
    }
    if (std::string regions = registered_regions_note(trace); !regions.empty())
        report.notes.push_back(std::move(regions));
    if (subranges.overlapping > 0) {
        report.notes.push_back("in " + std::to_string(subranges.overlapping) +
                               " allocations the tagged sub-ranges overlap in place and time: each byte is counted "
                               "once, in the narrowest sub-range covering it");
    }
    if (subranges.too_many > 0) {
        report.notes.push_back(std::to_string(subranges.too_many) +
                               " allocations have too many overlapping sub-ranges to resolve: counted whole, in "
                               "their allocation's category");
    }
    if (const size_t whole = whole_pooled_allocations(trace).size(); whole > 0) {
        report.notes.push_back("memory breakdown at segment level for " + std::to_string(whole) +
                               " allocations addressed at 16 or more offsets with no tensors recovered in them: each "
                               "counts whole, in one category");
    }
}

// Timeline: at most `timeline_points` buckets over the run; each keeps the moment of its highest
// total, so the chart shows every peak.
class BucketedTimeline {
public:
    BucketedTimeline(int64_t run_end_ns, int timeline_points)
        : bucket_ns_(std::max<int64_t>(1, run_end_ns / std::max(2, timeline_points) + 1)) {}

    void add(int64_t trace_ns, const CategoryBytes& live, int64_t total, std::vector<MemoryPoint>& timeline) {
        const int64_t bucket = trace_ns / bucket_ns_;
        if (bucket != current_bucket_) {
            if (pending_total_ >= 0) timeline.push_back(pending_);
            current_bucket_ = bucket;
            pending_total_ = -1;
        }
        if (total > pending_total_) {
            pending_ = {trace_ns, live};
            pending_total_ = total;
        }
    }
    void finish(std::vector<MemoryPoint>& timeline) const {
        if (pending_total_ >= 0) timeline.push_back(pending_);
    }

private:
    int64_t bucket_ns_;
    int64_t current_bucket_ = INT64_MIN;
    MemoryPoint pending_;
    int64_t pending_total_ = -1;
};

// Where in the ordered events each allocation began and ended, and where the peak was: enough to
// tell afterwards what was live at the peak.
struct ReplayPositions {
    std::vector<uint32_t> alloc_position, free_position;
    size_t peak_position = 0;
    bool have_peak = false;

    // Live at the peak: allocated at or before it, freed after it.
    bool live_at_peak(uint32_t i) const {
        return have_peak && alloc_position[i] <= peak_position &&
               (free_position[i] == UINT32_MAX || free_position[i] > peak_position);
    }
};

// One process's live bytes by category while replaying, and its own peak so far.
struct ProcessLive {
    CategoryBytes live{};
    int64_t total = 0;
    ProcessMemory peak;
};

// The live bytes while replaying, by category, device and process.
struct LiveBytes {
    CategoryBytes live{};
    CategoryBytes live_low{};  // of live, the bytes tagged with low confidence
    int64_t total = 0;
    std::map<int64_t, std::pair<int64_t, int64_t>> device_live;  // device -> (live, peak)
    std::map<int64_t, ProcessLive> process_live;

    void apply(const Allocation& a, int64_t delta) {
        live[static_cast<size_t>(a.category)] += delta;
        if (a.low_confidence) live_low[static_cast<size_t>(a.category)] += delta;
        total += delta;
        device_live[a.device].first += delta;
        ProcessLive& process = process_live[a.process];
        process.live[static_cast<size_t>(a.category)] += delta;
        process.total += delta;
    }

    // Each process's peak is the first moment its own total is highest, as the trace's is.
    void record_process_peaks(int64_t trace_ns) {
        for (auto& [id, process] : process_live) {
            if (process.total <= process.peak.peak_bytes) continue;
            process.peak = {id, std::nullopt, process.total, trace_ns, process.live};
        }
    }
};

// States are read only once every event of one instant and kind is applied: a sub-range and the
// space it takes, or frees and allocations at one moment, never show half done.
bool more_of_this_instant(const std::vector<Event>& events, size_t position) {
    return position + 1 < events.size() && events[position + 1].trace_ns == events[position].trace_ns &&
           events[position + 1].order == events[position].order;
}

// One complete instant: maxima, the peak (the first moment the highest total is reached), the timeline.
void record_instant(const LiveBytes& state, int64_t trace_ns, size_t position, bool full_timeline,
                    BucketedTimeline& buckets, MemoryMetrics& memory, ReplayPositions& positions) {
    for (int c = 0; c < kCategoryCount; ++c) memory.category_max[c] = std::max(memory.category_max[c], state.live[c]);
    if (state.total > memory.peak_bytes) {
        memory.peak_bytes = state.total;
        memory.peak_trace_ns = trace_ns;
        memory.at_peak = state.live;
        memory.low_confidence_at_peak = state.live_low;
        positions.peak_position = position;
        positions.have_peak = true;
    }
    // Every step, for a reader that draws its own level of detail (the viewer). Equal times stay
    // separate points, so a moment's peak is still there.
    if (full_timeline)
        memory.timeline.push_back({trace_ns, state.live});
    else
        buckets.add(trace_ns, state.live, state.total, memory.timeline);
}

// Replays allocations and frees in time order: peak, category maxima, device peaks, timeline.
ReplayPositions replay_events(const std::vector<Allocation>& allocations, const std::vector<Event>& events,
                              const AnalysisOptions& options, int64_t run_duration_ns, MemoryMetrics& memory) {
    BucketedTimeline buckets(std::max<int64_t>({run_duration_ns, events.back().trace_ns, 1}), options.timeline_points);
    LiveBytes state;
    ReplayPositions positions;
    positions.alloc_position.assign(allocations.size(), UINT32_MAX);
    positions.free_position.assign(allocations.size(), UINT32_MAX);
    for (size_t position = 0; position < events.size(); ++position) {
        const Event& event = events[position];
        const Allocation& a = allocations[event.index];
        (event.is_alloc() ? positions.alloc_position : positions.free_position)[event.index] =
            static_cast<uint32_t>(position);
        state.apply(a, event.is_alloc() ? a.bytes : -a.bytes);
        if (more_of_this_instant(events, position)) continue;
        for (auto& [device, bytes] : state.device_live) bytes.second = std::max(bytes.second, bytes.first);
        state.record_process_peaks(event.trace_ns);
        record_instant(state, event.trace_ns, position, options.full_memory_timeline, buckets, memory, positions);
    }
    if (!options.full_memory_timeline) buckets.finish(memory.timeline);
    if (!memory.timeline.empty() && memory.timeline.back().trace_ns < run_duration_ns) {
        memory.timeline.push_back({run_duration_ns, state.live});  // the state at the end of the run
    }
    for (const auto& [device, bytes] : state.device_live) memory.device_peaks.emplace_back(device, bytes.second);
    if (state.process_live.size() >= 2)
        for (const auto& [id, process] : state.process_live) memory.processes.push_back(process.peak);
    return positions;
}

// A segment counted by sub-range, listed by what it holds at the peak (its largest part first).
void describe_segment_parts(const Allocation& a, CategoryBytes parts, LargeAllocation& large) {
    large.by_subrange = true;
    int64_t attributed = 0;
    for (int64_t bytes : parts) attributed += bytes;
    parts[kUntagged] += a.bytes - attributed;
    for (int c = 0; c < kCategoryCount; ++c) {
        if (parts[static_cast<size_t>(c)] > 0) large.at_peak.emplace_back(c, parts[static_cast<size_t>(c)]);
    }
    std::stable_sort(large.at_peak.begin(), large.at_peak.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    if (!large.at_peak.empty()) large.category = large.at_peak.front().first;
}

LargeAllocation describe_large(TraceFile& trace, const Allocation& a, const CategoryBytes& segment_parts) {
    LargeAllocation large;
    large.id = a.id;
    large.device = a.device;
    large.bytes = a.bytes;
    large.alloc_ns = a.alloc_ns;
    if (a.freed) large.free_ns = a.free_ns;
    large.category = a.listed_category;
    large.tag_category = a.listed_category;
    large.rule = a.rule;
    large.confidence = a.confidence;
    if (a.by_subrange)
        describe_segment_parts(a, segment_parts, large);
    else
        large.at_peak.emplace_back(a.category, a.bytes);
    if (a.stack >= 0) large.stack = load_stack(trace.db, a.stack);
    return large;
}

// The largest allocations live at the peak (a segment is listed, not its pieces).
void list_largest_at_peak(TraceFile& trace, const std::vector<Allocation>& allocations,
                          const ReplayPositions& positions, int largest_allocations, MemoryMetrics& memory) {
    // What each segment counted by sub-range holds at the peak.
    std::unordered_map<uint32_t, CategoryBytes> segment_parts;
    for (uint32_t i = 0; i < allocations.size(); ++i) {
        const Allocation& a = allocations[i];
        if (a.real || a.bytes < 0 || !positions.live_at_peak(i)) continue;
        segment_parts[static_cast<uint32_t>(a.segment)][static_cast<size_t>(a.category)] += a.bytes;
    }
    std::vector<uint32_t> listed;
    for (uint32_t i = 0; i < allocations.size(); ++i) {
        if (allocations[i].real && positions.live_at_peak(i)) listed.push_back(i);
    }
    const size_t count = std::min(listed.size(), static_cast<size_t>(std::max(0, largest_allocations)));
    std::partial_sort(
        listed.begin(), listed.begin() + static_cast<std::ptrdiff_t>(count), listed.end(), [&](uint32_t x, uint32_t y) {
            return allocations[x].bytes != allocations[y].bytes ? allocations[x].bytes > allocations[y].bytes
                                                                : allocations[x].id < allocations[y].id;
        });
    for (size_t i = 0; i < count; ++i)
        memory.largest_at_peak.push_back(describe_large(trace, allocations[listed[i]], segment_parts[listed[i]]));
}

}  // namespace

void scan_memory(TraceFile& trace, const AnalysisOptions& options, Report& report,
                 std::vector<UnseenAllocation>* unseen) {
    MemoryMetrics& memory = report.memory;
    int64_t absurd = 0;
    std::vector<Allocation> allocations = read_device_allocations(trace, options.memory_device, absurd, unseen);
    for (const Allocation& a : allocations)
        if (a.category != kUntagged) memory.tagged = true;
    memory.allocations = static_cast<int64_t>(allocations.size());
    if (absurd > 0)
        report.notes.push_back(std::to_string(absurd) +
                               " allocation rows claim more than 1 PiB: left out of every figure");
    const SubRangeSummary subranges = add_subranges(trace, allocations);
    if (allocations.empty()) {
        report.notes.push_back("the trace has no device allocations: memory figures are zero");
        return;
    }
    if (!memory.tagged) {
        report.notes.push_back("allocations are not tagged with categories yet: all memory is 'untagged'");
    }
    add_granularity_notes(trace, subranges, report);
    const std::vector<Event> events = ordered_events(allocations);
    const ReplayPositions positions = replay_events(allocations, events, options, report.run.duration_ns, memory);
    if (!memory.processes.empty()) {
        const RecordedRanks recorded = read_recorded_ranks(trace);
        for (ProcessMemory& p : memory.processes)
            if (auto found = recorded.rank_of_process.find(p.process); found != recorded.rank_of_process.end())
                p.rank = found->second;
    }
    list_largest_at_peak(trace, allocations, positions, options.largest_allocations, memory);
}

}  // namespace tbdprof::analyzer
