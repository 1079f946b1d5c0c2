#include "run_list.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "case_estimate.hpp"

namespace sb {
namespace {

/// Code points of UTF-8 text.
std::size_t columns(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// `text` word-wrapped to `width` (0: one line), lines after the first indented by `indent`.
std::string wrap(const std::string& text, std::size_t width, const std::string& indent = "    ") {
  if (width == 0 || columns(text) <= width) return text + "\n";
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && columns(line) + 1 + columns(word) > width) {
      out += line + "\n";
      line = indent + word;
    } else {
      line += (line.empty() ? "" : " ") + word;
    }
    start = end + 1;
  }
  return out + line + "\n";
}

/// `s` cut to `width` code points with "…" in the middle.
std::string elide(const std::string& s, std::size_t width) {
  if (width == 0 || columns(s) <= width || width < 5) return s;
  const std::size_t keep = width - 1;
  const std::size_t head = keep / 2, tail = keep - head;
  std::size_t i = 0, cp = 0;
  while (i < s.size() && cp < head) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    ++cp;
  }
  std::size_t j = s.size(), tcp = 0;
  while (j > 0 && tcp < tail) {
    --j;
    while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
    ++tcp;
  }
  return s.substr(0, i) + "\xE2\x80\xA6" + s.substr(j);
}

/// "subset-mean/multi-cpu n=4000" with the parameters every case of the workload shares left
/// out; `shared` gets "workload: k=v,..." per workload that has any.
std::vector<std::string> labels(const std::vector<CaseSpec>& cases,
                                std::vector<std::string>* shared) {
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;
  std::map<std::string, int> count;
  std::vector<std::string> order;
  for (const auto& c : cases) {
    if (count[c.workload]++ == 0) order.push_back(c.workload);
    for (const auto& [k, v] : c.params.items()) values[c.workload][k].insert(v);
  }
  for (const auto& w : order) {
    std::string common;
    // A key is shared when every case of the workload has it with one value.
    for (const auto& [k, vs] : values[w]) {
      if (vs.size() != 1) continue;
      bool everywhere = true;
      for (const auto& c : cases)
        if (c.workload == w && !c.params.has(k)) everywhere = false;
      if (everywhere) common += (common.empty() ? "" : ",") + k + "=" + *vs.begin();
    }
    if (!common.empty()) shared->push_back(w + ": " + common);
  }
  std::vector<std::string> out;
  for (const auto& c : cases) {
    std::string own;
    for (const auto& [k, v] : c.params.items()) {
      const auto& vs = values[c.workload][k];
      if (vs.size() > 1) own += (own.empty() ? "" : ",") + k + "=" + v;
    }
    out.push_back(
        fmt::format("{}/{}{}", c.workload, to_string(c.path), own.empty() ? "" : " " + own));
  }
  return out;
}

std::string parallel(const CaseSpec& c, const CaseForecast& f) {
  if (f.outcome == CaseForecast::Outcome::skip) return "-";
  const std::string each = f.devices > 1 ? fmt::format("{}\xC3\x97", f.devices) : "";
  if (device_of(c.path) == Device::gpu)
    return fmt::format("{}{} GPU{}", each, f.workers, f.workers == 1 ? "" : "s");
  return fmt::format("{}{}w\xC3\x97{}t", each, f.workers, f.threads);
}

std::string memory(const CaseSpec& c, const CaseForecast& f) {
  if (f.outcome == CaseForecast::Outcome::skip) return "-";
  if (device_of(c.path) == Device::gpu && std::isfinite(f.device_bytes))
    return memory_text(f.device_bytes) + " GPU";
  return std::isfinite(f.host_bytes) ? memory_text(f.host_bytes) : "?";
}

std::string duration(double s) {
  CaseEstimate e;
  e.seconds = s;
  e.method = "measured";
  return estimate_text(e).substr(1);
}

}  // namespace

