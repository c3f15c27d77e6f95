// Exercises the NVTX API the collector records, and writes what it did as the expected ranges:
//   nvtx_program EXPECTED.tsv
// One line per range it expects in the trace: name, domain ("" = default), thread id, and the
// CLOCK_MONOTONIC interval around the call that began it and around the call that ended it (the
// recorded begin and end must fall inside those). Exits 1 when an NVTX return value is wrong while a
// tool is attached. It makes one CUDA call (cuInit through dlopen, as libraries do), so that the
// collector starts writing its file.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" void nvtx_helper_range(const char* name);

namespace {

uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t thread_id() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

struct Expected {
    std::string name, domain;
    uint32_t tid;
    uint64_t begin_lo, begin_hi, end_lo, end_hi;
};

std::mutex g_mutex;
std::vector<Expected> g_expected;
int g_failures = 0;
bool g_tool_attached = false;  // NVTX_INJECTION64_PATH set: return values are the tool's

void expect(Expected e) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_expected.push_back(std::move(e));
}

void check(bool ok, const char* what) {
    if (ok || !g_tool_attached) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    std::fprintf(stderr, "nvtx_program: wrong return value: %s\n", what);
    ++g_failures;
}

// A push/pop range around `body`, recorded with its brackets.
template <typename Body>
void pushed(const std::string& name, Body&& body) {
    Expected e{name, "", thread_id(), now_ns(), 0, 0, 0};
    nvtxRangePushA(name.c_str());
    e.begin_hi = now_ns();
    body();
    e.end_lo = now_ns();
    nvtxRangePop();
    e.end_hi = now_ns();
    expect(e);
}

void start_cuda() {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW);
    if (driver == nullptr) {
        std::fprintf(stderr, "nvtx_program: no libcuda.so.1: %s\n", dlerror());
        std::exit(2);
    }
    using Init = int (*)(unsigned);
    auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
    if (init == nullptr || init(0) != 0) {
        std::fprintf(stderr, "nvtx_program: cuInit failed\n");
        std::exit(2);
    }
}

void nested_and_levels() {
    pushed("main/outer", [] {
        pushed("main/middle", [] {
            Expected e{"main/inner", "", thread_id(), now_ns(), 0, 0, 0};
            const int level = nvtxRangePushA("main/inner");
            e.begin_hi = now_ns();
            check(level == 2, "nvtxRangePushA level of the third nested range");
            e.end_lo = now_ns();
            const int popped = nvtxRangePop();
            e.end_hi = now_ns();
            check(popped == 2, "nvtxRangePop level of the third nested range");
            expect(e);
        });
    });
    check(nvtxRangePop() < 0, "nvtxRangePop without a push");
}

// Deeper than the collector's per-thread stack (32): the outer 32 are kept, the rest are not
// recorded, and pops still pair with their pushes.
void too_deep() {
    constexpr int kPushes = 40;
    std::vector<Expected> open;
    for (int i = 0; i < kPushes; ++i) {
        Expected e{"deep#" + std::to_string(i), "", thread_id(), now_ns(), 0, 0, 0};
        nvtxRangePushA(e.name.c_str());
        e.begin_hi = now_ns();
        open.push_back(e);
    }
    for (int i = kPushes - 1; i >= 0; --i) {
        Expected e = open[static_cast<size_t>(i)];
        e.end_lo = now_ns();
        nvtxRangePop();
        e.end_hi = now_ns();
        if (i < 32) expect(e);
    }
    pushed("after-deep", [] {});
}

