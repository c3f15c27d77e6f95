// cudaGetDeviceProperties: the CUDA 13 cudaDeviceProp, filled field by field from the driver's
// device attributes, name, total memory and UUID (the real runtime does the same, which is why
// every field has a CU_DEVICE_ATTRIBUTE_* counterpart).
#include <cstring>

#include "context.h"

using namespace tbdsim::rt;

namespace {

class AttributeReader {
public:
    AttributeReader(const DriverApi& api, CUdevice device) : api_(api), device_(device) {}

    // An attribute the driver does not model reads as 0, as a conservative "not supported".
    int operator()(CUdevice_attribute attribute) const {
        int value = 0;
        if (api_.cuDeviceGetAttribute(&value, attribute, device_) != CUDA_SUCCESS) return 0;
        return value;
    }

private:
    const DriverApi& api_;
    CUdevice device_;
};

void fill_limits(cudaDeviceProp& p, const AttributeReader& a) {
    p.sharedMemPerBlock = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    p.regsPerBlock = a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    p.warpSize = a(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    p.memPitch = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_MAX_PITCH));
    p.maxThreadsPerBlock = a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    p.maxThreadsDim[0] = a(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    p.maxThreadsDim[1] = a(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    p.maxThreadsDim[2] = a(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    p.maxGridSize[0] = a(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    p.maxGridSize[1] = a(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    p.maxGridSize[2] = a(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    p.totalConstMem = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY));
    p.major = a(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    p.minor = a(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    p.textureAlignment = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
    p.texturePitchAlignment = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT));
    p.multiProcessorCount = a(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    p.integrated = a(CU_DEVICE_ATTRIBUTE_INTEGRATED);
    p.canMapHostMemory = a(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
}

void fill_texture_and_surface_limits(cudaDeviceProp& p, const AttributeReader& a) {
    p.maxTexture1D = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
    p.maxTexture1DMipmap = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH);
    p.maxTexture2D[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
    p.maxTexture2D[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
    p.maxTexture2DMipmap[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH);
    p.maxTexture2DMipmap[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT);
    p.maxTexture2DLinear[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH);
    p.maxTexture2DLinear[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT);
    p.maxTexture2DLinear[2] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH);
    p.maxTexture2DGather[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH);
    p.maxTexture2DGather[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT);
    p.maxTexture3D[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
    p.maxTexture3D[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT);
    p.maxTexture3D[2] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
    p.maxTexture3DAlt[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE);
    p.maxTexture3DAlt[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE);
    p.maxTexture3DAlt[2] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
    p.maxTextureCubemap = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH);
    p.maxTexture1DLayered[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH);
    p.maxTexture1DLayered[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS);
    p.maxTexture2DLayered[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH);
    p.maxTexture2DLayered[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT);
    p.maxTexture2DLayered[2] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
    p.maxTextureCubemapLayered[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH);
    p.maxTextureCubemapLayered[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS);
    p.maxSurface1D = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH);
    p.maxSurface2D[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH);
    p.maxSurface2D[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT);
    p.maxSurface3D[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH);
    p.maxSurface3D[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT);
    p.maxSurface3D[2] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH);
    p.maxSurface1DLayered[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH);
    p.maxSurface1DLayered[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS);
    p.maxSurface2DLayered[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH);
    p.maxSurface2DLayered[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT);
    p.maxSurface2DLayered[2] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS);
    p.maxSurfaceCubemap = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH);
    p.maxSurfaceCubemapLayered[0] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH);
    p.maxSurfaceCubemapLayered[1] = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS);
    p.surfaceAlignment = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT));
}

