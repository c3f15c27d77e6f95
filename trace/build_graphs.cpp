// Model building: CUDA graphs. Launches made while their stream captured are not kernels that ran:
// they are the template of the graph the capture made. Each replay (cuGraphLaunch) is one
// graph_launches row; CUPTI ties every kernel of a replay to the launch's sequence number, and those
// kernels become rows of the launching thread, matched in order to the captured launches of the graph
// so that their pointer arguments (and so their allocation edges) are the captured ones.
#include "kernel_stage.h"
#include "model_builder.h"

#include <algorithm>

namespace tbdprof::trace::detail {
namespace {

// Captured work of `records` (launches, copies or sets) in sequence order.
template <class Records>
std::vector<uint32_t> captured_in_order(const Records& records) {
    std::vector<uint32_t> captured;
    for (uint32_t i = 0; i < records.size(); ++i)
        if (records[i].record.captured != 0) captured.push_back(i);
    std::sort(captured.begin(), captured.end(),
              [&](uint32_t a, uint32_t b) { return records[a].record.sequence < records[b].record.sequence; });
    return captured;
}

// The capture sequences of one process: for every End with a graph, the captured launches, copies and
// sets (raw indices, in sequence order) of its stream between its Begin and its End.
std::unordered_map<uint64_t, ProcessContext::GraphTemplate> templates_of_graphs(const RawProcess& raw) {
    struct Open {
        uint64_t stream, sequence;
        uint32_t tid;
        bool per_thread;
    };
    std::vector<Open> open;
    const std::vector<uint32_t> launches = captured_in_order(raw.launches);
    const std::vector<uint32_t> copies = captured_in_order(raw.copies);
    const std::vector<uint32_t> sets = captured_in_order(raw.sets);
    std::vector<const Event<raw::RawGraphCapture>*> captures;
    for (const auto& c : raw.graph_captures) captures.push_back(&c);
    std::sort(captures.begin(), captures.end(),
              [](const auto* a, const auto* b) { return a->record.sequence < b->record.sequence; });

    std::unordered_map<uint64_t, ProcessContext::GraphTemplate> templates;
    for (const auto* c : captures) {
        const raw::RawGraphCapture& r = c->record;
        // Stream 0 of a _ptsz entry point is each thread's own stream.
        const auto same_stream = [&](const Open& o) {
            return o.stream == r.stream && o.per_thread == (r.per_thread != 0) && (!o.per_thread || o.tid == c->tid);
        };
        if (r.phase == raw::CapturePhase::Begin) {
            open.push_back({r.stream, r.sequence, c->tid, r.per_thread != 0});
            continue;
        }
        auto begin = std::find_if(open.rbegin(), open.rend(), same_stream);
        if (begin == open.rend()) continue;  // began before recording started
        const Open o = *begin;
        open.erase(std::next(begin).base());
        if (r.graph == 0) continue;  // invalidated: no graph
        // A graph handle reused after cuGraphDestroy: the latest capture counts.
        ProcessContext::GraphTemplate& t = templates[r.graph] = {};
        const auto select = [&](const auto& records, const std::vector<uint32_t>& captured,
                                std::vector<uint32_t>& out) {
            for (uint32_t i : captured) {
                const auto& e = records[i];
                if (e.record.sequence <= o.sequence || e.record.sequence >= r.sequence) continue;
                if (e.record.stream != o.stream || (o.per_thread && e.tid != o.tid)) continue;
                out.push_back(i);
            }
        };
        select(raw.launches, launches, t.launches);
        select(raw.copies, copies, t.copies);
        select(raw.sets, sets, t.sets);
    }
    return templates;
}

// The CUgraph an executable graph was instantiated from when it was launched at `host_ns` (handles may be
// reused after destruction: the latest instantiation before the launch).
std::optional<uint64_t> graph_of_exec(const RawProcess& raw, uint64_t exec, uint64_t host_ns) {
    std::optional<uint64_t> graph;
    uint64_t best = 0;
    for (const auto& i : raw.graph_instantiations) {
        if (i.record.graph_exec != exec || i.record.host_ns > host_ns || (graph && i.record.host_ns < best)) continue;
        graph = i.record.graph;
        best = i.record.host_ns;
    }
    return graph;
}

// A replay runs its nodes in capture order on one stream: device start order is node order.
template <class Record>
void sort_by_start(std::vector<const Record*>& records) {
    std::stable_sort(records.begin(), records.end(),
                     [](const auto* a, const auto* b) { return a->start_host_ns < b->start_host_ns; });
}

}  // namespace

void ModelBuilder::build_graph_launches() {
    struct Origin {
        ProcessContext* p;
        uint32_t index;
    };
    std::vector<Origin> origins;
    auto& rows = model_.graph_launches;
    for (ProcessContext& p : contexts_) {
        const RawProcess& raw = *p.raw;
        for (size_t i = 0; i < raw.launches.size(); ++i)
            counters_.captured_launches += raw.launches[i].record.captured != 0;
        for (const auto& c : raw.copies) counters_.captured_transfers += c.record.captured != 0;
        for (const auto& s : raw.sets) counters_.captured_transfers += s.record.captured != 0;
        if (raw.graph_launches.empty()) continue;
        const auto templates = templates_of_graphs(raw);
        p.graph_launch_ids.assign(raw.graph_launches.size(), 0);
        p.graph_launch_templates.assign(raw.graph_launches.size(), ProcessContext::GraphTemplate{});
        for (uint32_t i = 0; i < raw.graph_launches.size(); ++i) {
            const auto& g = raw.graph_launches[i];
            p.graph_launch_of_sequence[g.record.sequence] = i;
            GraphLaunchRow row;
            row.process = p.id;
            row.thread = thread_id(p, g.tid);
            row.stream = stream_id(p, g.record.stream, g.record.device);
            row.launch_ns = rel(g.record.host_ns);
            row.graph_exec = static_cast<int64_t>(g.record.graph_exec);
            if (auto graph = graph_of_exec(raw, g.record.graph_exec, g.record.host_ns)) {
                row.graph = static_cast<int64_t>(*graph);
                if (auto t = templates.find(*graph); t != templates.end()) p.graph_launch_templates[i] = t->second;
            }
            rows.push_back(row);
            origins.push_back({&p, i});
        }
        counters_.graph_launches += raw.graph_launches.size();
        counters_.events += raw.graph_launches.size() + raw.graph_captures.size() + raw.graph_instantiations.size();
    }
    std::vector<size_t> order(rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return rows[a].launch_ns != rows[b].launch_ns ? rows[a].launch_ns < rows[b].launch_ns
                                                      : rows[a].process < rows[b].process;
    });
    std::vector<GraphLaunchRow> sorted;
    sorted.reserve(rows.size());
    for (size_t i = 0; i < order.size(); ++i) {
        sorted.push_back(rows[order[i]]);
        sorted.back().id = static_cast<int64_t>(i) + 1;
        origins[order[i]].p->graph_launch_ids[origins[order[i]].index] = sorted.back().id;
    }
    rows = std::move(sorted);
}

