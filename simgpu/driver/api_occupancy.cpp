// Occupancy queries: how many blocks of a kernel fit on one SM, given the device model's limits per
// SM (threads, blocks, registers, shared memory) and the kernel's registers and static shared memory
// from its cubin; the block size that maximizes that; cluster sizes and counts.
#include "driver_api.h"

#include <algorithm>

using namespace tbdsim::driver;

namespace {

struct SmLimits {
    int threads, blocks, registers;
    size_t shared;            // per SM, usable by blocks
    size_t shared_per_block;  // opt-in maximum per block
};

// The documented per-SM limits for the model's compute capability (CUDA programming guide, table of
// technical specifications); 1 KiB of shared memory per block is reserved by the system.
SmLimits limits_of(const Device& d) {
    const GpuModel& m = *d.model;
    const bool hopper = m.cc_major >= 9;
    const bool ada = m.cc_major == 8 && m.cc_minor == 9;
    return {ada ? 1536 : 2048, ada ? 24 : 32, 65536, hopper ? 233472u : 167936u, hopper ? 232448u : 166912u};
}

constexpr size_t kReservedSharedPerBlock = 1024;
constexpr int kRegisterGranularity = 256;  // registers are allocated per warp in units of 256

const Function* function_of(CUfunction f) {
    auto* fn = reinterpret_cast<const Function*>(f);
    return f && state().live_functions.count(fn) ? fn : nullptr;
}

int blocks_per_sm(const Function& fn, const SmLimits& sm, int block_size, size_t dynamic_shared) {
    if (block_size <= 0 || block_size > static_cast<int>(fn.info->max_threads_per_block)) return 0;
    const size_t shared = dynamic_shared + fn.info->static_shared_bytes;
    if (shared > sm.shared_per_block) return 0;
    const int warps = (block_size + 31) / 32;
    const int regs = static_cast<int>(fn.info->registers ? fn.info->registers : 32);
    const int regs_per_warp = (regs * 32 + kRegisterGranularity - 1) / kRegisterGranularity * kRegisterGranularity;
    const int by_threads = sm.threads / (warps * 32);
    const int by_regs = sm.registers / std::max(1, regs_per_warp * warps);
    const int by_shared = static_cast<int>(sm.shared / (shared + kReservedSharedPerBlock));
    return std::max(0, std::min({sm.blocks, by_threads, by_regs, by_shared}));
}

CUresult active_blocks(int* blocks, CUfunction f, int block_size, size_t dynamic_shared) {
    if (!blocks) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Function* fn = function_of(f);
    if (!fn) return CUDA_ERROR_INVALID_HANDLE;
    if (block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
    *blocks = blocks_per_sm(*fn, limits_of(*fn->module->context->device), block_size, dynamic_shared);
    return CUDA_SUCCESS;
}

// The block size (a multiple of 32, at most block_limit) with the most resident threads per SM; ties
// go to the larger block, as the CUDA occupancy calculator does. min_grid: blocks to fill every SM.
CUresult potential_block_size(int* min_grid, int* block_size, CUfunction f, CUoccupancyB2DSize shared_of,
                              size_t dynamic_shared, int block_limit) {
    if (!min_grid || !block_size) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Function* fn = function_of(f);
    if (!fn) return CUDA_ERROR_INVALID_HANDLE;
    const Device& device = *fn->module->context->device;
    const SmLimits sm = limits_of(device);
    int limit = static_cast<int>(fn->info->max_threads_per_block);
    if (block_limit > 0) limit = std::min(limit, block_limit);
    int best_size = 0, best_blocks = 0, best_threads = 0;
    for (int size = 32; size <= limit; size += 32) {
        const size_t shared = shared_of ? shared_of(size) : dynamic_shared;
        const int blocks = blocks_per_sm(*fn, sm, size, shared);
        if (blocks * size >= best_threads && blocks > 0) {
            best_threads = blocks * size;
            best_size = size;
            best_blocks = blocks;
        }
    }
    *block_size = best_size;
    *min_grid = best_blocks * device.model->sm_count;
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction f, int block_size,
                                                                     size_t dynamic_shared) {
    return active_blocks(blocks, f, block_size, dynamic_shared);
}

// CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE changes nothing here: the model has no L1/shared carve-out.
SIM_API CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, CUfunction f, int block_size,
                                                                              size_t dynamic_shared,
                                                                              unsigned int flags) {
    if (flags & ~unsigned(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) return CUDA_ERROR_INVALID_VALUE;
    return active_blocks(blocks, f, block_size, dynamic_shared);
}

SIM_API CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block_size, CUfunction f,
                                                          CUoccupancyB2DSize shared_of, size_t dynamic_shared,
                                                          int block_limit) {
    return potential_block_size(min_grid, block_size, f, shared_of, dynamic_shared, block_limit);
}

SIM_API CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int* min_grid, int* block_size, CUfunction f,
                                                                   CUoccupancyB2DSize shared_of, size_t dynamic_shared,
                                                                   int block_limit, unsigned int flags) {
    if (flags & ~unsigned(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) return CUDA_ERROR_INVALID_VALUE;
    return potential_block_size(min_grid, block_size, f, shared_of, dynamic_shared, block_limit);
}

// The most dynamic shared memory a block can have with `num_blocks` such blocks resident per SM.
SIM_API CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, CUfunction f, int num_blocks,
                                                                 int block_size) {
    if (!bytes || num_blocks <= 0 || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Function* fn = function_of(f);
    if (!fn) return CUDA_ERROR_INVALID_HANDLE;
    const SmLimits sm = limits_of(*fn->module->context->device);
    if (blocks_per_sm(*fn, sm, block_size, 0) < num_blocks) {
        *bytes = 0;
        return CUDA_SUCCESS;
    }
    const size_t per_block = sm.shared / size_t(num_blocks);
    const size_t overhead = kReservedSharedPerBlock + fn->info->static_shared_bytes;
    *bytes =
        per_block > overhead ? std::min(per_block - overhead, sm.shared_per_block - fn->info->static_shared_bytes) : 0;
    return CUDA_SUCCESS;
}

// Thread block clusters (compute capability 9.0+): portable size 8; a cluster needs that many SMs'
// worth of blocks resident at once.
SIM_API CUresult CUDAAPI cuOccupancyMaxPotentialClusterSize(int* cluster_size, CUfunction f,
                                                            const CUlaunchConfig* config) {
    if (!cluster_size || !config) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Function* fn = function_of(f);
    if (!fn) return CUDA_ERROR_INVALID_HANDLE;
    const Device& device = *fn->module->context->device;
    if (device.model->cc_major < 9) return CUDA_ERROR_NOT_SUPPORTED;
    const int block = static_cast<int>(config->blockDimX * config->blockDimY * config->blockDimZ);
    *cluster_size = blocks_per_sm(*fn, limits_of(device), block, config->sharedMemBytes) > 0 ? 8 : 0;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuOccupancyMaxActiveClusters(int* clusters, CUfunction f, const CUlaunchConfig* config) {
    if (!clusters || !config) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Function* fn = function_of(f);
    if (!fn) return CUDA_ERROR_INVALID_HANDLE;
    const Device& device = *fn->module->context->device;
    if (device.model->cc_major < 9) return CUDA_ERROR_NOT_SUPPORTED;
    unsigned cluster = 1;
    for (unsigned i = 0; i < config->numAttrs; ++i)
        if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            const auto& dim = config->attrs[i].value.clusterDim;
            cluster = dim.x * dim.y * dim.z;
        }
    if (cluster == 0 || cluster > 8) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    const int block = static_cast<int>(config->blockDimX * config->blockDimY * config->blockDimZ);
    const int per_sm = blocks_per_sm(*fn, limits_of(device), block, config->sharedMemBytes);
    *clusters = per_sm * device.model->sm_count / static_cast<int>(cluster);
    return CUDA_SUCCESS;
}
