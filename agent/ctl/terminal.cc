#include "agent/ctl/terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

namespace locus {
namespace {

void WriteAll(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = write(STDOUT_FILENO, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

TopTerminal::TopTerminal() {
  tty_in_ = isatty(STDIN_FILENO) == 1;
  tty_out_ = isatty(STDOUT_FILENO) == 1;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  signal_fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (int stop[2]; pipe2(stop, O_CLOEXEC) == 0) {
    stop_read_.reset(stop[0]);
    stop_write_.reset(stop[1]);
  }
}

void TopTerminal::Start(std::function<void()> on_quit) {
  on_quit_ = std::move(on_quit);
  if (tty_in_ && tcgetattr(STDIN_FILENO, &saved_) == 0) {
    termios raw = saved_;
    // Keys arrive one at a time and unechoed; ISIG stays so Ctrl-C is a
    // signal (read through the signalfd).
    raw.c_lflag &= ~(ICANON | ECHO);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    raw_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  if (tty_out_)
    WriteAll("\x1b[?1049h\x1b[?25l");  // alternate screen, no cursor
  started_ = true;
  watcher_ = std::thread([this] { Watch(); });
}

void TopTerminal::Watch() {
  bool keyboard = tty_in_;
  while (true) {
    pollfd fds[3] = {{stop_read_.get(), POLLIN, 0},
                     {signal_fd_.get(), POLLIN, 0},
                     {keyboard ? STDIN_FILENO : -1, POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) continue;
    if (fds[0].revents != 0) return;
    bool quit = false;
    if (fds[1].revents != 0) {
      signalfd_siginfo info;
      if (read(signal_fd_.get(), &info, sizeof(info)) > 0) quit = true;
    }
    if (fds[2].revents != 0) {
      char c = 0;
      ssize_t n = read(STDIN_FILENO, &c, 1);
      if (n <= 0) {
        keyboard = false;
      } else if (c == 'q' || c == 'Q' || c == 3 /* Ctrl-C, raw */) {
        quit = true;
      }
    }
    if (quit) {
      quit_ = true;
      if (on_quit_) on_quit_();
      return;
    }
  }
}

void TopTerminal::Draw(const std::vector<std::string>& lines) {
  std::string frame;
  if (tty_out_) frame = "\x1b[H";  // home; each line clears its rest
  for (const std::string& line : lines) {
    frame += line;
    if (tty_out_) frame += "\x1b[K";
    frame += "\n";
  }
  if (tty_out_) {
    frame += "\x1b[J";  // clear below
  } else {
    frame += "\n";  // frames separated by a blank line
  }
  WriteAll(frame);
}

void TopTerminal::Size(int* rows, int* cols) const {
  winsize ws = {};
  if (tty_out_ && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) {
    *rows = ws.ws_row - 1;  // the last line stays free for the cursor
    *cols = ws.ws_col;
  } else {
    *rows = 40;
    *cols = 0;  // not a terminal: no truncation
  }
}

TopTerminal::~TopTerminal() {
  if (stop_write_) {
    char byte = 0;
    (void)!write(stop_write_.get(), &byte, 1);
  }
  if (watcher_.joinable()) watcher_.join();
  if (started_ && tty_out_) WriteAll("\x1b[?25h\x1b[?1049l");
  if (raw_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  signal_fd_.reset();
  stop_read_.reset();
  stop_write_.reset();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace locus
