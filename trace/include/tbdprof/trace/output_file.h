// The one way tbdprof writes an output file (a trace, a report, an export, an import). The rules:
//  - the content goes to a temporary created with O_EXCL in the target's directory, so nothing of the
//    user's (not even a file named OUT.tmp) is opened, truncated or removed;
//  - the temporary is renamed only over a regular file: never over a device (/dev/null), FIFO, socket
//    or directory, and never over one of the command's own inputs (same device and inode);
//  - an existing target is replaced only with `force`, and without it the final rename refuses to
//    replace a file that appeared meanwhile (a concurrent run gets a clear error instead of winning);
//  - one lock per target: a second tbdprof writing the same name at the same time is refused;
//  - SIGINT or SIGTERM removes the temporary and the lock and says so (remove_outputs_in_progress);
//  - the data are fsync'ed before the rename, so a full disk fails the write, not the rename, and the
//    target is either the old file or the complete new one, never a half-written one.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tbdprof::trace {

class OutputFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct OutputRules {
    bool force = false;               // replace an existing regular file
    std::vector<std::string> inputs;  // the command's inputs: never replaced
    // Text outputs (a report, an export) may go straight into a character device or a FIFO
    // (-o /dev/stdout, /dev/null, a pipe): written there, never renamed over it. A trace (SQLite)
    // is always a regular file.
    bool allow_stream = false;
    // Take the name (checks, lock) now and create the temporary only when it is first used: a
    // recording holds its name for the whole run, but leaves no temporary behind if it is killed.
    bool defer_temporary = false;
};

// Empty when `target` may be written under `rules`; otherwise one sentence saying why not. Checks
// only (creates nothing): for failing before a long run starts.
std::string check_output_target(const std::string& target, const OutputRules& rules);

class OutputFile {
public:
    // Checks the target, takes its lock and creates the temporary. Throws OutputFileError.
    OutputFile(std::string target, OutputRules rules);
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    ~OutputFile();  // removes the temporary and the lock unless committed

    const std::string& target() const { return target_; }
    // Where to write: the temporary (created now if deferred), or the target itself when it is a
    // stream (allow_stream). Throws OutputFileError when the temporary cannot be created.
    const std::string& temp_path() const;
    int fd() const;

    // Writes all of `data` to the temporary. Throws OutputFileError (ENOSPC: "disk full").
    void write(const std::string& data);
    // fsyncs the temporary, checks the target again and renames the temporary onto it. Throws
    // OutputFileError; the temporary is removed then and the target is untouched.
    void commit();

private:
    void release();
    void create_temporary() const;

    std::string target_;
    OutputRules rules_;
    mutable std::string temp_;
    std::string lock_path_;
    mutable int fd_ = -1;
    int lock_fd_ = -1;
    int pending_slot_ = -1;  // in the table a signal handler cleans up (remove_outputs_in_progress)
    bool committed_ = false;
    bool stream_ = false;
};

// For a command's start, before it opens anything: notes which of stdin, stdout and stderr were
// closed, and opens /dev/null read-only in their place, so that no file of ours gets descriptor 0-2
// and a write to a closed output fails. An output named /dev/stdout, /dev/fd/1 or /proc/self/fd/1
// (and so on) whose stream was closed is then refused instead of written into /dev/null with exit 0.
void guard_standard_streams();

// Removes the temporaries and locks of every OutputFile of this process not yet committed, and with
// `say` names each unwritten target on stderr. Async-signal-safe: for signal handlers. The first
// OutputFile installs a handler doing this for SIGINT and SIGTERM where they have none (export,
// import, report); handlers of their own (the recorder's, the build's) call it themselves.
void remove_outputs_in_progress(bool say);

// Writes `data` to `target` through an OutputFile. Returns empty or the error sentence.
std::string write_output_file(const std::string& target, const std::string& data, const OutputRules& rules);

}  // namespace tbdprof::trace
