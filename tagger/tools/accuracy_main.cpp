// tbdprof-tag-accuracy TRACE LABELS [--min ACCURACY]: how well the tags in TRACE agree with a
// program's ground-truth labels. Prints a table per category; exits 1 below --min.
#include "accuracy.h"

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: tbdprof-tag-accuracy TRACE LABELS [--min ACCURACY]\n");
        return 2;
    }
    double minimum = -1;
    if (argc >= 5 && std::string(argv[3]) == "--min") minimum = std::atof(argv[4]);
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        std::fprintf(stderr, "tbdprof-tag-accuracy: cannot open %s\n", argv[1]);
        sqlite3_close(db);
        return 2;
    }
    std::string error;
    auto report = tbdprof::tagger::score_against_labels(db, argv[2], error);
    sqlite3_close(db);
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
    if (report->pooled_labels)
        std::printf("%zu of them tensors inside pool segments, scored against sub-ranges ('unattributed': no "
                    "sub-range covered the bytes)\n", report->pooled_labels);
    return minimum >= 0 && report->accuracy() < minimum ? 1 : 0;
}
