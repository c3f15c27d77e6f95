#include "chrome_json_parser.h"

#include "chrome_event.h"
#include "tbdprof/interop/interop_error.h"
#include "time_text.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace tbdprof::interop {
namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::value;

// The first quote or backslash at or after `p`, which lies before the padding's end. On x86-64 16
// bytes at a time (a byte at a time was 3.4% of an import's instructions, every key of every
// event): a block may be read past the quote, never past the padding (SIMDJSON_PADDING, 64 bytes).
const char* quote_or_backslash(const char* p) {
#if defined(__x86_64__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    for (;; p += 16) {
        const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const int found =
            _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(block, quote), _mm_cmpeq_epi8(block, backslash)));
        if (found != 0) return p + __builtin_ctz(static_cast<unsigned>(found));
    }
#else
    while (*p != '"' && *p != '\\') ++p;
    return p;
#endif
}

// A field's key: its text as written when it holds no escape (most keys: no copy is made), else
// unescaped. The batch is padded and stage 1 found the key's closing quote, so the scan stops there.
// Inlined on a field held by the caller: a field passed by reference to a call of its own was
// stored and read back at other widths, and the stalled store forwarding was half of the event
// walk's own time (perf annotate, df_index_resolver).
[[gnu::always_inline]] inline std::string_view key_of(simdjson::ondemand::field& field) {
    const char* raw = field.key().raw();
    const char* p = quote_or_backslash(raw);
    if (*p == '"') return {raw, static_cast<size_t>(p - raw)};
    return field.unescaped_key();
}

// The field an object's iterator is at, where the iterator's result holds it (a copy was stored
// and read back at other widths: stalled store forwarding again); throws the error a field in error
// carries, as asking that field for its key did.
[[gnu::always_inline]] inline simdjson::ondemand::field& field_of(
    simdjson::simdjson_result<simdjson::ondemand::field>& result) {
    if (const auto error = result.error()) throw simdjson::simdjson_error(error);
    simdjson::ondemand::field&& field = std::move(result).value_unsafe();
    return field;
}

// to_int() past its first try: a value that is not a plain integer, not yet read.
std::optional<int64_t> to_int_typed(value v) {
    json_type type;
    if (v.type().get(type)) return std::nullopt;
    if (type == json_type::number) {
        simdjson::ondemand::number_type number_type;
        if (v.get_number_type().get(number_type)) return std::nullopt;
        if (number_type == simdjson::ondemand::number_type::signed_integer) return int64_t(v.get_int64());
        if (number_type == simdjson::ondemand::number_type::unsigned_integer) {
            return static_cast<int64_t>(uint64_t(v.get_uint64()));
        }
        const double d = v.get_double();
        if (!(d > -9.2e18 && d < 9.2e18)) return std::nullopt;
        return static_cast<int64_t>(d < 0 ? d - 0.5 : d + 0.5);
    }
    if (type == json_type::string) {
        std::string_view text = v.get_string();
        int64_t out = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        if (ec == std::errc() && end == text.data() + text.size()) return out;
    }
    return std::nullopt;
}

// A JSON value as an integer: numbers (floats rounded), numeric strings ("25738"). Addresses above
// 2^63 keep their bit pattern. Inlined: most are plain integers, parsed once (a value that is not
// one is left unread and typed by to_int_typed()); a call returning the optional through memory
// stalled on reading it back.
[[gnu::always_inline]] inline std::optional<int64_t> to_int(value v) {
    int64_t integer = 0;
    if (!v.get_int64().get(integer)) return integer;
    return to_int_typed(v);
}

// "ts"/"dur" in microseconds -> ns, from the number's text. Returns false when ill-typed. Inlined,
// as to_id(): a call copies the value through memory, read back wider than it was written.
[[gnu::always_inline]] inline bool to_time_ns(value v, std::optional<int64_t>& out) {
    json_type type;
    if (v.type().get(type)) return false;
    std::string_view text;
    if (type == json_type::number) {
        text = v.raw_json_token();
    } else if (type == json_type::string) {
        text = v.get_string();
    } else if (type == json_type::null) {
        return true;
    } else {
        return false;
    }
    out = microseconds_text_to_ns(text);
    return out.has_value();
}

