// The lock-free building blocks: the per-thread ring, the dedup set, string interning, stack dedup.
#include <doctest/doctest.h>

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "tbdprof/collector/hash_set.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/spsc_ring.h"
#include "tbdprof/collector/stack_capture.h"

using namespace tbdprof::collector;
using tbdprof::raw::RawRecordHeader;
using tbdprof::raw::RecordKind;

namespace {

// A record of `size` bytes whose body is filled with `tag`.
void write_record(SpscRing& ring, size_t size, uint8_t tag, bool expect_room = true) {
    uint8_t* p = ring.reserve(size);
    if (!expect_room) {
        CHECK(p == nullptr);
        return;
    }
    REQUIRE(p != nullptr);
    RawRecordHeader h{RecordKind::Sync, static_cast<uint16_t>(size), tag};
    std::memcpy(p, &h, sizeof h);
    std::memset(p + sizeof h, tag, size - sizeof h);
    ring.commit(size);
}

std::vector<uint32_t> drain_tags(SpscRing& ring) {
    std::vector<uint32_t> tags;
    ring.consume([&](const uint8_t* bytes, size_t size) {
        for (size_t offset = 0; offset < size;) {
            RawRecordHeader h;
            std::memcpy(&h, bytes + offset, sizeof h);
            REQUIRE(h.size >= sizeof h);
            for (size_t i = sizeof h; i < h.size; ++i) REQUIRE(bytes[offset + i] == static_cast<uint8_t>(h.tid));
            tags.push_back(h.tid);
            offset += h.size;
        }
    });
    return tags;
}

}  // namespace

TEST_CASE("ring: records come out whole and in order across the wrap") {
    alignas(64) static uint8_t memory[4096];
    SpscRing ring;
    ring.attach(memory, sizeof memory);
    uint32_t next = 0, expected = 0;
    for (int round = 0; round < 50; ++round) {
        for (int i = 0; i < 7; ++i) {
            ++next;
            write_record(ring, 8 * (1 + (next % 40)), static_cast<uint8_t>(next));
        }
        for (uint32_t tag : drain_tags(ring)) CHECK(tag == static_cast<uint8_t>(++expected));
    }
    CHECK(expected == next);
    CHECK(ring.used() == 0);
}

TEST_CASE("ring: a full ring refuses records instead of overwriting") {
    alignas(64) static uint8_t memory[4096];
    SpscRing ring;
    ring.attach(memory, sizeof memory);
    for (int i = 0; i < 8; ++i) write_record(ring, 512, static_cast<uint8_t>(i + 1));
    write_record(ring, 8, 99, false);
    auto tags = drain_tags(ring);
    CHECK(tags.size() == 8);
    write_record(ring, 512, 42);
}

TEST_CASE("ring: one producer thread and one consumer thread lose nothing") {
    const size_t capacity = 1 << 16;
    void* memory = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory != MAP_FAILED);
    SpscRing ring;
    ring.attach(static_cast<uint8_t*>(memory), capacity);
    constexpr uint32_t kRecords = 200000;
    std::atomic<bool> done{false};
    std::thread producer([&] {
        for (uint32_t i = 1; i <= kRecords; ++i) {
            const size_t size = 8 * (2 + i % 13);
            uint8_t* p;
            while ((p = ring.reserve(size)) == nullptr) std::this_thread::yield();
            RawRecordHeader h{RecordKind::Sync, static_cast<uint16_t>(size), i};
            std::memcpy(p, &h, sizeof h);
            std::memset(p + sizeof h, static_cast<uint8_t>(i), size - sizeof h);
            ring.commit(size);
        }
        done.store(true);
    });
    uint32_t expected = 1;
    bool in_order = true;
    auto consume = [&] {
        ring.consume([&](const uint8_t* bytes, size_t size) {
            for (size_t offset = 0; offset < size;) {
                RawRecordHeader h;
                std::memcpy(&h, bytes + offset, sizeof h);
                if (h.tid != expected || bytes[offset + h.size - 1] != static_cast<uint8_t>(h.tid)) in_order = false;
                ++expected;
                offset += h.size;
            }
        });
    };
    while (!done.load()) consume();
    producer.join();
    consume();
    CHECK(in_order);
    CHECK(expected == kRecords + 1);
    munmap(memory, capacity);
}

