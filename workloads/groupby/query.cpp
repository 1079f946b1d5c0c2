#include "groupby/query.hpp"

#include <bit>
#include <cmath>

#include "groupby/poisson.hpp"
#include "scalebench/error.hpp"

namespace sb::groupby {

std::string_view to_string(Query q) noexcept {
  switch (q) {
    case Query::by_name:
      return "by-name";
    case Query::by_id:
      return "by-id";
    case Query::by_key:
      return "by-key";
  }
  return "?";
}

std::optional<Query> parse_query(std::string_view text) noexcept {
  if (text == "by-name") return Query::by_name;
  if (text == "by-id") return Query::by_id;
  if (text == "by-key") return Query::by_key;
  return std::nullopt;
}

double field_value(const GroupState& s, unsigned f) noexcept {
  switch (f) {
    case kSumX:
      return s.sum_x;
    case kSumY:
      return s.sum_y;
    case kSumSqX:
      return s.sumsq_x;
    case kMinX:
      return s.min_x;
    case kMaxX:
      return s.max_x;
    default:
      return 0.0;
  }
}

void set_field(GroupState& s, unsigned f, double v) noexcept {
  switch (f) {
    case kSumX:
      s.sum_x = v;
      break;
    case kSumY:
      s.sum_y = v;
      break;
    case kSumSqX:
      s.sumsq_x = v;
      break;
    case kMinX:
      s.min_x = v;
      break;
    case kMaxX:
      s.max_x = v;
      break;
    default:
      break;
  }
}

unsigned fields_for(Agg agg, ValueColumn column) {
  const bool x = column == ValueColumn::x;
  switch (agg) {
    case Agg::count:
      return 0;
    case Agg::sum:
    case Agg::mean:
      return x ? kSumX : kSumY;
    case Agg::min:
      SB_EXPECTS(x, "groupby: min is kept for column x only");
      return kMinX;
    case Agg::max:
      SB_EXPECTS(x, "groupby: max is kept for column x only");
      return kMaxX;
    case Agg::var:
    case Agg::std:
      SB_EXPECTS(x, "groupby: var/std are kept for column x only");
      return kSumX | kSumSqX;
  }
  return 0;
}

double aggregate(const GroupState& s, Agg agg, ValueColumn column) noexcept {
  const bool x = column == ValueColumn::x;
  const double n = static_cast<double>(s.count);
  const double sum = x ? s.sum_x : s.sum_y;
  switch (agg) {
    case Agg::count:
      return n;
    case Agg::sum:
      return sum;
    case Agg::mean:
      return s.count > 0 ? sum / n : std::nan("");
    case Agg::min:
      return s.min_x;
    case Agg::max:
      return s.max_x;
    case Agg::var:
    case Agg::std: {
      if (s.count < 2) return std::nan("");
      double v = (s.sumsq_x - s.sum_x * s.sum_x / n) / (n - 1.0);
      if (v < 0.0) v = 0.0;  // rounding when all values are (nearly) equal
      return agg == Agg::var ? v : std::sqrt(v);
    }
  }
  return 0.0;
}

int QueryDef::bytes_per_row() const {
  int b = 0;
  if (columns & kColTimestamp) b += 8;
  if (columns & kColId) b += 8;
  if (columns & kColName) b += 4;
  if (columns & kColX) b += 8;
  if (columns & kColY) b += 8;
  if (columns & kColKey) b += 8;
  return b;
}

namespace {
void finish_def(QueryDef& d) {
  d.fields = 0;
  d.columns = d.key_column;
  for (const auto& o : d.outputs) {
    d.fields |= fields_for(o.agg, o.column);
    if (o.agg != Agg::count) d.columns |= (o.column == ValueColumn::x ? kColX : kColY);
  }
}
}  // namespace

QueryDef query_def(Query q) {
  QueryDef d;
  d.query = q;
  switch (q) {
    case Query::by_name:
      d.key_name = "name";
      d.key_column = kColName;
      d.outputs = {{"mean_x", Agg::mean, ValueColumn::x}};
      d.domain_lo = 0;
      d.domain_size = kNumNames;
      break;
    case Query::by_id: {
      const PoissonTable& t = id_poisson_table();
      d.key_name = "id";
      d.key_column = kColId;
      d.outputs = {{"mean_x", Agg::mean, ValueColumn::x},
                   {"sum_y", Agg::sum, ValueColumn::y},
                   {"count", Agg::count, ValueColumn::x}};
      d.domain_lo = t.kmin;
      d.domain_size = t.entries;
      break;
    }
    case Query::by_key:
      d.key_name = "key";
      d.key_column = kColKey;
      d.outputs = {{"mean_x", Agg::mean, ValueColumn::x},
                   {"sum_y", Agg::sum, ValueColumn::y},
                   {"count", Agg::count, ValueColumn::x},
                   {"min_x", Agg::min, ValueColumn::x},
                   {"max_x", Agg::max, ValueColumn::x}};
      d.high_cardinality = true;
      break;
  }
  finish_def(d);
  return d;
}

QueryDef with_outputs(QueryDef def, const std::vector<OutputColumn>& extra) {
  for (const auto& o : extra) def.outputs.push_back(o);
  finish_def(def);
  return def;
}

void pack_record(std::int64_t key, const GroupState& s, unsigned fields,
                 std::uint64_t* out) noexcept {
  out[0] = static_cast<std::uint64_t>(key);
  out[1] = static_cast<std::uint64_t>(s.count);
  int i = 2;
  for (unsigned f = 1; f <= kMaxX; f <<= 1)
    if (fields & f) out[i++] = std::bit_cast<std::uint64_t>(field_value(s, f));
}

void unpack_record(const std::uint64_t* in, unsigned fields, std::int64_t& key,
                   GroupState& s) noexcept {
  key = static_cast<std::int64_t>(in[0]);
  s = GroupState{};
  s.count = static_cast<std::int64_t>(in[1]);
  int i = 2;
  for (unsigned f = 1; f <= kMaxX; f <<= 1)
    if (fields & f) set_field(s, f, std::bit_cast<double>(in[i++]));
}

void pack_report_record(std::int64_t key, const GroupState& s, unsigned fields,
                        double* out) noexcept {
  out[0] = static_cast<double>(key);
  out[1] = static_cast<double>(s.count);
  int i = 2;
  for (unsigned f = 1; f <= kMaxX; f <<= 1)
    if (fields & f) out[i++] = field_value(s, f);
}

void unpack_report_record(const double* in, unsigned fields, std::int64_t& key,
                          GroupState& s) noexcept {
  key = static_cast<std::int64_t>(in[0]);
  s = GroupState{};
  s.count = static_cast<std::int64_t>(in[1]);
  int i = 2;
  for (unsigned f = 1; f <= kMaxX; f <<= 1)
    if (fields & f) set_field(s, f, in[i++]);
}

}  // namespace sb::groupby
