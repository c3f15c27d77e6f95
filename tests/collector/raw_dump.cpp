// Prints a raw file, one record per line (debugging aid; `--counts` prints counts per kind).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <tbdprof/trace/raw_reader.h>

using namespace tbdprof::raw;
using tbdprof::trace::RawRecordView;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: raw_dump FILE [--counts]\n");
        return 2;
    }
    tbdprof::trace::RawFile file;
    std::string error;
    if (!file.open(argv[1], error)) {
        std::fprintf(stderr, "raw_dump: %s\n", error.c_str());
        return 1;
    }
    const bool counts_only = argc > 2 && std::strcmp(argv[2], "--counts") == 0;
    std::map<int, size_t> counts;
    std::map<uint64_t, std::string> strings;
    std::vector<RawRecordView> records;
    auto cursor = file.records();
    for (RawRecordView r{}; cursor.next(r);) {
        records.push_back(r);
        if (r.kind == RecordKind::String) strings[r.as<RawString>().id] = std::string(r.string_text());
    }
    std::printf("pid %u parent %u records %zu %s\n", file.header().pid, file.header().parent_pid, records.size(),
                tbdprof::trace::describe(cursor.end()));
    for (const auto& r : records) {
        ++counts[static_cast<int>(r.kind)];
        if (counts_only) continue;
        switch (r.kind) {
        case RecordKind::Launch: {
            const auto l = r.as<RawLaunch>();
            std::printf("launch tid=%u seq=%" PRIu64 " %s grid=%u,%u,%u block=%u,%u,%u api=%d cands=%u\n", r.tid,
                        l.sequence, strings[l.name_string].c_str(), l.grid[0], l.grid[1], l.grid[2], l.block[0],
                        l.block[1], l.block[2], static_cast<int>(l.api), l.candidate_count);
            break;
        }
        case RecordKind::Alloc: {
            const auto a = r.as<RawAlloc>();
            std::printf("alloc tid=%u 0x%" PRIx64 " %" PRIu64 " kind=%d api=%d stack=%" PRIx64 "\n", r.tid, a.address,
                        a.bytes, static_cast<int>(a.memory_kind), static_cast<int>(a.api), a.stack_id);
            break;
        }
        case RecordKind::Free: {
            const auto f = r.as<RawFree>();
            std::printf("free tid=%u 0x%" PRIx64 " api=%d\n", r.tid, f.address, static_cast<int>(f.api));
            break;
        }
        case RecordKind::DeviceKernel: {
            const auto d = r.as<RawDeviceActivity>();
            std::printf("dkernel corr=%" PRIu64 " %" PRIu64 "-%" PRIu64 "\n", d.correlation_id, d.start_host_ns,
                        d.end_host_ns);
            break;
        }
        case RecordKind::Correlation: {
            const auto c = r.as<RawCorrelation>();
            std::printf("corr %" PRIu64 " -> seq %" PRIu64 "\n", c.correlation_id, c.sequence);
            break;
        }
        case RecordKind::LibraryCall: {
            const auto c = r.as<RawLibraryCall>();
            std::printf("libcall %s m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " flops=%g seq=%" PRIu64 "-%" PRIu64
                        " ws=0x%" PRIx64 "\n",
                        strings[c.name_string].c_str(), c.m, c.n, c.k, c.flops, c.first_sequence,
                        c.last_sequence, c.workspace);
            break;
        }
        case RecordKind::Frame: {
            const auto f = r.as<RawFrame>();
            std::printf("frame 0x%" PRIx64 " %s %s+0x%" PRIx64 "\n", f.ip, strings[f.symbol_string].c_str(),
                        strings[f.module_string].c_str(), f.offset);
            break;
        }
        case RecordKind::MemRegion: {
            const auto m = r.as<RawMemRegion>();
            std::printf("memregion tid=%u op=%d heap=%" PRIu64 " 0x%" PRIx64 " %" PRIu64 " '%s'\n", r.tid,
                        static_cast<int>(m.op), m.heap, m.address, m.bytes, strings[m.name_string].c_str());
            break;
        }
        default: std::printf("kind %d size %zu tid %u\n", static_cast<int>(r.kind), r.size, r.tid); break;
        }
    }
    for (auto [kind, n] : counts) std::printf("count kind=%d %zu\n", kind, n);
    return 0;
}
