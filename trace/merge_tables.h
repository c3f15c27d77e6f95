// The table rules of `tbdprof merge`: which column of which table is an id, a reference to another
// table's id, or a time, and the SQL that renumbers and copies the rows of one attached input.
#pragma once

#include "tbdprof/trace/sqlite_handle.h"

#include <cstdint>

namespace tbdprof::trace::merge {

// The attached input's schema name in the statements below.
inline constexpr const char* kInputSchema = "src";

// Creates the temporary tables that collect every input's ids; throws SqliteError, and
// std::logic_error when the output's schema has a table these rules do not know.
void create_id_tables(Database& out);
// Pass 1, per input (attached as kInputSchema): its ids, the times that order them, its strings.
void collect_ids(Database& out, int input, int64_t shift_ns);
// After pass 1: new ids for every input's rows (time-ordered tables in time order over all inputs;
// equal strings and functions once), and the strings and functions tables written.
void assign_ids(Database& out);
// Pass 2, per input: every row but the run's, ids remapped and times shifted.
void copy_rows(Database& out, int input, int64_t shift_ns);

}  // namespace tbdprof::trace::merge
