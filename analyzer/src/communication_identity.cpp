// What each communication kernel of the window was, as every rank of its communicator can name it:
// the communicator (by the identity the collector recorded at its creation, the same on all its
// ranks; in traces without it, by its size and its first calls) and the kernel's
// launch number on it since the trace began. NCCL requires every rank of a communicator to issue
// the same collectives in the same order, so (communicator, number) names the same collective on
// every rank, whatever window each rank's trace chose; tbdprof fleet matches traces by it
// (docs/fleet.md, "Waited in collectives").
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "communication.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

// Launches whose signatures make up a communicator's key: enough to tell apart the groups of one
// job that differ at all, few enough that a trace ending early on one rank still has them.
constexpr size_t kKeyLaunches = 8;

struct NcclCall {
    int64_t id = 0, process = 0, thread = 0, begin_ns = 0;
    std::string op;  // nccl_calls.op, or "group_end" for an ncclGroupEnd
    int64_t communicator = 0, bytes = 0, root = -1;
    std::optional<int64_t> nranks, rank;
    std::optional<int64_t> identity;  // nccl_calls.communicator_identity: none in older traces
};

// One launch: an ungrouped call, or the calls of a group launched by its ncclGroupEnd (`launcher`).
struct Launch {
    int64_t launcher = 0, process = 0, begin_ns = 0;
    std::vector<const NcclCall*> calls;
};

std::vector<NcclCall> read_calls(const TraceFile& trace) {
    std::vector<NcclCall> calls;
    if (!trace::has_table(trace.db, "nccl_calls") || !trace::has_table(trace.db, "library_calls")) return calls;
    const bool has_identity = trace::has_column(trace.db, "nccl_calls", "communicator_identity");
    trace::Statement rows(trace.db,
                          std::string("SELECT l.id, l.process, coalesce(l.thread, -1), l.begin_ns, "
                                      "coalesce(n.op, 'group_end'), coalesce(n.communicator, 0), coalesce(n.bytes, 0), "
                                      "coalesce(n.root, -1), n.nranks, n.rank, ") +
                              (has_identity ? "n.communicator_identity" : "NULL") +
                              " FROM library_calls l LEFT JOIN nccl_calls n ON n.library_call = l.id "
                              "WHERE n.library_call IS NOT NULL OR l.op = 'nccl_group_end' "
                              "ORDER BY l.process, coalesce(l.thread, -1), l.begin_ns, l.id");
    while (rows.step())
        calls.push_back({rows.column_int(0), rows.column_int(1), rows.column_int(2), rows.column_int(3),
                         rows.column_text(4), rows.column_int(5), rows.column_int(6), rows.column_int(7),
                         rows.column_optional_int(8), rows.column_optional_int(9), rows.column_optional_int(10)});
    return calls;
}

// As the tagger groups them (tagger/model.cpp, resolve_nccl_groups): the calls of a thread since
// the last call that launched kernels belong to the next ncclGroupEnd that launches some.
std::vector<Launch> group_launches(const std::vector<NcclCall>& calls, const std::set<int64_t>& launched) {
    std::vector<Launch> launches;
    std::vector<const NcclCall*> open;
    for (size_t i = 0; i < calls.size(); ++i) {
        const NcclCall& c = calls[i];
        if (i > 0 && (c.process != calls[i - 1].process || c.thread != calls[i - 1].thread)) open.clear();
        const bool group_end = c.op == "group_end";
        if (launched.contains(c.id)) {
            if (!group_end) open = {&c};
            if (!open.empty()) launches.push_back({c.id, c.process, c.begin_ns, open});
            open.clear();
        } else if (!group_end) {
            open.push_back(&c);
        }
    }
    std::sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) {
        return std::tie(a.begin_ns, a.launcher) < std::tie(b.begin_ns, b.launcher);
    });
    return launches;
}

