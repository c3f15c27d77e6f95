#include "report_document.h"
#include "text_fit.h"

#include <cstdio>

#include "framework_unseen.h"
#include "svg_charts.h"
#include "tbdprof/analyzer/render.h"
#include "tbdprof/analyzer/tag_plausibility.h"
#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer {
namespace {

std::string seconds(double s) { return format_duration_ns(s * 1e9); }

Section overview(const Report& r, bool with_charts) {
    Section s{"GPU utilization", {}, Table{{"device", "name", "utilization", "busy incl. copies", "kernel busy",
                                          "kernels", "FP32 FLOP", "FP32 util."},
                                         {false, false, true, true, true, true, true, true}, {}}, {}};
    s.lines.push_back("GPU utilization: " + format_percent(r.gpu_utilization) +
                      " (busy including copies and sets: " + format_percent(r.busy_utilization) + ")");
    for (const DeviceMetrics& d : r.devices) {
        s.table->add({std::to_string(d.id), d.name, format_percent(d.utilization), format_percent(d.busy_utilization),
                      format_duration_ns(static_cast<double>(d.kernel_busy_ns)), std::to_string(d.kernels),
                      format_flops(d.fp32_flops), format_percent(d.fp32_utilization)});
    }
    if (with_charts) s.charts.push_back(utilization_chart(r.utilization_series, r.window, r.run.duration_ns));
    return s;
}

// Where the figures came from in a --metrics run, and both sources side by side where both exist.
void add_counter_source_lines(Section& s, const FlopMetrics& f) {
    const CounterFlopSources& c = f.counters;
    const double library = f.fp32_flops + f.tensor_flops + f.other_flops - c.added_flops;
    s.lines.push_back("sources: " + format_flops(library) + " from library shapes, " + format_flops(c.added_flops) +
                      " from hardware counters (" + std::to_string(c.kernels_added) +
                      " kernels outside library calls with FLOPs)");
    s.lines.push_back("hardware counters: " + std::to_string(c.kernels_counted) + " kernels counted, " +
                      std::to_string(c.kernels_not_available) + " not available (CUPTI could not count them)");
    if (c.calls_compared > 0) {
        s.lines.push_back("both sources: " + std::to_string(c.calls_compared) + " library calls, " +
                          format_flops(c.compared_library_flops) + " from shapes, " +
                          format_flops(c.compared_counter_flops) + " from counters (the shapes are the figure)");
    }
    s.lines.push_back("a --metrics run replays every kernel: its times (and rates) are not comparable with a run without it");
}

Section flops(const Report& r) {
    const FlopMetrics& f = r.flops;
    Section s{"FP32 throughput", {}, Table{{"metric", "value"}, {false, true}, {}}, {}};
    s.table->add({"FP32 FLOPs in window", format_flops(f.fp32_flops)});
    if (f.fp32_flops_per_iteration) {
        s.table->add({"FP32 FLOPs per iteration (" + std::to_string(r.iterations.count) + " in window)",
                      format_flops(*f.fp32_flops_per_iteration)});
    }
    s.table->add({"achieved FP32 over window", format_rate(f.fp32_flops_per_s)});
    s.table->add({"achieved FP32 over GPU-busy time", format_rate(f.fp32_flops_per_busy_s)});
    s.table->add({"FP32 peak", format_rate(f.fp32_peak_flops)});
    s.table->add({"FP32 utilization", format_percent(f.fp32_utilization)});
    s.table->add({"tensor-core FLOPs (TF32/FP16/BF16/FP8, not FP32)", format_flops(f.tensor_flops)});
    s.table->add({"tensor-core FLOP/s over window", format_rate(f.tensor_flops_per_s)});
    if (f.tensor_flops_per_iteration && f.tensor_flops > 0) {
        s.table->add({"tensor-core FLOPs per iteration", format_flops(*f.tensor_flops_per_iteration)});
    }
    s.table->add({"other FLOPs (FP64, integer, unknown)", format_flops(f.other_flops)});
    s.table->add({"library calls with FLOPs", std::to_string(f.library_calls)});
    const CounterFlopSources& c = f.counters;
    s.lines.push_back(format_percent(f.no_flop_info_share) + " of GPU kernel time (" +
                      format_duration_ns(static_cast<double>(f.kernel_time_without_flops_ns)) + " of " +
                      format_duration_ns(static_cast<double>(f.kernel_time_ns)) + ") has no FLOP information: " +
                      (c.collected ? "FLOPs come from library calls with known shapes and from hardware counters"
                                   : "FLOPs come from library calls with known shapes only"));
    if (c.collected) add_counter_source_lines(s, f);
    return s;
}

// Each precision against its own peak: FP32 FLOPs never count against a tensor-core peak, nor
// tensor-core FLOPs against the FP32 one. FP32 is always listed; other precisions when they have FLOPs.
Section flops_by_precision(const Report& r) {
    const FlopMetrics& f = r.flops;
    Section s{"FLOPs by precision", {},
              Table{{"precision", "FLOPs in window", "per iteration", "FLOP/s over window", "peak", "utilization"},
                    {false, true, true, true, true, true},
                    {}},
              {}};
    for (int p = 0; p < kPrecisionCount; ++p) {
        const PrecisionFlops& x = f.by_precision[static_cast<size_t>(p)];
        const auto precision = static_cast<Precision>(p);
        if (x.flops <= 0 && precision != Precision::fp32) continue;
        s.table->add({precision_label(precision), format_flops(x.flops),
                      x.per_iteration ? format_flops(*x.per_iteration) : "-", format_rate(x.flops_per_s),
                      x.peak_flops > 0 ? format_rate(x.peak_flops) : "unknown",
                      x.peak_flops > 0 ? format_percent(x.utilization) : "-"});
    }
    s.lines.push_back("peaks: the devices' FP32 peak times the data sheet's ratio for each precision (dense)");
    if (f.counters.collected) {
        for (int p = 0; p < kPrecisionCount; ++p) {
            const PrecisionFlops& x = f.by_precision[static_cast<size_t>(p)];
            if (x.flops <= 0) continue;
            s.lines.push_back(std::string(precision_label(static_cast<Precision>(p))) + ": " +
                              format_flops(x.flops - x.counter_flops) + " from library shapes, " +
                              format_flops(x.counter_flops) + " from hardware counters");
        }
    }
    return s;
}

// A trace of several processes (the ranks of one recording): the table is every process together,
// so each process's own peak is said too, with the categories that are state (one rank's model).
void process_peak_lines(const MemoryMetrics& m, std::vector<std::string>& lines) {
    if (m.processes.empty()) return;
    lines.push_back("the table is every process together (" + std::to_string(m.processes.size()) +
                    "); each alone at its own peak:");
    for (const ProcessMemory& p : m.processes) {
        std::string line = "  " + process_memory_label(p) + ": " + format_bytes(p.peak_bytes) + " at " +
                           seconds(static_cast<double>(p.peak_trace_ns) * 1e-9);
        for (const char* name : {"weights", "gradients", "optimizer_state"})
            line += ", " + std::string(name) + " " + format_bytes(p.at_peak[static_cast<size_t>(category_index(name))]);
        lines.push_back(line);
    }
}

// The tags' plausibility (tag_plausibility.h) comes first: an unreliable breakdown is never shown
// without its warning above it.
Section memory(const Report& r, bool with_charts) {
    const MemoryMetrics& m = r.memory;
    Section s{"Memory", {},
              Table{{"category", "at peak", "share at peak", "own maximum", "low confidence"},
                    {false, true, true, true, true}, {}},
              {}};
    if (m.tags.verdict == TagVerdict::implausible) {
        s.warnings.push_back(m.tags.summary);
        s.warnings.insert(s.warnings.end(), m.tags.warnings.begin(), m.tags.warnings.end());
    } else {
        s.lines.push_back(m.tags.summary);
    }
    for (const std::string& remark : m.tags.remarks) s.lines.push_back("memory tags: " + remark);
    s.lines.push_back("peak live device memory: " + format_bytes(m.peak_bytes) + " at " +
                      seconds(static_cast<double>(m.peak_trace_ns) * 1e-9) + " (" + std::to_string(m.allocations) +
                      " device allocations; memory covers the whole run)");
    if (m.tagged) {
        s.lines.push_back("low confidence: the share of a category's bytes at the peak whose tag has a confidence below " +
                          format_number(kLowTagConfidence, 2) + " (or none recorded)");
    }
    process_peak_lines(m, s.lines);
    for (int c = 0; c < kCategoryCount; ++c) {
        const double share = m.peak_bytes > 0 ? static_cast<double>(m.at_peak[c]) / static_cast<double>(m.peak_bytes) : 0;
        s.table->add({category_name(c), format_bytes(m.at_peak[c]), format_percent(share), format_bytes(m.category_max[c]),
                      low_confidence_text(m, c)});
    }
    if (with_charts) {
        s.charts.push_back(memory_timeline_chart(m, r.run.duration_ns));
        s.charts.push_back(category_bars_chart({"at peak"}, {m.at_peak}));
    }
    return s;
}

// The call-stack column keeps the innermost frames that fit in kStackColumn characters and says how
// many it left out; the JSON and HTML reports keep every frame.
constexpr size_t kStackColumn = 100;

std::string elided_stack(const std::vector<std::string>& frames, bool full) {
    if (frames.empty()) return "(no stack recorded)";
    if (full) {
        std::string all;
        for (size_t i = 0; i < frames.size(); ++i) all += (i ? " < " : "") + frames[i];
        return all;
    }
    std::string text;
    size_t shown = 0;
    for (; shown < frames.size(); ++shown) {
        const std::string& frame = frames[shown];
        const size_t room = kStackColumn - std::min(kStackColumn, text.size() + (shown ? 3 : 0));
        if (frame.size() > room) {
            if (shown == 0) text = frame.substr(0, kStackColumn - 3) + "...";  // the innermost always shows
            if (shown == 0) ++shown;
            break;
        }
        text += (shown ? " < " : "") + frame;
    }
    if (shown < frames.size()) text += " < (" + std::to_string(frames.size() - shown) + " more)";
    return text;
}

// The category column; a segment counted by its sub-ranges shows what it holds at the peak.
std::string listed_category(const LargeAllocation& a) {
    if (!a.by_subrange) return category_name(a.category);
    std::string text;
    for (size_t i = 0; i < a.at_peak.size() && i < 2; ++i) {
        text += (i ? ", " : "") + std::string(category_name(a.at_peak[i].first)) + " " + format_bytes(a.at_peak[i].second);
    }
    if (a.at_peak.size() > 2) text += ", ...";
    return text;
}

std::string tag_rule(const LargeAllocation& a) {
    if (a.rule.empty()) return a.category == kUntagged && !a.by_subrange ? "(untagged)" : "-";
    std::string text = a.rule;
    if (a.confidence) text += " (" + format_number(*a.confidence, 2) + ")";
    if (a.by_subrange) text += std::string(": ") + category_name(a.tag_category) + " overall, by sub-range";
    return text;
}

Section largest(const Report& r, bool full_stacks) {
    Section s{"Largest allocations live at the peak",
              {},
              Table{{"bytes", "category at peak", "tag rule (confidence)", "device", "allocated", "freed",
                     "call stack (innermost first)"},
                    {true, false, false, true, true, true, false},
                    {},
                    {false, true, false, false, false, false, true}},
              {}};
    if (r.memory.tags.verdict == TagVerdict::implausible)
        s.warnings.push_back("the categories below are the tags the Memory section calls unreliable");
    for (const LargeAllocation& a : r.memory.largest_at_peak) {
        s.table->add({format_bytes(a.bytes), listed_category(a), tag_rule(a), std::to_string(a.device),
                      seconds(static_cast<double>(a.alloc_ns) * 1e-9),
                      a.free_ns ? seconds(static_cast<double>(*a.free_ns) * 1e-9) : "never", elided_stack(a.stack, full_stacks)});
    }
    return s;
}

Section iterations(const Report& r) {
    const IterationMetrics& it = r.iterations;
    Section s{"Iterations", {}, std::nullopt, {}};
    if (it.count == 0) {
        s.lines.push_back(it.detected == 0 ? "no iterations detected" : "no complete iteration inside the window");
        return s;
    }
    s.lines.push_back(std::to_string(it.count) + " iterations in the window (" + std::to_string(it.detected) +
                      " detected, from " + it.source + ")");
    s.table = Table{{"metric", "value"}, {false, true}, {}};
    s.table->add({"mean", seconds(it.mean_s)});
    s.table->add({"median", seconds(it.median_s)});
    s.table->add({"p95", seconds(it.p95_s)});
    s.table->add({"min / max", seconds(it.min_s) + " / " + seconds(it.max_s)});
    s.table->add({"iterations/s", format_number(it.per_s, 4)});
    if (it.samples_per_s) s.table->add({"samples/s", format_number(*it.samples_per_s, 5)});
    if (it.kernels_per_iteration) s.table->add({"kernels per iteration", format_number(*it.kernels_per_iteration, 4)});
    if (it.kernel_time_per_iteration_ns) {
        s.table->add({"kernel time per iteration", format_duration_ns(*it.kernel_time_per_iteration_ns)});
    }
    return s;
}

Section cpu(const Report& r) {
    Section s{"CPU", {}, std::nullopt, {}};
    if (!r.cpu.available) {
        s.lines.push_back("no CPU samples in the window");
        return s;
    }
    s.lines.push_back("CPU utilization of the traced processes: " + format_number(r.cpu.utilization, 3) +
                      " cores (1.0 = one core busy)");
    if (r.cpu.coarse)
        s.lines.push_back("coarse: the samples (every " +
                          format_duration_ns(static_cast<double>(r.cpu.sample_interval_ns)) + ", " +
                          format_duration_ns(static_cast<double>(r.cpu.tick_ns)) + " ticks) only bound it between " +
                          format_number(r.cpu.utilization_low, 3) + " and " + format_number(r.cpu.utilization_high, 3) +
                          " cores in this window");
    s.table = Table{{"process", "cores", "at least", "at most"}, {true, true, true, true}, {}};
    for (const CpuProcess& p : r.cpu.processes)
        s.table->add({std::to_string(p.process), format_number(p.utilization, 3), format_number(p.utilization_low, 3),
                      format_number(p.utilization_high, 3)});
    return s;
}

Section kernels(const Report& r, bool full_names) {
    Section s{"Top kernels by total time", {}, Table{{"kernel", "count", "total", "mean", "FLOPs", "share of GPU time"},
                                                      {false, true, true, true, true, true}, {}}, {}};
    s.lines.push_back(std::to_string(r.kernels.count) + " kernels in the window (" + std::to_string(r.kernels.total) +
                      " in the trace)");
    for (const KernelStat& k : r.kernels.top) {
        std::string name = full_names ? k.name : elide_middle(k.name, 80);
        s.table->add({name, std::to_string(k.count), format_duration_ns(static_cast<double>(k.total_ns)),
                      format_duration_ns(k.mean_ns), k.flops > 0 ? format_flops(k.flops) : "-", format_percent(k.share)});
    }
    return s;
}

}  // namespace

