// tbdprof-tag-accuracy TRACE LABELS [--min ACCURACY] [--min-merged ACCURACY]: how well the tags in
// TRACE agree with a program's ground-truth labels. Prints a table per category, the accuracy with
// activations and workspace counted as one, and how the trace's iterations compare with the labelled
// training steps; exits 1 below --min or below --min-merged (the latter on the merged accuracy).
#include "accuracy.h"

#include <tbdprof/trace/trace_reader.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
    const char* usage = "usage: tbdprof-tag-accuracy TRACE LABELS [--min ACCURACY] [--min-merged ACCURACY]\n";
    if (argc < 3) {
        std::fprintf(stderr, "%s", usage);
        return 2;
    }
    double minimum = -1, minimum_merged = -1;
    for (int i = 3; i < argc; i += 2) {
        std::string option = argv[i];
        char* end = nullptr;
        double value = i + 1 < argc ? std::strtod(argv[i + 1], &end) : 0;
        if ((option != "--min" && option != "--min-merged") || i + 1 >= argc || end == argv[i + 1] || *end != '\0') {
            std::fprintf(stderr, "tbdprof-tag-accuracy: bad option %s\n%s", argv[i], usage);
            return 2;
        }
        (option == "--min" ? minimum : minimum_merged) = value;
    }
    std::optional<tbdprof::tagger::AccuracyReport> report;
    std::string error;
    try {
        report = tbdprof::tagger::score_against_labels(tbdprof::trace::open_trace(argv[1]), argv[2], error);
    } catch (const std::runtime_error& e) {  // TraceOpenError, SqliteError
        error = e.what();
    }
    if (!report) {
        std::fprintf(stderr, "tbdprof-tag-accuracy: %s\n", error.c_str());
        return 2;
    }
    std::printf("%-16s %14s %14s %9s %9s\n", "category", "labelled B", "tagged B", "precision", "recall");
    for (const auto& [category, score] : report->by_category)
        std::printf("%-16s %14lld %14lld %9.4f %9.4f\n", category.c_str(), static_cast<long long>(score.labelled_bytes),
                    static_cast<long long>(score.tagged_bytes), score.precision(), score.recall());
    std::printf("accuracy %.4f of %lld labelled bytes (%zu allocations, %zu not found in the trace)\n",
                report->accuracy(), static_cast<long long>(report->labelled_bytes), report->labelled_allocations,
                report->unmatched_labels);
    std::printf("accuracy %.4f with activations and workspace counted as one\n", report->merged_accuracy());
    if (report->unknown_labels)
        std::printf("%zu allocations (%lld bytes) labelled '-' (category unknown to the labeller), not scored\n",
                    report->unknown_labels, static_cast<long long>(report->unknown_bytes));
    if (report->pooled_labels)
        std::printf(
            "%zu of them tensors inside segments (pool, arena or planned block), scored against "
            "sub-ranges ('unattributed': no sub-range covered the bytes)\n",
            report->pooled_labels);
    if (report->split_allocations)
        std::printf("%zu whole-allocation labels scored against the sub-ranges the trace split them into\n",
                    report->split_allocations);
    if (report->labelled_steps || report->labelled_other_spans)
        std::printf(
            "iterations: %zu labelled training steps (+%zu validation/checkpoint spans), %zu in the "
            "trace, %zu starting within 10%% of a true step start\n",
            report->labelled_steps, report->labelled_other_spans, report->trace_iterations,
            report->matched_step_starts);
    if (minimum >= 0 && report->accuracy() < minimum) return 1;
    return minimum_merged >= 0 && report->merged_accuracy() < minimum_merged ? 1 : 0;
}