uint64_t mix(uint64_t hash, std::string_view text) {
    for (const char ch : text) hash = (hash ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;  // FNV-1a
    return (hash ^ 0xffU) * 1099511628211ULL;                                                      // a separator
}

std::string hex(uint64_t value) {
    return fmt::format("{:016x}", value);
}

struct CommunicatorState {
    size_t index = 0;  // in the process's list
    int64_t launches = 0;
    uint64_t hash = 14695981039346656037ULL;
    bool recorded = false;  // its key is the recorded identity, not the hash of its first launches
};

// What every rank of the communicator issued alike: the operation (sends and receives alike, the
// other side of a transfer receiving what one side sends), the bytes and the root.
std::string signature(const Launch& launch) {
    std::string op;
    int64_t bytes = 0, root = -1;
    for (const NcclCall* c : launch.calls) {
        op += (c->op == "send" || c->op == "recv" ? std::string("p2p") : c->op) + ",";
        bytes += c->bytes;
        root = std::max(root, c->root);
    }
    return op + std::to_string(bytes) + "," + std::to_string(root);
}

bool point_to_point(const Launch& launch) {
    return std::any_of(launch.calls.begin(), launch.calls.end(),
                       [](const NcclCall* c) { return c->op == "send" || c->op == "recv"; });
}

// The communicators of each process and the (communicator, launch number) of each launching call.
struct ProcessCollectives {
    std::map<int64_t, std::vector<CommunicatorInfo>> communicators;  // by process, in first use order
    std::unordered_map<int64_t, CollectiveIdentity> launch_of_call;  // library_calls.id -> its launch
};

ProcessCollectives number_launches(const TraceFile& trace, const std::set<int64_t>& launched) {
    const std::vector<NcclCall> calls = read_calls(trace);
    ProcessCollectives out;
    std::map<std::pair<int64_t, int64_t>, CommunicatorState> states;  // (process, handle)
    for (const Launch& launch : group_launches(calls, launched)) {
        std::set<int64_t> handles;
        for (const NcclCall* c : launch.calls) handles.insert(c->communicator);
        const NcclCall& first = *launch.calls.front();
        // Transfers on a communicator of more than two ranks pair only some of its ranks: the others
        // do not issue them, and they would shift the numbers of the collectives that follow.
        if (point_to_point(launch) && first.nranks.value_or(0) != 2) continue;
        std::vector<CommunicatorInfo>& list = out.communicators[launch.process];
        for (const int64_t handle : handles) {
            auto [it, added] = states.try_emplace({launch.process, handle});
            CommunicatorState& state = it->second;
            if (added) {
                const NcclCall& own = **std::find_if(launch.calls.begin(), launch.calls.end(),
                                                     [&](const NcclCall* c) { return c->communicator == handle; });
                state.index = list.size();
                list.push_back({"", own.nranks, own.rank});
                state.hash = mix(state.hash, std::to_string(own.nranks.value_or(-1)));
                // Recorded: names it exactly (look-alike groups apart); a prefix keeps the two kinds of
                // key apart in a fleet mixing traces with and without it.
                state.recorded = own.identity.has_value();
                if (state.recorded) list[state.index].key = "id-" + hex(static_cast<uint64_t>(*own.identity));
            }
            if (!state.recorded && static_cast<size_t>(state.launches) < kKeyLaunches) {
                state.hash = mix(state.hash, signature(launch));
                list[state.index].key = hex(state.hash);
            }
            // A group over several communicators launches one kernel on each, in no recorded order:
            // its kernels cannot be told apart, though the launch counts on every communicator.
            if (handles.size() == 1)
                out.launch_of_call[launch.launcher] = {static_cast<int64_t>(state.index), state.launches};
            ++state.launches;
        }
    }
    return out;
}

}  // namespace

IdentitiesByRank collective_identities(const TraceFile& trace, const std::vector<bool>& is_comm, const Window& window) {
    struct CommKernel {
        int64_t begin = 0, end = 0;
        std::optional<int64_t> library_call;
    };
    IdentitiesByRank out;
    // No NCCL call recorded (an imported or generated trace): nothing to name, and no pass over the kernels.
    if (!trace::has_table(trace.db, "nccl_calls")) return out;
    if (trace::Statement any(trace.db, "SELECT 1 FROM nccl_calls LIMIT 1"); !any.step()) return out;
    std::map<std::pair<int64_t, int64_t>, std::vector<CommKernel>> by_rank;
    std::set<int64_t> launched;
    std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> launchers_of_rank;  // whole trace
    trace::Statement rows(trace.db,
                          "SELECT process, device, function, start_ns, duration_ns, library_call FROM kernels "
                          "WHERE duration_ns IS NOT NULL AND duration_ns >= 0 ORDER BY id");
    while (rows.step()) {
        const int64_t function = rows.column_int(2), begin = rows.column_int(3), duration = rows.column_int(4);
        if (function < 0 || static_cast<size_t>(function) >= is_comm.size() || !is_comm[static_cast<size_t>(function)])
            continue;
        if (duration > kMaxKernelNs || begin < -kMaxKernelNs || begin > INT64_MAX - kMaxKernelNs) continue;
        const std::pair<int64_t, int64_t> rank{rows.column_int(0), rows.column_int(1)};
        const std::optional<int64_t> call = rows.column_optional_int(5);
        if (call) {
            launched.insert(*call);
            launchers_of_rank[rank].insert(*call);
        }
        // As read_rank_kernels keeps collectives: starting in the window and reaching into it (not one
        // of no length at its very beginning).
        if (begin >= window.begin_ns && begin < window.end_ns && begin + duration > window.begin_ns)
            by_rank[rank].push_back({begin, begin + duration, call});
    }
    const ProcessCollectives numbered = number_launches(trace, launched);
    for (auto& [rank, kernels] : by_rank) {
        std::stable_sort(kernels.begin(), kernels.end(),
                         [](const CommKernel& a, const CommKernel& b) { return a.begin < b.begin; });
        RankIdentities& ids = out[rank];
        const auto list = numbered.communicators.find(rank.first);
        if (list == numbered.communicators.end()) continue;  // no NCCL call recorded (an imported trace)
        // The rank's communicators: those of its process whose launches ran kernels on its device.
        std::vector<int64_t> renumber(list->second.size(), -1);
        for (const int64_t call : launchers_of_rank[rank]) {
            const auto found = numbered.launch_of_call.find(call);
            if (found == numbered.launch_of_call.end() || renumber[size_t(found->second.communicator)] >= 0) continue;
            renumber[size_t(found->second.communicator)] = static_cast<int64_t>(ids.communicators.size());
            ids.communicators.push_back(list->second[size_t(found->second.communicator)]);
        }
        for (const CommKernel& k : kernels) {
            const auto found =
                k.library_call ? numbered.launch_of_call.find(*k.library_call) : numbered.launch_of_call.end();
            ids.collectives.push_back(found == numbered.launch_of_call.end()
                                          ? std::nullopt
                                          : std::optional<CollectiveIdentity>(CollectiveIdentity{
                                                renumber[size_t(found->second.communicator)], found->second.sequence}));
        }
        ids.durations_ns.reserve(kernels.size());
        ids.begins_ns.reserve(kernels.size());
        for (const CommKernel& k : kernels) {
            ids.durations_ns.push_back(k.end - k.begin);
            ids.begins_ns.push_back(k.begin);
        }
    }
    return out;
}

