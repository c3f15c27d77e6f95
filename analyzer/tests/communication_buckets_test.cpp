// Gradient buckets (P3 view) from hand-placed work: every expected value is worked out on paper.
#include <doctest/doctest.h>

#include <string>

#include "tbdprof/analyzer/analyze.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {

// One rank, compute stream 1, communication stream 2. Allocations (address 4096 x id): 1 gradients,
// 2 a bucket buffer tagged other that the gradients are copied into, 3 activations, 4 weights.
//   [0, 100) kernel writes gradients (offset 0); [100, 200) kernel writes gradients (offset 512)
//   [200, 250) copy gradients -> bucket buffer;   [250, 350) other computation
//   [260, 400) all-reduce of the bucket buffer   (copies of gradients: slack 10, exposed 50)
//   [400, 450) all-reduce of the activations     (not a bucket)
//   [450, 600) all-reduce of the gradients       (gradients tag: slack 250, exposed 150)
//   [600, 650) update reads the bucket buffer    (stream idle since 350: waited 400 - 350 = 50)
//   [650, 700) update reads the gradients        (stream busy until 650: waited 0)
std::string bucket_trace() {
    tbdtest::TraceBuilder t("communication_buckets.sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4)");
    t.allocation(1024, 0, std::nullopt, "gradients");
    t.allocation(1024, 0, std::nullopt, "other");
    t.allocation(1024, 0, std::nullopt, "activations");
    t.allocation(1024, 0, std::nullopt, "weights");
    const auto kernel = [&](int id, int64_t stream, int64_t function, int64_t start, int64_t duration,
                            const char* call) {
        t.exec(
            "INSERT INTO kernels (id, process, device, stream, function, start_ns, duration_ns, queued_ns, "
            "library_call) VALUES (" +
            std::to_string(id) + ", 1, 0, " + std::to_string(stream) + ", " + std::to_string(function) + ", " +
            std::to_string(start) + ", " + std::to_string(duration) + ", 5, " + call + ")");
    };
    kernel(1, 1, 1, 0, 100, "NULL");
    kernel(2, 1, 1, 100, 100, "NULL");
    kernel(3, 1, 2, 250, 100, "NULL");
    kernel(4, 2, 4, 260, 140, "1");
    kernel(5, 2, 4, 400, 50, "2");
    kernel(6, 2, 4, 450, 150, "3");
    kernel(7, 1, 3, 600, 50, "NULL");
    kernel(8, 1, 3, 650, 50, "NULL");
    t.exec(
        "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
        "(1, 0, 0, 1, 0, 0), (2, 0, 0, 1, 512, 0), (7, 0, 0, 4, 0, 0), (7, 1, 0, 2, 0, 1), (8, 1, 0, 1, 0, 1)");
    t.exec(
        "INSERT INTO copies (id, process, device, stream, kind, bytes, src, dst, start_ns, duration_ns, queued_ns, "
        "src_allocation, dst_allocation) VALUES (1, 1, 0, 1, 'dtod', 1024, 4096, 8192, 200, 50, 5, 1, 2)");
    for (int call = 1; call <= 3; ++call) {
        const std::string address = std::to_string(4096 * (call == 1 ? 2 : call == 2 ? 3 : 1));
        const std::string allocation = std::to_string(call == 1 ? 2 : call == 2 ? 3 : 1);
        t.exec(
            "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, a, c, a_bytes, c_bytes, "
            "a_allocation, c_allocation) VALUES (" +
            std::to_string(call) + ", 1, 'ncclAllReduce', 'nccl_all_reduce', 0, 1, " + address + ", " + address +
            ", 1024, 1024, " + allocation + ", " + allocation + ")");
        t.exec("INSERT INTO nccl_calls (library_call, process, op, count, datatype, bytes) VALUES (" +
               std::to_string(call) + ", 1, 'all_reduce', 256, 'float32', 1024)");
    }
    return t.finish(1000);
}

AnalysisOptions whole_run() {
    AnalysisOptions options;
    options.window = WindowChoice::all;
    return options;
}

}  // namespace

TEST_CASE("gradient buckets: identified by tag or by copies of gradients, with slack, exposure and waits") {
    const Report r = analyze_trace(bucket_trace(), whole_run());
    const CommunicationMetrics& m = r.communication;
    REQUIRE(m.buckets.size() == 2);
    CHECK(m.unidentified_collectives == 1);  // the all-reduce of activations: the tags do not say gradients
    const GradientBucket& copied = m.buckets[0];
    CHECK(copied.identified_by == "copies of gradients");
    CHECK(copied.position == 0);
    CHECK(copied.bytes == 1024);
    CHECK(*copied.first_gradient_write_end_ns == 250);
    CHECK(*copied.last_gradient_write_end_ns == 250);
    CHECK(copied.start_ns == 260);
    CHECK(copied.end_ns == 400);
    CHECK(copied.exposed_ns == 50);  // [260, 350) runs beside other computation
    CHECK(*copied.next_use_start_ns == 600);
    CHECK(*copied.next_use_waited_ns == 50);
    const GradientBucket& tagged = m.buckets[1];
    CHECK(tagged.identified_by == "gradients tag");
    CHECK(tagged.position == 1);
    CHECK(tagged.round == copied.round);
    CHECK(*tagged.first_gradient_write_end_ns == 100);
    CHECK(*tagged.last_gradient_write_end_ns == 200);
    CHECK(tagged.start_ns - *tagged.last_gradient_write_end_ns == 250);
    CHECK(tagged.exposed_ns == 150);
    CHECK(*tagged.next_use_start_ns == 650);
    CHECK(*tagged.next_use_waited_ns == 0);
    REQUIRE(m.bucket_rounds.size() == 1);
    const BucketRound& round = m.bucket_rounds[0];
    CHECK(round.buckets == 2);
    CHECK(*round.first_gradient_write_end_ns == 100);
    CHECK(*round.last_gradient_write_end_ns == 250);
    CHECK(round.exposed_ns == 200);            // [260, 400) + [450, 600) less [260, 350)
    CHECK(round.spare_computation_ns == 100);  // [100, 250): computation [100, 200), the copy is none
    CHECK(round.savings_bound_ns == 100);      // min(200, 100)
    bool noted = false;
    for (const std::string& note : r.notes) noted = noted || note.find("activations 1") != std::string::npos;
    CHECK(noted);
}

