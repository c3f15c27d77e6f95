#include "tbdprof/trace/output_file.h"

#include <fcntl.h>
#include <linux/fs.h>  // RENAME_NOREPLACE
#include <stdio.h>     // renameat2
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tbdprof::trace {
namespace {

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

std::string why_not(const std::string& target, const OutputRules& rules, bool final_check) {
    if (target.empty()) return "no output file name";
    if (is_stream_target(target, rules)) return {};
    if (!target.empty() && target.back() == '/') return "output " + target + " is a directory";
    struct stat followed {
    }, link{};
    const bool exists = ::lstat(target.c_str(), &link) == 0;
    const bool resolves = ::stat(target.c_str(), &followed) == 0;
    if (exists) {
        const struct stat& what = resolves ? followed : link;
        if (!S_ISREG(what.st_mode) && !S_ISLNK(what.st_mode))
            return "output " + target + " is " + kind_of(what.st_mode) + "; tbdprof writes only regular files";
        if (resolves && !S_ISREG(followed.st_mode))
            return "output " + target + " is " + kind_of(followed.st_mode) + "; tbdprof writes only regular files";
        for (const std::string& input : rules.inputs) {
            struct stat in {};
            if (::stat(input.c_str(), &in) == 0 && ((resolves && same_file(in, followed)) || same_file(in, link)))
                return "output " + target + " is the input " + input + "; choose another output name";
        }
        if (!rules.force)
            return final_check ? "output " + target +
                                     " was created by someone else while tbdprof worked; use --force to replace it"
                               : "output " + target + " exists; use --force to replace it";
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
    const std::string dir = directory_of(target_);
    const std::string base = base_of(target_);
    // The lock is a hidden file next to the target; flock is released when the process dies, so a
    // leftover lock file never blocks a later run.
    lock_path_ = dir + "/." + base + ".lock";
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
    if (!rules_.defer_temporary) create_temporary();
}

void OutputFile::create_temporary() const {
    if (fd_ >= 0 || stream_) return;
    const size_t slash = target_.find_last_of('/');
    const std::string dir = directory_of(target_);
    temp_ = dir + "/." + target_.substr(slash == std::string::npos ? 0 : slash + 1) + ".tmp-XXXXXX";
    fd_ = ::mkostemp(temp_.data(), O_CLOEXEC);  // O_EXCL: never an existing file
    if (fd_ < 0) {
        const std::string error = std::strerror(errno);
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
        if (n <= 0) {
            const int error = n < 0 ? errno : ENOSPC;
            throw OutputFileError("cannot write " + target_ + ": " +
                                  (error == ENOSPC ? std::string("disk full") : std::strerror(error)) +
                                  " (nothing was written there)");
        }
        done += static_cast<size_t>(n);
    }
}

void OutputFile::commit() {
    if (stream_) {
        committed_ = true;
        release();
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
        throw OutputFileError("cannot write " + target_ + ": " +
                              (error == ENOSPC ? std::string("disk full") : std::strerror(error)) +
                              " (nothing was written there)");
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
        if (error == EEXIST)
            throw OutputFileError("output " + target_ +
                                  " was created by someone else while tbdprof worked; use --force to replace it");
        throw OutputFileError("cannot move the output to " + target_ + ": " + std::strerror(error));
    }
    committed_ = true;
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
