#include "comms/pair_partial.hpp"

#include <cmath>

namespace sb::comms {
namespace {

constexpr double kVersion = 1;

void put_text(std::vector<double>& out, const std::string& s) {
  out.push_back(static_cast<double>(s.size()));
  for (const char c : s) out.push_back(static_cast<unsigned char>(c));
}

/// Reads what put_text wrote at `pos`; false when the words end first.
bool get_text(const std::vector<double>& in, std::size_t& pos, std::string& s) {
  if (pos >= in.size()) return false;
  const double len = in[pos++];
  if (!(len >= 0) || len > 4096 || pos + static_cast<std::size_t>(len) > in.size()) return false;
  s.clear();
  for (std::size_t k = 0; k < static_cast<std::size_t>(len); ++k)
    s.push_back(static_cast<char>(static_cast<unsigned char>(in[pos++])));
  return true;
}

}  // namespace

std::vector<double> encode_pairs(const PairReport& r) {
  std::vector<double> out = {kVersion, static_cast<double>(r.id.gpu),
                             static_cast<double>(r.rows.size())};
  put_text(out, r.id.host);
  for (const PairRow& row : r.rows) {
    out.insert(
        out.end(),
        {row.send_s, row.latency_s, row.recv_s, row.recv_wrong, static_cast<double>(row.link.kind),
         static_cast<double>(row.link.nvlinks), static_cast<double>(row.transport)});
    put_text(out, row.link.detail);
  }
  return out;
}

std::optional<PairReport> decode_pairs(const std::vector<double>& in, int workers) {
  if (in.size() < 3 || in[0] != kVersion || in[2] != workers) return std::nullopt;
  PairReport r;
  r.id.gpu = static_cast<int>(in[1]);
  std::size_t pos = 3;
  if (!get_text(in, pos, r.id.host)) return std::nullopt;
  for (int j = 0; j < workers; ++j) {
    if (pos + 7 > in.size()) return std::nullopt;
    PairRow row;
    row.send_s = in[pos];
    row.latency_s = in[pos + 1];
    row.recv_s = in[pos + 2];
    row.recv_wrong = in[pos + 3];
    row.link.kind = static_cast<LinkKind>(static_cast<int>(in[pos + 4]));
    row.link.nvlinks = static_cast<int>(in[pos + 5]);
    row.transport = static_cast<Transport>(static_cast<int>(in[pos + 6]));
    pos += 7;
    if (!get_text(in, pos, row.link.detail)) return std::nullopt;
    r.rows.push_back(std::move(row));
  }
  return r;
}

}  // namespace sb::comms
