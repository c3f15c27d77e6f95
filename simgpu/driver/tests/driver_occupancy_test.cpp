// Occupancy queries against the documented per-SM limits of the model (sm_90: 2048 threads, 32
// blocks, 64K registers allocated per warp in units of 256, 228 KiB shared memory with 1 KiB
// reserved per block).
#include "driver_test_support.h"

#include <algorithm>

TEST_CASE("occupancy follows registers, threads and shared memory per SM") {
    use_primary_context();
    CUfunction f = axpy_function();
    int regs = 0;
    CHECK_CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    regs = regs > 0 ? regs : 32;
    const int regs_per_warp = (regs * 32 + 255) / 256 * 256;
    int blocks = -1;
    CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0));
    CHECK_EQ(blocks, std::min(2048 / 256, 65536 / (regs_per_warp * 8)));
    CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, f, 32, 0, 0));
    CHECK_EQ(blocks, std::min(32, 65536 / regs_per_warp));  // the 32-blocks limit, unless registers bind
    CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 100000));
    CHECK_EQ(blocks, 2);
    CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 300000));  // over the block maximum
    CHECK_EQ(blocks, 0);
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, f, 128, 0, 0x8), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, nullptr, 128, 0), CUDA_ERROR_INVALID_HANDLE);

    int min_grid = 0, block = 0;
    CHECK_CU(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, nullptr, 0, 0));
    CHECK_EQ(block % 32, 0);
    int at_best = 0;
    CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&at_best, f, block, 0));
    CHECK_EQ(min_grid, at_best * 132);
    for (int size = 32; size <= 1024; size += 32) {  // no block size keeps more threads resident
        CAPTURE(size);
        int other = 0;
        CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&other, f, size, 0));
        CHECK_LE(other * size, at_best * block);
    }
    CHECK_CU(cuOccupancyMaxPotentialBlockSizeWithFlags(&min_grid, &block, f, nullptr, 0, 64, 0));
    CHECK_LE(block, 64);

    size_t dynamic = 0;
    CHECK_CU(cuOccupancyAvailableDynamicSMemPerBlock(&dynamic, f, 2, 128));
    CHECK_EQ(dynamic, 233472 / 2 - 1024);  // axpy has no static shared memory
    int blocks_then = 0;
    CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_then, f, 128, dynamic));
    CHECK_GE(blocks_then, 2);

    CUlaunchAttribute cluster{};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = 2;
    cluster.value.clusterDim.y = cluster.value.clusterDim.z = 1;
    CUlaunchConfig config{};
    config.blockDimX = 128;
    config.blockDimY = config.blockDimZ = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = 0, cluster_size = 0;
    CHECK_CU(cuOccupancyMaxActiveClusters(&clusters, f, &config));
    CHECK_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 0));
    CHECK_EQ(clusters, blocks * 132 / 2);
    CHECK_CU(cuOccupancyMaxPotentialClusterSize(&cluster_size, f, &config));
    CHECK_EQ(cluster_size, 8);
}
