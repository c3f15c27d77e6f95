// Mappings of reserved address space (kind device_mapped) laid end to end and live together are one
// segment in the tagger's model (PyTorch's expandable segments map page after page, and a tensor may
// span two pages); what the tagger writes goes back to each mapping.
#include <doctest/doctest.h>
#include <tbdprof/trace/sqlite_handle.h>

#include "mapped_segments.h"
#include "model.h"
#include "schema_database.h"

#include <algorithm>
#include <string>

using namespace tbdprof::tagger;

namespace {

constexpr int64_t kPage = 2 << 20;  // 2 MiB, the simulated driver's granularity

const Allocation& holding(const TraceModel& m, int64_t id) {
    auto it = std::find_if(m.allocations.begin(), m.allocations.end(), [&](const Allocation& a) {
        return a.id == id ||
               std::any_of(a.pieces.begin(), a.pieces.end(), [&](const MappedPiece& p) { return p.id == id; });
    });
    REQUIRE(it != m.allocations.end());
    return *it;
}

}  // namespace

TEST_CASE("end-to-end mappings live together join; a remap after the unmap, other kinds, gaps do not") {
    tbdprof::trace::Database db = test_support::schema_database();
    // Reservation at 64 MiB: pages 1, 2 mapped at 0 and 10 ns, page 0 (before them) at 20 ns, all
    // unmapped at 100 ns; page 1 mapped again at 200 ns. A cudaMalloc right after page 2, and a
    // mapping with a page's gap after it, stay alone.
    db.exec(("INSERT INTO strings (id, text) VALUES (1, '_Z4stepPf');"
             "INSERT INTO functions (id, name, mangled) VALUES (1, 1, 1);"
             "INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, free_ns, kind) VALUES "
             "(1, 1, 0, 69206016, " +
             std::to_string(kPage) +
             ", 0, 100, 'device_mapped'),"
             "(2, 1, 0, 71303168, " +
             std::to_string(kPage) +
             ", 10, 100, 'device_mapped'),"
             "(3, 1, 0, 67108864, " +
             std::to_string(kPage) +
             ", 20, 100, 'device_mapped'),"
             "(4, 1, 0, 69206016, " +
             std::to_string(kPage) +
             ", 200, NULL, 'device_mapped'),"
             "(5, 1, 0, 73400320, " +
             std::to_string(kPage) +
             ", 30, NULL, 'device'),"
             "(6, 1, 0, 77594624, " +
             std::to_string(kPage) +
             ", 40, NULL, 'device_mapped');"
             "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns) VALUES "
             "(1, 1, 0, 1, 50, 5, 0);"
             "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
             "(1, 0, 0, 2, 64, 0);")
                .c_str());
    const TraceModel m = load_model(db);
    REQUIRE_EQ(m.allocations.size(), 4u);  // {3, 1, 2}, 4, 5, 6
    const Allocation& joined = holding(m, 2);
    CHECK_EQ(joined.id, 1);  // named by its first mapping
    CHECK_EQ(joined.address, 67108864u);
    CHECK_EQ(joined.bytes, 3 * kPage);
    CHECK_EQ(joined.alloc_ns, 0);
    CHECK_EQ(joined.free_ns, std::optional<int64_t>(100));
    REQUIRE_EQ(joined.pieces.size(), 3u);
    CHECK_EQ(joined.pieces[0].id, 1);
    CHECK_EQ(joined.pieces[0].offset, uint64_t(kPage));
    CHECK_EQ(joined.pieces[1].id, 2);
    CHECK_EQ(joined.pieces[1].offset, uint64_t(2 * kPage));
    CHECK_EQ(joined.pieces[2].id, 3);
    CHECK_EQ(joined.pieces[2].offset, 0u);
    for (int64_t alone : {4, 5, 6}) CHECK(holding(m, alone).pieces.empty());
    CHECK_EQ(holding(m, 4).id, 4);
    // The kernel's pointer into mapping 2 touches the joined segment.
    const int32_t joined_index = static_cast<int32_t>(&joined - m.allocations.data());
    REQUIRE_EQ(m.work.size(), 1u);
    REQUIRE_EQ(m.work[0].touches.size(), 1u);
    CHECK_EQ(m.work[0].touches[0].allocation, joined_index);
}

TEST_CASE("a range of a joined segment goes back to the mappings it overlaps, offsets from each") {
    Allocation segment{.id = 7, .address = 1u << 30, .bytes = 3 * kPage, .free_ns = std::nullopt};
    segment.pieces = {{7, 0, kPage}, {8, uint64_t(kPage), kPage}, {9, uint64_t(2 * kPage), kPage}};
    const std::vector<MappedPiece> spanning = trace_pieces(segment, uint64_t(kPage) - 512, 1024);
    REQUIRE_EQ(spanning.size(), 2u);
    CHECK_EQ(spanning[0].id, 7);
    CHECK_EQ(spanning[0].offset, uint64_t(kPage) - 512);
    CHECK_EQ(spanning[0].bytes, 512);
    CHECK_EQ(spanning[1].id, 8);
    CHECK_EQ(spanning[1].offset, 0u);
    CHECK_EQ(spanning[1].bytes, 512);
    const std::vector<MappedPiece> whole = trace_pieces(segment, 0, segment.bytes);
    REQUIRE_EQ(whole.size(), 3u);
    CHECK_EQ(whole[2].id, 9);
    CHECK_EQ(whole[2].bytes, kPage);
    const std::vector<MappedPiece> inside = trace_pieces(segment, uint64_t(2 * kPage) + 4096, 256);
    REQUIRE_EQ(inside.size(), 1u);
    CHECK_EQ(inside[0].id, 9);
    CHECK_EQ(inside[0].offset, 4096u);
    // A plain allocation: itself, unchanged.
    const Allocation plain{.id = 3, .address = 4096, .bytes = 8192, .free_ns = std::nullopt};
    const std::vector<MappedPiece> same = trace_pieces(plain, 100, 200);
    REQUIRE_EQ(same.size(), 1u);
    CHECK_EQ(same[0].id, 3);
    CHECK_EQ(same[0].offset, 100u);
    CHECK_EQ(same[0].bytes, 200);
}
