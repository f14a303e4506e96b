// UTF-8 for text that leaves the agent in protobuf `string` fields: proto3
// refuses to parse a message whose string holds invalid UTF-8, so one stray
// byte (from a policy file, a process name, a path) would make the whole
// status or metrics message unreadable to every client. Text from outside is
// passed through ValidUtf8() before it is copied into a message.
#ifndef LOCUS_COMMON_UTF8_H_
#define LOCUS_COMMON_UTF8_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace locus {

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF) that starts `text`; 0 when there is
// none.
inline size_t Utf8SequenceLength(absl::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&text](size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80;   // the second byte's range, which rules out
  unsigned char high = 0xbf;  // overlong forms, surrogates and > U+10FFFF
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    length = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3;
    if (b0 == 0xe0) low = 0xa0;
    if (b0 == 0xed) high = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4;
    if (b0 == 0xf0) low = 0x90;
    if (b0 == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return length;
}

inline bool IsValidUtf8(absl::string_view text) {
  while (!text.empty()) {
    size_t n = Utf8SequenceLength(text);
    if (n == 0) return false;
    text.remove_prefix(n);
  }
  return true;
}

// `text` with every byte that is not part of a well-formed sequence written
// as "\xNN", so the reader still sees what was there. Valid text comes back
// unchanged (and the result is valid, so this is idempotent).
inline std::string ValidUtf8(absl::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 16);
  while (!text.empty()) {
    size_t n = Utf8SequenceLength(text);
    if (n == 0) {
      const auto b = static_cast<unsigned char>(text[0]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
      n = 1;
    } else {
      out.append(text.data(), n);
    }
    text.remove_prefix(n);
  }
  return out;
}

// The longest prefix of valid UTF-8 `text` that is at most `max_bytes` long
// and does not end inside a character.
inline absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) to the start of their character.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) {
    --end;
  }
  return text.substr(0, end);
}

}  // namespace locus

#endif  // LOCUS_COMMON_UTF8_H_
