// IPC memory handles, as PyTorch's multiprocessing shares CUDA tensors between processes. Device
// memory is host memory here, private to the process, so exporting an allocation moves it, in place,
// into a memfd (same address, same bytes, now a shared mapping); the handle names the exporting
// process and that file, and another process maps it through /proc/PID/fd (the same user's
// processes may). Allocations of 1 MiB and more (page-aligned mappings, which caching allocators'
// segments are) can be exported; smaller ones return CUDA_ERROR_NOT_SUPPORTED. Opened memory is the
// exporter's: it is not charged to this process's device nor published as an allocation.
#include "driver_api.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

using namespace tbdsim::driver;

namespace {

constexpr char kMagic[8] = {'T', 'B', 'D', 'S', 'I', 'M', 'I', 'P'};

struct HandleBytes {  // the first bytes of CUipcMemHandle::reserved
    char magic[8];
    int32_t pid;
    int32_t fd;
    uint64_t bytes;
    int32_t device;
};
static_assert(sizeof(HandleBytes) <= sizeof(CUipcMemHandle));

struct Import {
    uintptr_t address;
    int references;
};
std::map<std::pair<int, int>, Import>& imports() {  // (pid, fd) -> mapping
    static auto* opened = new std::map<std::pair<int, int>, Import>;
    return *opened;
}

size_t mapped_bytes(const Allocation& a) {
    return (a.bytes + 511) / 512 * 512;
}

}  // namespace

