#include "console.hpp"

namespace sb {

void say(std::FILE* to, std::string_view text) noexcept {
  if (to == nullptr || text.empty()) return;
  (void)std::fwrite(text.data(), 1, text.size(), to);
  (void)std::fflush(to);
  std::clearerr(to);  // a closed pipe must not make later writes fail differently
}

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace sb
