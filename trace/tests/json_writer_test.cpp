#include <doctest/doctest.h>

#include <tbdprof/test_support/temp_dir.h>
#include <tbdprof/trace/json_writer.h>
#include <tbdprof/trace/output_file.h>

#include <cmath>
#include <fstream>
#include <sstream>

using tbdprof::trace::JsonWriter;

TEST_CASE("json writer: documents get keys, commas and indentation; odd numbers and bytes stay valid JSON") {
    JsonWriter json;
    json.begin_object().value("name", "a\"b\\c\nd\te\x01").value("whole", 3.0).value("half", 0.5);
    json.value("none", std::optional<double>{}).value("inf", INFINITY).value("flag", true);
    json.begin_array("empty").end_array().begin_array("bad").value({}, "x\xFFy").end_array().end_object();
    CHECK(json.str() ==
          "{\n  \"name\": \"a\\\"b\\\\c\\nd\\te\\u0001\",\n  \"whole\": 3,\n  \"half\": 0.5,\n"
          "  \"none\": null,\n  \"inf\": null,\n  \"flag\": true,\n  \"empty\": [],\n"
          "  \"bad\": [\n    \"x\xEF\xBF\xBDy\"\n  ]\n}\n");
    JsonWriter compact(false);
    compact.begin_object().value("n", int64_t{-7}).begin_object("o").end_object().end_object();
    CHECK(compact.str() == "{\"n\":-7,\"o\":{}}");
}

TEST_CASE("json writer: the export's raw layer streams into an output file, the same bytes as in memory") {
    auto write = [](JsonWriter& out) {
        out.raw("{").key("ts", true).micros(1234567).key("neg").micros(-1500).key("whole").micros(2000);
        for (int i = 0; i < 200000; ++i) out.key("k").string("value").number(int64_t{i});  // > one flush
        out.raw("}");
    };
    JsonWriter memory(false);
    write(memory);
    CHECK(memory.str().starts_with("{\"ts\":1234.567,\"neg\":-1.500,\"whole\":2,\"k\":\"value\"0"));

    tbdprof::test::TempDir dir;
    {
        tbdprof::trace::OutputFile file(dir.file("out.json"), {});
        JsonWriter streamed(file);
        write(streamed);
        streamed.flush();
        CHECK(streamed.bytes_written() == memory.str().size());
        file.commit();
    }
    std::ifstream in(dir.file("out.json"));
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str() == memory.str());
}
