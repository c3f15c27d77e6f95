#include "ranks.h"

#include "check.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace tbdsample {
namespace {

int env_int(const char* name, const char* fallback_name) {
    const char* text = std::getenv(name);
    if (text == nullptr && fallback_name != nullptr) text = std::getenv(fallback_name);
    if (text == nullptr) return -1;
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < 0 || value > 1 << 20) {
        std::fprintf(stderr, "%s: error: %s=%s is not a rank number\n", program_name(), name, text);
        std::exit(2);
    }
    return static_cast<int>(value);
}

std::string to_hex(const ncclUniqueId& id) {
    std::string text;
    char digits[3];
    for (char c : id.internal) {
        std::snprintf(digits, sizeof digits, "%02x", static_cast<unsigned char>(c));
        text += digits;
    }
    return text;
}

[[noreturn]] void exec_rank(int rank, int world_size, char** argv, const std::string& id_hex) {
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", std::to_string(world_size).c_str(), 1);
    setenv("TBD_NCCL_UNIQUE_ID", id_hex.c_str(), 1);
    const char* labels = std::getenv("TBD_SAMPLE_LABELS");
    if (labels != nullptr && rank > 0)
        setenv("TBD_SAMPLE_LABELS", (std::string(labels) + ".rank" + std::to_string(rank)).c_str(), 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr, "%s: cannot start rank %d: %s\n", program_name(), rank, std::strerror(errno));
    _exit(127);
}

}  // namespace

std::optional<RankInfo> rank_from_environment() {
    RankInfo info;
    info.rank = env_int("RANK", "OMPI_COMM_WORLD_RANK");
    info.world_size = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE");
    info.local_rank = env_int("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK");
    if (info.rank < 0 && info.world_size < 0) return std::nullopt;
    if (info.rank < 0 || info.world_size < 1 || info.rank >= info.world_size) {
        std::fprintf(stderr, "%s: error: the rank environment needs both a rank and a world size above it\n",
                     program_name());
        std::exit(2);
    }
    if (info.local_rank < 0) info.local_rank = info.rank;
    return info;
}

int launch_ranks(int world_size, char** argv) {
    ncclUniqueId id;
    if (ncclGetUniqueId(&id) != ncclSuccess) fail_message("ncclGetUniqueId failed", __FILE__, __LINE__);
    const std::string id_hex = to_hex(id);
    std::fflush(nullptr);
    std::vector<pid_t> children;
    for (int rank = 0; rank < world_size; ++rank) {
        pid_t pid = fork();
        if (pid < 0) fail_message("fork failed", __FILE__, __LINE__);
        if (pid == 0) exec_rank(rank, world_size, argv, id_hex);
        children.push_back(pid);
    }
    int result = 0;
    for (pid_t child : children) {
        int status = 0;
        waitpid(child, &status, 0);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (code != 0 && result == 0) result = code;
    }
    return result;
}

ncclUniqueId unique_id_from_environment() {
    ncclUniqueId id{};
    const char* text = std::getenv("TBD_NCCL_UNIQUE_ID");
    if (text == nullptr || std::strlen(text) != 2 * sizeof id.internal) {
        std::fprintf(stderr, "%s: error: TBD_NCCL_UNIQUE_ID is missing or malformed (start the ranks with --ranks N)\n",
                     program_name());
        std::exit(2);
    }
    for (size_t i = 0; i < sizeof id.internal; ++i) {
        unsigned byte = 0;
        if (std::sscanf(text + 2 * i, "%2x", &byte) != 1) {
            std::fprintf(stderr, "%s: error: TBD_NCCL_UNIQUE_ID is not hexadecimal\n", program_name());
            std::exit(2);
        }
        id.internal[i] = static_cast<char>(byte);
    }
    return id;
}

}  // namespace tbdsample
