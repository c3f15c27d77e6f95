#include "progress_callbacks.h"

#include <tbdprof/cmdline/progress.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace tbdprof::cli {
namespace {

// A progress line made at the first report of a piece of work and erased when the work ends, so
// that each trace of `tbdprof compare` waits its own delay before a line shows.
class LineForEachRun {
public:
    LineForEachRun(std::string who, std::chrono::milliseconds delay) : who_(std::move(who)), delay_(delay) {}

    void update(std::string_view stage, double fraction) {
        if (!line_) line_.emplace(who_, true, delay_);
        line_->update(stage, fraction);
    }
    void end() { line_.reset(); }  // ProgressLine's destructor erases it

private:
    std::string who_;
    std::chrono::milliseconds delay_;
    std::optional<cmdline::ProgressLine> line_;
};

}  // namespace

analyzer::AnalysisProgress analysis_progress(bool quiet) {
    if (!cmdline::progress_wanted(quiet)) return {};
    auto line = std::make_shared<LineForEachRun>("tbdprof", std::chrono::seconds(1));
    return [line](const char* stage, int64_t done, int64_t total) {
        if (stage == nullptr) return line->end();
        line->update(stage, total > 0 ? static_cast<double>(done) / static_cast<double>(total) : -1.0);
    };
}

interop::ImportProgress import_progress(bool quiet) {
    if (!cmdline::progress_wanted(quiet)) return {};
    auto line = std::make_shared<LineForEachRun>("tbdprof import", std::chrono::milliseconds(500));
    return [line](std::string_view stage, double fraction) {
        if (stage.empty()) return line->end();
        line->update(stage, fraction);
    };
}

}  // namespace tbdprof::cli
