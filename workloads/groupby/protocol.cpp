#include "groupby/protocol.hpp"

#include <algorithm>

namespace sb::groupby {

std::vector<double> finish_header(const Summary& s, const ShuffleStats& st) {
  std::vector<double> out(kHeaderWords, 0.0);
  out[kGroups] = s.groups;
  out[kSumCount] = s.sum_count;
  out[kSumSumX] = s.sum_x;
  out[kSumSumY] = s.sum_y;
  out[kSumMinX] = s.sum_min_x;
  out[kSumMaxX] = s.sum_max_x;
  out[kShuffleBytes] = st.bytes_sent;
  out[kSendBytes] = st.send_total;
  out[kCommSeconds] = st.seconds;
  out[kRecords] = 0;
  return out;
}

std::vector<double> report_records(const PartitionedTable& t, unsigned fields) {
  const int w = record_width(fields);
  std::vector<std::pair<std::int64_t, GroupState>> groups;
  groups.reserve(t.size());
  t.for_each([&](std::int64_t k, const GroupState& s) { groups.emplace_back(k, s); });
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<double> out(groups.size() * static_cast<std::size_t>(w));
  for (std::size_t i = 0; i < groups.size(); ++i)
    pack_report_record(groups[i].first, groups[i].second, fields, &out[i * w]);
  return out;
}

std::vector<double> finish_partial(const PartitionedTable& owned, unsigned fields,
                                   const ShuffleStats& st, bool with_records) {
  Summary s;
  owned.for_each([&](std::int64_t, const GroupState& g) { s.add(g, fields); });
  std::vector<double> out = finish_header(s, st);
  if (with_records) {
    const std::vector<double> recs = report_records(owned, fields);
    out[kRecords] =
        static_cast<double>(recs.size() / static_cast<std::size_t>(record_width(fields)));
    out.insert(out.end(), recs.begin(), recs.end());
  }
  return out;
}

}  // namespace sb::groupby
