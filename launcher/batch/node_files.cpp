/// @file node_files.cpp
/// Node-file readers (see node_files.hpp).

#include "batch/node_files.hpp"

#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <functional>

namespace sb::batch {
namespace {

constexpr std::size_t kMaxHosts = 1 << 20;  ///< as for SLURM host lists (hostlist.cpp)
constexpr long long kMaxSlots = 1 << 20;    ///< slots of one host

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

/// Collects hosts in order of first appearance, adding slots to a known host in O(1): an
/// open-addressing hash table (hash and index into the host list) sized from the line count, so
/// no allocation per host as in std::unordered_map (tests/batch/test_node_files.cpp, 10^6 hosts).
class SlotTable {
 public:
  SlotTable(const std::string& source, std::size_t expected_hosts) : source_(source) {
    hosts_.reserve(std::min(expected_hosts, kMaxHosts));
    resize(std::min(expected_hosts, kMaxHosts) * 2 + 16);
  }

  void add(std::string_view host, long long slots, std::string_view line) {
    for (const char c : host) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) malformed(line);
    }
    // A host's lines usually follow each other: try the last one first.
    std::size_t k = hosts_.size() - 1;
    if (hosts_.empty() || hosts_[k].host != host) k = find_or_insert(host);
    HostSlots& h = hosts_[k];
    if (h.slots + slots > kMaxSlots)
      throw EnvironmentError(source_ + " gives host '" + printable(host) + "' more than " +
                             std::to_string(kMaxSlots) + " slots");
    h.slots += static_cast<int>(slots);
  }

  [[noreturn]] void malformed(std::string_view line) const {
    throw EnvironmentError("malformed line '" + printable(line) + "' in " + source_);
  }

  std::vector<HostSlots> take() {
    if (hosts_.empty()) throw EnvironmentError(source_ + " lists no host");
    return std::move(hosts_);
  }

 private:
  struct Entry {
    std::uint64_t hash = 0;  ///< 0: empty
    std::size_t index = 0;   ///< into hosts_
  };

  /// The index of `host` in hosts_, appended when new.
  std::size_t find_or_insert(std::string_view host) {
    const std::uint64_t hash = std::hash<std::string_view>{}(host) | 1;  // never 0
    std::size_t i = hash & mask_;
    for (; table_[i].hash != 0; i = (i + 1) & mask_)
      if (table_[i].hash == hash && hosts_[table_[i].index].host == host) return table_[i].index;
    if (hosts_.size() >= kMaxHosts)
      throw EnvironmentError(source_ + " lists more than " + std::to_string(kMaxHosts) + " hosts");
    hosts_.push_back({std::string(host), 0});
    table_[i] = {hash, hosts_.size() - 1};
    if (hosts_.size() * 2 > table_.size()) resize(table_.size() * 2);
    return hosts_.size() - 1;
  }

  /// Rebuilds the table with at least `n` entries (a power of two).
  void resize(std::size_t n) {
    std::size_t size = 16;
    while (size < n) size *= 2;
    std::vector<Entry> old(size);
    old.swap(table_);
    mask_ = size - 1;
    for (const Entry& e : old) {
      if (e.hash == 0) continue;
      std::size_t i = e.hash & mask_;
      while (table_[i].hash != 0) i = (i + 1) & mask_;
      table_[i] = e;
    }
  }

  std::string source_;
  std::vector<HostSlots> hosts_;
  std::vector<Entry> table_;
  std::size_t mask_ = 0;
};

/// Lines in `text` (an upper bound of its hosts, for sizing).
std::size_t line_count(std::string_view text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
}

/// Calls f(line) for every line of `text` (without its '\n').
template <class F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    f(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

/// Splits `line` into blank-separated fields.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

/// A slot count in [1, kMaxSlots], or -1.
long long slot_count(std::string_view s) {
  long long v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || v < 1 || v > kMaxSlots) return -1;
  return v;
}

}  // namespace

std::vector<HostSlots> parse_slot_lines(std::string_view text, const std::string& source) {
  SlotTable table(source, line_count(text));
  for_each_line(text, [&](std::string_view line) {
    std::size_t b = 0;
    while (b < line.size() && blank(line[b])) ++b;
    std::size_t e = line.size();
    while (e > b && blank(line[e - 1])) --e;
    if (e == b) return;
    const std::string_view host = line.substr(b, e - b);
    for (const char c : host)
      if (blank(c)) table.malformed(line);
    table.add(host, 1, line);
  });
  return table.take();
}

std::vector<HostSlots> parse_host_counts(std::string_view text, const std::string& source) {
  const std::vector<std::string_view> f = fields(text);
  SlotTable table(source, f.size() / 2);
  if (f.size() % 2 != 0) table.malformed(text);
  for (std::size_t i = 0; i < f.size(); i += 2) {
    const long long n = slot_count(f[i + 1]);
    if (n < 0) table.malformed(text);
    table.add(f[i], n, text);
  }
  return table.take();
}

std::vector<HostSlots> parse_pe_hostfile(std::string_view text, const std::string& source) {
  SlotTable table(source, line_count(text));
  for_each_line(text, [&](std::string_view line) {
    const std::vector<std::string_view> f = fields(line);
    if (f.empty()) return;
    const long long n = f.size() >= 2 ? slot_count(f[1]) : -1;
    if (n < 0) table.malformed(line);
    table.add(f[0], n, line);
  });
  return table.take();
}

std::string read_node_file(const std::string& path, const std::string& variable) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (in) {
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(0, std::ios::beg);
    if (size > 0) {
      text.resize(static_cast<std::size_t>(size));
      in.read(text.data(), size);
      text.resize(static_cast<std::size_t>(in.gcount()));
    }
  }
  if (!in && !in.eof())
    throw EnvironmentError("cannot read " + variable + " '" + printable(path) + "'");
  return text;
}

}  // namespace sb::batch
