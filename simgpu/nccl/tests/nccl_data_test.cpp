// The data the simulated NCCL moves: for 2, 3 and 4 ranks, each a separate process (forked, meeting
// by unique id as torchrun's workers do), every collective's receive buffers after the call equal
// the values computed here on the host: all-reduce with each reduction over integer, floating, half,
// bfloat16 and FP8 data, in place and out of place; all-gather; reduce-scatter; broadcast; reduce
// (only the root's buffer changes); send/receive around a ring in one group; two all-reduces fused
// in one group; a user pre-multiplied sum; a 16 MiB all-reduce. Then one thread drives two ranks
// (ncclCommInitAll + group), and no staged shared-memory segment is left behind.
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <nccl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_failures = 0;
#define CHECK(cond)                                                                                             \
    do {                                                                                                        \
        if (!(cond)) {                                                                                          \
            std::fprintf(stderr, "pid %d %s:%d: CHECK(%s) failed\n", int(getpid()), __FILE__, __LINE__, #cond); \
            ++g_failures;                                                                                       \
        }                                                                                                       \
    } while (0)

struct Rank {
    int rank = 0, n = 0;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
};

template <typename T>
T* to_device(const std::vector<T>& host) {
    T* device = nullptr;
    CHECK(cudaMalloc(&device, std::max<size_t>(1, host.size()) * sizeof(T)) == cudaSuccess);
    CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
    return device;
}

template <typename T>
std::vector<T> to_host(const T* device, size_t count, cudaStream_t stream) {
    std::vector<T> host(count);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return host;
}

// The bits of a small integer `k` in a binary floating format (exact for the values used here).
uint16_t small_int_bits(int k, int mantissa_bits, int bias) {
    if (k == 0) return 0;
    int exponent = 0;
    while ((2 << exponent) <= k) ++exponent;
    const int fraction = k - (1 << exponent);
    const int mantissa =
        exponent <= mantissa_bits ? fraction << (mantissa_bits - exponent) : fraction >> (exponent - mantissa_bits);
    return uint16_t(((exponent + bias) << mantissa_bits) | mantissa);
}

// All-reduce of each reduction over a few types, out of place and in place.
void test_all_reduce(const Rank& r) {
    constexpr size_t kCount = 1000;
    const int n = r.n;
    std::vector<float> f(kCount);
    std::vector<int32_t> ints(kCount);
    std::vector<int64_t> longs(kCount);
    std::vector<uint8_t> bytes(kCount, uint8_t(200 + r.rank));
    for (size_t i = 0; i < kCount; ++i) {
        f[i] = float((r.rank + 1) * int(i % 7));
        ints[i] = int32_t((r.rank * 37 + int(i)) % 11) - 5;
        longs[i] = int64_t(r.rank + 2) * (i % 3 == 0 ? -1 : 1);
    }
    float* f_send = to_device(f);
    float* f_recv = to_device(std::vector<float>(kCount, -1));
    CHECK(ncclAllReduce(f_send, f_recv, kCount, ncclFloat32, ncclSum, r.comm, r.stream) == ncclSuccess);
    std::vector<float> sum = to_host(f_recv, kCount, r.stream);
    for (size_t i = 0; i < kCount; ++i) CHECK(sum[i] == float(n * (n + 1) / 2 * int(i % 7)));
    CHECK(to_host(f_send, kCount, r.stream) == f);  // out of place: the send buffer is left alone
    int32_t* i_buf = to_device(ints);
    CHECK(ncclAllReduce(i_buf, i_buf, kCount, ncclInt32, ncclMax, r.comm, r.stream) == ncclSuccess);
    std::vector<int32_t> max = to_host(i_buf, kCount, r.stream);
    CHECK(cudaMemcpy(i_buf, ints.data(), kCount * 4, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(ncclAllReduce(i_buf, i_buf, kCount, ncclInt32, ncclMin, r.comm, r.stream) == ncclSuccess);
    std::vector<int32_t> min = to_host(i_buf, kCount, r.stream);
    for (size_t i = 0; i < kCount; ++i) {
        int32_t want_max = -100, want_min = 100;
        for (int k = 0; k < n; ++k) {
            want_max = std::max(want_max, int32_t((k * 37 + int(i)) % 11) - 5);
            want_min = std::min(want_min, int32_t((k * 37 + int(i)) % 11) - 5);
        }
        CHECK(max[i] == want_max && min[i] == want_min);
    }
    int64_t* l_buf = to_device(longs);
    CHECK(ncclAllReduce(l_buf, l_buf, kCount, ncclInt64, ncclProd, r.comm, r.stream) == ncclSuccess);
    std::vector<int64_t> prod = to_host(l_buf, kCount, r.stream);
    int64_t factorial = 1;
    for (int k = 0; k < n; ++k) factorial *= k + 2;
    for (size_t i = 0; i < kCount; ++i) CHECK(prod[i] == (i % 3 == 0 && n % 2 == 1 ? -factorial : factorial));
    uint8_t* b_buf = to_device(bytes);
    CHECK(ncclAllReduce(b_buf, b_buf, kCount, ncclUint8, ncclSum, r.comm, r.stream) == ncclSuccess);
    const unsigned want_bytes = (200u * unsigned(n) + unsigned(n * (n - 1) / 2)) % 256u;  // wraps around
    for (uint8_t v : to_host(b_buf, kCount, r.stream)) CHECK(v == want_bytes);
    for (void* p : {static_cast<void*>(f_send), static_cast<void*>(f_recv), static_cast<void*>(i_buf),
                    static_cast<void*>(l_buf), static_cast<void*>(b_buf)})
        CHECK(cudaFree(p) == cudaSuccess);
}

// ncclAvg (floating: each contribution times 1/n; integers: the sum divided by n, truncated) and a
// user pre-multiplied sum.
void test_averages(const Rank& r) {
    const int n = r.n;
    double* d = to_device(std::vector<double>(64, 2.0 * r.rank));
    CHECK(ncclAllReduce(d, d, 64, ncclFloat64, ncclAvg, r.comm, r.stream) == ncclSuccess);
    for (double v : to_host(d, 64, r.stream)) CHECK(std::fabs(v - double(n - 1)) < 1e-12);
    int32_t* i = to_device(std::vector<int32_t>(64, r.rank == 0 ? 10 : 1));
    CHECK(ncclAllReduce(i, i, 64, ncclInt32, ncclAvg, r.comm, r.stream) == ncclSuccess);
    for (int32_t v : to_host(i, 64, r.stream)) CHECK(v == (10 + (n - 1)) / n);
    float scalar = 2.5f;
    ncclRedOp_t premul{};
    CHECK(ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat32, ncclScalarHostImmediate, r.comm) == ncclSuccess);
    float* f = to_device(std::vector<float>(64, float(r.rank + 1)));
    CHECK(ncclAllReduce(f, f, 64, ncclFloat32, premul, r.comm, r.stream) == ncclSuccess);
    for (float v : to_host(f, 64, r.stream)) CHECK(v == 2.5f * float(n * (n + 1) / 2));
    CHECK(ncclRedOpDestroy(premul, r.comm) == ncclSuccess);
    CHECK(cudaFree(d) == cudaSuccess && cudaFree(i) == cudaSuccess && cudaFree(f) == cudaSuccess);
}

// Half, bfloat16 and FP8 E4M3: sums of small integers are exact; half 2048 + 1 rounds to even.
void test_narrow_types(const Rank& r) {
    const int n = r.n;
    uint16_t* h = to_device(std::vector<uint16_t>(32, small_int_bits(r.rank + 1, 10, 15)));
    CHECK(ncclAllReduce(h, h, 32, ncclFloat16, ncclSum, r.comm, r.stream) == ncclSuccess);
    for (uint16_t v : to_host(h, 32, r.stream)) CHECK(v == small_int_bits(n * (n + 1) / 2, 10, 15));
    uint16_t* rounding = to_device(std::vector<uint16_t>(8, small_int_bits(r.rank == 0 ? 2048 : 0, 10, 15)));
    if (r.rank == 1) {
        const std::vector<uint16_t> one(8, small_int_bits(1, 10, 15));
        CHECK(cudaMemcpy(rounding, one.data(), 16, cudaMemcpyHostToDevice) == cudaSuccess);
    }
    CHECK(ncclAllReduce(rounding, rounding, 8, ncclFloat16, ncclSum, r.comm, r.stream) == ncclSuccess);
    for (uint16_t v : to_host(rounding, 8, r.stream)) CHECK(v == small_int_bits(2048, 10, 15));
    uint16_t* bf = to_device(std::vector<uint16_t>(32, small_int_bits(3 * r.rank + 1, 7, 127)));
    CHECK(ncclAllReduce(bf, bf, 32, ncclBfloat16, ncclMax, r.comm, r.stream) == ncclSuccess);
    for (uint16_t v : to_host(bf, 32, r.stream)) CHECK(v == small_int_bits(3 * (n - 1) + 1, 7, 127));
    uint8_t* f8 = to_device(std::vector<uint8_t>(32, uint8_t(small_int_bits(r.rank + 1, 3, 7))));
    CHECK(ncclAllReduce(f8, f8, 32, ncclFloat8e4m3, ncclSum, r.comm, r.stream) == ncclSuccess);
    for (uint8_t v : to_host(f8, 32, r.stream)) CHECK(v == small_int_bits(n * (n + 1) / 2, 3, 7));
    CHECK(cudaFree(h) == cudaSuccess && cudaFree(rounding) == cudaSuccess);
    CHECK(cudaFree(bf) == cudaSuccess && cudaFree(f8) == cudaSuccess);
}

// All-gather and reduce-scatter, out of place and in place (NCCL's layout: the own block of the
// receive buffer is the send buffer).
void test_gather_scatter(const Rank& r) {
    constexpr size_t kCount = 300;
    const size_t n = size_t(r.n), me = size_t(r.rank);
    std::vector<int32_t> mine(kCount);
    for (size_t i = 0; i < kCount; ++i) mine[i] = int32_t(me * 1000 + i);
    int32_t* send = to_device(mine);
    int32_t* gathered = to_device(std::vector<int32_t>(kCount * n, -1));
    CHECK(ncclAllGather(send, gathered, kCount, ncclInt32, r.comm, r.stream) == ncclSuccess);
    std::vector<int32_t> all = to_host(gathered, kCount * n, r.stream);
    std::vector<int32_t> blocks(kCount * n, -7);
    std::copy(mine.begin(), mine.end(), blocks.begin() + long(me * kCount));
    int32_t* in_place = to_device(blocks);
    CHECK(ncclAllGather(in_place + me * kCount, in_place, kCount, ncclInt32, r.comm, r.stream) == ncclSuccess);
    std::vector<int32_t> all_in_place = to_host(in_place, kCount * n, r.stream);
    for (size_t k = 0; k < n; ++k)
        for (size_t i = 0; i < kCount; ++i) {
            CHECK(all[k * kCount + i] == int32_t(k * 1000 + i));
            CHECK(all_in_place[k * kCount + i] == int32_t(k * 1000 + i));
        }
    std::vector<float> contribution(kCount * n);
    for (size_t j = 0; j < contribution.size(); ++j) contribution[j] = float((me + 1) * j);
    float* rs_send = to_device(contribution);
    float* rs_recv = to_device(std::vector<float>(kCount, -1));
    CHECK(ncclReduceScatter(rs_send, rs_recv, kCount, ncclFloat32, ncclSum, r.comm, r.stream) == ncclSuccess);
    CHECK(ncclReduceScatter(rs_send, rs_send + me * kCount, kCount, ncclFloat32, ncclSum, r.comm, r.stream) ==
          ncclSuccess);
    std::vector<float> scattered = to_host(rs_recv, kCount, r.stream);
    std::vector<float> scattered_in_place = to_host(rs_send + me * kCount, kCount, r.stream);
    for (size_t i = 0; i < kCount; ++i) {
        const float want = float(n * (n + 1) / 2 * (me * kCount + i));
        CHECK(scattered[i] == want && scattered_in_place[i] == want);
    }
    for (void* p : {static_cast<void*>(send), static_cast<void*>(gathered), static_cast<void*>(in_place),
                    static_cast<void*>(rs_send), static_cast<void*>(rs_recv)})
        CHECK(cudaFree(p) == cudaSuccess);
}

// Broadcast from the last rank (out of place, then in place through ncclBcast) and a reduce to rank
// 0, whose other ranks' receive buffers keep their contents.
void test_rooted(const Rank& r) {
    const int root = r.n - 1;
    std::vector<int64_t> data(100);
    for (size_t i = 0; i < data.size(); ++i) data[i] = r.rank == root ? int64_t(42 + i) : 0;
    int64_t* send = to_device(data);
    int64_t* recv = to_device(std::vector<int64_t>(100, -1));
    CHECK(ncclBroadcast(send, recv, 100, ncclInt64, root, r.comm, r.stream) == ncclSuccess);
    CHECK(ncclBcast(send, 100, ncclInt64, root, r.comm, r.stream) == ncclSuccess);
    std::vector<int64_t> got = to_host(recv, 100, r.stream), got_in_place = to_host(send, 100, r.stream);
    for (size_t i = 0; i < 100; ++i) CHECK(got[i] == int64_t(42 + i) && got_in_place[i] == int64_t(42 + i));
    int32_t* value = to_device(std::vector<int32_t>(50, r.rank + 1));
    int32_t* total = to_device(std::vector<int32_t>(50, -3));
    CHECK(ncclReduce(value, total, 50, ncclInt32, ncclSum, 0, r.comm, r.stream) == ncclSuccess);
    for (int32_t v : to_host(total, 50, r.stream)) CHECK(v == (r.rank == 0 ? r.n * (r.n + 1) / 2 : -3));
    CHECK(cudaFree(send) == cudaSuccess && cudaFree(recv) == cudaSuccess);
    CHECK(cudaFree(value) == cudaSuccess && cudaFree(total) == cudaSuccess);
}

// Send/receive around the ring in one group (3 MiB each), then two all-reduces of different types
// fused in one group, and a 16 MiB all-reduce.
void test_groups_and_sizes(const Rank& r) {
    constexpr size_t kRing = 3 << 18;  // floats
    const int next = (r.rank + 1) % r.n, previous = (r.rank + r.n - 1) % r.n;
    float* out = to_device(std::vector<float>(kRing, float(r.rank * 10 + 1)));
    float* in = to_device(std::vector<float>(kRing, -1));
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclSend(out, kRing, ncclFloat32, next, r.comm, r.stream) == ncclSuccess);
    CHECK(ncclRecv(in, kRing, ncclFloat32, previous, r.comm, r.stream) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    for (float v : to_host(in, kRing, r.stream)) CHECK(v == float(previous * 10 + 1));
    int32_t* a = to_device(std::vector<int32_t>(16, r.rank));
    double* b = to_device(std::vector<double>(16, 0.5));
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(a, a, 16, ncclInt32, ncclSum, r.comm, r.stream) == ncclSuccess);
    CHECK(ncclAllReduce(b, b, 16, ncclFloat64, ncclSum, r.comm, r.stream) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    for (int32_t v : to_host(a, 16, r.stream)) CHECK(v == r.n * (r.n - 1) / 2);
    for (double v : to_host(b, 16, r.stream)) CHECK(v == 0.5 * r.n);
    constexpr size_t kLarge = 4 << 20;  // floats: 16 MiB
    float* large = to_device(std::vector<float>(kLarge, 1.0f));
    CHECK(ncclAllReduce(large, large, kLarge, ncclFloat32, ncclSum, r.comm, r.stream) == ncclSuccess);
    std::vector<float> summed = to_host(large, kLarge, r.stream);
    CHECK(summed.front() == float(r.n) && summed.back() == float(r.n));
    for (void* p : {static_cast<void*>(out), static_cast<void*>(in), static_cast<void*>(a), static_cast<void*>(b),
                    static_cast<void*>(large)})
        CHECK(cudaFree(p) == cudaSuccess);
}

int run_rank(int rank, int n, const ncclUniqueId& id) {
    Rank r;
    r.rank = rank;
    r.n = n;
    CHECK(cudaSetDevice(rank) == cudaSuccess);
    CHECK(cudaStreamCreate(&r.stream) == cudaSuccess);
    CHECK(ncclCommInitRank(&r.comm, n, id, rank) == ncclSuccess);
    if (r.comm == nullptr) return 1;
    test_all_reduce(r);
    test_averages(r);
    test_narrow_types(r);
    test_gather_scatter(r);
    test_rooted(r);
    test_groups_and_sizes(r);
    CHECK(ncclCommDestroy(r.comm) == ncclSuccess);
    return g_failures == 0 ? 0 : 1;
}

// The shared-memory names the simulated NCCL derives from `id` (docs/simgpu-nccl.md).
std::string segment_prefix(const ncclUniqueId& id) {
    std::string prefix = "tbdsim-nccl-";
    char hex[3];
    for (int i = 16; i < 32; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(id.internal[i]));
        prefix += hex;
    }
    return prefix;
}

bool segments_left(const std::string& prefix) {
    DIR* dir = opendir("/dev/shm");
    bool found = false;
    for (dirent* e = dir ? readdir(dir) : nullptr; e != nullptr; e = readdir(dir))
        found |= std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0;
    if (dir) closedir(dir);
    return found;
}

// `n` ranks in `n` forked processes; true when every one passed.
bool run_processes(int n) {
    ncclUniqueId id;
    CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    std::vector<pid_t> children;
    for (int rank = 0; rank < n; ++rank) {
        const pid_t pid = fork();
        if (pid == 0) _exit(run_rank(rank, n, id));
        children.push_back(pid);
    }
    bool passed = true;
    for (pid_t pid : children) {
        int status = 0;
        passed &= waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    CHECK(!segments_left(segment_prefix(id)));
    std::printf("%d ranks in %d processes: %s\n", n, n, passed ? "values as expected" : "FAILED");
    return passed;
}

// One thread, two ranks (ncclCommInitAll): an all-reduce and an all-gather in one group.
void test_one_thread_two_ranks() {
    ncclComm_t comms[2] = {};
    CHECK(ncclCommInitAll(comms, 2, nullptr) == ncclSuccess);
    float* buffers[2] = {};
    int32_t* gathered[2] = {};
    for (int r = 0; r < 2; ++r) {
        CHECK(cudaSetDevice(r) == cudaSuccess);
        buffers[r] = to_device(std::vector<float>(256, float(r + 3)));
        gathered[r] = to_device(std::vector<int32_t>(4, r == 0 ? 11 : 22));
    }
    CHECK(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < 2; ++r) {
        CHECK(ncclAllReduce(buffers[r], buffers[r], 256, ncclFloat32, ncclSum, comms[r], nullptr) == ncclSuccess);
        CHECK(ncclAllGather(gathered[r] + 2 * r, gathered[r], 2, ncclInt32, comms[r], nullptr) == ncclSuccess);
    }
    CHECK(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < 2; ++r) {
        CHECK(cudaSetDevice(r) == cudaSuccess);
        for (float v : to_host(buffers[r], 256, nullptr)) CHECK(v == 7.0f);
        CHECK((to_host(gathered[r], 4, nullptr) == std::vector<int32_t>{11, 11, 22, 22}));
        CHECK(ncclCommDestroy(comms[r]) == ncclSuccess);
    }
}

}  // namespace

int main() {
    bool passed = true;
    for (int n = 2; n <= 4; ++n) passed &= run_processes(n);
    test_one_thread_two_ranks();  // after the forks: this process initializes the driver only now
    if (passed && g_failures == 0) std::printf("simgpu nccl data: all checks passed\n");
    return passed && g_failures == 0 ? 0 : 1;
}
