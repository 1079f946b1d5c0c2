// Rank placement and its encoding in SCALEBENCH_PLACEMENT (placement.hpp).
#include "scalebench/placement.hpp"

#include <algorithm>
#include <charconv>
#include <system_error>

#include "scalebench/error.hpp"

namespace sb {

std::vector<RankPlacement> place_ranks(const std::vector<NodeShape>& nodes) {
  if (nodes.empty()) throw EnvironmentError("the allocation has no node");
  std::vector<RankPlacement> out;
  RankPlacement sched;
  sched.rank = 0;
  sched.node = 0;
  sched.scheduler = true;
  sched.worker = -1;
  sched.local_rank = 0;
  sched.gpu = -1;
  sched.threads = 1;  // it sleeps in MPI waits: no core of its own
  sched.first_core = 0;
  out.push_back(sched);
  int worker = 0;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const NodeShape& node = nodes[n];
    const int cpus = std::max(1, node.cpus);
    const int workers = node.gpus > 0 ? node.gpus : 1;
    int local = n == 0 ? 1 : 0;
    int core = 0;
    for (int k = 0; k < workers; ++k) {
      RankPlacement p;
      p.rank = static_cast<int>(out.size());
      p.node = static_cast<int>(n);
      p.worker = worker++;
      p.local_rank = local++;
      p.gpu = node.gpus > 0 ? k : -1;
      if (cpus >= workers) {
        // Even split; the first (cpus % workers) workers take one core more.
        p.threads = cpus / workers + (k < cpus % workers ? 1 : 0);
        p.first_core = core;
        core += p.threads;
      } else {
        p.threads = 1;
        p.first_core = k % cpus;
      }
      out.push_back(p);
    }
  }
  return out;
}

// Two encodings; only [0-9,;:.*v-] appear, safe in any environment and any shell word.
// "v2:" (compact, used whenever it reproduces the placement exactly): the placement is
//   place_ranks of nodes described as cpus.gpus, runs written cpus.gpus*count, separated by
//   ';'. 64 nodes of 96 cores and 8 GPUs: "v2:96.8*64".
// "v1:" (any placement): one record per rank, in rank order, separated by ';'; a record is
//   node,worker,local_rank,gpu,threads,first_core (decimal; -1 for the scheduler's worker and
//   for no GPU). The scheduler is the record whose worker is -1.
namespace {

bool same_placement(const std::vector<RankPlacement>& a, const std::vector<RankPlacement>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& x = a[i];
    const auto& y = b[i];
    if (x.rank != y.rank || x.node != y.node || x.scheduler != y.scheduler ||
        x.worker != y.worker || x.local_rank != y.local_rank || x.gpu != y.gpu ||
        x.threads != y.threads || x.first_core != y.first_core)
      return false;
  }
  return true;
}

/// The nodes whose place_ranks is `placement`, when there are such nodes; else empty.
std::vector<NodeShape> nodes_of(const std::vector<RankPlacement>& placement) {
  int last = -1;
  for (const auto& p : placement) last = std::max(last, p.node);
  if (last < 0) return {};
  std::vector<NodeShape> nodes(static_cast<std::size_t>(last) + 1);
  std::vector<int> workers(nodes.size(), 0), sum(nodes.size(), 0), top(nodes.size(), 0);
  std::vector<bool> gpu(nodes.size(), false);
  for (const auto& p : placement) {
    if (p.scheduler || p.node < 0) continue;
    const auto n = static_cast<std::size_t>(p.node);
    ++workers[n];
    sum[n] += p.threads;
    top[n] = std::max(top[n], p.first_core + 1);
    gpu[n] = gpu[n] || p.gpu >= 0;
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (workers[n] == 0) return {};
    nodes[n].gpus = gpu[n] ? workers[n] : 0;
    // Enough cores: they are split exactly; fewer cores than workers: first_core wraps.
    nodes[n].cpus = sum[n] > workers[n] || top[n] == workers[n] ? sum[n] : top[n];
  }
  if (!same_placement(place_ranks(nodes), placement)) return {};
  return nodes;
}

}  // namespace

