#include "tbdprof/trace/output_file.h"

#include <fcntl.h>
#include <linux/fs.h>  // RENAME_NOREPLACE
#include <stdio.h>     // renameat2
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>

#include <pthread.h>
#include <cstring>

namespace tbdprof::trace {
namespace {

// The outputs this process is writing, for a handler of SIGINT/SIGTERM: it may only call
// async-signal-safe functions, so the paths are kept in fixed buffers, published by an atomic flag.
// Without it a signal during export or import left a hidden temporary (240 MB) and the lock.
struct PendingOutput {
    std::atomic<int> state{0};  // 0: free, 1: being filled, 2: lock and target set
    std::atomic<bool> has_temp{false};
    pid_t owner = 0;  // a child forked before exec must not remove its parent's files
    char target[PATH_MAX] = {};
    char lock[PATH_MAX] = {};
    char temp[PATH_MAX] = {};
};
constexpr int kMaxPendingOutputs = 8;
PendingOutput g_pending[kMaxPendingOutputs];
std::atomic<bool> g_handlers_installed{false};

bool g_standard_closed[3] = {false, false, false};  // stdin, stdout, stderr closed at the start

// The standard stream `target` names (/dev/stdout, /dev/fd/1, /proc/self/fd/1...), or -1.
int standard_stream_named(const std::string& target) {
    if (target == "/dev/stdin") return 0;
    if (target == "/dev/stdout") return 1;
    if (target == "/dev/stderr") return 2;
    for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        const std::string p = prefix;
        if (target.size() == p.size() + 1 && target.compare(0, p.size(), p) == 0 && target.back() >= '0' &&
            target.back() <= '2')
            return target.back() - '0';
    }
    return -1;
}

void copy_path(char* into, const std::string& path) {
    const size_t n = std::min(path.size(), static_cast<size_t>(PATH_MAX - 1));
    std::memcpy(into, path.data(), n);
    into[n] = '\0';
}

void say_raw(const char* text) {
    size_t left = std::strlen(text);
    while (left > 0) {
        const ssize_t n = ::write(STDERR_FILENO, text, left);
        if (n <= 0) return;
        text += n;
        left -= static_cast<size_t>(n);
    }
}

void on_stop_signal(int signal_number) {
    remove_outputs_in_progress(true);
    // Then die of the signal as if tbdprof had not caught it (the shell sees 128+N).
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
}

// Installed with the first output, for SIGINT and SIGTERM only where nobody else handles them (the
// recorder's forwarding and the build's guard keep their own and call remove_outputs_in_progress).
void install_stop_handlers() {
    if (g_handlers_installed.exchange(true)) return;
    for (const int signal_number : {SIGINT, SIGTERM}) {
        struct sigaction current {};
        if (::sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
        struct sigaction action {};
        action.sa_handler = on_stop_signal;
        sigemptyset(&action.sa_mask);
        sigaddset(&action.sa_mask, SIGINT);
        sigaddset(&action.sa_mask, SIGTERM);
        ::sigaction(signal_number, &action, nullptr);
    }
}

// A slot for `target`, or -1 when all are taken (then only a signal's cleanup misses it).
int register_output(const std::string& target, const std::string& lock) {
    install_stop_handlers();
    for (int i = 0; i < kMaxPendingOutputs; ++i) {
        int expected = 0;
        if (!g_pending[i].state.compare_exchange_strong(expected, 1)) continue;
        g_pending[i].owner = ::getpid();
        copy_path(g_pending[i].target, target);
        copy_path(g_pending[i].lock, lock);
        g_pending[i].has_temp.store(false);
        g_pending[i].state.store(2, std::memory_order_release);
        return i;
    }
    return -1;
}

void register_temporary(int slot, const std::string& temp) {
    if (slot < 0) return;
    copy_path(g_pending[slot].temp, temp);
    g_pending[slot].has_temp.store(true, std::memory_order_release);
}

void unregister_output(int slot) {
    if (slot < 0) return;
    g_pending[slot].has_temp.store(false);
    g_pending[slot].state.store(0, std::memory_order_release);
}

std::string directory_of(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
    return path.substr(path.find_last_of('/') + 1);
}

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

bool same_file(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool is_stream_target(const std::string& target, const OutputRules& rules) {
    struct stat st {};
    return rules.allow_stream && ::stat(target.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

std::string created_meanwhile(const std::string& target) {
    return "output " + target + " was created by someone else while tbdprof worked; use --force to replace it";
}

// A failed write or fsync: nothing reached the target (the temporary is removed).
std::string write_error(const std::string& target, int error) {
    return "cannot write " + target + ": " + (error == ENOSPC ? std::string("disk full") : std::strerror(error)) +
           " (nothing was written there)";
}

std::string why_not(const std::string& target, const OutputRules& rules, bool final_check) {
    if (target.empty()) return "no output file name";
    if (const int stream = standard_stream_named(target); stream >= 0 && g_standard_closed[stream])
        return "cannot write " + target + ": " +
               (stream == 0   ? "standard input"
                : stream == 1 ? "standard output"
                              : "standard error") +
               " is closed";
    if (is_stream_target(target, rules)) return {};
    if (!target.empty() && target.back() == '/') return "output " + target + " is a directory";
    struct stat followed {
    }, link{};
    const bool exists = ::lstat(target.c_str(), &link) == 0;
    const bool resolves = ::stat(target.c_str(), &followed) == 0;
    if (exists) {
        // What a link leads to when it resolves (stat never answers a link), else the dangling link itself.
        const struct stat& what = resolves ? followed : link;
        if (!S_ISREG(what.st_mode) && !S_ISLNK(what.st_mode))
            return "output " + target + " is " + kind_of(what.st_mode) + "; tbdprof writes only regular files";
        for (const std::string& input : rules.inputs) {
            struct stat in {};
            if (::stat(input.c_str(), &in) == 0 && ((resolves && same_file(in, followed)) || same_file(in, link)))
                return "output " + target + " is the input " + input + "; choose another output name";
        }
        if (!rules.force)
            return final_check ? created_meanwhile(target) : "output " + target + " exists; use --force to replace it";
    }
    const std::string dir = directory_of(target);
    struct stat d {};
    if (::stat(dir.c_str(), &d) != 0) return "cannot write " + target + ": " + dir + ": " + std::strerror(errno);
    if (!S_ISDIR(d.st_mode)) return "cannot write " + target + ": " + dir + " is not a directory";
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        return "cannot write " + target + ": " + dir + ": " + std::strerror(errno);
    return {};
}

}  // namespace

void guard_standard_streams() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        g_standard_closed[fd] = true;
        // The lowest free descriptor: this one, as those below it are open by now.
        const int placeholder = ::open("/dev/null", O_RDONLY);
        if (placeholder >= 0 && placeholder != fd) {
            ::dup2(placeholder, fd);
            ::close(placeholder);
        }
    }
}

void remove_outputs_in_progress(bool say) {
    const pid_t self = ::getpid();
    for (PendingOutput& pending : g_pending) {
        if (pending.state.load(std::memory_order_acquire) != 2 || pending.owner != self) continue;
        if (pending.has_temp.load(std::memory_order_acquire)) {
            ::unlink(pending.temp);
            // A trace being written by SQLite may have its journal next to it (stopped mid-transaction).
            char side[PATH_MAX + 16];
            const size_t n = std::strlen(pending.temp);
            for (const char* suffix : {"-journal", "-wal", "-shm"}) {
                std::memcpy(side, pending.temp, n);
                std::memcpy(side + n, suffix, std::strlen(suffix) + 1);
                ::unlink(side);
            }
        }
        ::unlink(pending.lock);
        pending.state.store(0);
        if (say) {
            say_raw("tbdprof: stopped by a signal: ");
            say_raw(pending.target);
            say_raw(" was not written (its temporary file was removed)\n");
        }
    }
}

std::string check_output_target(const std::string& target, const OutputRules& rules) {
    return why_not(target, rules, false);
}

OutputFile::OutputFile(std::string target, OutputRules rules) : target_(std::move(target)), rules_(std::move(rules)) {
    if (std::string problem = why_not(target_, rules_, false); !problem.empty()) throw OutputFileError(problem);
    if (is_stream_target(target_, rules_)) {
        stream_ = true;
        temp_ = target_;
        fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd_ < 0) throw OutputFileError("cannot write " + target_ + ": " + std::strerror(errno));
        return;
    }
    // The lock is a hidden file next to the target; flock is released when the process dies, so a
    // leftover lock file never blocks a later run.
    lock_path_ = directory_of(target_) + "/." + base_of(target_) + ".lock";
    for (int attempt = 0; attempt < 8 && lock_fd_ < 0; ++attempt) {
        const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) throw OutputFileError("cannot write " + target_ + ": " + lock_path_ + ": " + std::strerror(errno));
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd);
            throw OutputFileError("another tbdprof is writing " + target_ + " right now; choose another output name");
        }
        struct stat held {
        }, named{};
        // The previous holder may have removed the lock file between our open and flock.
        if (::fstat(fd, &held) == 0 && ::stat(lock_path_.c_str(), &named) == 0 && same_file(held, named)) {
            lock_fd_ = fd;
        } else {
            ::close(fd);
        }
    }
    if (lock_fd_ < 0) throw OutputFileError("cannot lock " + target_ + " (" + lock_path_ + " keeps changing)");
    pending_slot_ = register_output(target_, lock_path_);
    if (!rules_.defer_temporary) create_temporary();
}

