# Turns schemas/trace.sql into a C++ source at build time, so the SQL file stays the single source of
# the schema and of the format version (its `PRAGMA user_version = N;` line).
#   cmake -DINPUT=trace.sql -DOUTPUT=schema_embedded.cpp -P embed_schema.cmake
file(READ ${INPUT} schema_sql)
string(REGEX MATCH "PRAGMA user_version = ([0-9]+);" version_line "${schema_sql}")
if(NOT version_line)
    message(FATAL_ERROR "${INPUT}: no 'PRAGMA user_version = N;' line")
endif()
set(format_version ${CMAKE_MATCH_1})
string(FIND "${schema_sql}" ")tbdsql\"" clash)
if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${INPUT} contains the raw string delimiter )tbdsql\"")
endif()
file(WRITE ${OUTPUT}.new
"// Generated from schemas/trace.sql by trace/embed_schema.cmake. Do not edit.
#include \"tbdprof/trace/schema.h\"

namespace tbdprof::trace {
const int kTraceFormatVersion = ${format_version};
const char* const kTraceSchemaSql = R\"tbdsql(${schema_sql})tbdsql\";
}  // namespace tbdprof::trace
")
# Touch the output only when it changed, so an unrelated edit does not rebuild everything.
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
