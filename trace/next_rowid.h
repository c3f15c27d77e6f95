// The id to bind for each row written into a table with an INTEGER PRIMARY KEY that starts empty.
// SQLite gives a row inserted with a NULL id the next rowid (1 in an empty table, else one more than
// the largest so far) and appends it at the table's end; with the id bound it first searches the
// table for a row with that id. That search was a quarter of the cost of an imported range row
// (docs/benchmarks.md, "Range rows appended by rowid, ..."). So where a row's id is the one SQLite would
// choose, NULL is bound; any other id is bound as it is, so the table, and the error for a repeated
// id, are what binding every id gives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

namespace tbdprof::trace::detail {

class NextRowid {
public:
    // Rows in the order they are inserted: nullopt where SQLite's own choice is `id`.
    std::optional<int64_t> bind_value(int64_t id) {
        const bool chosen = empty_ ? id == 1 : largest_ < std::numeric_limits<int64_t>::max() && id == largest_ + 1;
        largest_ = empty_ ? id : std::max(largest_, id);
        empty_ = false;
        if (chosen) return std::nullopt;
        return id;
    }

private:
    bool empty_ = true;
    int64_t largest_ = 0;
};

}  // namespace tbdprof::trace::detail
