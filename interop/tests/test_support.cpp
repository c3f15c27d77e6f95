#include "test_support.h"

#include "tbdprof/trace/trace_reader.h"

#include <zlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace tbdprof::interop::test {

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

void write_gzip(const std::string& path, const std::string& text) {
    gzFile file = gzopen(path.c_str(), "wb");
    if (file == nullptr) throw std::runtime_error("gzopen " + path);
    gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
    gzclose(file);
}

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::string query_text(const std::string& trace, const std::string& sql) {
    trace::Database db = trace::open_trace(trace);
    trace::Statement statement(db, sql);
    return statement.step() ? statement.column_text(0) : std::string();
}

std::string query_rows(const std::string& trace, const std::string& sql) {
    trace::Database db = trace::open_trace(trace);
    trace::Statement statement(db, sql);
    std::string out;
    while (statement.step()) {
        out += statement.column_text(0);
        out += '\n';
    }
    return out;
}

}  // namespace tbdprof::interop::test
