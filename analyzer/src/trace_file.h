// Opening a trace for analysis: existence, SQLite, format version, required tables.
#pragma once

#include <memory>
#include <string>

#include "sqlite_reader.h"

namespace tbdprof::analyzer {

struct TraceFile {
    std::unique_ptr<ReadOnlyDatabase> db;
    int format_version = 0;
    bool has_iterations_table = false;
};

// Throws TraceError with one clear sentence when the file cannot be analysed.
TraceFile open_trace(const std::string& path);

}  // namespace tbdprof::analyzer
