// The simulated NCCL through its public API (linked against the toolkit's libnccl, run with the
// simulated one first on the library path): queries and argument errors, a grouped all-reduce driven
// by one thread for two ranks (ncclCommInitAll), ranks on threads (ncclCommInitRank, ncclCommSplit),
// paired send/receive in one group, and the ground truth: every operation written once, both ranks'
// collectives end together, at the latest arrival plus the documented model's duration.
// argv[1]: the TBDSIM_TRUTH file the test environment names (emptied first).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

int g_failures = 0;
#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            ++g_failures;                                                                 \
        }                                                                                 \
    } while (0)

struct TruthOp {  // one `nccl` line (docs/simgpu-nccl.md)
    std::string op;
    int rank = 0, nranks = 0;
    uint64_t bytes = 0, arrival_ns = 0, end_ns = 0;
    std::string kernel;
};

std::vector<TruthOp> read_truth(const char* path) {
    std::vector<TruthOp> ops;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string field; std::getline(ss, field, '\t');) f.push_back(field);
        if (f.size() != 14 || f[0] != "nccl") continue;
        ops.push_back(
            {f[3], std::stoi(f[4]), std::stoi(f[5]), std::stoull(f[7]), std::stoull(f[11]), std::stoull(f[12]), f[13]});
    }
    return ops;
}

bool real_nccl_mapped() {
    std::ifstream maps("/proc/self/maps");
    bool simulated = false, other = false;
    for (std::string line; std::getline(maps, line);) {
        if (line.find("libnccl.so") == std::string::npos) continue;
        (line.find(TBDPROF_SIMGPU_DIR) != std::string::npos ? simulated : other) = true;
    }
    return other || !simulated;
}

void test_queries_and_errors(ncclComm_t* comms) {
    int version = 0, count = 0, rank = -1, device = -1;
    CHECK(ncclGetVersion(&version) == ncclSuccess && version == NCCL_VERSION_CODE);
    CHECK(ncclCommCount(comms[1], &count) == ncclSuccess && count == 2);
    CHECK(ncclCommUserRank(comms[1], &rank) == ncclSuccess && rank == 1);
    CHECK(ncclCommCuDevice(comms[1], &device) == ncclSuccess && device == 1);
    CHECK(std::string(ncclGetErrorString(ncclInvalidArgument)).find("invalid argument") == 0);
    float* buffer = nullptr;
    CHECK(cudaMalloc(&buffer, 64) == cudaSuccess);
    CHECK(ncclAllReduce(buffer, buffer, 16, ncclFloat32, ncclSum, nullptr, nullptr) == ncclInvalidArgument);
    CHECK(ncclAllReduce(buffer, buffer, 16, static_cast<ncclDataType_t>(ncclNumTypes), ncclSum, comms[0], nullptr) ==
          ncclInvalidArgument);
    CHECK(ncclSend(buffer, 16, ncclFloat32, 2, comms[0], nullptr) == ncclInvalidArgument);
    CHECK(ncclAllReduce(nullptr, buffer, 16, ncclFloat32, ncclSum, comms[0], nullptr) == ncclInvalidArgument);
    CHECK(cudaFree(buffer) == cudaSuccess);
}

// One thread drives both ranks: the group posts both arrivals before waiting.
void test_grouped_all_reduce(ncclComm_t* comms, cudaStream_t* streams, float** buffers) {
    CHECK(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < 2; ++r)
        CHECK(ncclAllReduce(buffers[r], buffers[r], 1 << 20, ncclFloat32, ncclSum, comms[r], streams[r]) ==
              ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    // Paired send and receive in one group: neither blocks the other.
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclSend(buffers[0], 256, ncclFloat32, 1, comms[0], streams[0]) == ncclSuccess);
    CHECK(ncclRecv(buffers[0], 256, ncclFloat32, 1, comms[0], streams[0]) == ncclSuccess);
    CHECK(ncclSend(buffers[1], 256, ncclFloat32, 0, comms[1], streams[1]) == ncclSuccess);
    CHECK(ncclRecv(buffers[1], 256, ncclFloat32, 0, comms[1], streams[1]) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < 2; ++r) {
        CHECK(cudaSetDevice(r) == cudaSuccess);
        CHECK(cudaStreamSynchronize(streams[r]) == cudaSuccess);
    }
}

