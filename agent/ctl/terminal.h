// The terminal side of `locusctl top`: raw keyboard input, the alternate
// screen, and signals turned into a quit request, all undone on exit.
#ifndef LOCUS_AGENT_CTL_TERMINAL_H_
#define LOCUS_AGENT_CTL_TERMINAL_H_

#include <signal.h>
#include <termios.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"

namespace locus {

class TopTerminal {
 public:
  // Blocks SIGINT/SIGTERM/SIGHUP in the calling thread (and so in threads it
  // starts later, such as gRPC's) so they arrive through a signalfd instead.
  // Construct before creating the gRPC channel.
  TopTerminal();
  ~TopTerminal();  // restores the terminal and the signal mask
  TopTerminal(const TopTerminal&) = delete;
  TopTerminal& operator=(const TopTerminal&) = delete;

  // Enters the alternate screen (when stdout is a terminal) and starts
  // watching the keyboard ('q') and signals; `on_quit` runs once, on that
  // watcher thread.
  void Start(std::function<void()> on_quit);
  // Replaces the screen with `lines` (plain lines when not a terminal).
  void Draw(const std::vector<std::string>& lines);
  void Size(int* rows, int* cols) const;
  bool quit_requested() const { return quit_; }

 private:
  void Watch();

  bool tty_in_ = false;
  bool tty_out_ = false;
  bool raw_ = false;
  bool started_ = false;
  termios saved_ = {};
  sigset_t old_mask_ = {};
  UniqueFd signal_fd_;
  UniqueFd stop_read_;  // readable when the destructor wants Watch to end
  UniqueFd stop_write_;
  std::function<void()> on_quit_;
  std::atomic<bool> quit_{false};
  std::thread watcher_;
};

}  // namespace locus

#endif  // LOCUS_AGENT_CTL_TERMINAL_H_
