// Kernel launches: validation as the real driver does it, then the cost model and the timeline.
// Kernel bodies are not executed.
#include "driver_api.h"
#include "graph_state.h"

#include <algorithm>
#include <cstring>

using namespace tbdsim::driver;

namespace {

constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint32_t kMaxBlockZ = 64;
constexpr uint32_t kMaxGridYZ = 65535;

struct LaunchRequest {
    const void* function = nullptr;
    uint32_t grid[3] = {1, 1, 1};
    uint32_t block[3] = {1, 1, 1};
    uint32_t shared_mem = 0;
    CUstream stream = nullptr;
    void** params = nullptr;
    void** extra = nullptr;
    bool per_thread = false;
};

// The argument bytes of a launch, packed by the kernel's parameter layout, as the real driver copies
// them when a launch is captured into a graph node.
std::vector<uint8_t> copy_arguments(const KernelInfo& info, const LaunchRequest& req) {
    std::vector<uint8_t> bytes;
    if (req.params) {
        size_t total = 0;
        for (const KernelParam& p : info.params) total = std::max<size_t>(total, size_t{p.offset} + p.size);
        bytes.resize(total);
        for (size_t i = 0; i < info.params.size(); ++i)
            if (req.params[i]) std::memcpy(bytes.data() + info.params[i].offset, req.params[i], info.params[i].size);
        return bytes;
    }
    // {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END}
    const void* buffer = nullptr;
    size_t size = 0;
    for (int i = 0; req.extra && i < 16 && req.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (req.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = req.extra[i + 1];
        else if (req.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && req.extra[i + 1])
            size = *static_cast<const size_t*>(req.extra[i + 1]);
    }
    if (buffer && size) bytes.assign(static_cast<const uint8_t*>(buffer), static_cast<const uint8_t*>(buffer) + size);
    return bytes;
}

void capture_launch(Capture& capture, const Function& f, const LaunchRequest& req, const KernelCost& cost) {
    GraphNode& node = add_captured_node(capture, GraphNode::Kind::Kernel);
    node.function = &f;
    std::copy(req.grid, req.grid + 3, node.grid);
    std::copy(req.block, req.block + 3, node.block);
    node.shared_mem = req.shared_mem;
    node.cost = cost;
    node.params = copy_arguments(*f.info, req);
}

CUresult launch(const LaunchRequest& req) {
    KernelCost cost = take_launch_annotation();  // consumed even when the launch fails
    TbdsimRecord r{};
    Stream* collective_stream = nullptr;  // a collective's stream: its end comes from the resolver
    {
        std::lock_guard lock(state().mutex);
        Context* ctx = nullptr;
        if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
        auto* f = static_cast<const Function*>(req.function);
        if (!req.function || !state().live_functions.count(f)) return CUDA_ERROR_INVALID_HANDLE;
        Stream* stream = resolve_stream(req.stream, req.per_thread);
        if (!stream) return CUDA_ERROR_INVALID_HANDLE;
        const uint32_t* g = req.grid;
        const uint32_t* b = req.block;
        if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2]) return CUDA_ERROR_INVALID_VALUE;
        if (g[1] > kMaxGridYZ || g[2] > kMaxGridYZ || b[0] > kMaxThreadsPerBlock ||
            b[1] > kMaxThreadsPerBlock || b[2] > kMaxBlockZ)
            return CUDA_ERROR_INVALID_VALUE;
        uint64_t threads = uint64_t(b[0]) * b[1] * b[2];
        if (threads > f->info->max_threads_per_block) return CUDA_ERROR_INVALID_VALUE;
        if (req.shared_mem + f->info->static_shared_bytes > 232448u) return CUDA_ERROR_INVALID_VALUE;
        if (!f->info->params.empty() && !req.params && !req.extra) return CUDA_ERROR_INVALID_VALUE;
        if (req.params && req.extra) return CUDA_ERROR_INVALID_VALUE;
        if (f->module->context->device != stream->context->device) return CUDA_ERROR_INVALID_HANDLE;
        CUresult capture_rc = CUDA_SUCCESS;
        if (Capture* capture = capture_for_work(*stream, capture_rc)) {
            capture_launch(*capture, *f, req, cost);  // recorded as a node; nothing runs
            return CUDA_SUCCESS;
        }
        if (capture_rc != CUDA_SUCCESS) return capture_rc;
        auto [start, end] = cost.resolve_end != nullptr ? start_collective(*stream, cost) : place_kernel(*stream, g, b, cost);
        if (cost.resolve_end != nullptr) collective_stream = stream;
        r.kind = TBDSIM_RECORD_KERNEL;
        r.device = static_cast<uint32_t>(stream->context->device->ordinal);
        r.context_id = stream->context->id;
        r.stream_id = stream->id;
        r.correlation_id = next_correlation_id();
        r.start_ns = start;
        r.end_ns = end;
        for (int i = 0; i < 3; ++i) {
            r.grid[i] = g[i];
            r.block[i] = b[i];
        }
        r.shared_mem_bytes = req.shared_mem;
        r.static_shared_mem_bytes = f->info->static_shared_bytes;
        r.registers_per_thread = f->info->registers;
        r.flops = cost.flops;
        r.precision = cost.flops > 0 ? cost.precision : uint32_t(TBDSIM_PRECISION_NONE);
        r.name = f->record_name;
        r.is_async = 1;
        r.host_launch_ns = now_ns();
    }
    if (collective_stream != nullptr) {
        // Outside the state mutex: the resolver waits for the other ranks (other threads may be
        // launching theirs in this process meanwhile).
        const uint64_t end = cost.resolve_end(r.start_ns, cost.resolve_user);
        if (end == 0) return CUDA_ERROR_LAUNCH_FAILED;
        std::lock_guard lock(state().mutex);
        r.end_ns = finish_collective(*collective_stream, r.start_ns, end);
    }
    publish(r);
    return CUDA_SUCCESS;
}

CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned shared, CUstream stream, void** params, void** extra,
                       bool per_thread) {
    LaunchRequest req;
    req.function = f;
    req.grid[0] = gx, req.grid[1] = gy, req.grid[2] = gz;
    req.block[0] = bx, req.block[1] = by, req.block[2] = bz;
    req.shared_mem = shared;
    req.stream = stream;
    req.params = params;
    req.extra = extra;
    req.per_thread = per_thread;
    return launch(req);
}

CUresult launch_kernel_ex(const CUlaunchConfig* config, CUfunction f, void** params, void** extra,
                          bool per_thread) {
    if (!config) return CUDA_ERROR_INVALID_VALUE;
    return launch_kernel(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                         config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream,
                         params, extra, per_thread);
}

}  // namespace

extern "C" {
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, CUstream, void**, void**);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction, void**, void**);
}

SIM_API CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned shared, CUstream stream,
                                        void** params, void** extra) {
    return launch_kernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra, false);
}

SIM_API CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                             unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                             CUstream stream, void** params, void** extra) {
    return launch_kernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra, true);
}

SIM_API CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params,
                                          void** extra) {
    return launch_kernel_ex(config, f, params, extra, false);
}

SIM_API CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params,
                                               void** extra) {
    return launch_kernel_ex(config, f, params, extra, true);
}

SIM_API CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                                   CUstream stream, void** params) {
    return launch_kernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, nullptr, false);
}