std::string window_sentence(const Report& r) {
    return "window: " + r.window.used + " (" + seconds(static_cast<double>(r.window.begin_ns) * 1e-9) + " to " +
           seconds(static_cast<double>(r.window.end_ns) * 1e-9) + ", " + seconds(r.window.seconds()) + ")" +
           (r.window.used != r.window.requested ? "; requested " + r.window.requested + ": " + r.window.note : "");
}

Document report_document(const Report& r, bool with_charts, bool full_names) {
    Document document;
    document.title = "tbdprof report: " + r.run.trace_path;
    document.intro.push_back("command: " + r.run.command_line);
    document.intro.push_back("run: " + seconds(static_cast<double>(r.run.duration_ns) * 1e-9) +
                             (r.run.simulated ? " on the simulated GPU" : "") + ", clock source " + r.run.clock_source);
    document.intro.push_back(window_sentence(r));
    if (std::string captured = capture_sentence(r); !captured.empty()) document.intro.push_back(captured);
    document.sections.push_back(overview(r, with_charts));
    document.sections.push_back(flops(r));
    document.sections.push_back(flops_by_precision(r));
    document.sections.push_back(memory(r, with_charts));
    if (!r.memory.largest_at_peak.empty()) document.sections.push_back(largest(r, full_names));
    if (r.unseen.present) document.sections.push_back(framework_unseen_section(r.unseen));
    document.sections.push_back(iterations(r));
    document.sections.push_back(cpu(r));
    if (r.communication.present) document.sections.push_back(communication_section(r));
    if (!r.communication.buckets.empty()) document.sections.push_back(bucket_section(r));
    document.sections.push_back(kernels(r, full_names));
    if (!r.notes.empty()) document.sections.push_back(Section{"Notes", r.notes, std::nullopt, {}});
    return document;
}

std::optional<Format> parse_format(std::string_view text) {
    if (text == "text") return Format::text;
    if (text == "markdown" || text == "md") return Format::markdown;
    if (text == "json") return Format::json;
    if (text == "html") return Format::html;
    return std::nullopt;
}

std::string render_report(const Report& report, Format format, size_t text_width) {
    switch (format) {
    case Format::json: return render_json(report);
    case Format::markdown: return to_markdown(report_document(report, false, false));
    case Format::html: return to_html(report_document(report, true, true));
    // Text: every frame and the whole kernel name, for the table to fit to the width.
    default: return to_text(report_document(report, false, true), text_width);
    }
}

}  // namespace tbdprof::analyzer