TEST_CASE("hash set: concurrent inserts of the same keys report each key new exactly once") {
    static LockFreeHashSet<1 << 12> set;
    std::atomic<int> inserted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
            for (uint64_t key = 1; key <= 1000; ++key)
                if (set.insert(key * 0x9E3779B97F4A7C15ull) == InsertResult::Inserted) inserted.fetch_add(1);
        });
    }
    for (auto& t : threads) t.join();
    CHECK(inserted.load() == 1000);
    CHECK(set.contains(5 * 0x9E3779B97F4A7C15ull));
    CHECK_FALSE(set.contains(12345));
}

TEST_CASE("hash set: a crowded set says Full rather than probing forever") {
    static LockFreeHashSet<64> set;
    int full = 0;
    for (uint64_t key = 1; key <= 200; ++key) full += set.insert(key) == InsertResult::Full;
    CHECK(full == 200 - 64);
}

namespace {

// Every record this thread emitted so far, by kind (drains only this thread's ring).
std::vector<std::vector<uint8_t>> take_records(ThreadState& ts) {
    std::vector<std::vector<uint8_t>> out;
    ts.slot->ring.consume([&](const uint8_t* bytes, size_t size) {
        for (size_t offset = 0; offset < size;) {
            RawRecordHeader h;
            std::memcpy(&h, bytes + offset, sizeof h);
            out.emplace_back(bytes + offset, bytes + offset + h.size);
            offset += h.size;
        }
    });
    return out;
}

size_t count_kind(const std::vector<std::vector<uint8_t>>& records, RecordKind kind) {
    size_t n = 0;
    for (const auto& r : records) n += reinterpret_cast<const RawRecordHeader*>(r.data())->kind == kind;
    return n;
}

}  // namespace

TEST_CASE("strings: the same text gets the same id and is written once") {
    ThreadState& ts = thread_state();
    if (ts.slot == nullptr) REQUIRE(attach_thread_ring(ts));
    take_records(ts);
    const uint64_t a = intern_string(ts, "_Z6kernelPf");
    const uint64_t b = intern_string(ts, "_Z6kernelPf");
    const uint64_t c = intern_string(ts, "_Z6kernelPKf");
    CHECK(a == b);
    CHECK(a != c);
    auto records = take_records(ts);
    REQUIRE(count_kind(records, RecordKind::String) == 2);
    const auto* s = reinterpret_cast<const tbdprof::raw::RawString*>(records[0].data());
    CHECK(s->id == a);
    CHECK(std::string(reinterpret_cast<const char*>(records[0].data() + sizeof *s), s->length) == "_Z6kernelPf");
    CHECK(records[0].size() % 8 == 0);
}

namespace {
// Not tail calls (a volatile result), so each keeps its own frame.
__attribute__((noipa)) uint64_t stack_from_a(ThreadState& ts) {
    volatile uint64_t id = capture_stack(ts);
    return id;
}
__attribute__((noipa)) uint64_t stack_from_b(ThreadState& ts) {
    volatile uint64_t id = capture_stack(ts);
    return id;
}
}  // namespace

TEST_CASE("stacks: one RawStack per distinct stack, ids stable") {
    ThreadState& ts = thread_state();
    if (ts.slot == nullptr) REQUIRE(attach_thread_ring(ts));
    set_own_code_range(0, 0);  // (also finds libunwind's code, whose frames are never kept)
    // Two frames: capture_stack and stack_from_a/b. Deeper frames are this test's loop, whose call
    // sites the compiler may duplicate when it unrolls the loop.
    globals().stack_depth = 2;
    take_records(ts);
    uint64_t first = 0;
    for (int i = 0; i < 5; ++i) {
        const uint64_t id = stack_from_a(ts);
        if (i == 0) first = id;
        CHECK(id == first);
    }
    const uint64_t other = stack_from_b(ts);
    CHECK(first != 0);
    CHECK(other != first);
    auto records = take_records(ts);
    CHECK(count_kind(records, RecordKind::Stack) == 2);
    const uint64_t ips[3] = {0x1000, 0x2000, 0x3000};
    CHECK(record_stack(ts, ips, 3) == record_stack(ts, ips, 3));
    CHECK(count_kind(take_records(ts), RecordKind::Stack) == 1);
    globals().stack_depth = 0;
    CHECK(capture_stack(ts) == 0);
    globals().stack_depth = 24;
}
