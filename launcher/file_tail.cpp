#include "file_tail.hpp"

#include <fstream>
#include <iterator>

namespace sb {

std::vector<std::string> FileTail::new_lines() {
  std::vector<std::string> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += chunk.size();
  partial_ += chunk;
  std::size_t start = 0;
  for (std::size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(partial_.substr(start, nl - start));
  partial_.erase(0, start);
  return out;
}

std::string FileTail::rest() {
  (void)new_lines();
  return std::exchange(partial_, std::string());
}

std::vector<nlohmann::json> RecordTail::new_records() {
  std::vector<nlohmann::json> out;
  for (const auto& line : tail_.new_lines()) {
    if (line.empty()) continue;
    try {
      out.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception&) {
      // a torn line from a dying job
    }
  }
  return out;
}

}  // namespace sb
