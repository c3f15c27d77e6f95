#include "import_tagging.h"

#include <tbdprof/tagger/tagger.h>
#include <tbdprof/trace/sqlite_handle.h>
#include <tbdprof/trace/trace_reader.h>

#include <vector>

namespace tbdprof::interop {
namespace {

// The tagger replaces every category; PyTorch's, where it gave one, are put back over its guesses.
void restore(const std::string& path, const std::vector<trace::detail::AllocationCategoryRow>& categories) {
    trace::Database db = trace::open_trace_for_update(path);
    db.exec("BEGIN");
    trace::Statement row(
        db,
        "INSERT OR REPLACE INTO allocation_categories (allocation, category, confidence, rule, reason) "
        "VALUES (?, ?, ?, ?, ?)");
    for (const trace::detail::AllocationCategoryRow& c : categories) {
        row.bind(1, c.allocation).bind(2, c.category).bind(3, c.confidence).bind(4, c.rule).bind(5, c.reason);
        row.run();
    }
    db.exec("COMMIT");
}

}  // namespace

ImportTagging tag_imported_trace(const std::string& path, tagger::WrittenRows written,
                                 const std::vector<trace::detail::AllocationCategoryRow>& pytorch) {
    ImportTagging result;
    try {
        result.iterations = tagger::tag_trace_file(path, {}, std::move(written)).iterations;
        result.tagged = true;
    } catch (const tagger::TagError& e) {
        result.error = e.what();  // an imported trace that cannot be tagged stays valid, untagged
    }
    if (!pytorch.empty()) restore(path, pytorch);
    result.pytorch_categories = pytorch.size();
    return result;
}

}  // namespace tbdprof::interop
