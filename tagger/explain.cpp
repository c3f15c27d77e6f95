// `tbdprof tag TRACE --explain ID|ADDRESS`: why an allocation (or the tensors inside it) got its
// category: the rule, the confidence and the data-flow evidence the tagger stored.
#include "tbdprof/tagger/tagger.h"

#include <sqlite3.h>

#include <tbdprof/trace/trace_reader.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tbdprof::tagger {
namespace {

class Rows {
public:
    Rows(sqlite3* db, const char* sql, int64_t value) {
        if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) == SQLITE_OK) sqlite3_bind_int64(s_, 1, value);
    }
    ~Rows() { sqlite3_finalize(s_); }
    Rows(const Rows&) = delete;
    Rows& operator=(const Rows&) = delete;
    bool ok() const { return s_ != nullptr; }
    bool next() { return s_ && sqlite3_step(s_) == SQLITE_ROW; }
    int64_t i64(int c) const { return sqlite3_column_int64(s_, c); }
    double real(int c) const { return sqlite3_column_double(s_, c); }
    std::string text(int c) const {
        auto p = sqlite3_column_text(s_, c);
        return p ? reinterpret_cast<const char*>(p) : "";
    }

private:
    sqlite3_stmt* s_ = nullptr;
};

void print_tag(const Rows& r, int first, const char* indent) {
    std::printf("%scategory   %s (confidence %.2f)\n", indent, r.text(first).c_str(), r.real(first + 1));
    std::printf("%srule       %s: %s\n", indent, r.text(first + 2).c_str(), r.text(first + 3).c_str());
    std::printf("%sevidence   %s\n", indent, r.text(first + 4).empty() ? "(none stored)" : r.text(first + 4).c_str());
}

constexpr const char* kAllocation =
    "SELECT a.id, a.address, a.bytes, a.alloc_ns, a.free_ns, a.kind, c.category, c.confidence, c.rule, c.reason, "
    "c.evidence FROM allocations a JOIN allocation_categories c ON c.allocation = a.id ";
constexpr const char* kSubrange =
    "SELECT s.offset, s.bytes, s.begin_ns, s.end_ns, 0, 0, s.category, s.confidence, s.rule, s.reason, s.evidence "
    "FROM allocation_subranges s ";

void print_allocation(sqlite3* db, const Rows& a, uint64_t address, bool by_address) {
    std::printf("allocation %lld at 0x%llx, %lld bytes (%s), alive %lld..%s ns\n", static_cast<long long>(a.i64(0)),
                static_cast<unsigned long long>(a.i64(1)), static_cast<long long>(a.i64(2)), a.text(5).c_str(),
                static_cast<long long>(a.i64(3)), a.text(4).empty() ? "end of run" : a.text(4).c_str());
    print_tag(a, 6, "  ");
    // Tensors inside it: the one at the address asked for, or all of them (largest first).
    std::string sql = std::string(kSubrange) + "WHERE s.allocation = ?1 " +
                      (by_address ? "AND s.offset <= " + std::to_string(address - uint64_t(a.i64(1))) +
                                        " AND s.offset + s.bytes > " + std::to_string(address - uint64_t(a.i64(1)))
                                  : std::string()) +
                      " ORDER BY s.bytes DESC, s.offset LIMIT 20";
    Rows s(db, sql.c_str(), a.i64(0));
    int n = 0;
    while (s.next()) {
        if (n++ == 0)
            std::printf("  tensors inside it (allocation_subranges)%s:\n", by_address ? " at that address" : "");
        std::printf("  - offset %lld, %lld bytes, used %lld..%lld ns\n", static_cast<long long>(s.i64(0)),
                    static_cast<long long>(s.i64(1)), static_cast<long long>(s.i64(2)),
                    static_cast<long long>(s.i64(3)));
        print_tag(s, 6, "      ");
    }
}

}  // namespace

bool explain_allocation(const std::string& path, const std::string& what, std::string& error) {
    bool by_address = what.rfind("0x", 0) == 0 || what.rfind("0X", 0) == 0;
    char* end = nullptr;
    unsigned long long value = std::strtoull(what.c_str(), &end, by_address ? 16 : 10);
    if (what.empty() || end == what.c_str() || *end != '\0') {
        error = "--explain: '" + what + "' is neither an allocation id nor a 0x address";
        return false;
    }
    // Through the one opener: a trace is untrusted input (format version, schema, defensive mode).
    sqlite3* db = nullptr;
    try {
        db = trace::open_trace_handle(path, trace::TraceAccess::read_only);
    } catch (const trace::TraceOpenError& e) {
        error = e.what();
        return false;
    }
    std::string sql =
        std::string(kAllocation) +
        (by_address ? "WHERE a.address <= ?1 AND a.address + a.bytes > ?1 ORDER BY a.alloc_ns" : "WHERE a.id = ?1");
    Rows a(db, sql.c_str(), static_cast<int64_t>(value));
    int found = 0;
    while (a.ok() && a.next()) {
        if (found++ >= 10) {
            std::printf("(more allocations held this address over time; first 10 shown)\n");
            break;
        }
        print_allocation(db, a, value, by_address);
    }
    sqlite3_close_v2(db);
    if (found == 0) {
        error = by_address ? "no device allocation contains " + what : "no allocation with id " + what;
        return false;
    }
    return true;
}

}  // namespace tbdprof::tagger
