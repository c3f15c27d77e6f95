// Model building: processes, threads, devices, the shared id helpers, and the run row.
#include "build_library_operands.h"
#include "build_nccl.h"
#include "demangle.h"
#include "kernel_stage.h"
#include "model_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace tbdprof::trace::detail {
namespace {

// library_calls.precision: the collector's RawPrecision (Fp32 = 1 ... Other = 8) by name; NULL in
// records without it (Unknown, 0, whose index wraps past the end) or with a value not known here.
std::optional<std::string_view> precision_name(raw::RawPrecision precision) {
    constexpr std::string_view kNames[] = {"fp32", "tf32", "fp16", "bf16", "fp64", "fp8", "int8", "other"};
    static_assert(std::size(kNames) == static_cast<size_t>(raw::RawPrecision::Other));
    const size_t index = static_cast<size_t>(precision) - 1;
    return index < std::size(kNames) ? std::optional(kNames[index]) : std::nullopt;
}

// The collector stores argv joined with NUL bytes; the trace shows it joined with spaces.
std::string join_argv(std::string_view nul_joined) {
    std::string text(nul_joined);
    while (!text.empty() && text.back() == '\0') text.pop_back();
    std::replace(text.begin(), text.end(), '\0', ' ');
    return text;
}

}  // namespace

int64_t pack_dimensions(const uint32_t dims[3]) {
    const uint64_t y = dims[1] == 0 ? 0 : dims[1] - 1;
    const uint64_t z = dims[2] == 0 ? 0 : dims[2] - 1;
    return static_cast<int64_t>(static_cast<uint64_t>(dims[0]) + ((y & 0xffff) << 32) + ((z & 0xffff) << 48));
}

ModelBuilder::ModelBuilder(TraceModel& model, std::vector<RawProcess>& processes) : model_(model) {
    model_.kernel_stage = std::make_shared<KernelStage>();
    // Process ids follow start order, so the first process of the run is process 1.
    std::vector<RawProcess*> ordered;
    for (auto& p : processes) ordered.push_back(&p);
    std::stable_sort(ordered.begin(), ordered.end(), [](const RawProcess* a, const RawProcess* b) {
        return a->file.header().start_host_ns < b->file.header().start_host_ns;
    });
    for (RawProcess* p : ordered) {
        ProcessContext context;
        context.raw = p;
        p->launches.read_from(p->file);  // the process stays here (and its file) until the build ends
        context.id = static_cast<int64_t>(contexts_.size()) + 1;
        contexts_.push_back(std::move(context));
    }
    run_start_ = ordered.empty() ? 0 : ordered.front()->file.header().start_host_ns;
}

int64_t ModelBuilder::thread_id(ProcessContext& p, uint32_t tid) {
    auto [it, inserted] = p.thread_ids.try_emplace(tid, static_cast<int64_t>(model_.threads.size()) + 1);
    if (inserted) model_.threads.push_back({it->second, p.id, tid, std::nullopt, std::nullopt});
    return it->second;
}

int64_t ModelBuilder::stream_id(ProcessContext& p, uint64_t handle, int32_t device) {
    auto [it, inserted] = p.stream_ids.try_emplace(handle, static_cast<int64_t>(model_.streams.size()) + 1);
    if (inserted) model_.streams.push_back({it->second, p.id, device, static_cast<int64_t>(handle)});
    return it->second;
}

int64_t ModelBuilder::function_id(std::string_view mangled) {
    if (mangled.empty()) mangled = "<unknown kernel>";  // its name record was lost (crash)
    auto it = function_of_mangled_.find(mangled);
    if (it != function_of_mangled_.end()) return it->second;
    const int64_t id = static_cast<int64_t>(model_.functions.size()) + 1;
    const int64_t mangled_id = model_.strings.intern(mangled);
    const int64_t name_id = model_.strings.intern(demangle(mangled));
    model_.functions.push_back({id, name_id, mangled_id});
    function_of_mangled_.emplace(mangled, id);
    return id;
}

int64_t ModelBuilder::string_id(const ProcessContext& p, uint64_t raw_string) {
    return model_.strings.intern(p.raw->string(raw_string));
}