SIM_API CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr dptr) {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    auto it = state().allocations.find(dptr);  // the base pointer of an allocation, as documented
    if (it == state().allocations.end() || it->second.imported ||
        (it->second.kind != MemoryKind::Device && it->second.kind != MemoryKind::DeviceAsync))
        return CUDA_ERROR_INVALID_VALUE;
    Allocation& a = it->second;
    if (!a.mmapped) return CUDA_ERROR_NOT_SUPPORTED;  // below the page-aligned size
    if (a.ipc_fd < 0) {
        const size_t bytes = mapped_bytes(a);
        const int fd = memfd_create("tbdsim-ipc", MFD_CLOEXEC);
        if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
        void* p = reinterpret_cast<void*>(a.address);
        // Contents first, then the shared mapping replaces the private one at the same address.
        if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 || pwrite(fd, p, bytes, 0) != static_cast<ssize_t>(bytes) ||
            mmap(p, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
            close(fd);
            return CUDA_ERROR_MAP_FAILED;
        }
        a.ipc_fd = fd;
    }
    std::memset(handle, 0, sizeof *handle);
    HandleBytes h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.pid = static_cast<int32_t>(getpid());
    h.fd = a.ipc_fd;
    h.bytes = mapped_bytes(a);
    h.device = a.context->device->ordinal;
    std::memcpy(handle->reserved, &h, sizeof h);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr* dptr, CUipcMemHandle handle, unsigned int flags) {  // _v2
    if (!dptr || (flags & ~unsigned(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))) return CUDA_ERROR_INVALID_VALUE;
    HandleBytes h{};
    std::memcpy(&h, handle.reserved, sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.bytes == 0) return CUDA_ERROR_INVALID_HANDLE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    if (h.pid == getpid()) return CUDA_ERROR_INVALID_CONTEXT;  // not in the exporting process
    auto& opened = imports();
    if (auto it = opened.find({h.pid, h.fd}); it != opened.end()) {
        ++it->second.references;
        *dptr = it->second.address;
        return CUDA_SUCCESS;
    }
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", h.pid, h.fd);
    const int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;  // the exporter is gone or freed the memory
    void* p = mmap(nullptr, h.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return CUDA_ERROR_MAP_FAILED;
    Allocation a{reinterpret_cast<uintptr_t>(p), h.bytes, 0, MemoryKind::Device, ctx, false};
    a.imported = true;
    state().allocations[a.address] = a;
    opened[{h.pid, h.fd}] = {a.address, 1};
    *dptr = a.address;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    auto& opened = imports();
    for (auto it = opened.begin(); it != opened.end(); ++it) {
        if (it->second.address != dptr) continue;
        if (--it->second.references == 0) {
            auto a = state().allocations.find(dptr);
            if (a != state().allocations.end()) {
                munmap(reinterpret_cast<void*>(dptr), a->second.bytes);
                state().allocations.erase(a);
            }
            opened.erase(it);
        }
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

// --- IPC event handles ------------------------------------------------------------------------------
// An interprocess event (CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING, as cuIpcGetEventHandle
// requires) keeps the completion time of its last record in a page of a memfd once exported; the
// handle names the process and file as memory handles do, and cuIpcOpenEventHandle in another process
// maps that page into a new event of its own (timing disabled, as documented). A record in either
// process stores there, a query, synchronize or stream wait in either reads it: device time is
// CLOCK_MONOTONIC in every process, so the other process's completion time orders this one's work.

namespace {

constexpr char kEventMagic[8] = {'T', 'B', 'D', 'S', 'I', 'M', 'I', 'E'};
constexpr size_t kEventPage = 4096;

struct EventHandleBytes {  // the first bytes of CUipcEventHandle::reserved
    char magic[8];
    int32_t pid;
    int32_t fd;
};
static_assert(sizeof(EventHandleBytes) <= sizeof(CUipcEventHandle));
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared between processes");

std::atomic<uint64_t>* map_event_page(int fd) {
    void* p = mmap(nullptr, kEventPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? nullptr : static_cast<std::atomic<uint64_t>*>(p);
}

Event* live_event_handle(CUevent handle) {
    auto* event = reinterpret_cast<Event*>(handle);
    return handle && state().live_events.count(event) ? event : nullptr;
}

}  // namespace

void tbdsim::driver::load_shared_record(Event& event) {
    if (event.shared_time == nullptr) return;
    const uint64_t t = event.shared_time->load(std::memory_order_acquire);
    event.recorded = t != 0;
    event.time_ns = t;
}

void tbdsim::driver::store_shared_record(const Event& event) {
    if (event.shared_time != nullptr) event.shared_time->store(event.recorded ? event.time_ns : 0, std::memory_order_release);
}

void tbdsim::driver::release_shared_record(Event& event) {
    if (event.shared_time != nullptr) munmap(event.shared_time, kEventPage);
    if (event.ipc_fd >= 0) close(event.ipc_fd);
    event.shared_time = nullptr;
    event.ipc_fd = -1;
}

SIM_API CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle* handle, CUevent event_handle) {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Event* event = live_event_handle(event_handle);
    if (!event) return CUDA_ERROR_INVALID_HANDLE;
    if (!(event->flags & CU_EVENT_INTERPROCESS)) return CUDA_ERROR_INVALID_VALUE;
    if (event->shared_time == nullptr) {  // opened events already share their page
        const int fd = memfd_create("tbdsim-ipc-event", MFD_CLOEXEC);
        if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
        std::atomic<uint64_t>* page = ftruncate(fd, kEventPage) == 0 ? map_event_page(fd) : nullptr;
        if (page == nullptr) {
            close(fd);
            return CUDA_ERROR_MAP_FAILED;
        }
        event->shared_time = page;
        event->ipc_fd = fd;
        store_shared_record(*event);  // a record made before the export counts
    }
    std::memset(handle, 0, sizeof *handle);
    EventHandleBytes h{};
    std::memcpy(h.magic, kEventMagic, sizeof kEventMagic);
    h.pid = static_cast<int32_t>(getpid());
    h.fd = event->ipc_fd;
    if (h.fd < 0) return CUDA_ERROR_INVALID_HANDLE;  // an opened event: export the original
    std::memcpy(handle->reserved, &h, sizeof h);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuIpcOpenEventHandle(CUevent* out, CUipcEventHandle handle) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    EventHandleBytes h{};
    std::memcpy(&h, handle.reserved, sizeof h);
    if (std::memcmp(h.magic, kEventMagic, sizeof kEventMagic) != 0) return CUDA_ERROR_INVALID_HANDLE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    if (h.pid == getpid()) return CUDA_ERROR_INVALID_CONTEXT;  // as for memory: not in the exporter
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", h.pid, h.fd);
    const int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;  // the exporter is gone or destroyed the event
    std::atomic<uint64_t>* page = map_event_page(fd);
    close(fd);
    if (page == nullptr) return CUDA_ERROR_MAP_FAILED;
    auto* event = new Event;
    event->context = ctx;
    event->flags = CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    event->shared_time = page;
    load_shared_record(*event);
    state().live_events.insert(event);
    *out = reinterpret_cast<CUevent>(event);
    return CUDA_SUCCESS;
}
