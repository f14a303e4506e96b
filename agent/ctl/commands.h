// locusctl's commands, runnable in-process: output goes to the given
// streams, the return value is the exit status (0 done, 1 failed, 2 usage).
#ifndef LOCUS_AGENT_CTL_COMMANDS_H_
#define LOCUS_AGENT_CTL_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace locus {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// `args` excludes argv[0]. Output that cannot be written (a full disk, a
// closed pipe) fails the command, with the reason on `err`.
int RunLocusctl(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err);

// Says on `err` that the output could not be written (with errno's reason
// when set); returns kExitFailed.
int CannotWrite(std::ostream& err);

}  // namespace locus

#endif  // LOCUS_AGENT_CTL_COMMANDS_H_