void ModelBuilder::build_processes_and_threads() {
    for (ProcessContext& p : contexts_) {
        const RawProcess& raw = *p.raw;
        const auto& header = raw.file.header();
        ProcessRow row{p.id,
                       header.pid,
                       std::nullopt,
                       std::string(),
                       std::string(),
                       rel(header.start_host_ns),
                       rel(raw.last_host_ns),
                       raw.end != RawFileEnd::Clean};
        if (header.parent_pid != 0) row.parent_pid = header.parent_pid;
        if (raw.has_info) {
            row.command_line = join_argv(raw.string(raw.info.command_line_string));
            row.executable = std::string(raw.string(raw.info.executable_string));
            if (raw.info.world_size > 0)
                model_.process_ranks.push_back({p.id, raw.info.rank, raw.info.local_rank, raw.info.world_size});
        }
        model_.processes.push_back(std::move(row));
        for (const auto& t : raw.threads) {
            const int64_t id = thread_id(p, t.tid);
            ThreadRow& thread = model_.threads[static_cast<size_t>(id - 1)];
            if (t.record.name_string != 0) thread.name = std::string(raw.string(t.record.name_string));
            thread.first_seen_ns = rel(t.record.first_seen_host_ns);
        }
        counters_.events += raw.threads.size() + 1;
    }
}

void ModelBuilder::build_devices() {
    std::map<int32_t, DeviceRow> by_ordinal;  // every process reports the devices it sees
    for (ProcessContext& p : contexts_) {
        for (const raw::RawDeviceInfo& d : p.raw->devices) {
            const double peak = 2.0 * d.sm_count * d.fp32_lanes_per_sm * (d.clock_khz * 1000.0);
            by_ordinal.try_emplace(d.ordinal, DeviceRow{d.ordinal, std::string(p.raw->string(d.name_string)),
                                                        d.cc_major, d.cc_minor, d.sm_count,
                                                        static_cast<int64_t>(d.memory_bytes), d.clock_khz,
                                                        d.fp32_lanes_per_sm, peak, d.simulated != 0});
            model_.run.simulated_device = model_.run.simulated_device || d.simulated != 0;
            ++counters_.events;
        }
    }
    for (auto& [ordinal, row] : by_ordinal) model_.devices.push_back(std::move(row));
}

namespace {

// The op text of cuDNN library calls (docs/trace-format.md).
std::string_view cudnn_op_name(raw::LibraryOp op) {
    switch (op) {
        case raw::LibraryOp::ConvolutionForward: return "convolution_forward";
        case raw::LibraryOp::ConvolutionBackwardData: return "convolution_backward_data";
        case raw::LibraryOp::ConvolutionBackwardFilter: return "convolution_backward_filter";
        case raw::LibraryOp::ConvolutionBackwardBias: return "convolution_backward_bias";
        case raw::LibraryOp::BatchNormForwardTraining: return "batch_norm_forward_training";
        case raw::LibraryOp::BatchNormForwardInference: return "batch_norm_forward_inference";
        case raw::LibraryOp::BatchNormBackward: return "batch_norm_backward";
        case raw::LibraryOp::PoolingForward: return "pooling_forward";
        case raw::LibraryOp::PoolingBackward: return "pooling_backward";
        case raw::LibraryOp::ActivationForward: return "activation_forward";
        case raw::LibraryOp::ActivationBackward: return "activation_backward";
        case raw::LibraryOp::SoftmaxForward: return "softmax_forward";
        case raw::LibraryOp::SoftmaxBackward: return "softmax_backward";
        case raw::LibraryOp::AddTensor: return "add_tensor";
        case raw::LibraryOp::Matmul: return "matmul";
        case raw::LibraryOp::Pointwise: return "pointwise";
        case raw::LibraryOp::OpTensor: return "op_tensor";
        case raw::LibraryOp::ReduceTensor: return "reduce_tensor";
        case raw::LibraryOp::DropoutForward: return "dropout_forward";
        case raw::LibraryOp::DropoutBackward: return "dropout_backward";
        case raw::LibraryOp::TransformTensor: return "transform_tensor";
        case raw::LibraryOp::RnnForward: return "rnn_forward";
        case raw::LibraryOp::RnnBackwardData: return "rnn_backward_data";
        case raw::LibraryOp::RnnBackwardWeights: return "rnn_backward_weights";
        case raw::LibraryOp::LrnForward: return "lrn_forward";
        case raw::LibraryOp::LrnBackward: return "lrn_backward";
        case raw::LibraryOp::DivisiveNormForward: return "divisive_normalization_forward";
        case raw::LibraryOp::DivisiveNormBackward: return "divisive_normalization_backward";
        case raw::LibraryOp::CtcLoss: return "ctc_loss";
        case raw::LibraryOp::AttentionForward:
            return "attention_forward";
        case raw::LibraryOp::AttentionBackward:
            return "attention_backward";
        default: return "unknown";
    }
}

}  // namespace

