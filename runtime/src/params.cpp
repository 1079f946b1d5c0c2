#include "scalebench/params.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"

namespace sb {

namespace {
std::string strip_underscores(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    if (c != '_') out.push_back(c);
  return out;
}
}  // namespace

std::int64_t parse_int(const std::string& text, const std::string& what) {
  const std::string s = strip_underscores(text);
  auto bad = [&](const char* why) {
    return UsageError(fmt::format("{}: '{}' is not {}", what, text, why));
  };
  if (s.empty()) throw bad("an integer");
  // 10^7 spelling.
  if (const auto caret = s.find('^'); caret != std::string::npos) {
    const std::int64_t base = parse_int(s.substr(0, caret), what);
    const std::int64_t exp = parse_int(s.substr(caret + 1), what);
    long double v = std::pow(static_cast<long double>(base), static_cast<long double>(exp));
    if (exp < 0 || v > static_cast<long double>(std::numeric_limits<std::int64_t>::max()))
      throw bad("an integer that fits 64 bits");
    return static_cast<std::int64_t>(std::llround(v));
  }
  // 1e6 spelling: must be an exact integer.
  if (s.find_first_of("eE") != std::string::npos || s.find('.') != std::string::npos) {
    char* end = nullptr;
    errno = 0;
    const long double v = std::strtold(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0' || errno != 0) throw bad("a number");
    if (std::fabs(v) >= 9.2e18L) throw bad("an integer that fits 64 bits");
    if (v != std::floor(v)) throw bad("an integer");
    return static_cast<std::int64_t>(v);
  }
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0') throw bad("an integer");
  if (errno == ERANGE) throw bad("an integer that fits 64 bits");
  return v;
}

double parse_double(const std::string& text, const std::string& what) {
  const std::string s = strip_underscores(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw UsageError(fmt::format("{}: '{}' is not a finite number", what, text));
  return v;
}

const std::string& Params::str(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) throw UsageError(fmt::format("missing parameter '{}'", key));
  return it->second;
}

std::int64_t Params::i64(const std::string& key, std::int64_t min_value) const {
  const std::int64_t v = parse_int(str(key), fmt::format("parameter '{}'", key));
  if (v < min_value)
    throw UsageError(fmt::format("parameter '{}' must be at least {} (got {})", key, min_value, v));
  return v;
}

std::uint64_t Params::u64(const std::string& key) const {
  const std::string s = strip_underscores(str(key));
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (s.empty() || s[0] == '-' || end == s.c_str() || *end != '\0' || errno == ERANGE)
    throw UsageError(
        fmt::format("parameter '{}': '{}' is not an unsigned 64-bit integer", key, str(key)));
  return v;
}

double Params::f64(const std::string& key) const {
  return parse_double(str(key), fmt::format("parameter '{}'", key));
}

std::string Params::canonical() const {
  std::string out;
  for (const auto& [k, v] : values_) {
    if (!out.empty()) out += ',';
    out += k + '=' + v;
  }
  return out;
}

void Params::merge(const Params& other) {
  for (const auto& [k, v] : other.values_) values_[k] = v;
}

nlohmann::json Params::to_json() const {
  return nlohmann::json(values_);
}

Params Params::from_json(const nlohmann::json& j) {
  Params p;
  for (const auto& [k, v] : j.items()) p.set(k, v.is_string() ? v.get<std::string>() : v.dump());
  return p;
}

}  // namespace sb