void fill_features(cudaDeviceProp& p, const AttributeReader& a) {
    p.concurrentKernels = a(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
    p.ECCEnabled = a(CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
    p.pciBusID = a(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
    p.pciDeviceID = a(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
    p.pciDomainID = a(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
    p.tccDriver = a(CU_DEVICE_ATTRIBUTE_TCC_DRIVER);
    p.asyncEngineCount = a(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
    p.unifiedAddressing = a(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
    p.memoryBusWidth = a(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    p.l2CacheSize = a(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    p.persistingL2CacheMaxSize = a(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
    p.maxThreadsPerMultiProcessor = a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    p.streamPrioritiesSupported = a(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED);
    p.globalL1CacheSupported = a(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED);
    p.localL1CacheSupported = a(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED);
    p.sharedMemPerMultiprocessor = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
    p.regsPerMultiprocessor = a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    p.managedMemory = a(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
    p.isMultiGpuBoard = a(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD);
    p.multiGpuBoardGroupID = a(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID);
    p.hostNativeAtomicSupported = a(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED);
    p.pageableMemoryAccess = a(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
    p.concurrentManagedAccess = a(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
    p.computePreemptionSupported = a(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED);
    p.canUseHostPointerForRegisteredMem = a(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM);
    p.cooperativeLaunch = a(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
    p.sharedMemPerBlockOptin = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
    p.pageableMemoryAccessUsesHostPageTables = a(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES);
    p.directManagedMemAccessFromHost = a(CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST);
    p.maxBlocksPerMultiProcessor = a(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    p.accessPolicyMaxWindowSize = a(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
    p.reservedSharedMemPerBlock = static_cast<size_t>(a(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
    p.hostRegisterSupported = a(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED);
    p.sparseCudaArraySupported = a(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED);
    p.hostRegisterReadOnlySupported = a(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED);
    p.timelineSemaphoreInteropSupported = a(CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED);
    p.memoryPoolsSupported = a(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
    p.gpuDirectRDMASupported = a(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
    p.gpuDirectRDMAFlushWritesOptions =
        static_cast<unsigned>(a(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS));
    p.gpuDirectRDMAWritesOrdering = a(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING);
    p.memoryPoolSupportedHandleTypes = static_cast<unsigned>(a(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES));
    p.deferredMappingCudaArraySupported = a(CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED);
    p.ipcEventSupported = a(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED);
    p.clusterLaunch = a(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
    p.unifiedFunctionPointers = a(CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS);
    p.deviceNumaConfig = a(CU_DEVICE_ATTRIBUTE_NUMA_CONFIG);
    p.deviceNumaId = a(CU_DEVICE_ATTRIBUTE_NUMA_ID);
    p.mpsEnabled = a(CU_DEVICE_ATTRIBUTE_MPS_ENABLED);
    p.hostNumaId = a(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    p.gpuPciDeviceID = static_cast<unsigned>(a(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID));
    p.gpuPciSubsystemID = static_cast<unsigned>(a(CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID));
    p.hostNumaMultinodeIpcSupported = a(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED);
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    if (prop == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        cudaError_t error = device_handle(device, &handle);
        if (error != cudaSuccess) return error;
        cudaDeviceProp filled;
        std::memset(&filled, 0, sizeof filled);
        error = call_driver(api.cuDeviceGetName, filled.name, static_cast<int>(sizeof filled.name), handle);
        size_t total_memory = 0;
        if (error == cudaSuccess) error = call_driver(api.cuDeviceTotalMem, &total_memory, handle);
        if (error != cudaSuccess) return error;
        filled.totalGlobalMem = total_memory;
        CUuuid uuid{};
        if (api.cuDeviceGetUuid != nullptr && api.cuDeviceGetUuid(&uuid, handle) == CUDA_SUCCESS) {
            static_assert(sizeof filled.uuid == sizeof uuid);
            std::memcpy(&filled.uuid, &uuid, sizeof uuid);
        }
        const AttributeReader attributes(api, handle);
        fill_limits(filled, attributes);
        fill_texture_and_surface_limits(filled, attributes);
        fill_features(filled, attributes);
        *prop = filled;
        return cudaSuccess;
    });
}

// Returned by value (a 20-byte struct), so it cannot share the generated stubs: a plain constructor.
TBDSIM_CUDART_EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                      enum cudaChannelFormatKind f) {
    return cudaChannelFormatDesc{x, y, z, w, f};
}
