/// @file hostlist.cpp
/// SLURM host lists, per-node counts and device lists (see hostlist.hpp).

#include "batch/hostlist.hpp"

#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <cctype>
#include <charconv>
#include <cstddef>
#include <string_view>

namespace sb::batch {
namespace {

constexpr std::size_t kMaxHosts = 1 << 20;  ///< guard against `n[0-999999999]`

[[noreturn]] void malformed(const std::string& what, const std::string& text) {
  throw EnvironmentError("malformed " + what + " '" + printable(text) + "'");
}

/// Parses a non-negative decimal integer spanning all of `s`.
bool parse_uint(std::string_view s, long long& out) {
  if (s.empty() || s.size() > 18) return false;
  for (const char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

/// Splits on commas that are not inside brackets.
std::vector<std::string_view> split_top(std::string_view s, const std::string& what,
                                        const std::string& text) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') {
      if (++depth > 1) malformed(what, text);
    } else if (s[i] == ']') {
      if (--depth < 0) malformed(what, text);
    } else if (s[i] == ',' && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) malformed(what, text);
  out.push_back(s.substr(start));
  return out;
}

/// Expands the inside of one bracket group: `01-03,07` -> {"01","02","03","07"}.
std::vector<std::string> expand_ranges(std::string_view body, const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= body.size()) {
    std::size_t comma = body.find(',', start);
    if (comma == std::string_view::npos) comma = body.size();
    const std::string_view item = body.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const std::string_view lo_text = item.substr(0, dash);
    const std::string_view hi_text =
        dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
    long long lo = 0;
    long long hi = 0;
    if (!parse_uint(lo_text, lo) || !parse_uint(hi_text, hi) || hi < lo)
      malformed("host list", text);
    if (static_cast<std::size_t>(hi - lo) + out.size() >= kMaxHosts) malformed("host list", text);
    const std::size_t width = lo_text.size();
    for (long long v = lo; v <= hi; ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      out.push_back(std::move(digits));
    }
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> hosts;
  std::string_view whole(list);
  while (!whole.empty() && std::isspace(static_cast<unsigned char>(whole.back())))
    whole.remove_suffix(1);
  while (!whole.empty() && std::isspace(static_cast<unsigned char>(whole.front())))
    whole.remove_prefix(1);
  if (whole.empty()) return hosts;
  for (const std::string_view item : split_top(whole, "host list", list)) {
    if (item.empty()) malformed("host list", list);
    std::vector<std::string> partial{""};
    std::size_t pos = 0;
    while (pos < item.size()) {
      const std::size_t open = item.find('[', pos);
      const std::string_view literal =
          item.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos);
      for (const char c : literal)
        if (std::isspace(static_cast<unsigned char>(c)) ||
            std::iscntrl(static_cast<unsigned char>(c)) || c == ']')
          malformed("host list", list);
      for (auto& p : partial) p.append(literal);
      if (open == std::string_view::npos) break;
      const std::size_t close = item.find(']', open);
      if (close == std::string_view::npos) malformed("host list", list);
      const auto numbers = expand_ranges(item.substr(open + 1, close - open - 1), list);
      if (partial.size() * numbers.size() > kMaxHosts) malformed("host list", list);
      std::vector<std::string> next;
      next.reserve(partial.size() * numbers.size());
      for (const auto& p : partial)
        for (const auto& n : numbers) next.push_back(p + n);
      partial = std::move(next);
      pos = close + 1;
    }
    if (partial.size() == 1 && partial.front().empty()) malformed("host list", list);
    hosts.insert(hosts.end(), partial.begin(), partial.end());
    if (hosts.size() > kMaxHosts) malformed("host list", list);
  }
  return hosts;
}

std::vector<int> expand_counts(const std::string& list) {
  std::vector<int> out;
  if (list.empty()) return out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string_view item = std::string_view(list).substr(start, comma - start);
    const std::size_t paren = item.find('(');
    long long value = 0;
    long long repeat = 1;
    if (!parse_uint(item.substr(0, paren), value) || value > 1'000'000)
      malformed("per-node count list", list);
    if (paren != std::string_view::npos) {
      const std::string_view rest = item.substr(paren);
      if (rest.size() < 4 || rest.substr(0, 2) != "(x" || rest.back() != ')' ||
          !parse_uint(rest.substr(2, rest.size() - 3), repeat) || repeat < 1 ||
          repeat > static_cast<long long>(kMaxHosts))
        malformed("per-node count list", list);
    }
    if (out.size() + static_cast<std::size_t>(repeat) > kMaxHosts)
      malformed("per-node count list", list);
    out.insert(out.end(), static_cast<std::size_t>(repeat), static_cast<int>(value));
    start = comma + 1;
  }
  return out;
}

int count_devices(const std::string& list) {
  if (list.empty() || list == "NoDevFiles" || list == "none" || list == "-1") return 0;
  int count = 0;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string_view item = std::string_view(list).substr(start, comma - start);
    if (item.empty()) malformed("device list", list);
    const std::size_t dash = item.find('-');
    long long lo = 0;
    long long hi = 0;
    if (dash != std::string_view::npos && parse_uint(item.substr(0, dash), lo) &&
        parse_uint(item.substr(dash + 1), hi)) {
      if (hi < lo || hi - lo > 4096) malformed("device list", list);
      count += static_cast<int>(hi - lo + 1);
    } else {
      ++count;  // an ordinal, a UUID (GPU-...), or a MIG identifier
    }
    start = comma + 1;
  }
  return count;
}

int count_gpu_spec(const std::string& spec) {
  if (spec.empty()) return 0;
  int total = 0;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    const std::string_view item = std::string_view(spec).substr(start, comma - start);
    const std::size_t colon = item.rfind(':');
    const std::string_view number = colon == std::string_view::npos ? item : item.substr(colon + 1);
    long long n = 0;
    if (!parse_uint(number, n) || n > 4096) malformed("GPU count", spec);
    total += static_cast<int>(n);
    start = comma + 1;
  }
  return total;
}

}  // namespace sb::batch
