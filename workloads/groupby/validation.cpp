#include "groupby/validation.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "scalebench/philox.hpp"

namespace sb::groupby {

double sum_error(double a, double b, double count) {
  const double scale = std::max(std::fabs(a), std::fabs(b)) + 1e-3 * std::fabs(count);
  if (scale == 0.0) return 0.0;
  return std::fabs(a - b) / scale;
}

ReferenceScan reference_scan(const Config& c, const std::vector<std::int64_t>& keys,
                             std::int64_t begin, std::int64_t end, int threads) {
  const QueryDef& q = c.def;
  const PoissonTable& pt = id_poisson_table();
  std::unordered_map<std::int64_t, int> index;
  for (std::size_t i = 0; i < keys.size(); ++i) index.emplace(keys[i], static_cast<int>(i));
  const bool need_b = (q.columns & (kColY | kColKey)) != 0;

  ReferenceScan total;
  total.samples.assign(keys.size(), GroupState{});
  if (threads < 1) threads = 1;
#pragma omp parallel num_threads(threads)
  {
    ReferenceScan mine;
    mine.samples.assign(keys.size(), GroupState{});
#pragma omp for schedule(static)
    for (std::int64_t r = begin; r < end; ++r) {
      const auto ur = static_cast<std::uint64_t>(r);
      const data::Words a = data::philox_words(c.seed, ur, kStreamXName);
      const double x = 2.0 * data::u01(a[0], a[1]) - 1.0;
      double y = 0.0;
      std::int64_t key = 0;
      if (need_b) {
        const data::Words b = data::philox_words(c.seed, ur, kStreamYKey);
        y = 2.0 * data::u01(b[0], b[1]) - 1.0;
        const std::uint64_t u = (static_cast<std::uint64_t>(b[2]) << 32) | b[3];
        __extension__ typedef unsigned __int128 u128;
        key = static_cast<std::int64_t>((static_cast<u128>(u) * c.cardinality) >> 64);
      }
      if (q.key_column == kColName) {
        key = static_cast<std::int64_t>((static_cast<std::uint64_t>(a[2]) * 26u) >> 32);
      } else if (q.key_column == kColId) {
        key = pt.sample((static_cast<std::uint64_t>(a[3]) << 32) | 0x80000000u);
      }
      mine.rows += 1;
      mine.sum_x += x;
      mine.sum_y += y;
      const auto it = index.find(key);
      if (it != index.end()) {
        GroupState& s = mine.samples[static_cast<std::size_t>(it->second)];
        ++s.count;
        s.sum_x += x;
        s.sum_y += y;
        s.sumsq_x += x * x;
        s.min_x = std::min(s.min_x, x);
        s.max_x = std::max(s.max_x, x);
      }
    }
#pragma omp critical
    {
      total.rows += mine.rows;
      total.sum_x += mine.sum_x;
      total.sum_y += mine.sum_y;
      for (std::size_t i = 0; i < keys.size(); ++i) total.samples[i].combine(mine.samples[i]);
    }
  }
  return total;
}

std::vector<double> validate_part(const Config& c, int rank, int size, int threads,
                                  const OwnedLookup& owned, const std::vector<double>& records) {
  const std::vector<std::int64_t> keys = sample_keys(c);
  const std::int64_t begin = c.rows * rank / size;
  const std::int64_t end = c.rows * (rank + 1) / size;
  const ReferenceScan scan = reference_scan(c, keys, begin, end, threads);
  const int w = record_width(c.def.fields);

  std::vector<double> out(kValidateHeader, 0.0);
  out[kSamples] = static_cast<double>(keys.size());
  out[kRefRows] = scan.rows;
  out[kRefSumX] = scan.sum_x;
  out[kRefSumY] = scan.sum_y;
  out[kGroupsSent] = static_cast<double>(records.size() / static_cast<std::size_t>(w));
  for (const GroupState& s : scan.samples) {
    out.insert(out.end(),
               {static_cast<double>(s.count), s.sum_x, s.sum_y, s.sumsq_x, s.min_x, s.max_x});
  }
  for (const std::int64_t k : keys) {
    const std::optional<GroupState> s = owned(k);
    if (s) {
      out.insert(out.end(), {1.0, static_cast<double>(s->count), s->sum_x, s->sum_y, s->sumsq_x,
                             s->min_x, s->max_x});
    } else {
      out.insert(out.end(), {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0});
    }
  }
  out.insert(out.end(), records.begin(), records.end());
  return out;
}

namespace {

Check make_check(std::string name, double value, double limit, std::string detail) {
  return Check{std::move(name), value, limit, value <= limit, std::move(detail)};
}

}  // namespace

std::vector<Check> check_parts(const Config& c, const Summary& last,
                               const std::vector<std::vector<double>>& parts,
                               std::vector<double>* per_group) {
  const unsigned fields = c.def.fields;
  const int w = record_width(fields);
  const std::vector<std::int64_t> keys = sample_keys(c);
  const std::size_t ns = keys.size();
  std::vector<Check> checks;

  std::vector<GroupState> ref(ns);
  std::vector<GroupState> table(ns);
  std::vector<int> owners(ns, 0);
  double ref_rows = 0, ref_x = 0, ref_y = 0;
  std::vector<double> records;
  int malformed = 0;
  for (const auto& part : parts) {
    if (part.size() < kValidateHeader || part[kSamples] != static_cast<double>(ns)) {
      ++malformed;
      continue;
    }
    const auto groups = static_cast<std::size_t>(part[kGroupsSent]);
    const std::size_t need = kValidateHeader + ns * (kRefWords + kOwnedWords) + groups * w;
    if (part.size() != need) {
      ++malformed;
      continue;
    }
    ref_rows += part[kRefRows];
    ref_x += part[kRefSumX];
    ref_y += part[kRefSumY];
    const double* p = part.data() + kValidateHeader;
    for (std::size_t i = 0; i < ns; ++i, p += kRefWords) {
      GroupState s;
      s.count = static_cast<std::int64_t>(p[0]);
      s.sum_x = p[1];
      s.sum_y = p[2];
      s.sumsq_x = p[3];
      s.min_x = p[4];
      s.max_x = p[5];
      ref[i].combine(s);
    }
    for (std::size_t i = 0; i < ns; ++i, p += kOwnedWords) {
      if (p[0] == 0.0) continue;
      ++owners[i];
      table[i].count = static_cast<std::int64_t>(p[1]);
      table[i].sum_x = p[2];
      table[i].sum_y = p[3];
      table[i].sumsq_x = p[4];
      table[i].min_x = p[5];
      table[i].max_x = p[6];
    }
    records.insert(records.end(), p, p + groups * w);
  }
  checks.push_back(make_check("worker_parts", malformed, 0,
                              "validation parts of the expected layout from every worker"));

  const auto rows = static_cast<double>(c.rows);
  checks.push_back(make_check("rows", std::fabs(last.sum_count - rows), 0,
                              fmt::format("sum of group counts == rows ({})", c.rows)));
  checks.push_back(make_check("scan_rows", std::fabs(ref_rows - rows), 0,
                              "the reference scan read every row once"));
  checks.push_back(make_check("sum_x", sum_error(last.sum_x, ref_x, rows), kSumTolerance,
                              "sum over groups of sum x vs the reference scan's sum of x"));
  if (fields & kSumY)
    checks.push_back(make_check("sum_y", sum_error(last.sum_y, ref_y, rows), kSumTolerance,
                                "sum over groups of sum y vs the reference scan's sum of y"));

  int bad_owner = 0, bad_count = 0, bad_minmax = 0;
  double worst = 0;
  for (std::size_t i = 0; i < ns; ++i) {
    if (owners[i] != 1) {
      ++bad_owner;
      continue;
    }
    const GroupState& a = table[i];
    const GroupState& b = ref[i];
    if (a.count != b.count) ++bad_count;
    const auto n = static_cast<double>(b.count);
    if (fields & kSumX) worst = std::max(worst, sum_error(a.sum_x, b.sum_x, n));
    if (fields & kSumY) worst = std::max(worst, sum_error(a.sum_y, b.sum_y, n));
    if (fields & kSumSqX) worst = std::max(worst, sum_error(a.sumsq_x, b.sumsq_x, n));
    if (b.count > 0) {
      if ((fields & kMinX) && a.min_x != b.min_x) ++bad_minmax;
      if ((fields & kMaxX) && a.max_x != b.max_x) ++bad_minmax;
    }
  }
  checks.push_back(make_check("sampled_owner", bad_owner, 0,
                              fmt::format("each of {} sampled keys owned by one worker", ns)));
  checks.push_back(
      make_check("sampled_count", bad_count, 0,
                 fmt::format("{} sampled groups: counts equal the reference scan", ns)));
  checks.push_back(make_check("sampled_sums", worst, kSumTolerance,
                              "sampled groups: sums within 1e-9 relative of the reference scan"));
  if (fields & (kMinX | kMaxX))
    checks.push_back(make_check("sampled_min_max", bad_minmax, 0,
                                "sampled groups: min/max x equal the reference scan"));

  if (c.per_group()) {
    const std::size_t n = records.size() / static_cast<std::size_t>(w);
    checks.push_back(make_check("groups_sent", std::fabs(static_cast<double>(n) - last.groups), 0,
                                "every group reached the scheduler for the cross-path check"));
    if (per_group != nullptr) {
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(),
                [&](std::size_t a, std::size_t b) { return records[a * w] < records[b * w]; });
      per_group->resize(records.size());
      for (std::size_t i = 0; i < n; ++i)
        std::copy_n(&records[order[i] * w], w, &(*per_group)[i * w]);
    }
  }
  return checks;
}