// pid/tid: numbers or strings; "stream 7" (2021 GPU tids) and "25738" (2021 CPU tids) become numbers.
[[gnu::always_inline]] inline EventId to_id(value v) {
    EventId id;
    json_type type;
    if (v.type().get(type)) return id;
    if (type == json_type::number) {
        if (auto n = to_int(v)) {
            id.present = id.numeric = true;
            id.number = *n;
        }
    } else if (type == json_type::string) {
        id.present = true;
        id.text = v.get_string();
        std::string_view digits = id.text;
        if (digits.starts_with("stream ")) digits.remove_prefix(7);
        while (!digits.empty() && digits.back() == ' ') digits.remove_suffix(1);
        int64_t n = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size()) {
            id.numeric = true;
            id.number = n;
        }
    }
    return id;
}

void read_triple(value v, int64_t (&out)[3]) {
    simdjson::ondemand::array array;
    if (v.get_array().get(array)) return;
    int i = 0;
    for (auto element : array) {
        value item;
        if (element.get(item)) return;
        if (i < 3) {
            if (auto n = to_int(item)) out[i] = *n;
        }
        ++i;
    }
}

// The EventArgs member of an arg that is an integer, by its key in the trace; nullptr for the other
// keys. By the key's length first, each candidate compared as a literal of that length: searching a
// list of them called memcmp for most keys of most events (~2% of an import's CPU).
std::optional<int64_t> EventArgs::*integer_arg(std::string_view key) {
    switch (key.size()) {
        case 4:
            return key == "Addr" ? &EventArgs::address : nullptr;
        case 5:
            return key == "bytes" ? &EventArgs::bytes : key == "Bytes" ? &EventArgs::memory_bytes : nullptr;
        case 6:
            return key == "device" ? &EventArgs::device : key == "stream" ? &EventArgs::stream : nullptr;
        case 9:
            return key == "Device Id" ? &EventArgs::device_id : nullptr;
        case 11:
            return key == "correlation"   ? &EventArgs::correlation
                   : key == "Device Type" ? &EventArgs::device_type
                                          : nullptr;
        case 13:
            return key == "shared memory" ? &EventArgs::shared_bytes : nullptr;
        case 14:
            return key == "Total Reserved" ? &EventArgs::total_reserved : nullptr;
        case 15:
            return key == "Total Allocated" ? &EventArgs::total_allocated : nullptr;
        default:
            return nullptr;
    }
}

void read_args(value v, EventArgs& args, std::map<std::string, uint64_t>& warnings) {
    simdjson::ondemand::object object;
    if (v.get_object().get(object)) {
        ++warnings["ill-typed args (not an object)"];
        return;
    }
    for (auto result : object) {
        simdjson::ondemand::field& field = field_of(result);
        const std::string_view key = key_of(field);
        value& item = field.value();
        if (const auto integer = integer_arg(key)) {
            args.*integer = to_int(item);
        } else if (key == "grid") {
            read_triple(item, args.grid);
            args.has_grid = true;
        } else if (key == "block") {
            read_triple(item, args.block);
            args.has_block = true;
        } else if (key == "name") {
            std::string_view text;
            if (!item.get_string().get(text)) args.name = text;
        } else if (key == "labels") {
            std::string_view text;
            if (!item.get_string().get(text)) args.labels = text;
        }
    }
}

void read_event(value v, ChromeEvent& event, std::map<std::string, uint64_t>& warnings) {
    simdjson::ondemand::object object;
    if (v.get_object().get(object)) {
        event.valid = false;
        return;
    }
    for (auto result : object) {
        simdjson::ondemand::field& field = field_of(result);
        const std::string_view key = key_of(field);
        value& item = field.value();
        if (key == "ph") {
            if (item.get_string().get(event.ph)) event.ill_typed = "ph";
        } else if (key == "cat") {
            if (item.get_string().get(event.cat)) event.ill_typed = "cat";
        } else if (key == "name") {
            if (item.get_string().get(event.name)) event.ill_typed = "name";
        } else if (key == "ts") {
            if (!to_time_ns(item, event.ts)) event.ill_typed = "ts";
        } else if (key == "dur") {
            if (!to_time_ns(item, event.dur)) event.ill_typed = "dur";
        } else if (key == "pid") {
            event.pid = to_id(item);
        } else if (key == "tid") {
            event.tid = to_id(item);
        } else if (key == "args") {
            read_args(item, event.args, warnings);
        }
    }
}