std::string format_list(const std::vector<CaseSpec>& cases, const ListContext& ctx) {
  const std::size_t w = ctx.width;
  std::string out;
  const MachineShape& m = ctx.machine;
  const std::string gpus = m.gpus > 0 ? fmt::format("{} GPU(s)", m.gpus) : m.no_gpu_reason;
  std::string repeats = "0 repeats";
  if (!cases.empty()) {
    const RepeatRule r = cases.front().repeat_rule();
    repeats = r.adaptive() ? fmt::format("{}-{} repeats (auto, at most {:g} s of them)",
                                         r.min_repeats, r.max_repeats, r.max_time_s)
                           : fmt::format("{} repeats", r.max_repeats);
    repeats += fmt::format(" + {} warm-up each", cases.front().warmup);
  }
  out += wrap(fmt::format("{} case(s), {}, on {}: {} worker(s) \xC3\x97 {} thread(s), {}",
                          cases.size(), repeats, ctx.where, m.workers, m.threads, gpus),
              w);
  if (!ctx.cpus.empty()) out += wrap("this process may use " + ctx.cpus, w);
  // Whole ids, unless they make the table wider than the width: then the parameters every
  // case of a workload shares are said once above it.
  std::vector<std::string> shared;
  std::vector<std::string> label;
  std::size_t longest = 0;
  for (const auto& c : cases) longest = std::max(longest, columns(c.id));
  if (w > 0 && longest + 44 > w) {
    label = labels(cases, &shared);
  } else {
    for (const auto& c : cases) label.push_back(c.id);
  }
  for (const auto& s : shared) out += wrap("parameters of " + s, w);
  out += "\n";
  std::set<std::string> presets;
  for (const auto& c : cases) presets.insert(c.preset);
  const bool show_preset = presets.size() > 1;

  const CaseEstimator estimator(ctx.past_reports, ctx.host);
  struct Row {
    CaseForecast f;
    CaseEstimate e;
    bool kept = false;
  };
  std::vector<Row> rows;
  for (const auto& c : cases) {
    Row r;
    r.f = forecast_case(c, m);
    r.kept = std::find(ctx.kept.begin(), ctx.kept.end(), c.id) != ctx.kept.end();
    r.e = r.kept ? CaseEstimate{0, "not run"} : estimator.estimate(c, r.f);
    rows.push_back(std::move(r));
  }
  std::vector<std::vector<std::string>> cells{{"#", "will", "workers", "time", "memory"}};
  if (show_preset) cells.front().push_back("preset");
  cells.front().push_back("case");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Row& r = rows[i];
    const std::string will = r.kept                                       ? "kept"
                             : r.f.outcome == CaseForecast::Outcome::run  ? "run"
                             : r.f.outcome == CaseForecast::Outcome::skip ? "skip"
                                                                          : "fail";
    cells.push_back({std::to_string(cases[i].index), will, parallel(cases[i], r.f),
                     estimate_text(r.e), memory(cases[i], r.f)});
    if (show_preset) cells.back().push_back(cases[i].preset);
    cells.back().push_back(label[i]);
  }
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& row : cells)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], columns(row[c]));
  std::size_t lead = 0;
  for (std::size_t c = 0; c + 1 < width.size(); ++c) lead += width[c] + 2;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::string line;
    for (std::size_t c = 0; c + 1 < cells[i].size(); ++c) {
      const std::string& t = cells[i][c];
      const std::string pad(width[c] - columns(t), ' ');
      line += (c == 0 || c == 3 || c == 4) ? pad + t : t + pad;
      line += "  ";
    }
    line += w > lead + 12 ? elide(cells[i].back(), w - lead) : cells[i].back();
    out += line + "\n";
  }

  // Why cases are skipped or will fail, one line per reason.
  std::vector<std::pair<std::string, std::vector<std::size_t>>> why;
  std::vector<std::string> fewer;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Row& r = rows[i];
    if (!r.f.fewer_why.empty() && r.f.outcome == CaseForecast::Outcome::run)
      fewer.push_back(fmt::format("{} on {} of {} workers: {}", label[i], r.f.workers,
                                  cases[i].path == ExecPath::multi_gpu ? m.gpus : m.workers,
                                  r.f.fewer_why));
    if (r.kept || r.f.outcome == CaseForecast::Outcome::run) continue;
    const std::string key =
        (r.f.outcome == CaseForecast::Outcome::skip ? "skipped: " : "will fail: ") + r.f.reason;
    auto it = std::find_if(why.begin(), why.end(), [&](const auto& p) { return p.first == key; });
    if (it == why.end()) it = why.insert(why.end(), {key, {}});
    it->second.push_back(i);
  }
  if (!why.empty() || !fewer.empty()) out += "\n";
  for (const auto& [key, idx] : why) {
    std::string which;
    for (std::size_t k = 0; k < idx.size() && k < 3; ++k)
      which += (k ? ", " : "") + std::to_string(cases[idx[k]].index);
    if (idx.size() > 3) which += fmt::format(" and {} more", idx.size() - 3);
    out += wrap(fmt::format("{} case(s) {} (#{})", idx.size(), key, which), w);
  }
  for (const auto& f : fewer) out += wrap("fewer workers: " + f, w);

  // Totals: cases run one after another, so the time adds up and the memory is the largest.
  int run = 0, skip = 0, fail = 0, kept = 0;
  double total = 0, host = NAN, gpu = NAN;
  std::map<std::string, int> methods;
  int unknown = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.kept) {
      ++kept;
      continue;
    }
    if (r.f.outcome == CaseForecast::Outcome::skip) {
      ++skip;
      continue;
    }
    if (r.f.outcome == CaseForecast::Outcome::fail) {
      ++fail;
      continue;
    }
    ++run;
    if (r.e.known() && std::isfinite(r.e.seconds)) {
      total += r.e.seconds;
      ++methods[r.e.method];
    } else {
      ++unknown;
    }
    if (std::isfinite(r.f.host_bytes))
      host = std::isfinite(host) ? std::max(host, r.f.host_bytes) : r.f.host_bytes;
    if (std::isfinite(r.f.device_bytes))
      gpu = std::isfinite(gpu) ? std::max(gpu, r.f.device_bytes) : r.f.device_bytes;
  }
  std::string how;
  for (const auto& [k, n] : methods) how += fmt::format("{}{} {}", how.empty() ? "" : ", ", n, k);
  if (unknown > 0) how += fmt::format("{}{} unknown", how.empty() ? "" : ", ", unknown);
  const bool bound = methods.count("ceiling") > 0 || unknown > 0;
  std::string line = fmt::format("{} of {} case(s) run", run, cases.size());
  if (skip > 0) line += fmt::format(", {} skipped", skip);
  if (fail > 0) line += fmt::format(", {} will fail", fail);
  if (kept > 0) line += fmt::format(", {} kept", kept);
  if (run > 0 && methods.empty())
    line += "; no time estimate (no earlier report of this host holds these cases)";
  else if (run > 0)
    line += fmt::format("; estimated {}{} ({})", bound ? ">=" : "~", duration(total), how);
  if (std::isfinite(host) || std::isfinite(gpu)) {
    line += "; largest case ";
    if (std::isfinite(host)) line += memory_text(host) + " host memory";
    if (std::isfinite(gpu))
      line += (std::isfinite(host) ? ", " : "") + memory_text(gpu) + " GPU memory";
    line += " per worker";
  }
  out += "\n" + wrap(line, w);
  if (run > 0)
    out += wrap(fmt::format("time: measured = the case in an earlier report of this host ({} "
                            "read), scaled = a case of the same workload and path at another "
                            "size, ceiling = its bytes or flops at this machine's measured "
                            "ceilings (a lower bound), ? = no such figure; memory: the "
                            "workload's estimate per worker",
                            estimator.reports()),
                w, "  ");
  return out;
}

}  // namespace sb
