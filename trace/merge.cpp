// `tbdprof merge`: checks the inputs, aligns their clocks, and writes one trace through an OutputFile.
#include "tbdprof/trace/merge.h"

#include "merge_inputs.h"
#include "merge_tables.h"
#include "tbdprof/trace/output_file.h"
#include "tbdprof/trace/schema.h"
#include "tbdprof/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tbdprof::trace {

namespace {

using merge::InputFacts;

void attach(Database& out, const std::string& path) {
    Statement attach(out, fmt::format("ATTACH DATABASE ?1 AS {}", merge::kInputSchema));
    // A relative name goes through ./ so that SQLite never reads it as ":memory:", "" or a file: URI.
    attach.bind(1, path.starts_with('/') ? path : "./" + path);
    attach.run();
}

void detach(Database& out) {
    out.exec(fmt::format("DETACH DATABASE {}", merge::kInputSchema).c_str());
}

// The run row of the merged trace: the first input's, time 0 moved by `shift_ns` earlier than its own.
void write_run(Database& out, const std::vector<InputFacts>& inputs, const MergeSummary& summary) {
    const InputFacts& first = inputs.front();
    std::set<std::string> hosts;
    std::string host_list;
    int64_t duration_ns = 0, host_timed = 0, truncated = 0;
    bool simulated = false, same_clock = true;
    std::optional<int64_t> exit_status = first.exit_status, crash_signal;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const InputFacts& in = inputs[i];
        if (!in.host.empty() && hosts.insert(in.host).second) host_list += (host_list.empty() ? "" : ",") + in.host;
        duration_ns = std::max(duration_ns, in.duration_ns + summary.inputs[i].offset_ns + summary.shift_ns);
        host_timed += in.host_timed_kernels, truncated += in.truncated_files;
        simulated = simulated || in.simulated_device;
        same_clock = same_clock && in.clock_source == first.clock_source;
        if (in.exit_status.value_or(0) != 0 && exit_status.value_or(0) == 0) exit_status = in.exit_status;
        if (!crash_signal) crash_signal = in.crash_signal;
    }
    Statement run(out,
                  "INSERT INTO main.run(id, command_line, host, start_unix_ns, start_monotonic_ns, duration_ns, "
                  "tool_version, simulated_device, clock_source, host_timed_kernels, exit_status, crash_signal, "
                  "truncated_files) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    const auto host = host_list.empty() ? std::nullopt : std::optional(host_list);  // NULL: no input named its host
    run.bind_all(first.command_line, host, first.start_unix_ns - summary.shift_ns,
                 first.start_monotonic_ns - summary.shift_ns, duration_ns, kProductVersion, int64_t{simulated},
                 same_clock ? std::string_view(first.clock_source) : std::string_view("mixed"), host_timed, exit_status,
                 crash_signal, truncated)
        .run();
}

void write_merge_notes(Database& out, const MergeSummary& summary) {
    Statement note(out, "INSERT INTO main.run_notes(key, value) VALUES (?1, ?2)");
    const auto add = [&](const std::string& key, const std::string& value) { note.bind(1, key).bind(2, value).run(); };
    add("merge.inputs", std::to_string(summary.inputs.size()));
    add("merge.shift_ns", std::to_string(summary.shift_ns));
    for (size_t i = 0; i < summary.inputs.size(); ++i) {
        const MergedInput& in = summary.inputs[i];
        const std::string prefix = fmt::format("merge.input.{}.", i);
        add(prefix + "path", in.path);
        add(prefix + "offset_ns", std::to_string(in.offset_ns));
        add(prefix + "offset_source", i == 0 ? "reference" : in.aligned_to ? "collectives" : "given");
        if (in.aligned_to) {
            add(prefix + "matched_collectives", std::to_string(in.matched));
            add(prefix + "offset_spread_ns", std::to_string(in.spread_ns));
            add(prefix + "agreeing_collectives", std::to_string(in.agreeing));
        }
    }
}

// Pass 2 for one input: its rows, its notes (but the distributed.* ones, which name one rank), and
// the process_ranks row of an imported trace that named its rank in notes.
void copy_input(Database& out, const InputFacts& in, int input, int64_t shift_ns) {
    attach(out, in.path);
    out.exec("BEGIN");
    merge::copy_rows(out, input, shift_ns);
    out.exec(fmt::format("INSERT INTO main.run_notes(key, value) SELECT key, value FROM {}.run_notes "
                         "WHERE key NOT LIKE 'distributed.%'",
                         merge::kInputSchema)
                 .c_str());
    if (in.ranks_from_notes) {
        Statement rank(out,
                       "INSERT INTO main.process_ranks(process, rank, local_rank, world_size) VALUES ("
                       "(SELECT new FROM temp.map_processes WHERE input = ?1 AND old = ?2), ?3, ?4, ?5)");
        const merge::ProcessRank& r = in.ranks.front();
        rank.bind_all(input, r.process, r.rank, r.local_rank, r.world_size).run();
    }
    out.exec("COMMIT");
    detach(out);
}

void write_merged(const std::string& path, const std::vector<InputFacts>& inputs, MergeSummary& summary) {
    Database out = create_database(path);
    out.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA trusted_schema = OFF;");
    out.exec("BEGIN");
    out.exec(kTraceSchemaSql);
    out.exec("COMMIT");
    merge::create_id_tables(out);
    const auto shift = [&](size_t i) { return summary.inputs[i].offset_ns + summary.shift_ns; };
    for (size_t i = 0; i < inputs.size(); ++i) {
        attach(out, inputs[i].path);  // no ATTACH inside a transaction: one per input
        out.exec("BEGIN");
        merge::collect_ids(out, static_cast<int>(i), shift(i));
        out.exec("COMMIT");
        detach(out);
    }
    out.exec("BEGIN");
    merge::assign_ids(out);
    out.exec("COMMIT");
    for (size_t i = 0; i < inputs.size(); ++i) copy_input(out, inputs[i], static_cast<int>(i), shift(i));
    out.exec("BEGIN");
    write_run(out, inputs, summary);
    write_merge_notes(out, summary);
    out.exec("COMMIT");
    summary.processes = out.query_int("SELECT count(*) FROM main.processes");
    summary.kernels = out.query_int("SELECT count(*) FROM main.kernels");
    summary.ranks = out.query_int("SELECT count(*) FROM main.process_ranks");
    out.close();
}

std::vector<MergedInput> given_offsets(const std::vector<InputFacts>& inputs, const std::vector<int64_t>& offsets) {
    std::vector<MergedInput> merged(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) merged[i].path = inputs[i].path, merged[i].offset_ns = offsets[i];
    return merged;
}

}  // namespace

