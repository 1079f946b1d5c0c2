/// How wide a text table may be: the terminal's width, else COLUMNS, else no limit.

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "scalebench/report.hpp"
#include "scalebench/settings.hpp"

namespace sb::results {

std::size_t output_width(int fd) {
  if (isatty(fd) != 0) {
    winsize ws{};
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  }
  // The shell's idea of the terminal width, for output that is not a terminal itself
  // (`COLUMNS=120 scalebench report r.h5 | less`); anything but a positive number is ignored.
  if (const auto c = settings::environment_variable("COLUMNS"); c && !c->empty()) {
    char* end = nullptr;
    const long n = std::strtol(c->c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && n > 0 && n < 100000) return static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace sb::results
