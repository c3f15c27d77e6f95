#include "trace_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/schema_info.h"

namespace tbdprof::analyzer {
namespace {

// The tables every report reads. Tables added by later versions (iterations) are optional.
constexpr const char* kRequiredTables[] = {"run", "devices", "functions", "strings", "kernels", "copies", "sets",
                                           "allocations", "allocation_categories", "library_calls", "ranges",
                                           "cpu_samples"};

// SQLite reads missing pages of a truncated file as zeros, which can go unnoticed; the header says
// how long the file should be (when its "valid for" counter matches the change counter).
void check_header(const std::string& path, int64_t file_size) {
    unsigned char header[100];
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) throw TraceError("cannot open trace " + path + ": " + std::strerror(errno));
    const size_t got = std::fread(header, 1, sizeof header, file);
    std::fclose(file);
    if (got < sizeof header || std::memcmp(header, "SQLite format 3", 16) != 0) {
        throw TraceError(path + " is not a SQLite database, so not a tbdprof trace");
    }
    auto be32 = [&](int at) {
        return (uint32_t{header[at]} << 24) | (uint32_t{header[at + 1]} << 16) | (uint32_t{header[at + 2]} << 8) |
               uint32_t{header[at + 3]};
    };
    uint32_t page_size = (uint32_t{header[16]} << 8) | header[17];
    if (page_size == 1) page_size = 65536;
    const uint32_t pages = be32(28);
    if (pages != 0 && be32(24) == be32(92) && static_cast<int64_t>(pages) * page_size > file_size) {
        throw TraceError(path + " is truncated: " + std::to_string(file_size) + " bytes of " +
                         std::to_string(static_cast<int64_t>(pages) * page_size));
    }
}

}  // namespace

TraceFile open_trace(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        throw TraceError("cannot open trace " + path + ": " + std::strerror(errno));
    }
    if (S_ISDIR(info.st_mode)) throw TraceError(path + " is a directory, not a trace file");
    if (info.st_size == 0) throw TraceError(path + " is empty, not a tbdprof trace");

    check_header(path, static_cast<int64_t>(info.st_size));
    TraceFile trace;
    trace.db = std::make_unique<ReadOnlyDatabase>(path);
    // Reading the header is the first real access: a non-SQLite file fails here.
    trace.format_version = static_cast<int>(trace.db->query_int("PRAGMA user_version"));
    if (trace.format_version > kNewestTraceFormat) {
        throw TraceError(path + " uses trace format " + std::to_string(trace.format_version) +
                         ", newer than this tbdprof reads (" + std::to_string(kNewestTraceFormat) +
                         "): update tbdprof");
    }
    if (trace.format_version <= 0) {
        throw TraceError(path + " is a SQLite database but not a tbdprof trace (no format version)");
    }
    for (const char* table : kRequiredTables) {
        if (!trace.db->has_table(table)) {
            throw TraceError(path + " is not a complete tbdprof trace: table '" + table + "' is missing");
        }
    }
    trace.has_iterations_table = trace.db->has_table("iterations");
    return trace;
}

}  // namespace tbdprof::analyzer
