#include "labels.h"

#include "check.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace tbdsample {

const char* category_name(Category category) {
    switch (category) {
    case Category::weights: return "weights";
    case Category::gradients: return "gradients";
    case Category::optimizer_state: return "optimizer_state";
    case Category::activations: return "activations";
    case Category::workspace: return "workspace";
    case Category::input: return "input";
    case Category::other: return "other";
    }
    return "other";
}

long long monotonic_ns() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);  // the clock the collector stamps host calls with
    return static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

LabelWriter::LabelWriter() {
    const char* path = std::getenv("TBD_SAMPLE_LABELS");
    if (path == nullptr || *path == '\0') return;
    file_ = std::fopen(path, "w");
    if (file_ == nullptr) {
        std::fprintf(stderr, "%s: cannot open TBD_SAMPLE_LABELS file %s: %s\n", program_name(), path,
                     std::strerror(errno));
        std::exit(1);
    }
}

LabelWriter::~LabelWriter() {
    if (file_ != nullptr) std::fclose(file_);
}

void LabelWriter::line(const char* event, const void* address, std::size_t bytes, const char* category) {
    if (file_ == nullptr) return;
    std::fprintf(file_, "%s\t0x%llx\t%zu\t%s", event,
                 static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(address)), bytes, category);
    if (timestamps_) std::fprintf(file_, "\t%lld", monotonic_ns());
    std::fputc('\n', file_);
}

void LabelWriter::record_alloc(const void* address, std::size_t bytes, Category category) {
    line("alloc", address, bytes, category_name(category));
}

void LabelWriter::record_free(const void* address) { line("free", address, 0, "-"); }

void LabelWriter::record_segment(const void* address, std::size_t bytes) { line("segment", address, bytes, "-"); }

void LabelWriter::record_segment_free(const void* address) { line("segment_free", address, 0, "-"); }

void LabelWriter::record_span(const char* kind, int index, long long begin_ns, long long end_ns) {
    if (file_ == nullptr) return;
    std::fprintf(file_, "span\t%s\t%d\t%lld\t%lld\n", kind, index, begin_ns, end_ns);
}

}  // namespace tbdsample
