// doctest's main() and implementation, compiled once for every test program that has no main of its
// own (tbd_test_program(... DOCTEST_MAIN)): the implementation alone takes seconds to compile, and
// some thirty test programs share this one copy.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
