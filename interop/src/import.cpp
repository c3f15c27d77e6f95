#include "tbdprof/interop/import.h"

#include "import_tagging.h"

#include <fmt/format.h>

#include "chrome_stream.h"
#include "import_model.h"
#include "input_file.h"
#include "tbdprof/interop/interop_error.h"
#include "tbdprof/tagger/tagger.h"
#include "tbdprof/trace/memory_kinds.h"
#include "tbdprof/trace/output_file.h"
#include "tbdprof/trace/sqlite_handle.h"
#include "tbdprof/trace/trace_writer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

namespace tbdprof::interop {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The counts comma-separated, each as `pattern` shows it ({0} what, {1} how many).
std::string joined(const std::map<std::string, uint64_t>& counts, const char* pattern) {
    std::string out;
    for (const auto& [what, count] : counts)
        out += (out.empty() ? "" : ", ") + fmt::format(fmt::runtime(pattern), what, count);
    return out;
}

void join_counts(std::ostringstream& out, const char* title, const std::map<std::string, uint64_t>& counts) {
    if (!counts.empty()) out << "; " << title << ": " << joined(counts, "{1} {0}");
}

// The rows of the trace's `ranges` table, in id order, as the tagger takes them (tagger.h); their
// names moved, not copied.
std::vector<tagger::HostRange> tagger_ranges(std::vector<trace::detail::RangeRow> rows) {
    std::vector<tagger::HostRange> ranges;
    ranges.reserve(rows.size());
    for (trace::detail::RangeRow& row : rows)
        ranges.push_back(
            {static_cast<int32_t>(row.process), row.begin_ns, row.end_ns.value_or(row.begin_ns), std::move(row.name)});
    return ranges;
}

// Rows in the order the file gives them back (the model numbers them in order, so rarely sorted).
template <class Row>
void in_id_order(std::vector<Row>& rows) {
    const auto by_id = [](const Row& a, const Row& b) { return a.id < b.id; };
    if (!std::is_sorted(rows.begin(), rows.end(), by_id)) std::sort(rows.begin(), rows.end(), by_id);
}

// The rows of the trace's `allocations` table, in id order, as reading them back gives them (the
// writer binds each field as is; tagger.h), without tags: the tagger is about to write those.
std::vector<trace::AllocationRow> tagger_allocations(const std::vector<trace::detail::AllocationRow>& rows) {
    std::vector<trace::AllocationRow> allocations(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const trace::detail::AllocationRow& a = rows[i];
        trace::AllocationRow& r = allocations[i];
        r.id = a.id;
        r.process = a.process;
        r.device = a.device;
        r.thread = a.thread;
        r.address = a.address;
        r.bytes = a.bytes;
        r.alloc_ns = a.alloc_ns;
        r.free_ns = a.free_ns;
        r.kind = trace::memory_kind_from_text(a.kind);
        r.stream = a.stream;
        r.stack = a.stack;
        r.free_thread = a.free_thread;
    }
    in_id_order(allocations);
    return allocations;
}

// The rows of the trace's `kernels` table, in id order, as trace::for_each_kernel_launch reads them
// back (NULL queued and duration as 0, no library call as -1; tagger.h).
std::vector<trace::KernelLaunch> tagger_kernels(const std::vector<trace::detail::KernelRow>& rows) {
    std::vector<trace::KernelLaunch> kernels(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const trace::detail::KernelRow& k = rows[i];
        kernels[i] = {.id = k.id,
                      .process = k.process,
                      .function = k.function,
                      .start_ns = k.start_ns,
                      .queued_ns = k.queued_ns.value_or(0),
                      .duration_ns = k.duration_ns.value_or(0),
                      .library_call = k.library_call.value_or(-1)};
    }
    in_id_order(kernels);
    return kernels;
}

// The rows of the trace's `api_calls` table in (begin_ns, id) order, as the tagger's by-time read
// gives them back (tagger.h). Their kinds are the model's static texts (import_model.cpp).
std::vector<trace::ApiCallRow> tagger_api_calls(const std::vector<trace::detail::ApiCallRow>& rows) {
    std::vector<trace::ApiCallRow> calls(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const trace::detail::ApiCallRow& c = rows[i];
        calls[i] = {.id = c.id,
                    .process = c.process,
                    .thread = c.thread,
                    .kind = c.kind,
                    .begin_ns = c.begin_ns,
                    .end_ns = c.end_ns,
                    .handle = c.handle};
    }
    const auto by_time = [](const trace::ApiCallRow& a, const trace::ApiCallRow& b) {
        return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.id < b.id;
    };
    if (!std::is_sorted(calls.begin(), calls.end(), by_time)) std::sort(calls.begin(), calls.end(), by_time);
    return calls;
}

}  // namespace

