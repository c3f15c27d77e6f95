// `tbdprof tag TRACE --explain ID|ADDRESS`: why an allocation (or the tensors inside it) got its
// category: the rule, the confidence and the data-flow evidence the tagger stored.
#include "tbdprof/tagger/tagger.h"

#include <tbdprof/trace/tables.h>
#include <tbdprof/trace/trace_reader.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace tbdprof::tagger {
namespace {

void print_tag(std::string_view category, std::optional<double> confidence, std::string_view rule,
               std::string_view reason, std::string_view evidence, const char* indent) {
    fmt::print("{0}category   {1} (confidence {2:.2f})\n{0}rule       {3}: {4}\n{0}evidence   {5}\n", indent, category,
               confidence.value_or(0), rule, reason, evidence.empty() ? "(none stored)" : evidence);
}

void print_allocation(const trace::Database& db, const trace::AllocationRow& a, uint64_t address, bool by_address) {
    fmt::print("allocation {} at 0x{:x}, {} bytes ({}), alive {}..{} ns\n", a.id, a.address, a.bytes,
               trace::memory_kind_name(a.kind), a.alloc_ns, a.free_ns ? std::to_string(*a.free_ns) : "end of run");
    print_tag(a.category, a.confidence, a.rule, a.reason, a.evidence, "  ");
    // Tensors inside it: the one at the address asked for, or all of them (largest first).
    const uint64_t offset = address - uint64_t(a.address);
    struct Tensor {  // a sub-range, its text copied (a row's views die with the next row)
        int64_t offset, bytes, begin_ns, end_ns;
        std::optional<double> confidence;
        std::string category, rule, reason, evidence;
    };
    std::vector<Tensor> inside;
    trace::SubrangeRow s;
    for (trace::RowReader<trace::SubrangeRow> rows(db); rows.next(s);)
        if (s.allocation == a.id &&
            (!by_address || (uint64_t(s.offset) <= offset && uint64_t(s.offset + s.bytes) > offset)))
            inside.push_back({s.offset, s.bytes, s.begin_ns, s.end_ns, s.confidence, std::string(s.category),
                              std::string(s.rule), std::string(s.reason), std::string(s.evidence)});
    std::stable_sort(inside.begin(), inside.end(), [](const Tensor& x, const Tensor& y) {
        return x.bytes != y.bytes ? x.bytes > y.bytes : x.offset < y.offset;
    });
    if (inside.size() > 20) inside.resize(20);
    if (!inside.empty())
        fmt::print("  tensors inside it (allocation_subranges){}:\n", by_address ? " at that address" : "");
    for (const Tensor& r : inside) {
        fmt::print("  - offset {}, {} bytes, used {}..{} ns\n", r.offset, r.bytes, r.begin_ns, r.end_ns);
        print_tag(r.category, r.confidence, r.rule, r.reason, r.evidence, "      ");
    }
}

}  // namespace

void explain_allocation(const std::string& path, const std::string& what) {
    bool by_address = what.rfind("0x", 0) == 0 || what.rfind("0X", 0) == 0;
    char* end = nullptr;
    unsigned long long value = std::strtoull(what.c_str(), &end, by_address ? 16 : 10);
    if (what.empty() || end == what.c_str() || *end != '\0') {
        throw TagError("--explain: '" + what + "' is neither an allocation id nor a 0x address");
    }
    int found = 0;
    try {
        // Through the one opener: a trace is untrusted input (format version, schema, defensive mode).
        const trace::Database db = trace::open_trace(path);
        trace::AllocationRow a;
        trace::ReadOptions options{.by_time = true};
        if (!by_address) options.first_id = options.last_id = static_cast<int64_t>(value);
        for (trace::RowReader<trace::AllocationRow> rows(db, options); rows.next(a);) {
            if (a.category.empty() ||
                (by_address && (uint64_t(a.address) > value || uint64_t(a.address + a.bytes) <= value)))
                continue;
            if (found++ >= 10) {
                fmt::print("(more allocations held this address over time; first 10 shown)\n");
                break;
            }
            print_allocation(db, a, value, by_address);
        }
    } catch (const trace::TraceOpenError& e) {
        throw TagError(e.what());
    } catch (const trace::SqliteError& e) {
        throw TagError(path + ": " + e.what());
    }
    if (found == 0)
        throw TagError(by_address ? "no device allocation contains " + what : "no allocation with id " + what);
}

}  // namespace tbdprof::tagger