MergeSummary merge_traces(const MergeOptions& options) {
    if (options.inputs.size() < 2) throw MergeError("give at least two traces to merge");
    if (!options.offsets_ns.empty() && options.offsets_ns.size() != options.inputs.size())
        throw MergeError(fmt::format("give --offset-ns once per input ({} inputs, {} offsets)", options.inputs.size(),
                                     options.offsets_ns.size()));
    std::vector<InputFacts> inputs;
    for (const std::string& path : options.inputs) inputs.push_back(merge::read_input(path));
    merge::check_inputs(inputs);
    MergeSummary summary;
    summary.inputs =
        options.offsets_ns.empty() ? merge::align_clocks(inputs) : given_offsets(inputs, options.offsets_ns);
    for (size_t i = 0; i < inputs.size(); ++i) {
        summary.inputs[i].processes = inputs[i].processes, summary.inputs[i].kernels = inputs[i].kernels;
        if (!inputs[i].ranks.empty()) summary.world_size = inputs[i].ranks.front().world_size;
        // An input whose clock started earlier has times before the first input's 0: move time 0 back.
        if (inputs[i].earliest_ns)
            summary.shift_ns = std::max(summary.shift_ns, -(*inputs[i].earliest_ns + summary.inputs[i].offset_ns));
    }
    try {
        OutputFile out(options.output, {.force = options.force, .inputs = options.inputs});
        write_merged(out.temp_path(), inputs, summary);
        out.commit();
    } catch (const OutputFileError& e) {
        throw MergeError(e.what());
    } catch (const SqliteError& e) {
        throw MergeError(fmt::format("writing {}: {}", options.output, e.what()));
    }
    return summary;
}

}  // namespace tbdprof::trace
