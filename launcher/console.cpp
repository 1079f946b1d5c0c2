#include "console.hpp"

namespace sb {

void say(std::FILE* to, std::string_view text) noexcept {
  if (to == nullptr || text.empty()) return;
  (void)std::fwrite(text.data(), 1, text.size(), to);
  (void)std::fflush(to);
  std::clearerr(to);  // a closed pipe must not make later writes fail differently
}

}  // namespace sb