void attributes_and_domains() {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    attributes.message.unicode = L"wide-gr\u00f6\u00dfe-\u2713";
    Expected wide{"wide-gr\xc3\xb6\xc3\x9f" "e-\xe2\x9c\x93", "", thread_id(), now_ns(), 0, 0, 0};
    nvtxRangePushEx(&attributes);
    wide.begin_hi = wide.end_lo = now_ns();
    nvtxRangePop();
    wide.end_hi = now_ns();
    expect(wide);

    // A domain has its own stack: popping the default domain ends "default-a" although the domain's
    // range was pushed after it.
    nvtxDomainHandle_t domain = nvtxDomainCreateA("tbd.test");
    check(domain != nullptr, "nvtxDomainCreateA");
    nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "registered-name");
    check(registered != nullptr, "nvtxDomainRegisterStringA");
    Expected a{"default-a", "", thread_id(), now_ns(), 0, 0, 0};
    nvtxRangePushA("default-a");
    a.begin_hi = now_ns();
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = registered;
    Expected d{"registered-name", "tbd.test", thread_id(), now_ns(), 0, 0, 0};
    const int level = nvtxDomainRangePushEx(domain, &attributes);
    d.begin_hi = now_ns();
    check(level == 0, "nvtxDomainRangePushEx level of the domain's first range");
    a.end_lo = now_ns();
    nvtxRangePop();
    a.end_hi = d.end_lo = now_ns();
    nvtxDomainRangePop(domain);
    d.end_hi = now_ns();
    expect(a);
    expect(d);

    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = "domain-start-end";
    Expected s{"domain-start-end", "tbd.test", thread_id(), now_ns(), 0, 0, 0};
    nvtxRangeId_t id = nvtxDomainRangeStartEx(domain, &attributes);
    s.begin_hi = s.end_lo = now_ns();
    nvtxDomainRangeEnd(domain, id);
    s.end_hi = now_ns();
    expect(s);

    Expected m{"mark-here", "", thread_id(), now_ns(), 0, 0, 0};
    nvtxMarkA("mark-here");
    m.begin_hi = m.end_hi = now_ns();
    m.end_lo = m.begin_lo;
    expect(m);
    nvtxDomainDestroy(domain);
}

// nvtxRangeStartA on this thread, nvtxRangeEnd on another: the range belongs to the starter.
void start_here_end_there() {
    Expected e{"handed-over", "", thread_id(), now_ns(), 0, 0, 0};
    const nvtxRangeId_t id = nvtxRangeStartA("handed-over");
    e.begin_hi = now_ns();
    check(id != 0, "nvtxRangeStartA id");
    std::thread([&] {
        e.end_lo = now_ns();
        nvtxRangeEnd(id);
        e.end_hi = now_ns();
        nvtxRangeEnd(id);  // ending twice records nothing more
    }).join();
    expect(e);
}

void threads() {
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t) {
        workers.emplace_back([t] {
            for (int i = 0; i < 250; ++i) {
                const std::string base = "w" + std::to_string(t) + "/" + std::to_string(i);
                pushed(base + "/outer", [&] { pushed(base + "/inner", [] {}); });
            }
        });
    }
    for (auto& w : workers) w.join();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: nvtx_program EXPECTED.tsv\n");
        return 2;
    }
    const char* tool = std::getenv("NVTX_INJECTION64_PATH");
    g_tool_attached = tool != nullptr && *tool != '\0' && std::getenv("TBDPROF_RUN_DIR") != nullptr;
    start_cuda();
    nested_and_levels();
    too_deep();
    attributes_and_domains();
    start_here_end_there();
    threads();
    {
        Expected e{"helper/range", "", thread_id(), now_ns(), 0, 0, 0};
        nvtx_helper_range("helper/range");
        e.end_hi = now_ns();
        e.begin_hi = e.end_hi;
        e.end_lo = e.begin_lo;
        expect(e);
    }

    FILE* out = std::fopen(argv[1], "w");
    if (out == nullptr) return 2;
    for (const Expected& e : g_expected) {
        std::fprintf(out, "%s\t%s\t%u\t%llu\t%llu\t%llu\t%llu\n", e.name.c_str(), e.domain.c_str(), e.tid,
                     static_cast<unsigned long long>(e.begin_lo), static_cast<unsigned long long>(e.begin_hi),
                     static_cast<unsigned long long>(e.end_lo), static_cast<unsigned long long>(e.end_hi));
    }
    std::fclose(out);
    return g_failures == 0 ? 0 : 1;
}
