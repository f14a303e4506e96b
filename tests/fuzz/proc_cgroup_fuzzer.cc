// /proc/PID/cgroup: the lines, the path targets are selected by, and the
// systemd unit named in it.
#include "absl/strings/match.h"
#include "agent/host/proc_parse.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = locus::fuzz::AsText(data, size);
  for (const locus::CgroupLine& line : locus::ParseCgroupLines(text)) {
    // Views into the text, never past it.
    LOCUS_FUZZ_CHECK(line.path.data() >= text.data() &&
                     line.path.data() + line.path.size() <=
                         text.data() + text.size());
    LOCUS_FUZZ_CHECK(line.hierarchy.find(':') == absl::string_view::npos);
    LOCUS_FUZZ_CHECK(line.controllers.find(':') == absl::string_view::npos);
  }
  const std::string path = locus::ParseCgroupPath(text);
  LOCUS_FUZZ_CHECK(path.find('\n') == std::string::npos);
  const std::string unit = locus::SystemdUnitOf(path);
  LOCUS_FUZZ_CHECK(unit.empty() || absl::EndsWith(unit, ".service") ||
                   absl::EndsWith(unit, ".scope"));
  return 0;
}
