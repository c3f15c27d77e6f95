# Embeds schemas/trace.sql for the analyzer: the newest format version it reads (the file's
# `PRAGMA user_version = N;` line) and the schema text (for tests and the benchmark generator).
#   cmake -DINPUT=trace.sql -DOUTPUT=analyzer_schema_embedded.cpp -P embed_schema.cmake
file(READ ${INPUT} schema_sql)
string(REGEX MATCH "PRAGMA user_version = ([0-9]+);" version_line "${schema_sql}")
if(NOT version_line)
    message(FATAL_ERROR "${INPUT}: no 'PRAGMA user_version = N;' line")
endif()
string(FIND "${schema_sql}" ")tbdanalyzersql\"" clash)
if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${INPUT} contains the raw string delimiter")
endif()
file(WRITE ${OUTPUT}.new
"// Generated from schemas/trace.sql by analyzer/cmake/embed_schema.cmake. Do not edit.
#include \"tbdprof/analyzer/schema_info.h\"

namespace tbdprof::analyzer {
const int kNewestTraceFormat = ${CMAKE_MATCH_1};
const char* const kTraceSchemaSql = R\"tbdanalyzersql(${schema_sql})tbdanalyzersql\";
}  // namespace tbdprof::analyzer
")
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
