// A small streaming JSON writer: objects, arrays, escaped strings, finite numbers (others as null).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::analyzer {

class JsonWriter {
public:
    explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

    JsonWriter& begin_object(std::string_view key = {});
    JsonWriter& end_object();
    JsonWriter& begin_array(std::string_view key = {});
    JsonWriter& end_array();
    JsonWriter& value(std::string_view key, std::string_view text);
    JsonWriter& value(std::string_view key, const char* text) { return value(key, std::string_view(text)); }
    JsonWriter& value(std::string_view key, const std::string& text) { return value(key, std::string_view(text)); }
    JsonWriter& value(std::string_view key, double number);
    JsonWriter& value(std::string_view key, int64_t number);
    JsonWriter& value(std::string_view key, int number) { return value(key, static_cast<int64_t>(number)); }
    JsonWriter& value(std::string_view key, bool flag);
    JsonWriter& value(std::string_view key, std::optional<double> number);
    JsonWriter& null(std::string_view key);

    const std::string& str() const { return out_; }

private:
    void prefix(std::string_view key);
    void newline();
    std::string out_;
    std::vector<bool> first_;  // per open container: no element written yet
    bool pretty_;
};

std::string json_escape(std::string_view text);

}  // namespace tbdprof::analyzer