std::vector<Check> cross_check_fingerprints(const Fingerprint& reference,
                                            const Fingerprint& other) {
  std::vector<Check> checks;
  const auto& a = reference.values;
  const auto& b = other.values;
  auto num = [](const nlohmann::json& j, const char* k) {
    return j.contains(k) && j[k].is_number() ? j[k].get<double>() : std::nan("");
  };
  const double rows = num(a, "rows");
  const auto fields = static_cast<unsigned>(num(a, "fields"));
  checks.push_back(make_check("cross_groups", std::fabs(num(a, "groups") - num(b, "groups")), 0,
                              "same number of groups as the reference path"));
  checks.push_back(make_check("cross_sum_count",
                              std::fabs(num(a, "sum_count") - num(b, "sum_count")), 0,
                              "same sum of counts as the reference path"));
  checks.push_back(make_check("cross_sum_x", sum_error(num(a, "sum_x"), num(b, "sum_x"), rows),
                              kSumTolerance, "sum over groups of sum x, 1e-9 relative"));
  if (fields & kSumY)
    checks.push_back(make_check("cross_sum_y", sum_error(num(a, "sum_y"), num(b, "sum_y"), rows),
                                kSumTolerance, "sum over groups of sum y, 1e-9 relative"));
  if (reference.data.empty() || other.data.empty()) return checks;

  const int w = record_width(fields);
  const std::size_t na = reference.data.size() / w;
  const std::size_t nb = other.data.size() / w;
  std::size_t bad_keys = na > nb ? na - nb : nb - na;
  std::size_t bad_counts = 0, bad_minmax = 0;
  double worst = 0;
  for (std::size_t i = 0; i < std::min(na, nb); ++i) {
    std::int64_t ka = 0, kb = 0;
    GroupState sa, sb;
    unpack_report_record(&reference.data[i * w], fields, ka, sa);
    unpack_report_record(&other.data[i * w], fields, kb, sb);
    if (ka != kb) {
      ++bad_keys;
      continue;
    }
    if (sa.count != sb.count) ++bad_counts;
    const auto n = static_cast<double>(sa.count);
    if (fields & kSumX) worst = std::max(worst, sum_error(sa.sum_x, sb.sum_x, n));
    if (fields & kSumY) worst = std::max(worst, sum_error(sa.sum_y, sb.sum_y, n));
    if (fields & kSumSqX) worst = std::max(worst, sum_error(sa.sumsq_x, sb.sumsq_x, n));
    if ((fields & kMinX) && sa.min_x != sb.min_x) ++bad_minmax;
    if ((fields & kMaxX) && sa.max_x != sb.max_x) ++bad_minmax;
  }
  checks.push_back(make_check("cross_group_keys", static_cast<double>(bad_keys), 0,
                              "per group: the same keys as the reference path"));
  checks.push_back(make_check("cross_group_counts", static_cast<double>(bad_counts), 0,
                              "per group: counts equal the reference path's"));
  checks.push_back(make_check("cross_group_sums", worst, kSumTolerance,
                              "per group: sums and means within 1e-9 relative"));
  if (fields & (kMinX | kMaxX))
    checks.push_back(make_check("cross_group_min_max", static_cast<double>(bad_minmax), 0,
                                "per group: min/max x equal the reference path's"));
  return checks;
}

}  // namespace sb::groupby
