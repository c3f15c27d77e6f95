// Checks that an opened file's schema is a tbdprof trace's and nothing more: the file's own SQL
// (views, triggers, indexes, CHECK and DEFAULT expressions, generated columns) runs whenever it is
// read or written, so a hostile file could otherwise delete rows, spin, or fill the disk.
#pragma once

#include <sqlite3.h>

#include <string>

namespace tbdprof::trace::detail {

// Empty when the schema of `db` is this build's schema (kTraceSchemaSql), possibly as an older
// trace of the same format version has it (tables without the columns added at their end since)
// or with simple columns added at the end (name, type, NOT NULL, a literal DEFAULT); otherwise the
// first difference, as a sentence.
std::string schema_problem(sqlite3* db);

}  // namespace tbdprof::trace::detail