// Two threads, one rank each, meeting by unique id; rank 1 comes 50 ms late to the broadcast, which
// then ends on both ranks at rank 1's arrival plus its modelled duration. Then a split that reverses
// the ranks.
void test_threads() {
    ncclUniqueId id;
    CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    int split_ranks[2] = {-1, -1};
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
        threads.emplace_back([&, r] {
            CHECK(cudaSetDevice(r) == cudaSuccess);
            ncclComm_t comm = nullptr, reversed = nullptr;
            CHECK(ncclCommInitRank(&comm, 2, id, r) == ncclSuccess);
            float* buffer = nullptr;
            CHECK(cudaMalloc(&buffer, 4096) == cudaSuccess);
            if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
            CHECK(ncclBroadcast(buffer, buffer, 1024, ncclFloat32, 0, comm, nullptr) == ncclSuccess);
            CHECK(ncclCommSplit(comm, 0, -r, &reversed, nullptr) == ncclSuccess);
            if (reversed) CHECK(ncclCommUserRank(reversed, &split_ranks[r]) == ncclSuccess);
            CHECK(ncclAllGather(buffer, buffer, 512, ncclFloat32, reversed, nullptr) == ncclSuccess);
            CHECK(cudaDeviceSynchronize() == cudaSuccess);
            CHECK(ncclCommDestroy(reversed) == ncclSuccess && ncclCommDestroy(comm) == ncclSuccess);
            CHECK(cudaFree(buffer) == cudaSuccess);
        });
    }
    for (auto& t : threads) t.join();
    CHECK(split_ranks[0] == 1 && split_ranks[1] == 0);
}

void check_truth(const char* path) {
    std::vector<TruthOp> ops = read_truth(path);
    int all_reduce = 0, send_recv = 0, broadcast = 0, all_gather = 0;
    uint64_t end[2] = {}, arrival[2] = {}, bcast_end[2] = {}, bcast_arrival[2] = {};
    for (const TruthOp& op : ops) {
        if (op.op == "AllReduce") {
            ++all_reduce;
            end[op.rank] = op.end_ns;
            arrival[op.rank] = op.arrival_ns;
            CHECK(op.kernel == "ncclDevKernel_AllReduce_Sum_f32_RING_LL128");
            CHECK(op.bytes == 4u << 20);
        }
        send_recv += op.op == "Send" || op.op == "Recv";
        if (op.op == "Broadcast") {
            ++broadcast;
            bcast_end[op.rank] = op.end_ns;
            bcast_arrival[op.rank] = op.arrival_ns;
            CHECK(op.kernel == "ncclDevKernel_Broadcast_RING_LL");
        }
        all_gather += op.op == "AllGather";
    }
    CHECK(all_reduce == 2 && send_recv == 4 && broadcast == 2 && all_gather == 2);
    // The all-reduce: 4 us + 2 LL128 steps of 1 us + 4 MiB / (370 GB/s x 0.9375) = 18092 ns after the
    // later arrival, on both ranks.
    CHECK(end[0] == end[1] && end[0] != 0);
    CHECK(end[0] - std::max(arrival[0], arrival[1]) == 18092);
    // The broadcast: rank 1 arrives 50 ms late; 4 us + 1 LL step of 0.6 us + 4096 B / (370 GB/s x 0.5)
    // = 4622 ns after it.
    CHECK(bcast_end[0] == bcast_end[1]);
    CHECK(bcast_arrival[1] > bcast_arrival[0] + 40000000);
    CHECK(bcast_end[1] - bcast_arrival[1] == 4622);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    std::ofstream(argv[1], std::ios::trunc).close();  // the driver opens it at its first line
    CHECK(!real_nccl_mapped());
    ncclComm_t comms[2] = {};
    CHECK(ncclCommInitAll(comms, 2, nullptr) == ncclSuccess);
    cudaStream_t streams[2] = {};
    float* buffers[2] = {};
    for (int r = 0; r < 2; ++r) {
        CHECK(cudaSetDevice(r) == cudaSuccess);
        CHECK(cudaStreamCreate(&streams[r]) == cudaSuccess);
        CHECK(cudaMalloc(&buffers[r], 4 << 20) == cudaSuccess);
    }
    test_queries_and_errors(comms);
    test_grouped_all_reduce(comms, streams, buffers);
    for (int r = 0; r < 2; ++r) CHECK(ncclCommDestroy(comms[r]) == ncclSuccess);
    test_threads();
    check_truth(argv[1]);
    if (g_failures == 0) std::printf("simgpu nccl: all checks passed\n");
    return g_failures == 0 ? 0 : 1;
}
