// The subcommands through the driver executable: formats, exit statuses, budgets, JUnit.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "trace_builder.h"

using tbdtest::run_analyze;

namespace {

// A run with 2 steady iterations: utilization 40%, 600 B peak (activations 400).
std::string small_run(const std::string& name, int64_t activation_bytes = 400) {
    tbdtest::TraceBuilder t(name);
    t.range(0, 1000, "step");
    t.range(1000, 2000, "step");
    t.range(2000, 3000, "step");
    t.kernel(1000, 400, 1);
    t.kernel(2000, 400, 2, 0, t.library_call(1e6, 68, 0));
    t.allocation(200, 0, std::nullopt, "weights");
    t.allocation(activation_bytes, 1000, 1900, "activations");
    return t.finish(3000);
}

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("report in every format") {
    const std::string trace = small_run("cmd_report.sqlite");
    const auto text = run_analyze("report " + trace);
    CHECK(text.status == 0);
    CHECK(text.output.find("GPU utilization: 40.00%") != std::string::npos);
    CHECK(text.output.find("window: steady") != std::string::npos);

    const auto json = run_analyze("report " + trace + " --format json");
    CHECK(json.status == 0);
    for (const char* key : {"\"gpu_utilization\": 0.4", "\"flops\": 1000000", "\"peak_bytes\": 600",
                            "\"activations\": 400", "\"untagged\": 0", "\"count\": 2", "\"mean_s\": 1e-06",
                            "\"utilization\": 0.5"}) {
        CHECK_MESSAGE(json.output.find(key) != std::string::npos, std::string(key));
    }
    const auto markdown = run_analyze("report " + trace + " --format=markdown");
    CHECK(markdown.output.find("| category | at peak |") != std::string::npos);

    const std::string html_path = tbdtest::temp_path("cmd_report.html");
    const auto html = run_analyze("report " + trace + " --format html --force -o " + html_path);
    CHECK(html.status == 0);
    const std::string page = read(html_path);
    CHECK(page.find("<svg") != std::string::npos);
    CHECK(page.find("<script") == std::string::npos);  // self-contained, static
    CHECK(page.find("activations") != std::string::npos);
}

TEST_CASE("usage errors exit 2 with one message") {
    CHECK(run_analyze("report").status == 2);
    CHECK(run_analyze("report a b").status == 2);
    const auto bad_format = run_analyze("report x.sqlite --format pdf");
    CHECK(bad_format.status == 2);
    CHECK(bad_format.output.find("--format") != std::string::npos);
    CHECK(run_analyze("report x.sqlite --window someday").status == 2);
    CHECK(run_analyze("compare only-one.sqlite").status == 2);
    CHECK(run_analyze("diff a.sqlite").status == 2);
    CHECK(run_analyze("check x.sqlite").status == 2);  // no limits
    CHECK(run_analyze("frobnicate").status == 2);
    CHECK(run_analyze("report --help").status == 0);
}

TEST_CASE("check: within budget, outside it, JUnit, budget file") {
    const std::string trace = small_run("cmd_check.sqlite");
    const auto ok = run_analyze("check " + trace + " --max-peak-memory 1KiB --min-gpu-utilization 0.3");
    CHECK(ok.status == 0);
    CHECK(ok.output.find("within budget") != std::string::npos);

    const std::string junit = tbdtest::temp_path("cmd_check.xml");
    const auto bad = run_analyze("check " + trace +
                                 " --max-peak-memory 500B --min-gpu-utilization 50% --max-category activations=300B"
                                 " --max-iteration-time 2us --force --junit " + junit);
    CHECK(bad.status == 1);
    CHECK(bad.output.find("3 of 4 limits violated") != std::string::npos);
    CHECK(bad.output.find("peak memory 600 B > limit 500 B") != std::string::npos);
    const std::string xml = read(junit);
    CHECK(xml.find("failures=\"3\"") != std::string::npos);
    CHECK(xml.find("<failure") != std::string::npos);

    const std::string budget = tbdtest::temp_path("budget.txt");
    std::ofstream(budget) << "# CI budget\nmax-peak-memory = 500B\n--min-gpu-utilization 0.3\nmax-category activations=1KiB\n";
    const auto from_file = run_analyze("check " + trace + " --budget " + budget);
    CHECK(from_file.status == 1);
    CHECK(from_file.output.find("1 of 3 limits violated") != std::string::npos);

    std::ofstream(budget) << "max-peak-memory = lots\n";
    const auto broken = run_analyze("check " + trace + " --budget " + budget);
    CHECK(broken.status == 2);
    CHECK(broken.output.find("budget.txt:1") != std::string::npos);

    const auto no_iterations_trace = [&] {
        tbdtest::TraceBuilder t("cmd_check_noiter.sqlite");
        t.kernel(0, 10);
        return t.finish(100);
    }();
    const auto unmeasurable = run_analyze("check " + no_iterations_trace + " --max-iteration-time 1s");
    CHECK(unmeasurable.status == 1);
    CHECK(unmeasurable.output.find("no iterations") != std::string::npos);
}

TEST_CASE("compare and diff") {
    const std::string a = small_run("cmd_a.sqlite", 400), b = small_run("cmd_b.sqlite", 800);
    const auto compare = run_analyze("compare " + a + " " + b + " --labels base,bigger");
    CHECK(compare.status == 0);
    CHECK(compare.output.find("bigger") != std::string::npos);
    CHECK(compare.output.find("800 B") != std::string::npos);
    const std::string html = tbdtest::temp_path("cmd_compare.html");
    CHECK(run_analyze("compare " + a + " " + b + " --format html --force -o " + html).status == 0);
    CHECK(read(html).find("<rect") != std::string::npos);
    CHECK(run_analyze("compare " + a + " " + b + " --labels x").status == 2);

    const auto diff = run_analyze("diff " + a + " " + b);
    CHECK(diff.status == 0);
    // activations doubled (+100%) is the largest change, listed before peak memory (+66.7%).
    const size_t activations = diff.output.find("+100.0%");
    const size_t peak = diff.output.find("+66.7%");
    CHECK(activations != std::string::npos);
    CHECK(peak != std::string::npos);
    CHECK(activations < peak);
    const auto json = run_analyze("diff " + a + " " + b + " --format json");
    CHECK(json.output.find("\"relative\": 1") != std::string::npos);
}

TEST_CASE("check --require-plausible-tags: fails on tags that contradict a training run, with the reason") {
    // small_run has weights and activations in three steps, but no gradients: implausible.
    const std::string bad = small_run("cmd_tags_bad.sqlite");
    const std::string junit = tbdtest::temp_path("cmd_tags.xml");
    const auto failed = run_analyze("check " + bad + " --require-plausible-tags --force --junit " + junit);
    CHECK(failed.status == 1);
    CHECK(failed.output.find("FAIL  require-plausible-tags") != std::string::npos);
    CHECK(failed.output.find("memory breakdown unreliable") != std::string::npos);
    CHECK(failed.output.find("no gradients") != std::string::npos);
    CHECK(failed.output.find("1 of 1 limits violated") != std::string::npos);
    const std::string xml = read(junit);
    CHECK(xml.find("<testcase classname=\"tbdprof.budget\" name=\"require-plausible-tags\"") != std::string::npos);
    CHECK(xml.find("<failure message=\"memory breakdown unreliable") != std::string::npos);

    // The same run with gradients: plausible (no data flow in this made-up trace: the update is not
    // looked for, and the message says so).
    const std::string good = [] {
        tbdtest::TraceBuilder t("cmd_tags_good.sqlite");
        for (int i = 0; i < 3; ++i) t.range(i * 1000, (i + 1) * 1000, "step");
        t.kernel(1000, 400, 1);
        t.allocation(200, 0, std::nullopt, "weights");
        t.allocation(200, 0, std::nullopt, "gradients");
        t.allocation(400, 1000, 1900, "activations");
        return t.finish(3000);
    }();
    const auto passed = run_analyze("check " + good + " --require-plausible-tags --max-peak-memory 1KiB");
    CHECK(passed.status == 0);
    CHECK(passed.output.find("ok    require-plausible-tags") != std::string::npos);
    CHECK(passed.output.find("no data flow") != std::string::npos);

    // In a budget file, alone or with a value.
    const std::string budget = tbdtest::temp_path("tags_budget.txt");
    std::ofstream(budget) << "require-plausible-tags\n";
    CHECK(run_analyze("check " + bad + " --budget " + budget).status == 1);
    std::ofstream(budget) << "require-plausible-tags = false\nmax-peak-memory = 1KiB\n";
    CHECK(run_analyze("check " + bad + " --budget " + budget).status == 0);
    std::ofstream(budget) << "require-plausible-tags = maybe\n";
    const auto broken = run_analyze("check " + bad + " --budget " + budget);
    CHECK(broken.status == 2);
    CHECK(broken.output.find("tags_budget.txt:1") != std::string::npos);

    // No iterations (tagged, as an inference run): nothing contradicts, no false alarm.
    const std::string inference = [] {
        tbdtest::TraceBuilder t("cmd_tags_inference.sqlite");
        t.kernel(0, 10);
        t.allocation(500, 0, std::nullopt, "weights");
        t.allocation(100, 0, 50, "other");
        return t.finish(100);
    }();
    const auto no_steps = run_analyze("check " + inference + " --require-plausible-tags");
    CHECK(no_steps.status == 0);
    CHECK(no_steps.output.find("no training iterations") != std::string::npos);

    // Untagged: the tags cannot be checked, which fails as any unmeasurable limit does.
    const std::string untagged = [] {
        tbdtest::TraceBuilder t("cmd_tags_untagged.sqlite");
        t.kernel(0, 10);
        t.allocation(500, 0, std::nullopt);
        return t.finish(100);
    }();
    const auto unchecked = run_analyze("check " + untagged + " --require-plausible-tags");
    CHECK(unchecked.status == 1);
    CHECK(unchecked.output.find("not tagged") != std::string::npos);
}
