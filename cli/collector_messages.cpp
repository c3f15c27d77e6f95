#include "collector_messages.h"

#include "own_output.h"

#include <tbdprof/trace/safe_text.h>
#include <tbdprof/user_messages.h>

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace tbdprof::cli {
namespace {

// A runaway program could fill the file: only its beginning is read, and only so many are shown.
constexpr std::streamsize kMaxBytesRead = 256 * 1024;
constexpr size_t kMaxShown = 50;

struct Message {
    std::string text;
    std::set<std::string> processes;
};

}  // namespace

void print_collector_messages(const std::string& run_dir) {
    std::ifstream in(run_dir + "/" + user_messages::kFileName, std::ios::binary);
    if (!in) return;
    std::string content(static_cast<size_t>(kMaxBytesRead), '\0');
    in.read(content.data(), kMaxBytesRead);
    content.resize(static_cast<size_t>(in.gcount()));
    std::vector<Message> messages;
    size_t start = 0;
    for (size_t end; (end = content.find('\n', start)) != std::string::npos; start = end + 1) {
        // "<pid>\t<text>"; a line without its newline was cut by a full disk: left out.
        const std::string line = content.substr(start, end - start);
        const size_t tab = line.find('\t');
        if (tab == std::string::npos || tab + 1 == line.size()) continue;
        const std::string pid = line.substr(0, tab), text = line.substr(tab + 1);
        Message* same = nullptr;
        for (Message& m : messages)
            if (m.text == text) same = &m;
        if (same == nullptr) same = &messages.emplace_back(Message{text, {}});
        same->processes.insert(pid);
    }
    for (size_t i = 0; i < messages.size() && i < kMaxShown; ++i) {
        const Message& m = messages[i];
        const std::string where =
            m.processes.size() > 1 ? fmt::format(" (in {} processes)", m.processes.size()) : std::string();
        say(trace::printable(m.text) + where);
    }
    if (messages.size() > kMaxShown)
        say(fmt::format("and {} more messages from the collector, not shown", messages.size() - kMaxShown));
}

}  // namespace tbdprof::cli