namespace {

// Why a communicator's collectives cannot be compared; empty: it can (its members are all its ranks).
// Its members: the ranks listing it, each with its number on it. More members than its size, one
// number twice, or a rank listing the key twice: several communicators that look alike.
std::string communicator_left_out(const std::vector<const CommunicatorInfo*>& members, bool listed_twice) {
    std::set<int64_t> numbers;
    size_t numbered = 0;
    for (const CommunicatorInfo* c : members)
        if (c->rank) {
            numbers.insert(*c->rank);
            ++numbered;
        }
    const std::optional<int64_t> nranks = members.front()->nranks;
    const auto held = static_cast<int64_t>(members.size());
    if (listed_twice || numbers.size() < numbered || (nranks && held > *nranks))
        return "collectives on communicators that look alike (same size and first launches): not told apart";
    if (nranks && held < *nranks) return "collectives on communicators some of whose ranks are not in the trace";
    if (held < 2) return "collectives on communicators of one rank: nothing to compare";
    return "";
}

// (communicator key, launch number, occurrence): a launch may run several kernels on a rank.
using CollectiveKey = std::tuple<std::string, int64_t, int64_t>;

}  // namespace

CollectiveMatch match_collectives(const std::vector<const RankIdentities*>& ranks) {
    CollectiveMatch out;
    std::map<std::string, std::vector<const CommunicatorInfo*>> members;
    std::set<std::string> listed_twice;
    for (const RankIdentities* r : ranks) {
        std::set<std::string> own;
        for (const CommunicatorInfo& c : r->communicators) {
            if (!own.insert(c.key).second) listed_twice.insert(c.key);
            members[c.key].push_back(&c);
        }
    }
    std::map<std::string, std::string> excluded;  // key -> why
    for (const auto& [key, held] : members)
        if (std::string why = communicator_left_out(held, listed_twice.contains(key)); !why.empty())
            excluded[key] = std::move(why);
    out.communicators = static_cast<int64_t>(members.size() - excluded.size());
    // Every rank's collectives by key, and how many members hold each.
    std::vector<std::vector<std::optional<CollectiveKey>>> keys(ranks.size());
    std::map<CollectiveKey, int64_t> holders;
    for (size_t r = 0; r < ranks.size(); ++r) {
        std::map<std::pair<int64_t, int64_t>, int64_t> seen;  // (communicator, sequence) -> kernels so far
        for (const std::optional<CollectiveIdentity>& id : ranks[r]->collectives) {
            if (!id || id->communicator < 0 || size_t(id->communicator) >= ranks[r]->communicators.size()) {
                ++out.left_out["communication kernels without an NCCL call record"];
                keys[r].emplace_back();
                continue;
            }
            const CollectiveKey key{ranks[r]->communicators[size_t(id->communicator)].key, id->sequence,
                                    seen[{id->communicator, id->sequence}]++};
            ++holders[key];
            keys[r].emplace_back(key);
        }
    }
    std::map<CollectiveKey, size_t> index;
    for (const auto& [key, count] : holders) {
        const std::string& communicator = std::get<0>(key);
        if (const auto why = excluded.find(communicator); why != excluded.end())
            ++out.left_out[why->second];
        else if (count < static_cast<int64_t>(members[communicator].size()))
            ++out.left_out["collectives not in every member's window"];
        else
            index.emplace(key, index.size());
    }
    out.collectives = static_cast<int64_t>(index.size());
    for (const auto& rank_keys : keys) {
        std::vector<std::optional<size_t>>& own = out.of_rank.emplace_back();
        for (const std::optional<CollectiveKey>& key : rank_keys) {
            const auto found = key ? index.find(*key) : index.end();
            own.push_back(found == index.end() ? std::nullopt : std::optional<size_t>(found->second));
        }
    }
    return out;
}

}  // namespace tbdprof::analyzer
