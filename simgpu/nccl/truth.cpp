#include "truth.h"

#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "comm.h"
#include "group.h"

namespace tbdsim::nccl {
namespace {

// Opened once, appended to with one write() per line, as the driver writes its own lines.
int truth_fd() {
    static const int fd = [] {
        const char* path = std::getenv("TBDSIM_TRUTH");
        return path != nullptr && *path ? ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    }();
    return fd;
}

void write_line(const char* line, int n) {
    if (n > 0 && truth_fd() >= 0) [[maybe_unused]]
        auto written = ::write(truth_fd(), line, size_t(n));
}

}  // namespace

void truth_write_comm(const ncclComm& comm) {
    if (truth_fd() < 0) return;
    char line[512];
    int n = std::snprintf(line, sizeof line, "nccl_comm\t%u\t%s\t%d\t%d\t%d\n", unsigned(getpid()), comm.name.c_str(),
                          comm.rank, comm.nranks, comm.device);
    write_line(line, n);
}

void truth_write_op(const PendingOp& op, const std::string& kernel, uint64_t arrival_ns, uint64_t end_ns) {
    if (truth_fd() < 0) return;
    const ncclComm& c = *op.comm;
    const int root_or_peer = op.op == Operation::Send || op.op == Operation::Recv ? op.peer : op.root;
    char line[1024];
    int n = std::snprintf(
        line, sizeof line, "nccl\t%u\t%s\t%s\t%d\t%d\t%zu\t%zu\t%s\t%s\t%d\t%" PRIu64 "\t%" PRIu64 "\t%s\n",
        unsigned(getpid()), c.name.c_str(), operation_name(op.op), c.rank, c.nranks, op.count,
        op.count * type_size_bytes(op.type), type_name(op.type), has_reduction(op.op) ? redop_name(op.redop) : "-",
        root_or_peer, arrival_ns, end_ns, kernel.c_str());
    write_line(line, n);
}

}  // namespace tbdsim::nccl