void OutputFile::create_temporary() const {
    if (fd_ >= 0 || stream_) return;
    temp_ = directory_of(target_) + "/." + base_of(target_) + ".tmp-XXXXXX";
    // SIGINT/SIGTERM held on this thread from the file's creation to its registration: a signal in
    // between found no temporary to remove and left it behind (seen once in reliability.interrupted_outputs,
    // a SIGTERM sent as soon as the file appeared); held, it is handled once the handler knows the file.
    sigset_t stop_signals, previous;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
    fd_ = ::mkostemp(temp_.data(), O_CLOEXEC);  // O_EXCL: never an existing file
    const int create_errno = errno;
    if (fd_ >= 0) register_temporary(pending_slot_, temp_);
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (fd_ < 0) {
        const std::string error = std::strerror(create_errno);
        temp_.clear();
        throw OutputFileError("cannot create a temporary file next to " + target_ + ": " + error);
    }
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0644 & ~mask);
}

const std::string& OutputFile::temp_path() const {
    create_temporary();
    return temp_;
}

int OutputFile::fd() const {
    create_temporary();
    return fd_;
}

OutputFile::~OutputFile() {
    release();
}

void OutputFile::release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (stream_) return;
    unregister_output(pending_slot_);  // before the files go: a signal now finds nothing to remove
    pending_slot_ = -1;
    if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
    if (lock_fd_ >= 0) {
        ::unlink(lock_path_.c_str());
        ::close(lock_fd_);
        lock_fd_ = -1;
    }
}