void read_device_properties(value v, ForeignTrace& out) {
    simdjson::ondemand::array array;
    if (v.get_array().get(array)) return;
    for (auto element : array) {
        simdjson::ondemand::object object;
        if (element.get_object().get(object)) continue;
        trace::detail::DeviceRow device{};
        for (auto field : object) {
            std::string_view key = field.unescaped_key();
            value item = field.value();
            if (key == "id") {
                device.id = static_cast<int32_t>(to_int(item).value_or(0));
            } else if (key == "name") {
                std::string_view text;
                if (!item.get_string().get(text)) device.name = imported_text(text, out);
            } else if (key == "totalGlobalMem") {
                device.memory_bytes = to_int(item).value_or(0);
            } else if (key == "computeMajor") {
                device.cc_major = to_int(item).value_or(0);
            } else if (key == "computeMinor") {
                device.cc_minor = to_int(item).value_or(0);
            } else if (key == "numSms") {
                device.sm_count = to_int(item).value_or(0);
            }
        }
        out.devices.push_back(std::move(device));
    }
}

// A scalar as text for run_notes; empty when it is an object or array.
std::optional<std::string> scalar_text(value item) {
    json_type type;
    if (item.type().get(type)) return std::nullopt;
    if (type == json_type::string) return std::string(std::string_view(item.get_string()));
    if (type == json_type::number || type == json_type::boolean) {
        std::string_view raw = item.raw_json_token();
        while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) {
            raw.remove_suffix(1);
        }
        return std::string(raw);
    }
    return std::nullopt;
}

void read_distributed_info(value v, ForeignTrace& out) {
    simdjson::ondemand::object object;
    if (v.get_object().get(object)) return;
    for (auto field : object) {
        std::string key(std::string_view(field.unescaped_key()));
        if (auto text = scalar_text(field.value()))
            out.notes.emplace_back(imported_text(key, out), imported_text(*text, out));
    }
}

}  // namespace

ChromeTraceParser::ChromeTraceParser(ForeignTrace& out, const ParseProgress& progress)
    : out_(out), progress_(progress), sink_(std::make_unique<EventSink>(out)) {}

ChromeTraceParser::~ChromeTraceParser() = default;

simdjson::ondemand::document ChromeTraceParser::iterate_as_array(std::string_view values) {
    // '[' values ']' and simdjson's padding: one small document per batch, so a value whose
    // parsing fails is reported as invalid JSON like a malformed whole file was.
    const size_t length = values.size() + 2;
    if (batch_.size() < length + simdjson::SIMDJSON_PADDING)
        batch_.resize(length + simdjson::SIMDJSON_PADDING + length / 4);
    batch_[0] = '[';
    std::memcpy(batch_.data() + 1, values.data(), values.size());
    batch_[length - 1] = ']';
    return parser_.iterate(batch_.data(), length, batch_.size());
}

void ChromeTraceParser::add_events(std::string_view events, uint64_t json_bytes_so_far) {
    try {
        simdjson::ondemand::document doc = iterate_as_array(events);
        for (auto element : doc.get_array()) {
            value v;
            if (element.get(v)) throw simdjson::simdjson_error(element.error());
            ChromeEvent event;
            read_event(v, event, out_.warnings);
            ++out_.events;
            if (!event.valid) {
                ++out_.warnings["trace events that are not objects (skipped)"];
            } else {
                sink_->add(event);
            }
            if (progress_ && (out_.events & 0xffff) == 0) progress_(out_.events, json_bytes_so_far);
        }
    } catch (const simdjson::simdjson_error& error) {
        throw InteropError(std::string("invalid JSON: ") + error.what());
    }
}

void ChromeTraceParser::add_top_level(const std::string& key, std::string_view text) {
    try {
        simdjson::ondemand::document doc = iterate_as_array(text);
        for (auto element : doc.get_array()) {
            value item;
            if (element.get(item)) throw simdjson::simdjson_error(element.error());
            if (key == "deviceProperties") {
                read_device_properties(item, out_);
            } else if (key == "distributedInfo") {
                read_distributed_info(item, out_);
            } else if (key == "host_name" || key == "hostname") {
                if (auto scalar = scalar_text(item)) out_.host = imported_text(*scalar, out_);
            } else if (auto scalar = scalar_text(item)) {
                out_.notes.emplace_back("kineto." + imported_text(key, out_), imported_text(*scalar, out_));
            }
        }
    } catch (const simdjson::simdjson_error& error) {
        throw InteropError(std::string("invalid JSON: ") + error.what());
    }
}

std::string ChromeTraceParser::unescape_key(std::string_view quoted) {
    try {
        simdjson::ondemand::document doc = iterate_as_array(quoted);
        for (auto element : doc.get_array()) return std::string(std::string_view(element.get_string()));
    } catch (const simdjson::simdjson_error& error) {
        throw InteropError(std::string("invalid JSON: ") + error.what());
    }
    return {};
}

void ChromeTraceParser::finish(uint64_t json_bytes) {
    out_.json_bytes = json_bytes;
    sink_->finish();
}

}  // namespace tbdprof::interop
