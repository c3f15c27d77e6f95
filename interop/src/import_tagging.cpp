#include "import_tagging.h"

#include <tbdprof/tagger/tagger.h>
#include <tbdprof/trace/sqlite_handle.h>
#include <tbdprof/trace/trace_reader.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace tbdprof::interop {
namespace {

struct PyTorchCategory {
    int64_t allocation;
    std::string category;
};

// The categories the import stored from PyTorch (import_model.cpp gives them kPyTorchCategoryRule).
std::vector<PyTorchCategory> read_pytorch_categories(const std::string& path) {
    trace::Database db = trace::open_trace(path);
    trace::Statement rows(db, "SELECT allocation, category FROM allocation_categories WHERE rule = ?");
    rows.bind(1, kPyTorchCategoryRule);
    std::vector<PyTorchCategory> out;
    while (rows.step()) out.push_back({rows.column_int(0), rows.column_text(1)});
    return out;
}

// The tagger replaces every category; PyTorch's, where it gave one, are put back over its guesses.
void restore(const std::string& path, const std::vector<PyTorchCategory>& categories) {
    trace::Database db = trace::open_trace_for_update(path);
    db.exec("BEGIN");
    trace::Statement row(
        db,
        "INSERT OR REPLACE INTO allocation_categories (allocation, category, confidence, rule, reason) "
        "VALUES (?, ?, ?, ?, ?)");
    for (const PyTorchCategory& c : categories) {
        row.bind(1, c.allocation).bind(2, c.category).bind(3, kPyTorchCategoryConfidence);
        row.bind(4, kPyTorchCategoryRule).bind(5, kPyTorchCategoryReason);
        row.run();
    }
    db.exec("COMMIT");
}

}  // namespace

ImportTagging tag_imported_trace(const std::string& path) {
    ImportTagging result;
    const std::vector<PyTorchCategory> pytorch = read_pytorch_categories(path);
    tagger::TagSummary summary;
    result.tagged = tagger::tag_trace_file(path, {}, summary, result.error);
    result.iterations = summary.iterations;
    if (!pytorch.empty()) restore(path, pytorch);
    result.pytorch_categories = pytorch.size();
    return result;
}

}  // namespace tbdprof::interop