TEST_CASE("gradient buckets: a collective repeating a buffer begins a new round") {
    tbdtest::TraceBuilder t("communication_bucket_rounds.sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4)");
    t.allocation(1024, 0, std::nullopt, "gradients");
    for (int call = 1; call <= 3; ++call) {
        // Writes the gradients at offset 0, 512, then 0 again; each all-reduced right after.
        const int64_t writer = t.kernel(call * 200, 50, 1, 0);
        t.exec("INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES (" +
               std::to_string(writer) + ", 0, 0, 1, " + std::to_string(call == 2 ? 512 : 0) + ", 0)");
        const std::string offset = call == 2 ? "512" : "0";
        t.exec(
            "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, a, c, a_bytes, c_bytes, "
            "a_allocation, c_allocation) VALUES (" +
            std::to_string(call) + ", 1, 'ncclAllReduce', 'nccl_all_reduce', 0, 1, 4096 + " + offset + ", 4096 + " +
            offset + ", 512, 512, 1, 1)");
        t.exec("INSERT INTO nccl_calls (library_call, process, op, count, datatype, bytes) VALUES (" +
               std::to_string(call) + ", 1, 'all_reduce', 128, 'float32', 512)");
        t.kernel(call * 200 + 60, 20, 4, 0, call);
    }
    const Report r = analyze_trace(t.finish(1000), whole_run());
    const CommunicationMetrics& m = r.communication;
    REQUIRE(m.buckets.size() == 3);
    CHECK(m.buckets[0].round == 0);
    CHECK(m.buckets[1].round == 0);  // the other half of the buffer: the same round
    CHECK(m.buckets[1].position == 1);
    CHECK(m.buckets[2].round == 1);  // offset 0 again
    CHECK(m.buckets[2].position == 0);
    CHECK(*m.buckets[2].last_gradient_write_end_ns == 650);  // only writes since the previous reduction of offset 0
    CHECK(*m.buckets[2].first_gradient_write_end_ns == 650);
    CHECK(m.bucket_rounds.size() == 2);
}

TEST_CASE("gradient buckets: tensors of a pooled segment, by their sub-range's category") {
    // One segment (allocation 1, tagged activations as a whole): gradients [0, 512), a bucket buffer
    // [512, 1024) tagged other, another gradient tensor [1024, 1536). A kernel copies the gradients into the
    // bucket buffer (its pointers carry no const, as a framework's do); both buffers are all-reduced.
    tbdtest::TraceBuilder t("communication_bucket_segment.sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4)");
    t.allocation(4096, 0, std::nullopt, "activations");
    t.exec(
        "INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category) VALUES "
        "(1, 1, 0, 512, 0, 1000, 'gradients'), (2, 1, 512, 512, 0, 1000, 'other'), "
        "(3, 1, 1024, 512, 0, 1000, 'gradients')");
    const int64_t copy = t.kernel(100, 50, 1, 0);  // [100, 150): bucket buffer <- gradients
    t.exec("INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES (" +
           std::to_string(copy) + ", 0, 0, 1, 512, 0), (" + std::to_string(copy) + ", 0, 8, 1, 0, 0)");
    const int64_t writer = t.kernel(150, 50, 1, 0);  // [150, 200): writes the second gradient tensor
    t.exec("INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES (" +
           std::to_string(writer) + ", 0, 0, 1, 1024, 0)");
    for (int call = 1; call <= 2; ++call) {
        const std::string offset = call == 1 ? "512" : "1024";
        t.exec(
            "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, a, c, a_bytes, c_bytes, "
            "a_allocation, c_allocation) VALUES (" +
            std::to_string(call) + ", 1, 'ncclAllReduce', 'nccl_all_reduce', 0, 1, 4096 + " + offset + ", 4096 + " +
            offset + ", 512, 512, 1, 1)");
        t.exec("INSERT INTO nccl_calls (library_call, process, op, count, datatype, bytes) VALUES (" +
               std::to_string(call) + ", 1, 'all_reduce', 128, 'float32', 512)");
        t.kernel(200 + call * 100, 50, 4, 0, call);
    }
    const Report r = analyze_trace(t.finish(1000), whole_run());
    const CommunicationMetrics& m = r.communication;
    REQUIRE(m.buckets.size() == 2);
    CHECK(m.unidentified_collectives == 0);
    CHECK(m.buckets[0].identified_by == "copies of gradients");
    CHECK(*m.buckets[0].last_gradient_write_end_ns == 150);  // the copy; the other tensor's write is elsewhere
    CHECK(m.buckets[0].start_ns - *m.buckets[0].last_gradient_write_end_ns == 150);
    CHECK(m.buckets[1].identified_by == "gradients tag");
    CHECK(*m.buckets[1].last_gradient_write_end_ns == 200);
    CHECK(m.buckets[1].round == 0);
    CHECK(m.buckets[1].position == 1);
}
