// Gradient buckets (P3) in the report: the "Gradient buckets (P3)" section (text, markdown, HTML), one
// row per bucket place in the round with means over ranks and rounds, and every bucket and round in JSON.
#include <map>

#include "communication_buckets.h"
#include "report_document.h"
#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer {
namespace {

double seconds_of(int64_t ns) {
    return static_cast<double>(ns) / 1e9;
}

void optional_seconds(trace::JsonWriter& json, std::string_view key, std::optional<int64_t> ns) {
    if (ns)
        json.value(key, seconds_of(*ns));
    else
        json.null(key);
}

void optional_int(trace::JsonWriter& json, std::string_view key, std::optional<int64_t> value) {
    if (value)
        json.value(key, *value);
    else
        json.null(key);
}

std::optional<int64_t> slack_ns(const GradientBucket& b) {
    if (!b.last_gradient_write_end_ns) return std::nullopt;
    return b.start_ns - *b.last_gradient_write_end_ns;
}

void bucket_json(trace::JsonWriter& json, const GradientBucket& b) {
    json.begin_object();
    optional_int(json, "rank", b.rank);
    json.value("process", b.process).value("device", b.device).value("round", b.round).value("position", b.position);
    optional_int(json, "iteration", b.iteration);
    json.value("op", b.op).value("bytes", b.bytes).value("identified_by", b.identified_by);
    optional_seconds(json, "first_gradient_write_end_s", b.first_gradient_write_end_ns);
    optional_seconds(json, "last_gradient_write_end_s", b.last_gradient_write_end_ns);
    json.value("start_s", seconds_of(b.start_ns))
        .value("end_s", seconds_of(b.end_ns))
        .value("duration_s", seconds_of(b.end_ns - b.start_ns));
    optional_seconds(json, "slack_s", slack_ns(b));
    json.value("exposed_s", seconds_of(b.exposed_ns));
    optional_seconds(json, "next_use_start_s", b.next_use_start_ns);
    optional_seconds(json, "next_use_waited_s", b.next_use_waited_ns);
    optional_seconds(json, "wait_s", b.wait_ns);
    json.end_object();
}

void round_json(trace::JsonWriter& json, const BucketRound& r) {
    json.begin_object();
    optional_int(json, "rank", r.rank);
    json.value("process", r.process).value("device", r.device).value("round", r.round).value("buckets", r.buckets);
    optional_seconds(json, "first_gradient_write_end_s", r.first_gradient_write_end_ns);
    optional_seconds(json, "last_gradient_write_end_s", r.last_gradient_write_end_ns);
    json.value("exposed_s", seconds_of(r.exposed_ns))
        .value("exposed_after_arrival_s", seconds_of(r.exposed_after_arrival_ns))
        .value("spare_computation_s", seconds_of(r.spare_computation_ns))
        .value("overlap_savings_bound_s", seconds_of(r.savings_bound_ns));
    json.end_object();
}

struct PlaceSums {
    int64_t bytes = 0, count = 0, with_write = 0, uses = 0, waited_uses = 0;
    int64_t slack_ns = 0, duration_ns = 0, exposed_ns = 0, waited_ns = 0;
};

std::string mean(int64_t sum_ns, int64_t count) {
    return count > 0 ? format_duration_ns(static_cast<double>(sum_ns) / static_cast<double>(count)) : "-";
}

std::string round_sentence(const CommunicationMetrics& m) {
    int64_t exposed = 0, after_arrival = 0, spare = 0, bound = 0;
    for (const BucketRound& r : m.bucket_rounds) {
        exposed += r.exposed_ns, after_arrival += r.exposed_after_arrival_ns;
        spare += r.spare_computation_ns, bound += r.savings_bound_ns;
    }
    const auto n = static_cast<int64_t>(m.bucket_rounds.size());
    return "per round and rank (means): exposed bucket communication " + mean(exposed, n) + ", " +
           mean(after_arrival, n) + " of it once every rank had arrived" +
           "; computation after the first gradient write not hiding communication " + mean(spare, n) +
           "; perfect overlap would save at most " + mean(bound, n) + " per round (the smaller of the two)";
}

}  // namespace

void buckets_json(trace::JsonWriter& json, const CommunicationMetrics& m) {
    json.begin_array("buckets");
    for (const GradientBucket& b : m.buckets) bucket_json(json, b);
    json.end_array().begin_array("bucket_rounds");
    int64_t bound_ns = 0;
    for (const BucketRound& r : m.bucket_rounds) {
        round_json(json, r);
        bound_ns += r.savings_bound_ns;
    }
    json.end_array();
    if (m.bucket_rounds.empty())
        json.null("overlap_savings_bound_per_round_s");
    else
        json.value("overlap_savings_bound_per_round_s",
                   seconds_of(bound_ns) / static_cast<double>(m.bucket_rounds.size()));
    json.value("unidentified_collectives", m.unidentified_collectives);
}

Section bucket_section(const Report& r) {
    const CommunicationMetrics& m = r.communication;
    Section s{"Gradient buckets (P3)",
              {},
              Table{{"bucket", "bytes", "count", "slack", "comm.", "exposed", "use waited", "waits"},
                    {true, true, true, true, true, true, true, true},
                    {}},
              {}};
    std::map<int64_t, PlaceSums> places;
    int64_t by_tag = 0, reduce_scatters = 0;
    for (const GradientBucket& b : m.buckets) {
        PlaceSums& p = places[b.position];
        p.bytes = b.bytes;
        ++p.count;
        by_tag += b.identified_by == "gradients tag";
        reduce_scatters += b.op == "reduce_scatter";
        p.duration_ns += b.end_ns - b.start_ns;
        p.exposed_ns += b.exposed_ns;
        if (const std::optional<int64_t> slack = slack_ns(b)) p.slack_ns += *slack, ++p.with_write;
        if (b.next_use_waited_ns)
            p.waited_ns += *b.next_use_waited_ns, ++p.uses, p.waited_uses += *b.next_use_waited_ns > 0;
    }
    s.lines.push_back(std::to_string(m.buckets.size()) + " collectives of gradient buckets (" +
                      std::to_string(static_cast<int64_t>(m.buckets.size()) - reduce_scatters) + " all-reduce, " +
                      std::to_string(reduce_scatters) + " reduce-scatter) in " +
                      std::to_string(m.bucket_rounds.size()) +
                      " rounds (a round: every bucket of a rank reduced once); " + std::to_string(by_tag) +
                      " on buffers tagged gradients, " + std::to_string(m.buckets.size() - by_tag) +
                      " on buffers written by copies of gradients");
    s.lines.push_back(round_sentence(m));
    s.lines.push_back(
        "bucket: its place in the round (0: reduced first); count: its collectives; slack: collective start - end of "
        "the last write of its gradients; exposed: no other kernel ran; use waited: the first use of its result "
        "(optimizer update, forward) waited on its stream for the collective to end; means over ranks and rounds; "
        "waits: uses that waited, of those found");
    for (const auto& [position, p] : places)
        s.table->add({std::to_string(position), format_bytes(p.bytes), std::to_string(p.count),
                      mean(p.slack_ns, p.with_write), mean(p.duration_ns, p.count), mean(p.exposed_ns, p.count),
                      mean(p.waited_ns, p.uses), std::to_string(p.waited_uses) + " of " + std::to_string(p.uses)});
    return s;
}

}  // namespace tbdprof::analyzer
