#include "memory_timeline_parser.h"

#include "tbdprof/interop/interop_error.h"

#include <cstdlib>
#include <string>

namespace tbdprof::interop {
namespace {

bool is_space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

enum Action : int64_t { kPreexisting = 1, kCreate = 2, kIncrementVersion = 3, kDestroy = 4 };

}  // namespace

bool looks_like_memory_timeline(const simdjson::padded_string& json) {
    size_t i = 0;
    while (i < json.size() && is_space(json.data()[i])) ++i;
    if (i >= json.size() || json.data()[i] != '[') return false;
    ++i;
    while (i < json.size() && is_space(json.data()[i])) ++i;
    return i < json.size() && json.data()[i] == '[';
}

std::optional<std::string> torch_memory_category(int64_t index) {
    // torch/profiler/_memory_profiler.py: class Category(enum.Enum), in its order.
    switch (index) {
        case 0:
            return "weights";  // PARAMETER
        case 1:
            return "optimizer_state";  // OPTIMIZER_STATE
        case 2:
            return "input";  // INPUT
        case 3:
            return "workspace";  // TEMPORARY
        case 4:
            return "activations";  // ACTIVATION
        case 5:
            return "gradients";  // GRADIENT
        case 6:
            return "other";  // AUTOGRAD_DETAIL
        default:
            return std::nullopt;  // UNKNOWN
    }
}

void parse_memory_timeline(const simdjson::padded_string& json, ForeignTrace& out) {
    out.format = "memory-timeline";
    out.json_bytes = json.size();
    simdjson::ondemand::parser parser;
    std::vector<MemoryEvent> preexisting;
    try {
        simdjson::ondemand::document doc = parser.iterate(json);
        uint64_t row_index = 0;
        for (auto row_result : doc.get_array()) {
            ++row_index;
            ++out.events;
            int64_t fields[4] = {0, 0, 0, 0};
            int count = 0;
            for (auto item : row_result.get_array()) {
                simdjson::ondemand::number_type type = item.get_number_type();
                int64_t value = 0;
                if (type == simdjson::ondemand::number_type::floating_point_number) {
                    value = static_cast<int64_t>(double(item.get_double()));
                } else {
                    value = item.get_int64();
                }
                if (count < 4) fields[count] = value;
                ++count;
            }
            if (count != 4) {
                throw InteropError("memory timeline row " + std::to_string(row_index) + " has " +
                                   std::to_string(count) + " values, expected [ts_ns, action, bytes, category]");
            }
            const auto [ts, action, bytes, category] = fields;
            if (action == kIncrementVersion) {
                ++out.skipped["memory timeline version increments"];
                continue;
            }
            if (action != kPreexisting && action != kCreate && action != kDestroy) {
                ++out.unknown["memory timeline action " + std::to_string(action)];
                continue;
            }
            MemoryEvent event;
            event.device_type = 1;
            event.device_id = 0;
            // Destroy rows carry the size negated already; take magnitudes to be safe either way.
            event.bytes = action == kDestroy ? -std::abs(bytes) : std::abs(bytes);
            event.category = torch_memory_category(category);
            if (action == kPreexisting) {
                // ts is -1: alive before profiling; placed at the start once it is known.
                preexisting.push_back(event);
            } else if (ts > kMaxImportedTimeNs || ts < -kMaxImportedTimeNs) {
                ++out.warnings["events with timestamps beyond 146 years or durations beyond 73 years (skipped)"];
            } else {
                event.time_ns = ts;
                out.memory.push_back(event);
            }
        }
        if (!doc.current_location().error()) throw InteropError("unexpected text after the end of the JSON document");
    } catch (const simdjson::simdjson_error& error) {
        throw InteropError(std::string("invalid memory timeline JSON: ") + error.what());
    }
    int64_t first = 0;
    bool any = false;
    for (const MemoryEvent& e : out.memory) {
        if (!any || e.time_ns < first) first = e.time_ns;
        any = true;
    }
    for (MemoryEvent& e : preexisting) e.time_ns = first;
    out.memory.insert(out.memory.begin(), preexisting.begin(), preexisting.end());
    if (out.memory.empty()) throw InteropError("the memory timeline holds no allocations");
}

}  // namespace tbdprof::interop
