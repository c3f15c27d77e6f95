// The descriptor guard (descriptor_guard.h): which program calls go straight through, and that a
// program call touching the published number, or any while the collector opens a file, waits for the
// collector, and the other way round. Order is checked with flags, never with times: a pause only
// gives the waiting side the chance to go wrong.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <thread>

#include "tbdprof/collector/descriptor_guard.h"

using namespace tbdprof::collector;
namespace guard = tbdprof::collector::descriptor_guard;

namespace {

void pause_briefly() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// begin_unguarded, ended at once when it let the call through.
bool goes_straight_through(unsigned low, unsigned high) {
    if (!guard::begin_unguarded(low, high)) return false;
    guard::end_unguarded();
    return true;
}

}  // namespace

TEST_CASE("descriptor guard: only calls on the published number are held") {
    guard::publish(-1);
    CHECK(goes_straight_through(0, UINT_MAX));
    guard::publish(500);
    CHECK_FALSE(goes_straight_through(500, 500));
    CHECK_FALSE(goes_straight_through(3, UINT_MAX));  // close_range(3, ~0)
    CHECK(goes_straight_through(3, 499));
    CHECK(goes_straight_through(501, 501));
    guard::publish(-1);
    CHECK(goes_straight_through(500, 500));
}

TEST_CASE("descriptor guard: a program call on the number waits for the collector's check and write") {
    guard::publish(700);
    std::atomic<bool> program_called{false};
    std::thread program;
    {
        guard::CollectorHold hold;
        program = std::thread([&] {
            REQUIRE_FALSE(guard::begin_unguarded(700, 700));
            guard::ProgramCall held;
            program_called = true;
        });
        pause_briefly();
        CHECK_FALSE(program_called.load());
    }
    program.join();
    CHECK(program_called.load());
    guard::publish(-1);
}

TEST_CASE("descriptor guard: an opening window waits for program calls already under way") {
    guard::publish(-1);
    std::atomic<bool> program_ended{false}, window_open{false};
    REQUIRE(guard::begin_unguarded(5, 5));  // this thread is "the program", inside its close(5)
    std::thread collector([&] {
        guard::OpeningWindow window;
        window_open = true;
        CHECK(program_ended.load());
        // While the window is open, every program call waits for it.
        CHECK_FALSE(goes_straight_through(9, 9));
    });
    pause_briefly();
    CHECK_FALSE(window_open.load());
    program_ended = true;
    guard::end_unguarded();
    collector.join();
    CHECK(window_open.load());
    CHECK(goes_straight_through(9, 9));
}

TEST_CASE("descriptor guard: re-entrant on the collector's own thread") {
    guard::publish(800);
    guard::CollectorHold outer;
    {
        guard::OpeningWindow window;   // a message written while the writer holds the guard
        guard::ProgramCall own_close;  // its own close(2) through the preload's hook
    }
    guard::CollectorHold inner;
    guard::publish(-1);
}