std::string ImportSummary::summary_line() const {
    std::ostringstream out;
    out << "imported " << format << ": " << events << " events; " << kernels << " kernels, " << copies << " copies, "
        << sets << " sets, " << runtime_calls << " CUDA API calls (" << sync_calls << " synchronizations), " << cpu_ops
        << " CPU ops, " << annotations << " annotations, " << gpu_annotations << " GPU annotations, " << steps
        << " steps, " << gpu_memory_events << " GPU memory events -> " << allocations << " allocations ("
        << freed_allocations << " freed, addresses "
        << (allocations == 0   ? "none"
            : memory_addresses ? "recorded"
                               : "synthetic")
        << ")";
    join_counts(out, "skipped", skipped);
    uint64_t unknown_total = 0;
    for (const auto& [what, count] : unknown) unknown_total += count;
    out << "; unknown event types: " << unknown_total;
    if (!unknown.empty()) out << " (" << joined(unknown, "{0}: {1}") << ")";
    join_counts(out, "warnings", warnings);
    return out.str();
}

ImportSummary import_trace_file(const std::string& input, const std::string& output, const ImportOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    ImportSummary summary;
    // The caller hears of the end however the import ends (its progress line erased before a message).
    struct ProgressEnd {
        const ImportProgress& report;
        ~ProgressEnd() { end(); }
        void end() const {
            if (report) report({}, -1.0);
        }
    } const progress_end{options.progress};
    const auto stage = [&options](std::string_view what, double fraction = -1.0) {
        if (options.progress) options.progress(what, fraction);
    };
    // Reading and parsing go together (the text is parsed as it is read): one stage, the input read
    // so far as its fraction and the events parsed so far in its words.
    uint64_t events_parsed = 0;
    ReadProgress read_progress;
    ParseProgress parse_progress;
    if (options.progress) {
        read_progress = [&stage, &events_parsed](uint64_t done, uint64_t total) {
            stage(fmt::format("reading {:.1f} MB: {} events", static_cast<double>(total) / 1e6, events_parsed),
                  total ? static_cast<double>(done) / static_cast<double>(total) : -1.0);
        };
        parse_progress = [&events_parsed](uint64_t events, uint64_t) { events_parsed = events; };
    }
    ForeignTrace trace;
    {
        JsonInput json(input, read_progress, {.max_json_bytes = options.max_json_bytes});
        try {
            parse_trace_stream(json, trace, parse_progress);
        } catch (const InputError&) {
            throw;  // names the input already
        } catch (const InteropError& e) {
            throw InteropError(input + ": " + e.what());
        }
    }
    summary.parse_seconds = seconds_since(start);
    stage("writing " + output);
    trace::OutputFile out(output, {.force = options.force, .inputs = {input}});
    std::vector<trace::detail::AllocationCategoryRow> pytorch_categories;  // put back after tagging
    tagger::WrittenRows written;                                           // as written: not read back
    try {
        trace::detail::TraceModel model = import_model(trace, input, summary);
        trace::detail::write_trace(out.temp_path(), model);
        pytorch_categories = std::move(model.allocation_categories);
        written.ranges = tagger_ranges(std::move(model.ranges));
        written.allocations = tagger_allocations(model.allocations);
        written.kernels = tagger_kernels(model.kernels);
        written.api_calls = tagger_api_calls(model.api_calls);
    } catch (const InteropError& e) {
        throw InteropError(input + ": " + e.what());
    } catch (const trace::SqliteError& e) {
        throw InteropError(input + ": writing " + out.temp_path() + ": " + e.what());
    }
    stage("tagging memory");
    const ImportTagging tagging = tag_imported_trace(out.temp_path(), std::move(written), pytorch_categories);
    summary.tagged = tagging.tagged;
    summary.tag_error = tagging.error;
    summary.pytorch_categories = tagging.pytorch_categories;
    out.commit();
    progress_end.end();
    summary.format = trace.format;
    summary.events = trace.events;
    summary.json_bytes = trace.json_bytes;
    summary.skipped = trace.skipped;
    summary.unknown = trace.unknown;
    summary.warnings = trace.warnings;
    summary.total_seconds = seconds_since(start);
    return summary;
}

}  // namespace tbdprof::interop
