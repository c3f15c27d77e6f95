// Checks how a trace paired the kernels whose CUPTI correlation record the test knob dropped:
//   lost_pairing_check TRACE DROPPED
// DROPPED is what TBDPROF_TEST_DROPPED_CORRELATIONS wrote: one "CORRELATION_ID EXTERNAL_ID" line per
// dropped record, the external id being raw::kThreadCorrelationTag | tid for work CUPTI tied to the
// launching thread. Passes when every kernel among them is stored with a launch of that very thread,
// and every thread's kernels, in correlation id order (CUPTI's call order), have launch times in the
// same order: then each kernel sits with its own launch. Prints what differs; exit 0 when nothing.
#include <tbdprof/raw_format.h>
#include <tbdprof/trace/trace_reader.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

using namespace tbdprof;

namespace {

// Dropped correlation id -> the tid CUPTI's record named (thread-tagged records only).
std::map<int64_t, int64_t> read_dropped(const char* path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(std::string("cannot read ") + path);
    std::map<int64_t, int64_t> tid_of;
    unsigned long long correlation = 0, external = 0;
    while (in >> correlation >> external) {
        if ((external & raw::kThreadCorrelationTag) != 0)
            tid_of[static_cast<int64_t>(correlation)] = static_cast<int64_t>(static_cast<uint32_t>(external));
    }
    return tid_of;
}

// Kernels whose correlation record was dropped: stored with a launch (device and host times) of the
// thread CUPTI's dropped record named. Returns how many differ.
int check_lost(trace::Database& db, const std::map<int64_t, int64_t>& tid_of) {
    trace::Statement kernels(db,
                             "SELECT k.correlation, t.tid, k.queued_ns IS NULL, k.duration_ns IS NULL "
                             "FROM kernels k LEFT JOIN threads t ON t.id = k.thread WHERE k.correlation IS NOT NULL");
    int found = 0, wrong = 0;
    while (kernels.step()) {
        const auto it = tid_of.find(kernels.column_int(0));
        if (it == tid_of.end()) continue;
        ++found;
        const bool own = !kernels.is_null(1) && kernels.column_int(1) == it->second && kernels.column_int(2) == 0 &&
                         kernels.column_int(3) == 0;
        if (own) continue;
        if (++wrong > 5) continue;
        const std::string stored = kernels.is_null(1) ? "no launch"
                                   : kernels.column_int(2) != 0
                                       ? "a launch made after it started (no queue time)"
                                       : "a launch of tid " + std::to_string(kernels.column_int(1));
        std::printf("  kernel %lld: launched by tid %lld, stored with %s\n", static_cast<long long>(it->first),
                    static_cast<long long>(it->second), stored.c_str());
    }
    std::printf("%s  lost kernels %d of %d with a launch of their own thread\n",
                wrong == 0 && found > 0 ? "ok  " : "FAIL", found - wrong, found);
    return wrong == 0 && found > 0 ? 0 : 1;
}

// Every kernel has a launch, and each thread's kernels in correlation id order have strictly
// increasing launch times. Returns how many are out of order or without a launch.
int check_thread_order(trace::Database& db) {
    trace::Statement kernels(db,
                             "SELECT thread, start_ns - queued_ns, correlation FROM kernels "
                             "ORDER BY thread, correlation");
    std::map<int64_t, int64_t> last_launch_of;
    int bad = 0, count = 0;
    while (kernels.step()) {
        ++count;
        if (kernels.is_null(0) || kernels.is_null(1)) {
            if (++bad <= 5) std::printf("  kernel %lld: no launch\n", static_cast<long long>(kernels.column_int(2)));
            continue;
        }
        const int64_t launch_ns = kernels.column_int(1);
        auto [it, first] = last_launch_of.try_emplace(kernels.column_int(0), launch_ns);
        if (!first && launch_ns <= it->second && ++bad <= 5)
            std::printf("  kernel %lld: launched before the thread's previous kernel\n",
                        static_cast<long long>(kernels.column_int(2)));
        it->second = launch_ns;
    }
    std::printf("%s  thread order %d of %d kernels in their threads' launch order\n", bad == 0 ? "ok  " : "FAIL",
                count - bad, count);
    return bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: lost_pairing_check TRACE DROPPED\n");
        return 2;
    }
    try {
        trace::Database db = trace::open_trace(argv[1]);
        const int failures = check_lost(db, read_dropped(argv[2])) + check_thread_order(db);
        return failures == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lost_pairing_check: %s\n", e.what());
        return 1;
    }
}