// An operand extent of the raw record: 0 there means not known (NULL in the trace).
static Opt known_bytes(uint64_t bytes) {
    return bytes != 0 ? Opt(static_cast<int64_t>(bytes)) : Opt();
}

// The trace's name of a library call's operation: cuBLAS's here, cuDNN's and NCCL's from their own
// tables.
using CublasOp = std::pair<raw::LibraryOp, std::string_view>;
constexpr CublasOp kCublasOps[] = {{raw::LibraryOp::Gemm, "gemm"},
                                   {raw::LibraryOp::GemmStridedBatched, "gemm_strided_batched"},
                                   {raw::LibraryOp::GemmBatched, "gemm_batched"},
                                   {raw::LibraryOp::Dot, "dot"},
                                   {raw::LibraryOp::Axpy, "axpy"},
                                   {raw::LibraryOp::Scal, "scal"},
                                   {raw::LibraryOp::Nrm2, "nrm2"},
                                   {raw::LibraryOp::Asum, "asum"},
                                   {raw::LibraryOp::Copy, "copy"},
                                   {raw::LibraryOp::Gemv, "gemv"},
                                   {raw::LibraryOp::Ger, "ger"},
                                   {raw::LibraryOp::Symm, "symm"},
                                   {raw::LibraryOp::Hemm, "hemm"},
                                   {raw::LibraryOp::Syrk, "syrk"},
                                   {raw::LibraryOp::Herk, "herk"},
                                   {raw::LibraryOp::Syr2k, "syr2k"},
                                   {raw::LibraryOp::Her2k, "her2k"},
                                   {raw::LibraryOp::Syrkx, "syrkx"},
                                   {raw::LibraryOp::Herkx, "herkx"},
                                   {raw::LibraryOp::Trmm, "trmm"},
                                   {raw::LibraryOp::Trsm, "trsm"},
                                   {raw::LibraryOp::TrsmBatched, "trsm_batched"},
                                   {raw::LibraryOp::Geam, "geam"},
                                   {raw::LibraryOp::Dgmm, "dgmm"},
                                   {raw::LibraryOp::GemmGroupedBatched, "gemm_grouped_batched"}};

static std::string_view library_op_name(raw::LibraryOp op) {
    const auto cublas = std::ranges::find(kCublasOps, op, &CublasOp::first);
    if (cublas != std::ranges::end(kCublasOps)) return cublas->second;
    return is_nccl_op(op) ? nccl_library_op(op) : cudnn_op_name(op);
}

