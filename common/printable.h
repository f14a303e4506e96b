// Text from outside the agent (a process's comm or executable path, a
// cgroup path, a file's contents, a peer's words) made safe to show: the one
// helper every text log, terminal and status or explain field passes such
// text through. Any local user picks those names: a directory named
// "x\n\x1b[2J" would otherwise clear root's terminal and forge a log line.
//
// Valid UTF-8 is kept as is, so names in any script read as they are; what
// a terminal or a line-based reader acts on is written as an escape:
// newline and tab as \n and \t, other C0 controls, DEL and bytes that are
// not well-formed UTF-8 as \xNN, and the characters that steer a terminal
// or reorder text (C1 controls, whose U+009B is an 8-bit CSI; bidirectional
// overrides and isolates; the line and paragraph separators) as \uNNNN.
// A backslash is kept: the output is then printable itself, so escaping
// twice changes nothing (a name holding a literal "\x1b" reads like one
// holding ESC, which shows nothing the name's owner could not have written).
//
// JSON, journald fields and protobuf carry text as data and escape it their
// own way; this is for text read by people and line-based tools.
#ifndef LOCUS_COMMON_PRINTABLE_H_
#define LOCUS_COMMON_PRINTABLE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/utf8.h"

namespace locus {

// How much of one string from outside a message quotes (Printable's and
// Clip's `max_bytes`): a path of PATH_MAX bytes must not make every line
// that names it 4 KB long.
inline constexpr size_t kMaxQuotedBytes = 256;

namespace printable_internal {

inline constexpr char kHex[] = "0123456789abcdef";

// The escape for the code point `cp` (kept as UTF-8 in the text) when a
// terminal or a text layout acts on it; empty when it is shown as is.
inline std::string EscapeCodePoint(uint32_t cp) {
  const bool c1 = cp >= 0x80 && cp <= 0x9f;
  const bool separator = cp == 0x2028 || cp == 0x2029;
  const bool bidi = (cp >= 0x202a && cp <= 0x202e) ||
                    (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
                    cp == 0x200f || cp == 0x061c;
  if (!c1 && !separator && !bidi) return "";
  std::string out = "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
  return out;
}

inline uint32_t DecodeUtf8(absl::string_view seq) {
  const auto b = [&seq](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(seq[i]));
  };
  switch (seq.size()) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1f) << 6) | (b(1) & 0x3f);
    case 3:
      return ((b(0) & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3f) << 12) |
             ((b(2) & 0x3f) << 6) | (b(3) & 0x3f);
  }
}

// The printable form of the first character of `text` (not empty) into
// `piece`; returns how many bytes of `text` it stands for.
inline size_t NextPiece(absl::string_view text, std::string& piece) {
  piece.clear();
  const size_t n = Utf8SequenceLength(text);
  const auto b0 = static_cast<unsigned char>(text[0]);
  if (n == 0 || (n == 1 && (b0 < 0x20 || b0 == 0x7f))) {
    if (b0 == '\n') {
      piece = "\\n";
    } else if (b0 == '\t') {
      piece = "\\t";
    } else {
      piece = {'\\', 'x', kHex[b0 >> 4], kHex[b0 & 0xf]};
    }
    return 1;
  }
  if (n > 1) piece = EscapeCodePoint(DecodeUtf8(text.substr(0, n)));
  if (piece.empty()) piece.assign(text.data(), n);
  return n;
}

// "…(+N bytes)": what a shortened string ends with.
inline std::string Omitted(size_t bytes) {
  return absl::StrCat("\xe2\x80\xa6(+", bytes, " bytes)");
}

}  // namespace printable_internal

// `text` as described above. With `max_bytes`, the result keeps to that
// many bytes of escaped text and, when `text` did not fit, ends with
// "…(+N bytes)", N the bytes of `text` left out.
inline std::string Printable(
    absl::string_view text,
    size_t max_bytes = std::numeric_limits<size_t>::max()) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  std::string piece;
  size_t used = 0;
  while (used < text.size()) {
    const size_t n = printable_internal::NextPiece(text.substr(used), piece);
    if (piece.size() > max_bytes - out.size()) break;
    out += piece;
    used += n;
  }
  if (used < text.size())
    out += printable_internal::Omitted(text.size() - used);
  return out;
}

// At most `max_bytes` of `text`, unescaped, cut between characters, then
// "…(+N bytes)" when shortened: for a string quoted in a message that is
// escaped as a whole where it is shown (a log entry, whose text sinks call
// Printable and whose JSON sink escapes as JSON does).
inline std::string Clip(absl::string_view text,
                        size_t max_bytes = kMaxQuotedBytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t end = max_bytes;
  // Back off the continuation bytes (10xxxxxx) of a character cut in two;
  // at most three, so that bytes that are not UTF-8 are cut anywhere.
  for (int i = 0; i < 3 && end > 0; ++i) {
    if ((static_cast<unsigned char>(text[end]) & 0xc0) != 0x80) break;
    --end;
  }
  if ((static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) end = max_bytes;
  return absl::StrCat(text.substr(0, end),
                      printable_internal::Omitted(text.size() - end));
}

}  // namespace locus

#endif  // LOCUS_COMMON_PRINTABLE_H_
