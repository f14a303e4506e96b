// common/utf8.h: what counts as well-formed UTF-8 (RFC 3629), how invalid
// bytes are shown, and prefixes that never split a character.
#include "common/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace locus {
namespace {

TEST(Utf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii\n"));
  EXPECT_TRUE(IsValidUtf8("n\xc5\x93ud \xe2\x86\x92 \xf0\x9f\x98\x80"));
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF, the last
}

TEST(Utf8Test, RefusesMalformedSequences) {
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\x80"));              // a lone continuation
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // cut short
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong, 3 bytes
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x86x"));
}

TEST(Utf8Test, ValidUtf8EscapesOnlyTheBadBytes) {
  EXPECT_EQ(ValidUtf8("ok \xe2\x86\x92"), "ok \xe2\x86\x92");
  EXPECT_EQ(ValidUtf8("a\xff"
                      "b\xc3"),
            "a\\xffb\\xc3");
  EXPECT_EQ(ValidUtf8("\xe2\x86x"), "\\xe2\\x86x");
  std::string once = ValidUtf8("\xfe\xed\xa0\x80 key");
  EXPECT_TRUE(IsValidUtf8(once));
  EXPECT_EQ(ValidUtf8(once), once);
}

TEST(Utf8Test, PrefixNeverEndsInsideACharacter) {
  const std::string arrow = "ab\xe2\x86\x92";
  EXPECT_EQ(Utf8Prefix(arrow, 10), arrow);
  EXPECT_EQ(Utf8Prefix(arrow, 5), arrow);
  EXPECT_EQ(Utf8Prefix(arrow, 4), "ab");
  EXPECT_EQ(Utf8Prefix(arrow, 3), "ab");
  EXPECT_EQ(Utf8Prefix(arrow, 2), "ab");
  EXPECT_EQ(Utf8Prefix(arrow, 0), "");
}

}  // namespace
}  // namespace locus
