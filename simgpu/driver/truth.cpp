// Ground truth for tests: with TBDSIM_TRUTH=PATH every published record becomes one tab-separated
// line (format in docs/simgpu.md). Each process appends to the file, so fork+exec children share it;
// lines are written with one write() each (O_APPEND) so concurrent processes do not interleave.
#include "timeline.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <unistd.h>

namespace tbdsim::driver {
namespace {

struct TruthFile {
    int fd = -1;
    std::mutex mutex;
};

TruthFile& truth() {
    static TruthFile* file = [] {
        auto* f = new TruthFile;
        const char* path = std::getenv("TBDSIM_TRUTH");
        if (path && *path) {
            f->fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (f->fd < 0) std::fprintf(stderr, "simgpu: cannot open TBDSIM_TRUTH file %s\n", path);
        }
        return f;
    }();
    return *file;
}

const char* copy_kind_name(uint32_t kind) {
    switch (kind) {
    case TBDSIM_COPY_HTOD: return "HtoD";
    case TBDSIM_COPY_DTOH: return "DtoH";
    case TBDSIM_COPY_DTOD: return "DtoD";
    default: return "HtoH";
    }
}

const char* memory_kind_name(uint32_t kind) {
    switch (kind) {
    case TBDSIM_MEMORY_DEVICE_ASYNC: return "device_async";
    case TBDSIM_MEMORY_PINNED_HOST: return "pinned_host";
    case TBDSIM_MEMORY_MANAGED: return "managed";
    case TBDSIM_MEMORY_DEVICE_MAPPED:
        return "device_mapped";
    default: return "device";
    }
}

}  // namespace

void truth_write(const TbdsimRecord& r) {
    TruthFile& file = truth();
    if (file.fd < 0) return;
    char line[1024];
    int n = 0;
    unsigned pid = static_cast<unsigned>(getpid());
    switch (r.kind) {
    case TBDSIM_RECORD_KERNEL:
        n = std::snprintf(line, sizeof line,
                          "kernel\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\t%.17g\t%u,%u,%u\t%u,%u,%u\t%u\t%u\t%s\n",
                          pid, r.correlation_id, r.stream_id, r.start_ns, r.end_ns, r.flops, r.grid[0],
                          r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2], r.shared_mem_bytes,
                          r.precision, r.name ? r.name : "?");
        break;
    case TBDSIM_RECORD_MEMCPY:
        n = std::snprintf(line, sizeof line,
                          "memcpy\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\t%s\t%" PRIu64 "\t0x%" PRIx64
                          "\t0x%" PRIx64 "\n",
                          pid, r.correlation_id, r.stream_id, r.start_ns, r.end_ns,
                          copy_kind_name(r.sub_kind), r.bytes, r.src_address, r.address);
        break;
    case TBDSIM_RECORD_MEMSET:
        n = std::snprintf(line, sizeof line,
                          "memset\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\t%u\t%" PRIu64 "\t0x%" PRIx64 "\n",
                          pid, r.correlation_id, r.stream_id, r.start_ns, r.end_ns, r.memset_value,
                          r.bytes, r.address);
        break;
    case TBDSIM_RECORD_ALLOC:
    case TBDSIM_RECORD_FREE:
        n = std::snprintf(line, sizeof line,
                          "%s\t%u\t%u\t%u\t%" PRIu64 "\t%s\t%" PRIu64 "\t0x%" PRIx64 "\n",
                          r.kind == TBDSIM_RECORD_ALLOC ? "alloc" : "free", pid, r.correlation_id,
                          r.stream_id, r.start_ns, memory_kind_name(r.sub_kind), r.bytes, r.address);
        break;
    default: return;
    }
    if (n <= 0) return;
    // Work replayed by cuGraphLaunch: two more fields, the graph id and the node id (CUPTI's).
    if (r.graph_id != 0 && static_cast<size_t>(n) < sizeof line) {
        --n;  // over the newline
        int more = std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "\t%u\t%" PRIu64 "\n", r.graph_id,
                                 r.graph_node_id);
        n = more > 0 ? n + more : n + 1;
    }
    size_t len = std::min(static_cast<size_t>(n), sizeof line - 1);
    if (len == sizeof line - 1) line[len - 1] = '\n';
    std::lock_guard lock(file.mutex);
    ssize_t ignored = ::write(file.fd, line, len);
    (void)ignored;
}

void truth_write_profiler(bool start, uint32_t next_correlation) {
    TruthFile& file = truth();
    if (file.fd < 0) return;
    char line[128];
    const int n = std::snprintf(line, sizeof line, "profiler\t%u\t%s\t%u\n", static_cast<unsigned>(getpid()),
                                start ? "start" : "stop", next_correlation);
    if (n <= 0) return;
    std::lock_guard lock(file.mutex);
    ssize_t ignored = ::write(file.fd, line, static_cast<size_t>(n));
    (void)ignored;
}

}  // namespace tbdsim::driver
