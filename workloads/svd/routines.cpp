#include "svd/routines.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb::svd {

namespace {

void put_text(std::vector<double>& out, const std::string& s) {
  out.push_back(static_cast<double>(s.size()));
  for (const char c : s) out.push_back(static_cast<double>(static_cast<unsigned char>(c)));
}

/// A length field at p[pos]: a whole number that leaves room for its bytes.
std::size_t get_length(const std::vector<double>& p, std::size_t pos, const char* what) {
  if (pos >= p.size())
    throw Error(
        fmt::format("svd: finish partial of {} values ends before its {} length", p.size(), what));
  const double v = p[pos];
  if (!(v >= 0) || v != std::floor(v) || v > static_cast<double>(p.size() - pos - 1))
    throw Error(fmt::format("svd: finish partial has a bad {} length {}", what, v));
  return static_cast<std::size_t>(v);
}

std::string get_text(const std::vector<double>& p, std::size_t& pos, const char* what) {
  const std::size_t len = get_length(p, pos, what);
  ++pos;
  std::string s;
  s.reserve(len);
  for (std::size_t i = 0; i < len; ++i, ++pos) {
    const double v = p[pos];
    if (!(v >= 0 && v <= 255) || v != std::floor(v))
      throw Error(fmt::format("svd: finish partial has a bad {} byte {}", what, v));
    s.push_back(static_cast<char>(static_cast<unsigned char>(v)));
  }
  return s;
}

}  // namespace

std::vector<double> encode_finish(const FinishPartial& p) {
  std::vector<double> out;
  out.reserve(2 + p.local_routine.size() + p.svd_routine.size() + p.sigma.size());
  put_text(out, p.local_routine);
  put_text(out, p.svd_routine);
  out.insert(out.end(), p.sigma.begin(), p.sigma.end());
  return out;
}

FinishPartial decode_finish(const std::vector<double>& partial) {
  FinishPartial p;
  std::size_t pos = 0;
  p.local_routine = get_text(partial, pos, "local_routine");
  p.svd_routine = get_text(partial, pos, "svd_routine");
  p.sigma.assign(partial.begin() + static_cast<std::ptrdiff_t>(pos), partial.end());
  return p;
}

std::string combine_local_routines(const std::map<int, std::string>& by_rank) {
  if (by_rank.empty()) return {};
  const auto root = by_rank.find(0);
  std::vector<std::string> seen;
  if (root != by_rank.end()) seen.push_back(root->second);
  for (const auto& [rank, routine] : by_rank)  // ascending case rank
    if (std::find(seen.begin(), seen.end(), routine) == seen.end()) seen.push_back(routine);
  std::string out;
  for (std::size_t i = 0; i < seen.size(); ++i) out += (i ? "," : "") + seen[i];
  return out;
}

}  // namespace sb::svd
