// The collector's descriptors against the program's close and dup2.
//
// The program owns its descriptor numbers (own_descriptors.h), and the writer checks that its number
// still names its file before each write. A check and a write are two system calls: a program that
// dup2s one of its files onto every number (some launchers and daemons do) could replace ours between
// them, and our records would go into the program's file; a number it replaced between our open() and
// our first use would even have us close the program's descriptor. So the preload library's hooks of
// close, dup2, dup3, close_range and closefrom ask this guard first:
//   - a call that touches the published number (the raw file's) runs under the guard, which the
//     writer holds from its check to the end of its write (CollectorHold);
//   - while the collector opens a descriptor and uses it (OpeningWindow: the raw file until its number
//     is published, a message line, /proc/self/stat), every such call waits for it, and the window
//     starts only once the calls already past their check have ended.
// The program's call then lands before our check (seen, and the file reopened by name) or after our
// use (harmless); it is never refused or changed, only delayed for one of our system calls. Raw
// system calls that bypass libc are not seen: for them the identity check stays the only defence.
#pragma once

#include <signal.h>

namespace tbdprof::collector::descriptor_guard {

// The number the writer writes through; -1 while there is none. Set by the writer only.
void publish(int fd);

// Held by the collector from its check of the published number to the end of its use of it. Waits
// for a program call in progress under the guard; re-entrant on one thread.
class CollectorHold {
public:
    CollectorHold();
    ~CollectorHold();
    CollectorHold(const CollectorHold&) = delete;
    CollectorHold& operator=(const CollectorHold&) = delete;

private:
    bool taken_ = false;
};

// Held by the collector while it opens a descriptor and until the number is published or closed
// again (open_own is only called inside one). Nests inside a CollectorHold.
class OpeningWindow {
public:
    OpeningWindow();
    ~OpeningWindow();
    OpeningWindow(const OpeningWindow&) = delete;
    OpeningWindow& operator=(const OpeningWindow&) = delete;

private:
    CollectorHold hold_;
    bool was_open_ = false;
};

// For the hooks. True: the program's call on numbers [low, high] may run at once; call
// end_unguarded() after it. False: run it under a ProgramCall instead.
bool begin_unguarded(unsigned low, unsigned high);
void end_unguarded();

// Held around the program's call when begin_unguarded said no. Blocks this thread's signals
// meanwhile: a handler that flushed the trace here would wait for a guard its own thread holds.
class ProgramCall {
public:
    ProgramCall();
    ~ProgramCall();
    ProgramCall(const ProgramCall&) = delete;
    ProgramCall& operator=(const ProgramCall&) = delete;

private:
    bool taken_ = false;
    sigset_t saved_mask_{};
};

// Fork child: the parent's threads (one may have held the guard) do not exist in the child.
void reset_after_fork();

}  // namespace tbdprof::collector::descriptor_guard
