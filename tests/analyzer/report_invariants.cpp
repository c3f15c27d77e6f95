// Checks that a report never contradicts itself, on any trace (recorded samples, imported traces):
//   tbdprof_report_invariants check TRACE...        every invariant below, per trace
//   tbdprof_report_invariants same A B MAX_SHARE    two recordings of one program give the same
//                                                   breakdown (each category within MAX_SHARE of the peak)
// Invariants: the categories at the peak sum to the peak; no category's own maximum is above the
// peak, and no moment of the timeline holds more than the peak or a negative category; the largest
// allocations agree with the breakdown at the peak; FP32 FLOPs in the window equal what the trace's
// library calls and kernels give (worked out here, independently of the scan), and per-iteration
// figures are those totals over the iterations counted in the window; the report is byte-identical
// across two reads; no note speaks of a pool where the trace has no sub-ranges, or of allocations
// "without pointer evidence". Exit 0 when all hold, 1 with one line per violation otherwise.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "flop_precision.h"
#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/render.h"
#include "tbdprof/trace/tables.h"
#include "tbdprof/trace/trace_reader.h"

using namespace tbdprof::analyzer;
using tbdprof::trace::Statement;

namespace {

int failures = 0;

void fail(const std::string& trace, const std::string& what) {
    std::printf("FAIL %s: %s\n", trace.c_str(), what.c_str());
    ++failures;
}

bool close(double a, double b, double relative) {
    return std::fabs(a - b) <= relative * std::max({std::fabs(a), std::fabs(b), 1.0});
}

std::string num(double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.17g", v);
    return buffer;
}

void check_memory(const std::string& path, const Report& r) {
    const MemoryMetrics& m = r.memory;
    int64_t sum = 0;
    for (int64_t bytes : m.at_peak) sum += bytes;
    if (sum != m.peak_bytes)
        fail(path, "categories at the peak sum to " + num(double(sum)) + ", peak is " + num(double(m.peak_bytes)));
    for (int c = 0; c < kCategoryCount; ++c) {
        const auto i = static_cast<size_t>(c);
        if (m.category_max[i] > m.peak_bytes)
            fail(path, std::string(category_name(c)) + " own maximum " + num(double(m.category_max[i])) +
                           " above the peak " + num(double(m.peak_bytes)));
        if (m.at_peak[i] < 0) fail(path, std::string(category_name(c)) + " negative at the peak");
        if (m.category_max[i] < m.at_peak[i])
            fail(path, std::string(category_name(c)) + " own maximum below its bytes at the peak");
        // The low-confidence bytes are a part of the category's bytes at the peak.
        if (m.low_confidence_at_peak[i] < 0 || m.low_confidence_at_peak[i] > m.at_peak[i])
            fail(path, std::string(category_name(c)) + " low-confidence bytes " + num(double(m.low_confidence_at_peak[i])) +
                           " outside 0.." + num(double(m.at_peak[i])));
    }
    if (m.low_confidence_at_peak[static_cast<size_t>(kUntagged)] != 0) fail(path, "untagged bytes counted as low confidence");
    // A verdict of implausible always has its reasons, and only then.
    if ((m.tags.verdict == TagVerdict::implausible) != !m.tags.warnings.empty())
        fail(path, "tag verdict and warnings disagree: " + m.tags.summary);
    if (m.tags.summary.empty()) fail(path, "no tag summary");
    for (const MemoryPoint& p : m.timeline) {
        int64_t total = 0;
        for (int64_t bytes : p.bytes) {
            if (bytes < 0) fail(path, "a negative category in the timeline at " + num(double(p.trace_ns)) + " ns");
            total += bytes;
        }
        if (total > m.peak_bytes) fail(path, "the timeline exceeds the peak at " + num(double(p.trace_ns)) + " ns");
    }
    // The largest allocations live at the peak are part of the breakdown at the peak.
    CategoryBytes listed{};
    for (const LargeAllocation& a : m.largest_at_peak) {
        int64_t parts = 0;
        for (const auto& [category, bytes] : a.at_peak) {
            listed[static_cast<size_t>(category)] += bytes;
            parts += bytes;
        }
        if (parts != a.bytes)
            fail(path, "allocation " + std::to_string(a.id) + ": its parts at the peak do not add up to its size");
        if (a.at_peak.empty() || a.at_peak.front().first != a.category)
            fail(path,
                 "allocation " + std::to_string(a.id) + " is listed in a category that is not its largest at the peak");
        if (a.alloc_ns > m.peak_trace_ns || (a.free_ns && *a.free_ns < m.peak_trace_ns))
            fail(path, "allocation " + std::to_string(a.id) + " is listed but not live at the peak");
    }
    for (int c = 0; c < kCategoryCount; ++c) {
        if (listed[static_cast<size_t>(c)] > m.at_peak[static_cast<size_t>(c)])
            fail(path, std::string("the largest allocations hold more ") + category_name(c) +
                           " than the breakdown at the peak");
    }
}

// FP32 FLOPs of the window worked out from the rows: each call's FLOPs spread over its kernels by
// duration (by count without durations), a call without kernels counted where it begins.
struct WindowWork {
    double fp32 = 0, tensor = 0;
    std::array<double, kPrecisionCount> by_precision{};
    int64_t kernels = 0, outside = 0;
};

WindowWork window_work(const std::string& path, const Report& r) {
    tbdprof::trace::Database db = tbdprof::trace::open_trace(path);
    struct Call {
        double flops = 0;
        Precision precision = Precision::other;
        int64_t begin = 0, total_ns = 0, count = 0;
    };
    std::map<int64_t, Call> calls;
    const bool has_precision = tbdprof::trace::has_column(db, "library_calls", "precision");
    Statement c(db, std::string("SELECT id, flops, compute_type, a_type, begin_ns, name, ") +
                    (has_precision ? "precision" : "NULL") + " FROM library_calls WHERE flops > 0 AND flops <= 1e30");
    while (c.step()) {
        Call& call = calls[c.column_int(0)];
        call.flops = c.column_double(1);
        const auto opt = [&](int col) {
            return c.is_null(col) ? std::nullopt : std::optional<int64_t>(c.column_int(col));
        };
        call.precision = c.is_null(6) ? classify_flops(c.column_text(5), opt(2), opt(3)) : precision_from_name(c.column_text(6));
        call.begin = c.column_int(4);
    }
    Statement totals(
        db,
        "SELECT library_call, total(ifnull(duration_ns, 0)), count(*) FROM kernels WHERE library_call IS NOT NULL "
        "GROUP BY library_call");
    while (totals.step()) {
        auto it = calls.find(totals.column_int(0));
        if (it == calls.end()) continue;
        it->second.total_ns = static_cast<int64_t>(totals.column_double(1));
        it->second.count = totals.column_int(2);
    }
    const bool everything = r.window.used == "all";
    auto in_window = [&](int64_t t) { return everything || (t >= r.window.begin_ns && t < r.window.end_ns); };
    WindowWork work;
    auto add = [&](const Call& call, double flops) {
        work.by_precision[static_cast<size_t>(call.precision)] += flops;
        if (call.precision == Precision::fp32)
            work.fp32 += flops;
        else if (is_tensor_core(call.precision))
            work.tensor += flops;
    };
    Statement k(db, "SELECT start_ns, ifnull(duration_ns, 0), library_call FROM kernels");
    while (k.step()) {
        const int64_t start = k.column_int(0);
        if (!in_window(start)) continue;
        ++work.kernels;
        const bool inside = std::any_of(r.iterations.spans.begin(), r.iterations.spans.end(),
                                        [&](const auto& span) { return start >= span.first && start < span.second; });
        if (!r.iterations.spans.empty() && !inside) ++work.outside;
        if (k.is_null(2)) continue;
        auto it = calls.find(k.column_int(2));
        if (it == calls.end()) continue;
        const Call& call = it->second;
        const double share = call.total_ns > 0 ? static_cast<double>(k.column_int(1)) / static_cast<double>(call.total_ns)
                                               : 1.0 / static_cast<double>(call.count);
        add(call, call.flops * share);
    }
    for (const auto& [id, call] : calls) {
        if (call.count == 0 && in_window(call.begin)) add(call, call.flops);
    }
    return work;
}

void check_flops(const std::string& path, const Report& r) {
    const WindowWork work = window_work(path, r);
    if (!close(work.fp32, r.flops.fp32_flops, 1e-9))
        fail(path, "FP32 FLOPs in the window " + num(r.flops.fp32_flops) + ", the trace gives " + num(work.fp32));
    if (!close(work.tensor, r.flops.tensor_flops, 1e-9))
        fail(path,
             "tensor-core FLOPs in the window " + num(r.flops.tensor_flops) + ", the trace gives " + num(work.tensor));
    for (int p = 0; p < kPrecisionCount; ++p) {
        const auto precision = static_cast<Precision>(p);
        const PrecisionFlops& x = r.flops.by_precision[static_cast<size_t>(p)];
        const double want = work.by_precision[static_cast<size_t>(p)];
        if (!close(want, x.flops, 1e-9))
            fail(path, std::string(precision_name(precision)) + " FLOPs " + num(x.flops) + ", the trace gives " + num(want));
        if (x.peak_flops > 0 && x.utilization > 1.0 + 1e-9)
            fail(path, std::string(precision_name(precision)) + " utilization above its own peak");
        if (r.flops.fp32_flops_per_iteration &&
            (!x.per_iteration || !close(*x.per_iteration * static_cast<double>(r.iterations.count), x.flops, 1e-9)))
            fail(path, std::string(precision_name(precision)) + " FLOPs per iteration differ from the window total / iterations");
    }
    if (work.kernels != r.kernels.count)
        fail(path, "kernels in the window " + std::to_string(r.kernels.count) + ", the trace has " +
                       std::to_string(work.kernels));
    const IterationMetrics& it = r.iterations;
    if (it.count != static_cast<int64_t>(it.spans.size())) fail(path, "iteration count differs from the spans listed");
    if (r.window.first_iteration_begin_ns > r.window.begin_ns)
        fail(path, "the window begins before its first iteration's host start");
    for (const auto& [begin, end] : it.spans) {
        // The first counted iteration may begin on the host before the window does: the window
        // waits for the device work launched before it.
        if (begin < r.window.first_iteration_begin_ns || end > r.window.end_ns)
            fail(path, "a counted iteration lies outside the window");
    }
    if (it.count > 0 && work.outside != it.kernels_outside)
        fail(path, "kernels outside the counted iterations: report " + std::to_string(it.kernels_outside) + ", trace " +
                       std::to_string(work.outside));
    if (it.count > 0 && work.outside == 0 && !r.flops.fp32_flops_per_iteration)
        fail(path, "every kernel lies in a counted iteration, but no per-iteration figure is given");
    if (r.flops.fp32_flops_per_iteration) {
        const double n = static_cast<double>(it.count);
        if (!close(*r.flops.fp32_flops_per_iteration, work.fp32 / n, 1e-9))
            fail(path, "FP32 FLOPs per iteration " + num(*r.flops.fp32_flops_per_iteration) + ", window total / " +
                           std::to_string(it.count) + " iterations = " + num(work.fp32 / n));
        if (!r.flops.tensor_flops_per_iteration || !close(*r.flops.tensor_flops_per_iteration, work.tensor / n, 1e-9))
            fail(path, "tensor-core FLOPs per iteration differ from the window total / iterations");
        if (!it.kernels_per_iteration ||
            !close(*it.kernels_per_iteration, static_cast<double>(work.kernels) / n, 1e-12))
            fail(path, "kernels per iteration differ from kernels in the window / iterations");
    }
}

void check_notes(const std::string& path, const Report& r) {
    tbdprof::trace::Database db = tbdprof::trace::open_trace(path);
    const bool subranges =
        tbdprof::trace::has_table(db, "allocation_subranges") && db.query_int("SELECT count(*) FROM allocation_subranges") > 0;
    for (const std::string& note : r.notes) {
        if (note.find("without pointer evidence") != std::string::npos) fail(path, "note: " + note);
        if (!subranges && (note.find("pool") != std::string::npos || note.find("cached free") != std::string::npos))
            fail(path, "a note speaks of a pool in a trace without sub-ranges: " + note);
    }
}

void check_reads(const std::string& path) {
    const Report first = analyze_trace(path, AnalysisOptions{});
    const Report second = analyze_trace(path, AnalysisOptions{});
    for (Format format : {Format::text, Format::markdown, Format::json, Format::html}) {
        if (render_report(first, format) != render_report(second, format))
            fail(path, "two reads of the same trace give different reports");
    }
    check_memory(path, first);
    check_flops(path, first);
    check_notes(path, first);
}

// The tensors the tagger recovered (offset, size, category per allocation, in order), to tell a
// difference of the report from a difference of the tagging it reads.
std::vector<std::string> subrange_tags(const std::string& path) {
    tbdprof::trace::Database db = tbdprof::trace::open_trace(path);
    std::vector<std::string> tags;
    if (!tbdprof::trace::has_table(db, "allocation_subranges")) return tags;
    Statement q(db,
            "SELECT a.address - (SELECT min(address) FROM allocations), s.offset, s.bytes, s.category FROM "
            "allocation_subranges s JOIN allocations a ON a.id = s.allocation ORDER BY 1, 2, 3, 4");
    while (q.step()) tags.push_back(q.column_text(1) + "+" + q.column_text(2) + ":" + q.column_text(3));
    return tags;
}

void check_same(const std::string& a, const std::string& b, double max_share) {
    const Report x = analyze_trace(a, AnalysisOptions{});
    const Report y = analyze_trace(b, AnalysisOptions{});
    const std::string pair = a + " and " + b;
    if (x.memory.peak_bytes != y.memory.peak_bytes)
        fail(pair, "peaks differ: " + num(double(x.memory.peak_bytes)) + " and " + num(double(y.memory.peak_bytes)));
    // Own maxima add up every tensor's tag over the run: when the tagger itself tagged the two
    // recordings' tensors differently (tagging is being made deterministic there), that
    // difference is printed, not failed. The breakdown at the peak is compared either way.
    const std::vector<std::string> tags_x = subrange_tags(a), tags_y = subrange_tags(b);
    const bool same_tags = tags_x == tags_y;
    if (!same_tags) {
        size_t differ = 0;
        for (size_t i = 0; i < std::max(tags_x.size(), tags_y.size()); ++i)
            differ += i >= tags_x.size() || i >= tags_y.size() || tags_x[i] != tags_y[i];
        std::printf("note %s: the tagger's sub-ranges differ (%zu of %zu/%zu): own maxima not compared\n",
                    pair.c_str(), differ, tags_x.size(), tags_y.size());
    }
    const double limit = max_share * static_cast<double>(std::max<int64_t>(x.memory.peak_bytes, 1));
    for (int c = 0; c < kCategoryCount; ++c) {
        const auto i = static_cast<size_t>(c);
        const double at_peak = std::fabs(double(x.memory.at_peak[i] - y.memory.at_peak[i]));
        const double own_max = std::fabs(double(x.memory.category_max[i] - y.memory.category_max[i]));
        if (at_peak > limit || (same_tags && own_max > limit))
            fail(pair, std::string(category_name(c)) + " differs: at peak " + num(double(x.memory.at_peak[i])) + " / " +
                           num(double(y.memory.at_peak[i])) + ", own maximum " + num(double(x.memory.category_max[i])) +
                           " / " + num(double(y.memory.category_max[i])));
    }
    // Not a breakdown figure: iteration detection is the tagger's, and is being made stable there.
    if (x.iterations.count != y.iterations.count)
        std::printf("note %s: %lld and %lld iterations in the window\n", pair.c_str(),
                    static_cast<long long>(x.iterations.count), static_cast<long long>(y.iterations.count));
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    try {
        if (mode == "check" && argc > 2) {
            for (int i = 2; i < argc; ++i) check_reads(argv[i]);
        } else if (mode == "same" && argc == 5) {
            check_same(argv[2], argv[3], std::atof(argv[4]));
        } else {
            std::fprintf(stderr, "usage: %s check TRACE... | same A B MAX_SHARE\n", argv[0]);
            return 2;
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
    if (failures == 0) std::printf("ok: %s\n", mode.c_str());
    return failures == 0 ? 0 : 1;
}
