#pragma once
/// @file params.hpp
/// Case parameters: an ordered map of "key" -> "value" strings with typed, checked getters.
/// Keys are per workload ("n", "chunk", "seed"); on the command line they are written
/// `--param workload.key=value`. Every getter throws sb::UsageError naming the key on bad input.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb {

class Params {
 public:
  Params() = default;

  void set(const std::string& key, const std::string& value) { values_[key] = value; }
  [[nodiscard]] bool has(const std::string& key) const { return values_.count(key) != 0; }
  [[nodiscard]] const std::string& str(const std::string& key) const;
  /// Integer >= min_value; accepts 1e6, 10^7 and 2_000_000 spellings; rejects overflow.
  [[nodiscard]] std::int64_t i64(const std::string& key, std::int64_t min_value = 1) const;
  /// Unsigned 64-bit (seeds).
  [[nodiscard]] std::uint64_t u64(const std::string& key) const;
  [[nodiscard]] double f64(const std::string& key) const;

  [[nodiscard]] const std::map<std::string, std::string>& items() const { return values_; }
  /// "k1=v1,k2=v2" in key order: the parameter part of a case id.
  [[nodiscard]] std::string canonical() const;
  /// Values of `other` replace ours (presets below, user overrides on top).
  void merge(const Params& other);

  [[nodiscard]] nlohmann::json to_json() const;
  static Params from_json(const nlohmann::json& j);

  bool operator==(const Params&) const = default;

 private:
  std::map<std::string, std::string> values_;
};

/// Parses a decimal integer written as 123, 1e6, 10^7 or 2_000_000. Throws sb::UsageError
/// (mentioning `what`) on junk or on values that do not fit int64.
std::int64_t parse_int(const std::string& text, const std::string& what);
double parse_double(const std::string& text, const std::string& what);

}  // namespace sb
