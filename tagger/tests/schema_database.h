// An empty trace in memory with the schema of schemas/trace.sql (TBD_TRACE_SCHEMA, set for every
// tagger test), for tests that write a made-up run as SQL and load it the way the tagger does.
#pragma once

#include <doctest/doctest.h>
#include <tbdprof/trace/sqlite_handle.h>

#include <fstream>
#include <sstream>

namespace tbdprof::tagger::test_support {

inline trace::Database schema_database() {
    trace::Database db = trace::create_database(":memory:");
    std::ifstream in(TBD_TRACE_SCHEMA);
    std::stringstream schema;
    schema << in.rdbuf();
    REQUIRE(!schema.str().empty());
    db.exec(schema.str().c_str());
    return db;
}

}  // namespace tbdprof::tagger::test_support
