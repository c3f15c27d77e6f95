#include "run_dir.h"
#include "sim_holes.h"
#include "sim_libraries.h"

#include "tbdprof/trace/output_file.h"
#include "tbdprof/user_messages.h"

#include <tbdprof/cmdline/shell_quote.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tbdprof::cli {
namespace {

constexpr const char* kInfoFile = "/tbdprof-run.info";
constexpr const char* kLockFile = "/tbdprof-run.lock";
constexpr const char* kPrefix = "tbdprof-run-";

std::string temp_dir() {
    const char* tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

// Values are one line each: a newline in a command line is written as a space.
std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text;
}

bool parse_int(const std::string& text, int& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string make_run_dir(std::string& error) {
    std::string pattern = temp_dir() + "/" + kPrefix + "XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
        error = "cannot create a run directory in " + temp_dir() + ": " + std::strerror(errno);
        return {};
    }
    return pattern;
}

bool write_run_info(const std::string& run_dir, const RunInfo& info) {
    std::ostringstream out;
    out << "tbdprof_pid=" << info.tbdprof_pid << "\n"
        << "output=" << one_line(info.output) << "\n"
        << "command_line=" << one_line(info.command_line) << "\n"
        << "device_mode=" << info.device_mode << "\n"
        << "sim_model=" << one_line(info.sim_model) << "\n"
        << "stack_depth=" << info.stack_depth << "\n";
    if (info.exit_status) out << "exit_status=" << *info.exit_status << "\n";
    if (info.crash_signal) out << "crash_signal=" << *info.crash_signal << "\n";
    if (info.built) out << "built=1\n";
    // A later tbdprof reads it to resume an abandoned run: it is replaced whole, never half-written.
    return trace::write_output_file(run_dir + kInfoFile, out.str(), {.force = true, .inputs = {}}).empty();
}

std::optional<RunInfo> read_run_info(const std::string& run_dir) {
    std::ifstream in(run_dir + kInfoFile);
    if (!in) return std::nullopt;
    RunInfo info;
    std::string line;
    bool any = false;
    while (std::getline(in, line)) {
        const size_t eq = line.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
        int number = 0;
        any = true;
        if (key == "tbdprof_pid" && parse_int(value, number))
            info.tbdprof_pid = number;
        else if (key == "output")
            info.output = value;
        else if (key == "command_line")
            info.command_line = value;
        else if (key == "device_mode")
            info.device_mode = value;
        else if (key == "sim_model")
            info.sim_model = value;
        else if (key == "stack_depth" && parse_int(value, number))
            info.stack_depth = number;
        else if (key == "exit_status" && parse_int(value, number))
            info.exit_status = number;
        else if (key == "crash_signal" && parse_int(value, number))
            info.crash_signal = number;
        else if (key == "built")
            info.built = value == "1";
    }
    if (!any) return std::nullopt;
    return info;
}

std::vector<std::string> abandoned_run_dirs() {
    std::vector<std::string> found;
    const std::string dir = temp_dir();
    DIR* d = opendir(dir.c_str());
    if (!d) return found;
    while (const dirent* entry = readdir(d)) {
        if (std::strncmp(entry->d_name, kPrefix, std::strlen(kPrefix)) != 0) continue;
        const std::string path = dir + "/" + entry->d_name;
        struct stat st {};
        if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
        const auto info = read_run_info(path);
        if (!info || info->tbdprof_pid <= 0 || info->built) continue;
        // Still running (or a pid reused by another process of ours): not abandoned.
        if (kill(info->tbdprof_pid, 0) == 0 || errno == EPERM) continue;
        found.push_back(path);
    }
    closedir(d);
    return found;
}

namespace {

// Whether another process holds a lock on `path` (flock, any mode). A file that cannot be opened
// is not held.
bool lock_held(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) return false;
    const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);
    return held;
}

// The names a recording writes into its run directory (the recorder, the collector, the simulated
// driver (and the simulator's list of unmodelled calls it met), and write_output_file's temporary and lock while the info file is replaced).
bool written_by_recording(const std::string& name) {
    return name == kInfoFile + 1 || name == kLockFile + 1 || name == user_messages::kFileName ||
           name == kStaticRuntimeMark || name == kNotModelledFile || (name.starts_with("raw-") && name.ends_with(".tbdraw")) ||
           name.starts_with(".tbdprof-run.info.tmp-") || name == ".tbdprof-run.info.lock";
}

// The first raw file of `run_dir` that a process still holds open for writing (the collector keeps
// a shared lock on its raw file while it records), or empty.
std::string raw_file_in_use(const std::string& run_dir) {
    std::string found;
    DIR* d = opendir(run_dir.c_str());
    if (!d) return found;
    while (const dirent* entry = readdir(d)) {
        const std::string name = entry->d_name;
        if (name.starts_with("raw-") && name.ends_with(".tbdraw") && lock_held(run_dir + "/" + name)) {
            found = name;
            break;
        }
    }
    closedir(d);
    return found;
}

}  // namespace

int lock_run_dir(const std::string& run_dir) {
    const int fd = ::open((run_dir + kLockFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

std::string check_finished_run_dir(const std::string& run_dir, RunInfo& info, int& lock_fd) {
    lock_fd = -1;
    const std::string nothing_done = "; nothing was built or removed";
    struct stat st {};
    if (::stat(run_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return run_dir + " is not a directory" + nothing_done;
    const auto read = read_run_info(run_dir);
    if (!read || read->tbdprof_pid <= 0)
        return run_dir + " is not the run directory of a tbdprof recording (it has no " + (kInfoFile + 1) + ")" +
               nothing_done;
    if (st.st_uid != ::getuid()) return run_dir + " belongs to another user" + nothing_done;
    info = *read;
    const std::string still = run_dir + " is still being recorded into by ";
    const std::string wait = "; build it once the recording has ended" + nothing_done;
    struct stat lock {};
    const bool has_lock = ::lstat((run_dir + kLockFile).c_str(), &lock) == 0;
    // A directory of an older tbdprof has no lock: its recorder's pid is all there is.
    if ((has_lock && lock_held(run_dir + kLockFile)) ||
        (!has_lock && (::kill(info.tbdprof_pid, 0) == 0 || errno == EPERM)))
        return still + "tbdprof (pid " + std::to_string(info.tbdprof_pid) + ")" + wait;
    if (const std::string raw = raw_file_in_use(run_dir); !raw.empty())
        return still + "a process that is still running (" + raw + " is open)" + wait;
    lock_fd = lock_run_dir(run_dir);  // one `tbdprof build` at a time
    if (lock_fd < 0) return still + "another tbdprof" + wait;
    return {};
}

bool remove_run_dir(const std::string& run_dir) {
    DIR* d = opendir(run_dir.c_str());
    if (!d) return false;
    std::vector<std::string> ours;
    while (const dirent* entry = readdir(d)) {
        const std::string name = entry->d_name;
        struct stat st {};
        if (written_by_recording(name) && ::lstat((run_dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode))
            ours.push_back(run_dir + "/" + name);
    }
    closedir(d);
    for (const std::string& path : ours) ::unlink(path.c_str());
    remove_python_library_mirror(run_dir + "/" + kPythonMirrorFolder);  // --sim with PyTorch
    return ::rmdir(run_dir.c_str()) == 0;
}

std::string build_command_for(const std::string& run_dir, const std::string& output) {
    return cmdline::shell_command({"tbdprof", "build", run_dir, "-o", output});
}

}  // namespace tbdprof::cli
