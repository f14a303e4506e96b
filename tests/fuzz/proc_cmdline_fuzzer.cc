// /proc/PID/cmdline (NUL-separated, as rewritten by the process itself).
#include "agent/host/proc_parse.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string line = locus::ParseCmdline(locus::fuzz::AsText(data, size));
  LOCUS_FUZZ_CHECK(line.size() <= size);
  LOCUS_FUZZ_CHECK(line.find('\0') == std::string::npos);
  return 0;
}
