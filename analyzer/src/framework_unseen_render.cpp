// The "Memory the framework cannot see" section and its JSON (definitions in docs/analyzer.md).
#include "framework_unseen.h"

#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer {
namespace {

// What each kind is, in the words of the section's table.
const char* kind_title(const std::string& kind) {
    if (kind == "library_workspace_in_pool") return "library workspaces in the pool";
    if (kind == "library_own") return "libraries' own, outside the pool";
    if (kind == "nccl") return "NCCL buffers";
    return "other, outside the pool";
}

std::string joined(const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return text.empty() ? "-" : text;
}

}  // namespace

Section framework_unseen_section(const FrameworkUnseenMemory& u) {
    Section s{"Memory the framework cannot see",
              {},
              Table{{"what", "at peak", "in total", "count", "from"}, {false, true, true, true, false}, {}},
              {}};
    s.lines.push_back("allocator: " + u.allocator + " (" + joined(u.evidence) +
                      "); its pools: " + std::to_string(u.pool_allocations) + " allocations, " +
                      format_bytes(u.pool_at_peak_bytes) + " at the peak");
    s.lines.push_back("the framework's own memory tools see its pools only: " + format_bytes(u.at_peak_bytes) +
                      " at the peak (" + format_bytes(u.total_bytes) +
                      " in total) is device memory no tensor of it accounts for");
    s.lines.push_back(
        "library workspaces in the pool: handed to library calls as their workspace out of the pool "
        "(PyTorch's memory tools give them no category); libraries' own: allocated by the libraries "
        "themselves (default workspaces, handles)");
    for (const UnseenMemoryItem& item : u.items) {
        s.table->add({kind_title(item.kind), format_bytes(item.at_peak_bytes), format_bytes(item.total_bytes),
                      std::to_string(item.count), joined(item.sources)});
    }
    s.lines.push_back(
        "the CUDA context and loaded modules also take device memory, which no trace records: "
        "compare the device's used memory (nvidia-smi) with the peak above");
    return s;
}

void framework_unseen_json(trace::JsonWriter& json, const FrameworkUnseenMemory& u) {
    if (!u.present) {
        json.null("framework_unseen");
        return;
    }
    json.begin_object("framework_unseen").value("allocator", u.allocator);
    json.begin_array("evidence");
    for (const std::string& e : u.evidence) json.value("", e);
    json.end_array();
    json.value("pool_allocations", u.pool_allocations)
        .value("pool_at_peak_bytes", u.pool_at_peak_bytes)
        .value("pool_total_bytes", u.pool_total_bytes)
        .value("at_peak_bytes", u.at_peak_bytes)
        .value("total_bytes", u.total_bytes);
    json.begin_array("items");
    for (const UnseenMemoryItem& item : u.items) {
        json.begin_object()
            .value("kind", item.kind)
            .value("at_peak_bytes", item.at_peak_bytes)
            .value("total_bytes", item.total_bytes)
            .value("count", item.count);
        json.begin_array("sources");
        for (const std::string& source : item.sources) json.value("", source);
        json.end_array().end_object();
    }
    json.end_array();
    json.null("context_bytes");  // not recorded: no trace holds the context's memory
    json.end_object();
}

}  // namespace tbdprof::analyzer