int64_t ModelBuilder::graph_launch_of(const ProcessContext& p, uint64_t correlation_id) const {
    if (p.graph_launch_of_sequence.empty()) return -1;
    auto seq = p.raw->sequence_of_correlation.find(correlation_id);
    if (seq == p.raw->sequence_of_correlation.end()) return -1;
    auto it = p.graph_launch_of_sequence.find(seq->second);
    return it == p.graph_launch_of_sequence.end() ? -1 : static_cast<int64_t>(it->second);
}

void ModelBuilder::add_replayed_kernels(ProcessContext& p,
                                        const std::map<uint32_t, std::vector<const DeviceKernel*>>& by_graph_launch) {
    const RawProcess& raw = *p.raw;
    for (const auto& [index, records] : by_graph_launch) {
        const auto& g = raw.graph_launches[index];
        const std::vector<uint32_t>& nodes = p.graph_launch_templates[index].launches;
        std::vector<const DeviceKernel*> kernels = records;
        sort_by_start(kernels);
        const int64_t graph_launch = p.graph_launch_ids[index];
        for (size_t k = 0; k < kernels.size(); ++k) {
            const DeviceKernel& d = *kernels[k];
            // The k-th kernel is the k-th captured launch when the names agree; otherwise the template
            // is unknown (e.g. a capture that began before recording) and the row has no edges.
            int64_t template_launch = -1;
            if (k < nodes.size() && raw.string(raw.launches[nodes[k]].record.name_string) == raw.string(d.name_string))
                template_launch = nodes[k];
            KernelRow row;
            row.process = p.id;
            row.thread = thread_id(p, g.tid);
            row.stream = stream_id(p, g.record.stream, g.record.device);
            row.function = function_id(raw.string(d.name_string));
            take_device_record(p, row, d, g.record.host_ns);
            if (template_launch >= 0) {
                const raw::RawLaunch l = raw.launches[static_cast<size_t>(template_launch)].record;
                row.grid = pack_dimensions(l.grid);
                row.block = pack_dimensions(l.block);
                row.shared_bytes = l.shared_mem_bytes;
            }
            row.graph_launch = graph_launch;
            model_.kernel_stage->add_kernel(row, kReplayOrigin - static_cast<int64_t>(p.replayed_kernels.size()));
            model_.graph_launches[static_cast<size_t>(graph_launch - 1)].kernels++;
            p.replayed_kernels.push_back({g.record.host_ns, g.file_offset, template_launch, 0});
            ++device_timed_;
        }
    }
}

