// common/printable.h: what every text log, terminal and explain field shows
// of a string from outside. Whatever the bytes, the result has no control
// character (C0, DEL, or a C1 or bidi control as UTF-8), is valid UTF-8,
// is a fixed point (escaping twice changes nothing), keeps printable ASCII
// as it is, and keeps to its bound.
#include <string>

#include "absl/strings/match.h"
#include "common/printable.h"
#include "common/utf8.h"
#include "fuzz_check.h"

namespace {

// Whether `text` (valid UTF-8) holds nothing a terminal acts on.
bool Inert(absl::string_view text) {
  while (!text.empty()) {
    const size_t n = locus::Utf8SequenceLength(text);
    if (n == 0) return false;
    const auto b0 = static_cast<unsigned char>(text[0]);
    if (n == 1 && (b0 < 0x20 || b0 == 0x7f)) return false;
    if (n > 1 && !locus::printable_internal::EscapeCodePoint(
                      locus::printable_internal::DecodeUtf8(text.substr(0, n)))
                      .empty()) {
      return false;
    }
    text.remove_prefix(n);
  }
  return true;
}

bool PrintableAscii(absl::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text = locus::fuzz::AsText(data, size);
  const std::string out = locus::Printable(text);
  LOCUS_FUZZ_CHECK(locus::IsValidUtf8(out));
  LOCUS_FUZZ_CHECK(Inert(out));
  LOCUS_FUZZ_CHECK(out.size() >= size);  // nothing is dropped
  LOCUS_FUZZ_CHECK(locus::Printable(out) == out);
  if (PrintableAscii(text)) LOCUS_FUZZ_CHECK(out == text);
  if (locus::IsValidUtf8(text) && Inert(text)) LOCUS_FUZZ_CHECK(out == text);

  // Bounded: at most the bound plus "…(+N bytes)", and still inert.
  const size_t bound = size == 0 ? 0 : data[0] % 64;
  const std::string cut = locus::Printable(text, bound);
  LOCUS_FUZZ_CHECK(locus::IsValidUtf8(cut) && Inert(cut));
  LOCUS_FUZZ_CHECK(cut.size() <= bound + 32);
  if (out.size() <= bound) LOCUS_FUZZ_CHECK(cut == out);
  if (out.size() > bound) LOCUS_FUZZ_CHECK(absl::EndsWith(cut, " bytes)"));
  const std::string clipped = locus::Clip(text, bound);
  LOCUS_FUZZ_CHECK(clipped.size() <= bound + 32);
  if (size <= bound) LOCUS_FUZZ_CHECK(clipped == text);
  if (locus::IsValidUtf8(text)) {
    LOCUS_FUZZ_CHECK(locus::IsValidUtf8(clipped));
  }
  return 0;
}
