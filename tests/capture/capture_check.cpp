// Checks a trace recorded with capture control (tbdprof record --capture-range, --delay/--duration,
// --steps) against the simulated GPU's ground truth:
//   capture_check window TRACE TRUTH WINDOWS
//     the program's own cudaProfilerStart/Stop calls (the truth's `profiler` lines) mark the
//     expected windows: exactly the truth's kernels, copies and sets launched between them are in
//     the trace; every allocation and free is; the trace has WINDOWS capture_windows rows.
//   capture_check steps FULL_TRACE TRACE N M
//     TRACE was recorded with --steps N:M from the same deterministic program as FULL_TRACE (all
//     of it): its kernels are those launched inside FULL_TRACE's step ranges N..M, in order; the
//     allocations are the same; the tagger found M-N+1 iterations.
// Prints what differs; exit status 0 when nothing does.
#include "truth_file.h"

#include <tbdprof/trace/trace_reader.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <tuple>
#include <vector>

using namespace tbdprof;

namespace {

int g_failures = 0;

void expect(bool ok, const std::string& what) {
    std::printf("%s  %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) ++g_failures;
}

template <class T>
void compare(const char* what, std::vector<T> want, std::vector<T> got) {
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    expect(want == got, std::string(what) + ": want " + std::to_string(want.size()) + ", trace has " +
                            std::to_string(got.size()) + (want == got ? " (same)" : " (differ)"));
}

bool in_windows(const test::Truth& truth, uint32_t pid, uint32_t correlation) {
    bool open = false;
    uint32_t from = 0;
    for (const auto& p : truth.profiler) {
        if (p.pid != pid) continue;
        if (p.start && !open) {
            open = true;
            from = p.correlation;
        } else if (!p.start && open) {
            open = false;
            if (correlation > from && correlation < p.correlation) return true;
        }
    }
    return open && correlation > from;
}

std::vector<std::tuple<int64_t, int64_t, std::string>> trace_kernels(trace::Database& db) {
    std::vector<std::tuple<int64_t, int64_t, std::string>> out;
    trace::Statement st(db,
                        "SELECT k.start_ns + r.start_monotonic_ns, k.end_ns + r.start_monotonic_ns, k.mangled "
                        "FROM kernel_view k, run r ORDER BY k.start_ns");
    while (st.step()) out.emplace_back(st.column_int(0), st.column_int(1), st.column_text(2));
    return out;
}

int check_window(const char* trace_path, const char* truth_path, int64_t windows) {
    const test::Truth truth = test::read_truth(truth_path);
    trace::Database db = trace::open_trace(trace_path);
    expect(!truth.profiler.empty(), "the program called cudaProfilerStart/Stop");
    std::vector<std::tuple<int64_t, int64_t, std::string>> want_kernels;
    for (const auto& k : truth.kernels)
        if (in_windows(truth, k.pid, k.correlation)) want_kernels.emplace_back(k.start, k.end, k.name);
    compare("kernels inside the windows", want_kernels, trace_kernels(db));
    expect(want_kernels.size() < truth.kernels.size(),
           "kernels outside the windows exist in the truth (" + std::to_string(truth.kernels.size()) + " in all)");

    std::vector<std::tuple<int64_t, int64_t>> want_copies, got_copies, want_sets, got_sets;
    for (const auto& c : truth.copies)
        if (in_windows(truth, c.pid, c.correlation)) want_copies.emplace_back(c.start, static_cast<int64_t>(c.bytes));
    for (const auto& s : truth.sets)
        if (in_windows(truth, s.pid, s.correlation)) want_sets.emplace_back(s.start, static_cast<int64_t>(s.bytes));
    trace::Statement copies(db, "SELECT c.start_ns + r.start_monotonic_ns, c.bytes FROM copies c, run r");
    while (copies.step()) got_copies.emplace_back(copies.column_int(0), copies.column_int(1));
    trace::Statement sets(db, "SELECT s.start_ns + r.start_monotonic_ns, s.bytes FROM sets s, run r");
    while (sets.step()) got_sets.emplace_back(sets.column_int(0), sets.column_int(1));
    compare("copies inside the windows", want_copies, got_copies);
    compare("sets inside the windows", want_sets, got_sets);

    std::vector<std::tuple<int64_t, int64_t, bool>> want_memory, got_memory;
    for (const auto& m : truth.memory)
        if (m.is_alloc) {
            const bool freed = std::any_of(truth.memory.begin(), truth.memory.end(), [&](const test::TruthMemory& f) {
                return !f.is_alloc && f.address == m.address && f.time >= m.time;
            });
            want_memory.emplace_back(static_cast<int64_t>(m.address), static_cast<int64_t>(m.bytes), freed);
        }
    trace::Statement allocs(db, "SELECT address, bytes, free_ns IS NOT NULL FROM allocations");
    while (allocs.step())
        got_memory.emplace_back(allocs.column_int(0), allocs.column_int(1), allocs.column_int(2) != 0);
    compare("allocations (all, inside and outside the windows)", want_memory, got_memory);
    expect(db.query_int("SELECT count(*) FROM capture_windows") == windows,
           "capture_windows has " + std::to_string(windows) + " rows");
    expect(db.query_int("SELECT count(*) FROM capture_windows WHERE end_ns < begin_ns") == 0,
           "windows end after they begin");
    return g_failures == 0 ? 0 : 1;
}

int check_steps(const char* full_path, const char* trace_path, int64_t first, int64_t last) {
    trace::Database full = trace::open_trace(full_path);
    trace::Database db = trace::open_trace(trace_path);
    std::vector<std::pair<int64_t, int64_t>> steps;
    trace::Statement st(full, "SELECT begin_ns, end_ns FROM ranges WHERE name = 'step' ORDER BY begin_ns");
    while (st.step()) steps.emplace_back(st.column_int(0), st.column_int(1));
    expect(static_cast<int64_t>(steps.size()) > last, "the full recording has step ranges 0.." + std::to_string(last));
    if (static_cast<int64_t>(steps.size()) <= last) return 1;
    std::vector<std::string> want, got;
    trace::Statement fk(full, "SELECT launch_ns, mangled FROM kernel_view ORDER BY start_ns");
    while (fk.step())
        if (fk.column_int(0) >= steps[static_cast<size_t>(first)].first &&
            fk.column_int(0) <= steps[static_cast<size_t>(last)].second)
            want.push_back(fk.column_text(1));
    for (const auto& k : trace_kernels(db)) got.push_back(std::get<2>(k));
    expect(!want.empty() && want == got, "kernels of steps " + std::to_string(first) + ".." + std::to_string(last) +
                                             ": want " + std::to_string(want.size()) + " in order, trace has " +
                                             std::to_string(got.size()));
    const char* allocs = "SELECT count(*) FROM allocations";
    expect(full.query_int(allocs) == db.query_int(allocs),
           "same allocations as the full recording (" + std::to_string(full.query_int(allocs)) + ")");
    expect(db.query_int("SELECT count(*) FROM capture_windows") == 1, "one capture window");
    // Allocated before the window and used in it: tagged from what the window shows, as in the full run.
    for (const char* category : {"weights", "gradients", "optimizer_state"}) {
        const std::string sql =
            std::string("SELECT count(*) FROM memory_allocations WHERE category = '") + category + "'";
        const int64_t in_full = full.query_int(sql.c_str());
        expect(in_full > 0 && db.query_int(sql.c_str()) == in_full,
               std::string(category) + ": " + std::to_string(in_full) + " allocations, as in the full recording");
    }
    // Allocations whose whole life lies outside the window: nothing used them there.
    expect(db.query_int("SELECT count(*) FROM memory_allocations a WHERE NOT EXISTS (SELECT 1 FROM capture_windows w "
                        "WHERE a.alloc_ns <= w.end_ns AND coalesce(a.free_ns, 1 << 62) >= w.begin_ns) AND "
                        "coalesce(a.category, '') <> 'other'") == 0,
           "allocations living only outside the window are tagged 'other'");
    expect(db.query_int("SELECT count(*) FROM iterations") == last - first + 1,
           "the tagger finds " + std::to_string(last - first + 1) + " iterations");
    return g_failures == 0 ? 0 : 1;
}

// --steps without NVTX: `steps` whole steps of `per_step` kernels, one contiguous run of the truth's.
int check_launches(const char* trace_path, const char* truth_path, size_t per_step, size_t steps) {
    const test::Truth truth = test::read_truth(truth_path);
    trace::Database db = trace::open_trace(trace_path);
    std::vector<std::tuple<int64_t, int64_t, std::string>> all;
    for (const auto& k : truth.kernels) all.emplace_back(k.start, k.end, k.name);
    std::sort(all.begin(), all.end());
    const auto got = trace_kernels(db);
    expect(got.size() == per_step * steps,
           std::to_string(got.size()) + " kernels, want " + std::to_string(per_step * steps));
    const auto first = got.empty() ? all.end() : std::find(all.begin(), all.end(), got.front());
    const bool contiguous = first != all.end() && static_cast<size_t>(all.end() - first) >= got.size() &&
                            std::equal(got.begin(), got.end(), first);
    expect(contiguous, "they are one contiguous run of the truth's kernels");
    size_t truth_allocs = 0;
    for (const auto& m : truth.memory) truth_allocs += m.is_alloc ? 1 : 0;
    expect(db.query_int("SELECT count(*) FROM allocations") == static_cast<int64_t>(truth_allocs),
           "all " + std::to_string(truth_allocs) + " allocations");
    expect(db.query_int("SELECT count(*) FROM capture_windows") == 1, "one capture window");
    return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string mode = argc > 1 ? argv[1] : "";
        if (mode == "window" && argc == 5) return check_window(argv[2], argv[3], std::atoll(argv[4]));
        if (mode == "launches" && argc == 6)
            return check_launches(argv[2], argv[3], std::strtoul(argv[4], nullptr, 10),
                                  std::strtoul(argv[5], nullptr, 10));
        if (mode == "steps" && argc == 6)
            return check_steps(argv[2], argv[3], std::atoll(argv[4]), std::atoll(argv[5]));
        std::fprintf(stderr,
                     "usage: capture_check window TRACE TRUTH WINDOWS | steps FULL_TRACE TRACE N M | launches TRACE "
                     "TRUTH PER_STEP STEPS\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "capture_check: %s\n", e.what());
        return 1;
    }
}
