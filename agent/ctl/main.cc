// locusctl: the command-line client of locusd. See CtlUsage() or --help.
#include <iostream>
#include <string>
#include <vector>

#include "agent/ctl/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return locus::RunLocusctl(args, std::cout, std::cerr);
}