void ModelBuilder::build_library_calls() {
    struct Ref {
        ProcessContext* p;
        const Event<raw::RawLibraryCall>* call;
    };
    std::vector<Ref> all;
    std::map<int64_t, LibraryCallKeys> call_keys;  // by process id: to join the calls' extra operands
    for (ProcessContext& p : contexts_)
        for (const auto& c : p.raw->library_calls) all.push_back({&p, &c});
    std::stable_sort(all.begin(), all.end(), [](const Ref& a, const Ref& b) {
        return a.call->record.begin_host_ns != b.call->record.begin_host_ns
                   ? a.call->record.begin_host_ns < b.call->record.begin_host_ns
                   : a.p->id < b.p->id;
    });
    for (const Ref& ref : all) {
        const raw::RawLibraryCall& c = ref.call->record;
        const int64_t id = static_cast<int64_t>(model_.library_calls.size()) + 1;
        const std::string_view op = library_op_name(c.op);
        model_.library_calls.push_back({id,
                                        ref.p->id,
                                        thread_id(*ref.p, ref.call->tid),
                                        std::string(ref.p->raw->string(c.name_string)),
                                        op,
                                        rel(c.begin_host_ns),
                                        rel(c.end_host_ns),
                                        static_cast<int64_t>(c.stream),
                                        c.m,
                                        c.n,
                                        c.k,
                                        c.batch,
                                        c.a_type,
                                        c.b_type,
                                        c.c_type,
                                        c.compute_type,
                                        c.transa,
                                        c.transb,
                                        c.flops,
                                        static_cast<int64_t>(c.a),
                                        static_cast<int64_t>(c.b),
                                        static_cast<int64_t>(c.c),
                                        static_cast<int64_t>(c.workspace),
                                        static_cast<int64_t>(c.workspace_bytes),
                                        c.math_mode != 0 ? Opt(int64_t(c.math_mode) - 1) : Opt(),
                                        precision_name(c.precision),
                                        known_bytes(c.a_bytes),
                                        known_bytes(c.b_bytes),
                                        known_bytes(c.c_bytes)});
        if (std::optional<NcclCallRow> nccl = nccl_call_row(id, ref.p->id, c, ref.p->raw->nccl_comms))
            model_.nccl_calls.push_back(*nccl);
        call_keys[ref.p->id][{ref.call->tid, c.begin_host_ns}] = id;
        if (c.last_sequence != 0)
            ref.p->library_spans[ref.call->tid].push_back({c.first_sequence, c.last_sequence, id});
        ++counters_.events;
    }
    for (ProcessContext& p : contexts_) {
        add_library_operands(*p.raw, p.id, call_keys[p.id], model_.library_operands);
        for (auto& [tid, spans] : p.library_spans)
            std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
}

Opt ModelBuilder::library_call_of(const ProcessContext& p, uint32_t tid, uint64_t sequence) const {
    auto thread = p.library_spans.find(tid);
    if (thread == p.library_spans.end()) return std::nullopt;
    const auto& spans = thread->second;
    auto it = std::upper_bound(spans.begin(), spans.end(), sequence,
                               [](uint64_t s, const ProcessContext::CallSpan& span) { return s < span.first; });
    if (it == spans.begin()) return std::nullopt;
    --it;
    if (sequence <= it->last) return it->id;
    return std::nullopt;
}

void ModelBuilder::build_api_calls_and_ranges() {
    for (ProcessContext& p : contexts_) {
        for (const auto& s : p.raw->syncs) {
            std::string_view kind = "sync";
            switch (s.record.sync_kind) {
                case raw::SyncKind::Device: kind = "device_sync"; break;
                case raw::SyncKind::Stream: kind = "stream_sync"; break;
                case raw::SyncKind::Event: kind = "event_sync"; break;
                case raw::SyncKind::StreamWaitEvent: kind = "stream_wait_event"; break;
                case raw::SyncKind::Implicit: kind = "implicit_sync"; break;
            }
            model_.api_calls.push_back({static_cast<int64_t>(model_.api_calls.size()) + 1, p.id, thread_id(p, s.tid),
                                        kind, rel(s.record.begin_host_ns), rel(s.record.end_host_ns),
                                        static_cast<int64_t>(s.record.handle)});
        }
        // A range is written when it ends, so nested ranges come before their parents in the file:
        // ordered by begin here (ties: the outer, longer one first), ids follow that order.
        const size_t first = model_.ranges.size();
        for (const auto& r : p.raw->ranges) {
            const uint32_t tid = r.record.begin_tid != 0 ? r.record.begin_tid : r.tid;
            RangeRow row{0,
                         p.id,
                         thread_id(p, tid),
                         rel(r.record.begin_host_ns),
                         std::nullopt,
                         std::string(p.raw->string(r.record.name_string)),
                         std::nullopt};
            if (r.record.domain_string != 0) row.domain = std::string(p.raw->string(r.record.domain_string));
            if (r.record.end_host_ns != 0) row.end_ns = rel(r.record.end_host_ns);
            model_.ranges.push_back(std::move(row));
        }
        std::stable_sort(model_.ranges.begin() + static_cast<std::ptrdiff_t>(first), model_.ranges.end(),
                         [](const RangeRow& a, const RangeRow& b) {
                             if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
                             return a.end_ns.value_or(INT64_MAX) > b.end_ns.value_or(INT64_MAX);
                         });
        counters_.events += p.raw->syncs.size() + p.raw->ranges.size();
    }
    for (size_t i = 0; i < model_.ranges.size(); ++i) model_.ranges[i].id = static_cast<int64_t>(i) + 1;
}

void ModelBuilder::build_samples_and_drops() {
    for (ProcessContext& p : contexts_) {
        for (const auto& s : p.raw->cpu_samples) {
            model_.cpu_samples.push_back({p.id, rel(s.host_ns), static_cast<int64_t>(s.user_cpu_duration_ns),
                                          static_cast<int64_t>(s.system_cpu_duration_ns)});
        }
        for (const auto& d : p.raw->dropped) {
            std::string_view cause = "unknown";
            switch (d.cause) {
                case raw::DropCause::RingFull: cause = "ring_full"; break;
                case raw::DropCause::CuptiBuffers: cause = "cupti_buffers"; break;
                case raw::DropCause::StackTableFull: cause = "stack_table_full"; break;
                case raw::DropCause::WriteFailed: cause = "write_failed"; break;
            }
            model_.dropped.push_back({p.id, cause, static_cast<int64_t>(d.count)});
        }
        counters_.events += p.raw->cpu_samples.size() + p.raw->dropped.size();
        build_capture_windows(p);
        note_holds_and_drops(p);
    }
}

namespace {

std::string seconds_text(int64_t ns) {
    return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

}  // namespace

void ModelBuilder::note_holds_and_drops(const ProcessContext& p) {
    const std::string process = "process " + std::to_string(p.raw->file.header().pid);
    const raw::RawProcessEnd& end = p.raw->end_record;
    if (end.ring_holds > 0 || end.cupti_holds > 0) {
        recording_notes_.emplace_back(
            "collector_held", "threads of " + process + " were held " + seconds_text(static_cast<int64_t>(end.ring_held_ns)) +
                                  " in " + std::to_string(end.ring_holds) + " waits for the collector's writer and " +
                                  seconds_text(static_cast<int64_t>(end.cupti_held_ns)) + " in " +
                                  std::to_string(end.cupti_holds) + " waits for CUPTI buffers (back-pressure; summed over threads)");
    }
    for (const raw::RawDropped& d : p.raw->dropped) {
        if (d.count == 0 || d.cause == raw::DropCause::WriteFailed) continue;  // said by the write warning
        std::string text = process + " dropped " + std::to_string(d.count) + " events (" +
                           (d.cause == raw::DropCause::CuptiBuffers     ? "CUPTI buffers full"
                            : d.cause == raw::DropCause::StackTableFull ? "stack table full"
                                                                        : "collector ring full") +
                           ")";
        if (d.last_host_ns != 0)
            text += " between " + seconds_text(rel(d.first_host_ns)) + " and " + seconds_text(rel(d.last_host_ns)) +
                    " after the start of the run";
        recording_notes_.emplace_back("collector_dropped", std::move(text));
    }
}

// Opened/closed pairs; a window still open when the process ended ends with it. Records of one
// thread are in order, but two threads may open and close: sorted by time, a close ends the open one.
void ModelBuilder::build_capture_windows(ProcessContext& p) {
    auto windows = p.raw->capture_windows;
    std::stable_sort(
        windows.begin(), windows.end(),
        [](const raw::RawCaptureWindow& a, const raw::RawCaptureWindow& b) { return a.host_ns < b.host_ns; });
    std::optional<raw::RawCaptureWindow> open;
    auto close = [&](uint64_t end_ns) {
        model_.capture_windows.push_back({p.id, rel(open->host_ns), rel(std::max(end_ns, open->host_ns)),
                                          std::string(p.raw->string(open->reason_string))});
        open.reset();
    };
    for (const raw::RawCaptureWindow& w : windows) {
        if (w.opened != 0 && !open) open = w;
        else if (w.opened == 0 && open)
            close(w.host_ns);
    }
    if (open) close(p.raw->last_host_ns);
    counters_.events += windows.size();
}

void ModelBuilder::finish_run_row() {
    RunRow& run = model_.run;
    run.start_monotonic_ns = static_cast<int64_t>(run_start_);
    uint64_t last = run_start_;
    for (const ProcessContext& p : contexts_) {
        last = std::max(last, p.raw->last_host_ns);
        if (p.raw->end != RawFileEnd::Clean) ++run.truncated_files;
        if (p.id == 1) {
            run.start_unix_ns = static_cast<int64_t>(p.raw->file.header().start_unix_ns);
            if (p.raw->has_info) run.host = std::string(p.raw->string(p.raw->info.hostname_string));
            if (run.command_line.empty()) run.command_line = model_.processes.front().command_line.value_or("");
        }
    }
    run.duration_ns = rel(last);
    run.host_timed_kernels = 0;
    run.host_timed_kernels = static_cast<int64_t>(model_.kernel_stage->kernels_without_duration());
    bool cupti_announced = false;
    for (const ProcessContext& p : contexts_)
        cupti_announced = cupti_announced || (p.raw->has_clock_source && p.raw->clock_source.source == raw::ClockSource::Cupti);
    if (device_timed_ > 0 && host_timed_ > 0) run.clock_source = "mixed";
    else if (device_timed_ > 0) run.clock_source = "cupti";
    else if (host_timed_ > 0) run.clock_source = "host";
    else run.clock_source = cupti_announced ? "cupti" : "host";
}

}  // namespace tbdprof::trace::detail
