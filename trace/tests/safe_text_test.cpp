#include <doctest/doctest.h>

#include <tbdprof/trace/safe_text.h>

using tbdprof::trace::printable;
using tbdprof::trace::valid_utf8;

TEST_CASE("safe text: valid UTF-8 is kept, invalid bytes become U+FFFD") {
    CHECK(valid_utf8("plain ascii") == "plain ascii");
    CHECK(valid_utf8("gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80") ==
          "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80");
    CHECK(valid_utf8("a\xFF"
                     "b") ==
          "a\xEF\xBF\xBD"
          "b");
    CHECK(valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD");          // overlong '/'
    CHECK(valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD");      // a surrogate
    CHECK(valid_utf8("\xF4\x90\x80\x80") == "\xEF\xBF\xBD");  // above U+10FFFF
    CHECK(valid_utf8("cut \xE2\x82") == "cut \xEF\xBF\xBD");  // truncated sequence
}

TEST_CASE("safe text: control characters are shown, not sent") {
    CHECK(printable("line\nnext\ttab") == "line\nnext\ttab");
    CHECK(printable("\x1B]0;title\x07") == "\\x1b]0;title\\x07");
    CHECK(printable("del\x7F") == "del\\x7f");
    CHECK(printable("csi\xC2\x9B"
                    "2J") == "csi\\u009b2J");
    CHECK(printable("nbsp\xC2\xA0") == "nbsp\xC2\xA0");
    CHECK(printable("bad\xFF") == "bad\xEF\xBF\xBD");
}
