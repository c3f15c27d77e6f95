// Reading and checking the inputs of `tbdprof merge`, and aligning their clocks.
#include "merge_inputs.h"

#include "tbdprof/trace/tables.h"
#include "tbdprof/trace/trace_reader.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <map>
#include <set>
#include <utility>

namespace tbdprof::trace::merge {

namespace {

std::optional<int64_t> note_int(const Database& db, std::string_view key) {
    const std::optional<std::string> text = read_note(db, key);
    if (!text) return std::nullopt;
    try {
        return std::stoll(*text);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void read_ranks(const Database& db, InputFacts& facts) {
    if (has_table(db, "process_ranks")) {
        Statement rows(db, "SELECT process, rank, local_rank, world_size FROM process_ranks ORDER BY process");
        while (rows.step())
            facts.ranks.push_back({rows.column_int(0), rows.column_int(1), rows.column_int(2), rows.column_int(3)});
    }
    const std::optional<int64_t> rank = note_int(db, "distributed.rank");
    const std::optional<int64_t> world_size = note_int(db, "distributed.world_size");
    if (facts.ranks.empty() && rank && world_size && facts.processes == 1) {
        facts.ranks.push_back({db.query_int("SELECT min(id) FROM processes"), *rank, *rank, *world_size});
        facts.ranks_from_notes = true;
    }
}

void read_run_row(const Database& db, InputFacts& facts) {
    Statement run(db,
                  "SELECT command_line, coalesce(host, ''), start_unix_ns, start_monotonic_ns, duration_ns, "
                  "simulated_device, clock_source, host_timed_kernels, exit_status, crash_signal, truncated_files "
                  "FROM run");
    if (!run.step()) throw MergeError(facts.path + ": the trace has no run row");
    facts.command_line = run.column_text(0), facts.host = run.column_text(1);
    facts.start_unix_ns = run.column_int(2), facts.start_monotonic_ns = run.column_int(3);
    facts.duration_ns = run.column_int(4), facts.simulated_device = run.column_int(5) != 0;
    facts.clock_source = run.column_text(6), facts.host_timed_kernels = run.column_int(7);
    facts.exit_status = run.column_optional_int(8), facts.crash_signal = run.column_optional_int(9);
    facts.truncated_files = run.column_int(10);
}

// The earliest time the input's rows hold (none: no rows), so that the merged trace can start no
// later (no negative times). Its own time 0 does not count: a host's clock may be far from the others'.
std::optional<int64_t> earliest_time(const Database& db) {
    Statement earliest(db,
                       "SELECT min(t) FROM (SELECT min(start_ns) AS t FROM processes "
                       "UNION ALL SELECT min(start_ns) FROM kernels UNION ALL SELECT min(alloc_ns) FROM allocations "
                       "UNION ALL SELECT min(begin_ns) FROM library_calls UNION ALL SELECT min(start_ns) FROM copies "
                       "UNION ALL SELECT min(begin_ns) FROM api_calls)");
    return earliest.step() ? earliest.column_optional_int(0) : std::nullopt;
}

}  // namespace

InputFacts read_input(const std::string& path) {
    InputFacts facts;
    facts.path = path;
    try {
        const Database db = open_trace(path);
        read_run_row(db, facts);
        facts.processes = db.query_int("SELECT count(*) FROM processes");
        facts.kernels = db.query_int("SELECT count(*) FROM kernels");
        facts.earliest_ns = earliest_time(db);
        read_ranks(db, facts);
        facts.collectives = read_collectives(db);
    } catch (const TraceOpenError& e) {
        throw MergeError(path + ": " + e.what());
    } catch (const SqliteError& e) {
        throw MergeError(path + ": cannot be read as a tbdprof trace (" + std::string(e.what()) + ")");
    }
    return facts;
}

void check_inputs(const std::vector<InputFacts>& inputs) {
    std::map<std::pair<dev_t, ino_t>, std::string> files;
    std::map<int64_t, std::string> rank_owner;
    std::map<int64_t, std::string> world_sizes;
    for (const InputFacts& input : inputs) {
        struct stat st {};
        if (::stat(input.path.c_str(), &st) == 0) {
            const auto [it, fresh] = files.emplace(std::pair{st.st_dev, st.st_ino}, input.path);
            if (!fresh) throw MergeError(fmt::format("{} and {} are the same file", it->second, input.path));
        }
        for (const ProcessRank& r : input.ranks) {
            const auto [it, fresh] = rank_owner.emplace(r.rank, input.path);
            if (!fresh)
                throw MergeError(
                    fmt::format("rank {} is in {} and in {}: the inputs must be different ranks of one job", r.rank,
                                it->second, input.path));
            world_sizes.emplace(r.world_size, input.path);
        }
    }
    if (world_sizes.size() > 1) {
        const auto first = world_sizes.begin(), second = std::next(first);
        throw MergeError(fmt::format("{} has world size {} but {} has {}: the inputs are not one job", first->second,
                                     first->first, second->second, second->first));
    }
}

std::vector<MergedInput> align_clocks(const std::vector<InputFacts>& inputs) {
    std::vector<MergedInput> merged(inputs.size());
    std::vector<bool> aligned(inputs.size(), false);
    aligned[0] = true;
    for (size_t i = 0; i < inputs.size(); ++i) merged[i].path = inputs[i].path;
    // An input is aligned with any input already aligned (not only the first): hosts that share a
    // communicator only with a third host still get their offset through it.
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t i = 1; i < inputs.size(); ++i) {
            for (size_t j = 0; j < inputs.size() && !aligned[i]; ++j) {
                if (!aligned[j]) continue;
                const std::optional<ClockMatch> match = match_clocks(inputs[j].collectives, inputs[i].collectives);
                if (!match) continue;
                merged[i].offset_ns = merged[j].offset_ns + match->offset_ns;
                merged[i].matched = match->matched, merged[i].spread_ns = match->spread_ns;
                merged[i].agreeing = match->agreeing;
                merged[i].rank_pairs = match->rank_pairs, merged[i].aligned_to = j;
                aligned[i] = progress = true;
            }
        }
    }
    std::string unaligned;
    for (size_t i = 1; i < inputs.size(); ++i)
        if (!aligned[i]) unaligned += (unaligned.empty() ? "" : ", ") + inputs[i].path;
    if (!unaligned.empty())
        throw MergeError(
            fmt::format("{} share(s) no NCCL collective (same communicator size, same calls in the same "
                        "order, timed kernels) with {}: the clocks cannot be aligned; give "
                        "--offset-ns once per input to merge anyway",
                        unaligned, inputs[0].path));
    return merged;
}

}  // namespace tbdprof::trace::merge