size_t ModelBuilder::add_replayed_transfers(ProcessContext& p, std::vector<const raw::RawDeviceActivity*>& copies,
                                            std::vector<const raw::RawDeviceActivity*>& sets) {
    if (p.graph_launch_of_sequence.empty()) return 0;
    const RawProcess& raw = *p.raw;
    // Takes the replayed records out of `orphans`, grouped by graph launch.
    const auto take = [&](std::vector<const raw::RawDeviceActivity*>& orphans) {
        std::map<uint32_t, std::vector<const raw::RawDeviceActivity*>> replayed;
        std::erase_if(orphans, [&](const raw::RawDeviceActivity* d) {
            const int64_t gi = graph_launch_of(p, d->correlation_id);
            if (gi >= 0) replayed[static_cast<uint32_t>(gi)].push_back(d);
            return gi >= 0;
        });
        return replayed;
    };
    size_t added = 0;
    // The fields every replayed copy or set row has from its graph launch and device record.
    const auto fill = [&](auto& row, const raw::RawDeviceActivity& d, const Event<raw::RawGraphLaunch>& g) {
        row.process = p.id;
        row.thread = thread_id(p, g.tid);
        row.device = d.device;
        row.stream = stream_id(p, g.record.stream, g.record.device);
        row.bytes = static_cast<int64_t>(d.bytes);
        row.start_ns = rel(d.start_host_ns);
        row.duration_ns = static_cast<int64_t>(d.end_host_ns - d.start_host_ns);
        row.queued_ns = static_cast<int64_t>(d.start_host_ns - g.record.host_ns);
        row.async = 1;
        row.api = api_name_of(g.record.api);
        row.correlation = static_cast<int64_t>(d.correlation_id);
        ++added;
    };
    for (auto& [index, records] : take(copies)) {
        const auto& g = raw.graph_launches[index];
        const std::vector<uint32_t>& nodes = p.graph_launch_templates[index].copies;
        sort_by_start(records);
        for (size_t k = 0; k < records.size(); ++k) {
            CopyRow row;
            fill(row, *records[k], g);
            row.kind = copy_kind_name_of(records[k]->copy_kind);
            if (k < nodes.size() && raw.copies[nodes[k]].record.bytes == records[k]->bytes) {  // the k-th captured copy
                row.src = static_cast<int64_t>(raw.copies[nodes[k]].record.src);
                row.dst = static_cast<int64_t>(raw.copies[nodes[k]].record.dst);
            }
            model_.copies.push_back(row);
        }
    }
    for (auto& [index, records] : take(sets)) {
        const auto& g = raw.graph_launches[index];
        const std::vector<uint32_t>& nodes = p.graph_launch_templates[index].sets;
        sort_by_start(records);
        for (size_t k = 0; k < records.size(); ++k) {
            SetRow row;
            fill(row, *records[k], g);
            if (k < nodes.size() && raw.sets[nodes[k]].record.bytes == records[k]->bytes) {
                row.dst = static_cast<int64_t>(raw.sets[nodes[k]].record.dst);
                row.value = raw.sets[nodes[k]].record.value;
            }
            model_.sets.push_back(row);
        }
    }
    return added;
}

}  // namespace tbdprof::trace::detail