void OutputFile::write(const std::string& data) {
    create_temporary();
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw OutputFileError(write_error(target_, n < 0 ? errno : ENOSPC));
        done += static_cast<size_t>(n);
    }
}

void OutputFile::commit() {
    if (stream_) {
        committed_ = true;
        const int fd = fd_;
        fd_ = -1;
        if (fd >= 0 && ::close(fd) != 0 && errno != EINTR)  // a pipe or device may report a failed write only now
            throw OutputFileError("cannot write " + target_ + ": " + std::strerror(errno));
        return;
    }
    try {
        create_temporary();
    } catch (const OutputFileError&) {
        release();
        throw;
    }
    if (::fsync(fd_) != 0) {
        const int error = errno;
        release();
        throw OutputFileError(write_error(target_, error));
    }
    if (std::string problem = why_not(target_, rules_, true); !problem.empty()) {
        release();
        throw OutputFileError(problem);
    }
    int rc = 0;
    if (rules_.force) {
        rc = ::rename(temp_.c_str(), target_.c_str());
    } else {
        rc = ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE);
        if (rc != 0 && errno == EINVAL) {  // a file system without RENAME_NOREPLACE: link() never replaces
            rc = ::link(temp_.c_str(), target_.c_str());
            if (rc == 0) ::unlink(temp_.c_str());
        }
    }
    if (rc != 0) {
        const int error = errno;
        release();
        if (error == EEXIST) throw OutputFileError(created_meanwhile(target_));
        throw OutputFileError("cannot move the output to " + target_ + ": " + std::strerror(error));
    }
    committed_ = true;
    unregister_output(pending_slot_);  // renamed: a signal from now on has nothing to remove
    pending_slot_ = -1;
    const int dir = ::open(directory_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    release();
}

std::string write_output_file(const std::string& target, const std::string& data, const OutputRules& rules) {
    try {
        OutputFile out(target, rules);
        out.write(data);
        out.commit();
        return {};
    } catch (const OutputFileError& e) {
        return e.what();
    }
}

}  // namespace tbdprof::trace
