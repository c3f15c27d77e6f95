// Exercises NVTX's memory extension (nvtx3/nvToolsExtMem.h) on host memory, for nvtx_mem_api.sh,
// which checks the trace's memory_heaps and memory_regions rows against what this program did:
//   heap "host heap" over a 64 KiB buffer (domain "memtest"), sub-allocator usage
//   one batch call registers regions A (offset 0, 1024 B), B (4096, 2048 B), C (8192, 512 B)
//   names: A "weights:a" (ASCII, by handle), B "gradients/b" (wide, by pointer), C "c" (registered string)
//   B resized to 4096 B (a second row for B, the first ends 'resized')
//   A unregistered by handle ('unregistered')
//   the heap reset: B (its second row) and C end 'heap_reset'
//   D (16384, 256 B) registered, named "workspace"
//   the heap unregistered: D ends 'heap_unregistered'
//   E (0x100 past the buffer's start, 64 B) registered in the process-wide heap, then that heap reset
// Exits 1 when a handle is wrong while a tool is attached, 2 when CUDA cannot start.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void start_cuda() {  // the collector starts writing at the first CUDA call
    void* driver = dlopen("libcuda.so.1", RTLD_NOW);
    using Init = int (*)(unsigned);
    auto init = driver ? reinterpret_cast<Init>(dlsym(driver, "cuInit")) : nullptr;
    if (init == nullptr || init(0) != 0) {
        std::fprintf(stderr, "nvtx_mem_program: cuInit failed\n");
        std::exit(2);
    }
}

nvtxDomainHandle_t g_domain;
char* g_buffer;

// NVTX's "no tool" handles are -1 (its NVTX_MEM_*_NO_TOOL macros do not compile as C++).
const auto kNoToolRegion = reinterpret_cast<nvtxMemRegionHandle_t>(intptr_t{-1});
const auto kNoToolHeap = reinterpret_cast<nvtxMemHeapHandle_t>(intptr_t{-1});

void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "nvtx_mem_program: %s\n", what);
    std::exit(1);
}

std::vector<nvtxMemRegionHandle_t> register_regions(nvtxMemHeapHandle_t heap,
                                                    std::vector<nvtxMemVirtualRangeDesc_t> ranges) {
    std::vector<nvtxMemRegionHandle_t> handles(ranges.size(), nullptr);
    nvtxMemRegionsRegisterBatch_t batch{};
    batch.extCompatID = NVTX_EXT_COMPATID_MEM;
    batch.structSize = sizeof batch;
    batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    batch.heap = heap;
    batch.regionCount = ranges.size();
    batch.regionDescElementSize = sizeof(nvtxMemVirtualRangeDesc_t);
    batch.regionDescElements = ranges.data();
    batch.regionHandleElementsOut = handles.data();
    nvtxMemRegionsRegister(g_domain, &batch);
    for (auto h : handles) check(h != nullptr && h != kNoToolRegion, "no region handle");
    return handles;
}

void name(const nvtxMemRegionNameDesc_t& desc) {
    nvtxMemRegionsNameBatch_t batch{};
    batch.extCompatID = NVTX_EXT_COMPATID_MEM;
    batch.structSize = sizeof batch;
    batch.regionCount = 1;
    batch.regionElementSize = sizeof desc;
    batch.regionElements = &desc;
    nvtxMemRegionsName(g_domain, &batch);
}

nvtxMemRegionNameDesc_t name_desc(uint32_t ref_type, nvtxMemRegionRef_t ref, uint32_t name_type) {
    nvtxMemRegionNameDesc_t desc{};
    desc.regionRefType = ref_type;
    desc.region = ref;
    desc.nameType = name_type;
    return desc;
}

void unregister(uint32_t ref_type, nvtxMemRegionRef_t ref) {
    nvtxMemRegionsUnregisterBatch_t batch{};
    batch.extCompatID = NVTX_EXT_COMPATID_MEM;
    batch.structSize = sizeof batch;
    batch.refType = ref_type;
    batch.refCount = 1;
    batch.refElementSize = sizeof ref;
    batch.refElements = &ref;
    nvtxMemRegionsUnregister(g_domain, &batch);
}

nvtxMemHeapHandle_t make_heap() {
    nvtxMemVirtualRangeDesc_t range{65536, g_buffer};
    nvtxMemHeapDesc_t desc{};
    desc.extCompatID = NVTX_EXT_COMPATID_MEM;
    desc.structSize = sizeof desc;
    desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    desc.typeSpecificDescSize = sizeof range;
    desc.typeSpecificDesc = &range;
    desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
    desc.message.ascii = "host heap";
    nvtxMemHeapHandle_t heap = nvtxMemHeapRegister(g_domain, &desc);
    check(heap != nullptr && heap != kNoToolHeap, "no heap handle");
    return heap;
}

void names_and_resize(const std::vector<nvtxMemRegionHandle_t>& handles) {
    nvtxMemRegionRef_t ref;
    ref.handle = handles[0];
    auto a = name_desc(NVTX_MEM_REGION_REF_TYPE_HANDLE, ref, NVTX_MESSAGE_TYPE_ASCII);
    a.name.ascii = "weights:a";
    name(a);
    ref.pointer = g_buffer + 4096;
    auto b = name_desc(NVTX_MEM_REGION_REF_TYPE_POINTER, ref, NVTX_MESSAGE_TYPE_UNICODE);
    b.name.unicode = L"gradients/b";
    name(b);
    ref.handle = handles[2];
    auto c = name_desc(NVTX_MEM_REGION_REF_TYPE_HANDLE, ref, NVTX_MESSAGE_TYPE_REGISTERED);
    c.name.registered = nvtxDomainRegisterStringA(g_domain, "c");
    name(c);

    nvtxMemVirtualRangeDesc_t bigger{4096, g_buffer + 4096};
    nvtxMemRegionsResizeBatch_t resize{};
    resize.extCompatID = NVTX_EXT_COMPATID_MEM;
    resize.structSize = sizeof resize;
    resize.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    resize.regionDescCount = 1;
    resize.regionDescElementSize = sizeof bigger;
    resize.regionDescElements = &bigger;
    nvtxMemRegionsResize(g_domain, &resize);
}

}  // namespace

int main() {
    start_cuda();
    g_buffer = static_cast<char*>(std::calloc(1, 65536));
    g_domain = nvtxDomainCreateA("memtest");
    nvtxMemHeapHandle_t heap = make_heap();
    auto handles = register_regions(heap, {{1024, g_buffer}, {2048, g_buffer + 4096}, {512, g_buffer + 8192}});
    names_and_resize(handles);
    nvtxMemRegionRef_t ref;
    ref.handle = handles[0];
    unregister(NVTX_MEM_REGION_REF_TYPE_HANDLE, ref);
    nvtxMemHeapReset(g_domain, heap);

    auto d = register_regions(heap, {{256, g_buffer + 16384}});
    ref.handle = d[0];
    auto name_d = name_desc(NVTX_MEM_REGION_REF_TYPE_HANDLE, ref, NVTX_MESSAGE_TYPE_ASCII);
    name_d.name.ascii = "workspace";
    name(name_d);
    nvtxMemHeapUnregister(g_domain, heap);

    register_regions(NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE, {{64, g_buffer + 0x100}});
    nvtxMemHeapReset(g_domain, NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE);
    std::free(g_buffer);
    std::printf("ok\n");
    return 0;
}
