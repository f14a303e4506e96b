// common/printable.h: what a text log, a terminal or an explain field shows
// of a string from outside, and how long a quoted one may be.
#include "common/printable.h"

#include <string>

#include "gtest/gtest.h"

namespace locus {
namespace {

TEST(PrintableTest, KeepsPrintableAsciiAndValidUtf8) {
  EXPECT_EQ(Printable(""), "");
  EXPECT_EQ(Printable("/usr/sbin/nginx -g 'daemon off;'"),
            "/usr/sbin/nginx -g 'daemon off;'");
  EXPECT_EQ(Printable("nginx: worker ±5 % é → 😀"), "nginx: worker ±5 % é → 😀");
}

TEST(PrintableTest, EscapesControlsAndBadBytes) {
  EXPECT_EQ(Printable("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(Printable("\x1b[2J\r\x7f"), "\\x1b[2J\\x0d\\x7f");
  EXPECT_EQ(Printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(Printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(Printable("caf\xc3"), "caf\\xc3");     // a character cut short
  EXPECT_EQ(Printable("\xc0\xaf"), "\\xc0\\xaf");  // overlong '/'
}

TEST(PrintableTest, EscapesCharactersThatSteerATerminalOrReorderText) {
  EXPECT_EQ(Printable("\xc2\x9b"
                      "2J"),
            "\\u009b2J");                       // the 8-bit CSI
  EXPECT_EQ(Printable("\xc2\x85"), "\\u0085");  // NEL
  EXPECT_EQ(Printable("abc\xe2\x80\xae"
                      "fed"),
            "abc\\u202efed");  // right-to-left override
  EXPECT_EQ(Printable("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(Printable("a\xe2\x80\xa8"
                      "b"),
            "a\\u2028b");                        // line separator
  EXPECT_EQ(Printable("\xc2\xa0"), "\xc2\xa0");  // no-break space: shown
}

// The look-alike of the issue: its path holds a newline, a screen clear and
// a forged journal line; all of it stays on one inert line.
TEST(PrintableTest, ALookAlikePathStaysOneInertLine) {
  const std::string path =
      "/tmp/x\n\x1b[2J\nMESSAGE_ID=cf9be3c65a5b481c9480b1caca005f50 "
      "everything restored; bye/nginx";
  const std::string shown = Printable(path);
  EXPECT_EQ(shown.find('\n'), std::string::npos);
  EXPECT_EQ(shown.find('\x1b'), std::string::npos);
  EXPECT_EQ(shown,
            "/tmp/x\\n\\x1b[2J\\nMESSAGE_ID=cf9be3c65a5b481c9480b1caca005f50 "
            "everything restored; bye/nginx");
}

TEST(PrintableTest, EscapingTwiceChangesNothing) {
  for (const char* text : {"a\nb", "\x1b[2J", "\xff", "\xc2\x9b", "a\\nb"}) {
    const std::string once = Printable(text);
    EXPECT_EQ(Printable(once), once) << once;
  }
}

TEST(PrintableTest, ABoundCutsBetweenEscapesAndSaysHowMuchIsLeft) {
  EXPECT_EQ(Printable("abcdef", 6), "abcdef");
  EXPECT_EQ(Printable("abcdef", 4), "abcd\xe2\x80\xa6(+2 bytes)");
  // "\n" is two bytes shown: it does not fit in what is left of 4.
  EXPECT_EQ(Printable("abc\nd", 4), "abc\xe2\x80\xa6(+2 bytes)");
  EXPECT_EQ(Printable("é", 1), "\xe2\x80\xa6(+2 bytes)");
  const std::string long_path(3800, 'x');
  const std::string shown = Printable(long_path, kMaxQuotedBytes);
  EXPECT_EQ(shown,
            std::string(kMaxQuotedBytes, 'x') + "\xe2\x80\xa6(+3544 bytes)");
}

TEST(PrintableTest, ClipCutsRawTextBetweenCharacters) {
  EXPECT_EQ(Clip("short"), "short");
  EXPECT_EQ(Clip("a\nbcdef", 3), "a\nb\xe2\x80\xa6(+4 bytes)");  // not escaped
  EXPECT_EQ(Clip("ab\xc3\xa9", 3), "ab\xe2\x80\xa6(+2 bytes)");  // é whole
  EXPECT_EQ(Clip("\x80\x80\x80\x80\x80\x80", 5),
            "\x80\x80\x80\x80\x80\xe2\x80\xa6(+1 bytes)");  // not UTF-8
  EXPECT_EQ(Clip(std::string(4000, 'y')).size(),
            kMaxQuotedBytes + std::string("\xe2\x80\xa6(+3744 bytes)").size());
}

}  // namespace
}  // namespace locus