std::string encode_placement(const std::vector<RankPlacement>& placement) {
  if (const auto nodes = nodes_of(placement); !nodes.empty()) {
    std::string out = "v2:";
    for (std::size_t i = 0; i < nodes.size();) {
      std::size_t j = i;
      while (j < nodes.size() && nodes[j].cpus == nodes[i].cpus && nodes[j].gpus == nodes[i].gpus)
        ++j;
      if (i) out += ';';
      out += std::to_string(nodes[i].cpus) + '.' + std::to_string(nodes[i].gpus);
      if (j - i > 1) out += '*' + std::to_string(j - i);
      i = j;
    }
    return out;
  }
  std::string out = "v1:";
  out.reserve(3 + placement.size() * 14);
  for (std::size_t i = 0; i < placement.size(); ++i) {
    const auto& p = placement[i];
    if (p.rank != static_cast<int>(i))
      throw EnvironmentError("placement is not in rank order at rank " + std::to_string(i));
    if (i) out += ';';
    out += std::to_string(p.node) + ',' + std::to_string(p.scheduler ? -1 : p.worker) + ',' +
           std::to_string(p.local_rank) + ',' + std::to_string(p.gpu) + ',' +
           std::to_string(p.threads) + ',' + std::to_string(p.first_core);
  }
  return out;
}

std::vector<RankPlacement> decode_placement(const std::string& text) {
  const auto bad = [&](const std::string& why) -> EnvironmentError {
    return EnvironmentError("SCALEBENCH_PLACEMENT is malformed (" + why +
                            "): start ranks through `scalebench run`");
  };
  if (text.rfind("v2:", 0) == 0) {
    // cpus.gpus[*count] runs, separated by ';'.
    std::vector<NodeShape> a;
    std::size_t pos = 3;
    while (pos <= text.size()) {
      std::size_t end = text.find(';', pos);
      if (end == std::string::npos) end = text.size();
      int f[3] = {0, 0, 1};
      const char* q = text.data() + pos;
      const char* e = text.data() + end;
      for (int k = 0; k < 3 && q < e; ++k) {
        const auto r = std::from_chars(q, e, f[k]);
        if (r.ec != std::errc{}) throw bad("run " + std::to_string(a.size()));
        q = r.ptr;
        const char sep = k == 0 ? '.' : '*';
        if (q < e && k < 2) {
          if (*q != sep) throw bad("run " + std::to_string(a.size()));
          ++q;
        }
        if (k == 0 && q >= e) throw bad("run " + std::to_string(a.size()));
      }
      if (end > pos && (text[end - 1] == '*' || text[end - 1] == '.'))
        throw bad("run " + std::to_string(a.size()));
      if (q != e || f[0] < 1 || f[1] < 0 || f[1] > 4096 || f[2] < 1 ||
          a.size() + static_cast<std::size_t>(f[2]) > (1u << 20))
        throw bad("run " + std::to_string(a.size()));
      a.insert(a.end(), static_cast<std::size_t>(f[2]), NodeShape{f[0], f[1]});
      pos = end + 1;
    }
    return place_ranks(a);
  }
  if (text.rfind("v1:", 0) != 0) throw bad("no v1: or v2: prefix");
  std::vector<RankPlacement> out;
  std::size_t pos = 3;
  while (pos <= text.size()) {
    std::size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    int f[6];
    std::size_t q = pos;
    for (int k = 0; k < 6; ++k) {
      const char* b = text.data() + q;
      const char* e = text.data() + end;
      const auto r = std::from_chars(b, e, f[k]);
      if (r.ec != std::errc{}) throw bad("record " + std::to_string(out.size()));
      q = static_cast<std::size_t>(r.ptr - text.data());
      if (k < 5) {
        if (q >= end || text[q] != ',') throw bad("record " + std::to_string(out.size()));
        ++q;
      }
    }
    if (q != end) throw bad("record " + std::to_string(out.size()));
    RankPlacement p;
    p.rank = static_cast<int>(out.size());
    p.node = f[0];
    p.worker = f[1];
    p.scheduler = f[1] == -1;
    p.local_rank = f[2];
    p.gpu = f[3];
    p.threads = f[4];
    p.first_core = f[5];
    if (p.node < 0 || p.worker < -1 || p.local_rank < 0 || p.gpu < -1 || p.threads < 1 ||
        p.first_core < 0)
      throw bad("record " + std::to_string(out.size()) + " out of range");
    out.push_back(p);
    pos = end + 1;
  }
  return out;
}

}  // namespace sb
