// JSON report. The layout is documented in schemas/report.schema.json; keys are stable within
// "schema_version". Times are seconds, sizes bytes, utilizations fractions in 0..1.
#include "communication_buckets.h"
#include "framework_unseen.h"
#include "tbdprof/analyzer/render.h"
#include "tbdprof/analyzer/tag_plausibility.h"
#include "tbdprof/trace/json_writer.h"

namespace tbdprof::analyzer {
namespace {

double s_of(int64_t ns) { return static_cast<double>(ns) / 1e9; }  // correctly rounded: 1000 ns -> 1e-06

void categories(trace::JsonWriter& json, std::string_view key, const CategoryBytes& bytes) {
    json.begin_object(key);
    for (int c = 0; c < kCategoryCount; ++c) json.value(category_name(c), bytes[static_cast<size_t>(c)]);
    json.end_object();
}

// The plausibility of the tags (null when not checked) and the low-confidence bytes at the peak.
void tag_check(trace::JsonWriter& json, const MemoryMetrics& m) {
    if (m.tags.verdict == TagVerdict::not_checked) json.null("tags_plausible");
    else json.value("tags_plausible", m.tags.verdict == TagVerdict::plausible);
    json.value("tag_summary", m.tags.summary);
    json.begin_array("tag_warnings");
    for (const std::string& warning : m.tags.warnings) json.value("", warning);
    json.end_array();
    json.begin_array("tag_remarks");
    for (const std::string& remark : m.tags.remarks) json.value("", remark);
    json.end_array();
    json.value("low_confidence_threshold", kLowTagConfidence);
    categories(json, "low_confidence_at_peak", m.low_confidence_at_peak);
}

void memory(trace::JsonWriter& json, const MemoryMetrics& m) {
    json.begin_object("memory");
    json.value("allocations", m.allocations).value("peak_bytes", m.peak_bytes).value("peak_s", s_of(m.peak_trace_ns));
    json.value("tagged", m.tagged);
    categories(json, "at_peak", m.at_peak);
    categories(json, "category_max", m.category_max);
    tag_check(json, m);
    json.begin_array("devices");
    for (const auto& [device, peak] : m.device_peaks) json.begin_object().value("id", device).value("peak_bytes", peak).end_object();
    json.end_array();
    json.begin_array("processes");
    for (const ProcessMemory& p : m.processes) {
        json.begin_object().value("process", p.process);
        if (p.rank)
            json.value("rank", *p.rank);
        else
            json.null("rank");
        json.value("peak_bytes", p.peak_bytes);
        json.value("peak_s", s_of(p.peak_trace_ns));
        categories(json, "at_peak", p.at_peak);
        json.end_object();
    }
    json.end_array();
    json.begin_array("largest_at_peak");
    for (const LargeAllocation& a : m.largest_at_peak) {
        json.begin_object().value("id", a.id).value("device", a.device).value("bytes", a.bytes);
        json.value("category", category_name(a.category)).value("alloc_s", s_of(a.alloc_ns));
        if (a.free_ns) json.value("free_s", s_of(*a.free_ns));
        else json.null("free_s");
        if (a.rule.empty()) json.null("rule");
        else json.value("rule", a.rule);
        if (a.confidence) json.value("confidence", *a.confidence);
        else json.null("confidence");
        json.value("tag_category", category_name(a.tag_category));
        json.value("by_subrange", a.by_subrange);
        json.begin_object("at_peak");
        for (const auto& [category, bytes] : a.at_peak) json.value(category_name(category), bytes);
        json.end_object();
        json.begin_array("stack");
        for (const std::string& frame : a.stack) json.value("", frame);
        json.end_array().end_object();
    }
    json.end_array();
    json.begin_object("timeline");
    json.begin_array("categories");
    for (int c = 0; c < kCategoryCount; ++c) json.value("", category_name(c));
    json.end_array();
    json.begin_array("points");
    for (const MemoryPoint& p : m.timeline) {
        json.begin_array().value("", s_of(p.trace_ns));
        for (int64_t b : p.bytes) json.value("", b);
        json.end_array();
    }
    json.end_array().end_object();
    json.end_object();
}

// The figures of one span: the window over ranks, one rank, or one iteration of one rank.
void communication_figures(trace::JsonWriter& json, const CommunicationFigures& f) {
    json.value("time_s", s_of(f.communication_ns))
        .value("overlapped_s", s_of(f.overlapped_ns))
        .value("exposed_s", s_of(f.exposed_ns))
        .value("overlap_fraction", f.overlap_fraction())
        .value("kernels", f.kernels)
        .value("computation_s", s_of(f.computation_ns))
        .value("idle_s", s_of(f.idle_ns));
}

// With the durations (--collective-durations): each kernel's communicator (an index into
// `communicators`) and launch number on it, null where not known; what tbdprof fleet matches by.
// add_identities sets them for every duration or for none: then empty arrays, not a null per kernel.
void collective_identity_arrays(trace::JsonWriter& json, const RankCommunication& r) {
    const size_t count = r.communicators.empty() ? 0 : r.collective_identities.size();
    for (const bool sequences : {false, true}) {
        json.begin_array(sequences ? "collective_sequences" : "collective_communicators");
        for (size_t i = 0; i < count; ++i) {
            const std::optional<CollectiveIdentity>& id = r.collective_identities[i];
            if (!id)
                json.null("");
            else
                json.value("", sequences ? id->sequence : id->communicator);
        }
        json.end_array();
    }
    json.begin_array("communicators");
    for (const CommunicatorInfo& c : r.communicators)
        json.begin_object().value("key", c.key).value("nranks", c.nranks).value("rank", c.rank).end_object();
    json.end_array();
}

// How the ranks' collectives were matched for their waits; only when ranks were compared (two or
// more), so a one-rank report is as before.
void collective_matching(trace::JsonWriter& json, const CollectiveMatching& w) {
    if (w.matched_by.empty()) return;
    json.begin_object("waits").value("matched_by", w.matched_by);
    const auto optional_count = [&](const char* key, const std::optional<int64_t>& n) {
        n ? json.value(key, *n) : json.null(key);
    };
    optional_count("collectives", w.collectives);
    optional_count("communicators", w.communicators);
    if (w.matched_by == "order") {
        json.null("left_out");
    } else {
        json.begin_object("left_out");
        for (const auto& [why, count] : w.left_out) json.value(why, count);
        json.end_object();
    }
    json.end_object();
}

// Always present; `present` false and no ranks when the window holds no communication kernels.
void communication(trace::JsonWriter& json, const CommunicationMetrics& m) {
    json.begin_object("communication").value("present", m.present);
    communication_figures(json, m.total);
    json.value("world_size", m.world_size);
    if (m.slowest && m.ranks[*m.slowest].rank) json.value("slowest_rank", *m.ranks[*m.slowest].rank);
    else json.null("slowest_rank");
    if (m.slowest) json.value("slowest_process", m.ranks[*m.slowest].process).value("slowest_device", m.ranks[*m.slowest].device);
    else json.null("slowest_process").null("slowest_device");
    json.value("imbalance", m.imbalance);
    if (m.waited_for && m.ranks[*m.waited_for].rank) json.value("waited_for_rank", *m.ranks[*m.waited_for].rank);
    else json.null("waited_for_rank");
    if (m.waited_for)
        json.value("waited_for_process", m.ranks[*m.waited_for].process)
            .value("waited_for_device", m.ranks[*m.waited_for].device);
    else json.null("waited_for_process").null("waited_for_device");
    collective_matching(json, m.waits);
    json.begin_array("ranks");
    for (const RankCommunication& r : m.ranks) {
        json.begin_object().value("rank", r.rank).value("process", r.process).value("device", r.device);
        communication_figures(json, r.figures);
        json.value("wait_s", r.wait_ns ? std::optional<double>(s_of(*r.wait_ns)) : std::nullopt);
        if (r.collective_durations_ns) {  // only when asked (tbdprof report --collective-durations)
            json.begin_array("collective_durations_ns");
            for (int64_t d : *r.collective_durations_ns) json.value("", d);
            json.end_array();
            collective_identity_arrays(json, r);
        }
        json.begin_array("iterations");
        for (const CommunicationFigures& f : r.iterations) {
            json.begin_object();
            communication_figures(json, f);
            json.end_object();
        }
        json.end_array().end_object();
    }
    json.end_array();
    buckets_json(json, m);
    json.end_object();
}

// What was recorded and which part of it the figures cover.
void trace_and_window(trace::JsonWriter& json, const Report& r) {
    json.begin_object("trace")
        .value("path", r.run.trace_path)
        .value("command_line", r.run.command_line)
        .value("format_version", r.run.format_version)
        .value("duration_s", s_of(r.run.duration_ns))
        .value("simulated", r.run.simulated)
        .value("clock_source", r.run.clock_source)
        .value("truncated_files", r.run.truncated_files)
        .value("dropped_events", r.run.dropped_events)
        .end_object();
    json.begin_object("window")
        .value("requested", r.window.requested)
        .value("used", r.window.used)
        .value("note", r.window.note)
        .value("begin_s", s_of(r.window.begin_ns))
        .value("end_s", s_of(r.window.end_ns))
        .value("duration_s", r.window.seconds())
        .end_object();
}

void devices(trace::JsonWriter& json, const Report& r) {
    json.value("gpu_utilization", r.gpu_utilization).value("gpu_busy_utilization", r.busy_utilization);
    json.begin_array("devices");
    for (const DeviceMetrics& d : r.devices) {
        json.begin_object()
            .value("id", d.id)
            .value("name", d.name)
            .value("utilization", d.utilization)
            .value("busy_utilization", d.busy_utilization)
            .value("kernel_busy_s", s_of(d.kernel_busy_ns))
            .value("busy_s", s_of(d.busy_ns))
            .value("kernels", d.kernels)
            .value("fp32_flops", d.fp32_flops)
            .value("fp32_peak_flops", d.fp32_peak_flops)
            .value("fp32_utilization", d.fp32_utilization)
            .end_object();
    }
    json.end_array();
}

// FP32, tensor-core and per-precision throughput.
void throughput(trace::JsonWriter& json, const FlopMetrics& f) {
    json.begin_object("fp32")
        .value("flops", f.fp32_flops)
        .value("flops_per_s", f.fp32_flops_per_s)
        .value("flops_per_busy_s", f.fp32_flops_per_busy_s)
        .value("peak_flops", f.fp32_peak_flops)
        .value("utilization", f.fp32_utilization)
        .value("flops_per_iteration", f.fp32_flops_per_iteration)
        .end_object();
    json.begin_object("tensor_core")
        .value("flops", f.tensor_flops)
        .value("flops_per_s", f.tensor_flops_per_s)
        .value("flops_per_iteration", f.tensor_flops_per_iteration)
        .end_object();
    json.begin_object("by_precision");
    for (int p = 0; p < kPrecisionCount; ++p) {
        const PrecisionFlops& x = f.by_precision[static_cast<size_t>(p)];
        json.begin_object(precision_name(static_cast<Precision>(p)))
            .value("flops", x.flops)
            .value("flops_per_s", x.flops_per_s)
            .value("peak_flops", x.peak_flops)
            .value("utilization", x.utilization)
            .value("flops_per_iteration", x.per_iteration)
            .value("counter_flops", x.counter_flops)
            .end_object();
    }
    json.end_object();
}

// How much of the kernel time the FLOP figures cover, and where the FLOPs came from.
void flop_provenance(trace::JsonWriter& json, const FlopMetrics& f) {
    json.begin_object("flop_coverage")
        .value("other_flops", f.other_flops)
        .value("library_calls", f.library_calls)
        .value("kernel_time_s", s_of(f.kernel_time_ns))
        .value("kernel_time_without_flops_s", s_of(f.kernel_time_without_flops_ns))
        .value("no_flop_info_share", f.no_flop_info_share)
        .end_object();
    const CounterFlopSources& c = f.counters;
    json.begin_object("flop_sources")
        .value("counters_collected", c.collected)
        .value("library_shape_flops", f.fp32_flops + f.tensor_flops + f.other_flops - c.added_flops)
        .value("counter_flops", c.added_flops)
        .value("kernels_counted", c.kernels_counted)
        .value("kernels_not_available", c.kernels_not_available)
        .value("kernels_added", c.kernels_added)
        .value("calls_compared", c.calls_compared)
        .value("compared_library_flops", c.compared_library_flops)
        .value("compared_counter_flops", c.compared_counter_flops)
        .end_object();
}

void iterations(trace::JsonWriter& json, const IterationMetrics& it) {
    json.begin_object("iterations")
        .value("source", it.source)
        .value("detected", it.detected)
        .value("set_apart", it.set_apart)
        .value("count", it.count)
        .value("mean_s", it.mean_s)
        .value("median_s", it.median_s)
        .value("p95_s", it.p95_s)
        .value("min_s", it.min_s)
        .value("max_s", it.max_s)
        .value("per_s", it.per_s)
        .value("samples_per_s", it.samples_per_s)
        .value("kernels_outside", it.kernels_outside)
        .value("kernels_per_iteration", it.kernels_per_iteration)
        .value("kernel_time_per_iteration_s", it.kernel_time_per_iteration_ns
                                                  ? std::optional<double>(*it.kernel_time_per_iteration_ns * 1e-9)
                                                  : std::nullopt)
        .end_object();
}

void cpu_and_kernels(trace::JsonWriter& json, const Report& r) {
    json.begin_object("cpu").value("available", r.cpu.available).value("utilization", r.cpu.utilization);
    json.value("utilization_low", r.cpu.utilization_low).value("utilization_high", r.cpu.utilization_high);
    json.value("coarse", r.cpu.coarse)
        .value("sample_interval_ns", r.cpu.sample_interval_ns)
        .value("tick_ns", r.cpu.tick_ns);
    json.begin_array("processes");
    for (const CpuProcess& p : r.cpu.processes)
        json.begin_object()
            .value("process", p.process)
            .value("utilization", p.utilization)
            .value("utilization_low", p.utilization_low)
            .value("utilization_high", p.utilization_high)
            .end_object();
    json.end_array().end_object();
    json.begin_object("kernels").value("count", r.kernels.count).value("total", r.kernels.total).value("host_timed", r.kernels.host_timed);
    json.begin_array("top");
    for (const KernelStat& k : r.kernels.top) {
        json.begin_object()
            .value("name", k.name)
            .value("count", k.count)
            .value("total_s", s_of(k.total_ns))
            .value("mean_s", k.mean_ns * 1e-9)
            .value("flops", k.flops)
            .value("share", k.share)
            .end_object();
    }
    json.end_array().end_object();
}

void utilization_timeline(trace::JsonWriter& json, const Report& r) {
    json.begin_object("utilization_timeline").value("bucket_s", s_of(r.utilization_series.bucket_ns));
    json.begin_array("devices");
    for (const auto& [device, values] : r.utilization_series.devices) {
        json.begin_object().value("id", device).begin_array("values");
        for (double v : values) json.value("", v);
        json.end_array().end_object();
    }
    json.end_array().end_object();
}
}  // namespace

std::string render_json(const Report& r) {
    trace::JsonWriter json;
    json.begin_object();
    json.value("schema", "tbdprof-report").value("schema_version", 1);
    trace_and_window(json, r);
    devices(json, r);
    throughput(json, r.flops);
    flop_provenance(json, r.flops);
    memory(json, r.memory);
    framework_unseen_json(json, r.unseen);
    iterations(json, r.iterations);
    cpu_and_kernels(json, r);
    communication(json, r.communication);
    utilization_timeline(json, r);
    json.begin_array("notes");
    for (const std::string& note : r.notes) json.value("", note);
    json.end_array();
    json.end_object();
    return json.str();
}

}  // namespace tbdprof::analyzer
