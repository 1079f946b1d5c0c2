// groupby's inputs for `scalebench datagen`: the table column by column, and every query's
// groups by the CPU worker's aggregation.
#include "groupby/export_inputs.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "groupby/aggregate_cpu.hpp"
#include "groupby/config.hpp"
#include "groupby/generate.hpp"
#include "groupby/group_table.hpp"
#include "groupby/query.hpp"
#include "groupby/table.hpp"
#include "scalebench/error.hpp"

namespace sb::groupby {
namespace {

constexpr std::int64_t kRowsPerFill = std::int64_t{1} << 20;

/// Rows generated and aggregated per step of the answer.
constexpr std::int64_t kAnswerBlock = std::int64_t{1} << 18;

/// One query's groups, sorted by key, with its outputs and checksums.
nlohmann::json query_answer(const Config& c, int threads) {
  const QueryDef& q = c.def;
  PartitionedTable table(0, static_cast<std::size_t>(std::min<std::int64_t>(
                                c.max_groups(c.rows), std::int64_t{1} << 24)));
  std::vector<std::int64_t> id(kAnswerBlock), key(kAnswerBlock);
  std::vector<std::int32_t> name(kAnswerBlock);
  std::vector<double> x(kAnswerBlock), y(kAnswerBlock);
  const ColumnPtrs cols{nullptr, id.data(), name.data(), x.data(), y.data(), key.data()};
  for (std::int64_t r0 = 0; r0 < c.rows; r0 += kAnswerBlock) {
    const std::int64_t n = std::min(kAnswerBlock, c.rows - r0);
    generate_rows_parallel(c.table(), r0, n, q.columns, cols, threads);
    aggregate_rows(q, cols, 0, n, table);
  }
  std::vector<std::pair<std::int64_t, GroupState>> groups;
  groups.reserve(table.size());
  table.for_each([&](std::int64_t k, const GroupState& s) { groups.emplace_back(k, s); });
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });

  nlohmann::json j = nlohmann::json::object();
  nlohmann::json labels = nlohmann::json::array();
  std::vector<nlohmann::json> outs(q.outputs.size(), nlohmann::json::array());
  double sum_count = 0, sum_x = 0, sum_y = 0;
  for (const auto& [k, s] : groups) {
    if (q.key_column == kColName)
      labels.push_back(std::string(kNames[static_cast<std::size_t>(k)]));
    else
      labels.push_back(k);
    for (std::size_t o = 0; o < q.outputs.size(); ++o)
      outs[o].push_back(aggregate(s, q.outputs[o].agg, q.outputs[o].column));
    sum_count += static_cast<double>(s.count);
    sum_x += s.sum_x;
    sum_y += s.sum_y;
  }
  j["query"] = std::string(to_string(q.query));
  j["groups"] = static_cast<std::int64_t>(groups.size());
  j["sum_count"] = sum_count;
  j["sum_x"] = sum_x;
  if (q.fields & kSumY) j["sum_y"] = sum_y;
  j[q.key_name] = labels;
  for (std::size_t o = 0; o < q.outputs.size(); ++o) j[q.outputs[o].name] = std::move(outs[o]);
  return j;
}

}  // namespace

InputExport export_inputs(const std::vector<Params>& variants) {
  SB_EXPECTS(!variants.empty(), "groupby: datagen expects at least one case");
  std::vector<Config> configs;
  for (const Params& p : variants) configs.push_back(parse(p));
  // The key column depends on the cardinality, which only the by-key variant carries.
  Config c = configs.front();
  for (std::size_t i = 0; i < variants.size(); ++i)
    if (variants[i].has("cardinality")) c.cardinality = configs[i].cardinality;
  for (const Config& o : configs)
    SB_EXPECTS(o.rows == c.rows && o.seed == c.seed && o.partition == c.partition,
               "groupby: datagen's variants must share rows, partition and seed");

  InputExport e;
  e.workload = "groupby";
  e.variants = variants;
  std::string queries;
  for (const Config& o : configs) {
    if (!queries.empty()) queries += ',';
    queries += to_string(o.def.query);
  }
  e.attrs = {{"rows", c.rows},
             {"partition", c.partition},
             {"cardinality", c.cardinality},
             {"seed", c.seed},
             {"queries", queries},
             {"recompute",
              "df.groupby('name').x.mean(); df.groupby('id').agg(mean_x=('x','mean'), "
              "sum_y=('y','sum'), count=('x','size')); df.groupby('key').agg(mean_x=('x','mean'), "
              "sum_y=('y','sum'), count=('x','size'), min_x=('x','min'), max_x=('x','max'))"},
             {"tasks",
              "partitions of `partition` rows; task t is rows [t*partition, "
              "(t+1)*partition)"}};

  const TableSpec spec = c.table();
  const std::int64_t rows = c.rows;
  auto column = [&](const char* name, InputDtype dtype, unsigned bit, const char* description) {
    InputArray a;
    a.path = std::string("table/") + name;
    a.dtype = dtype;
    a.shape = {rows};
    a.rows_per_fill = kRowsPerFill;
    a.attrs = {{"description", description}};
    a.fill = [spec, bit](std::int64_t row0, std::int64_t n, void* out, int threads) {
      ColumnPtrs p;
      switch (bit) {
        case kColTimestamp:
          p.timestamp = static_cast<std::int64_t*>(out);
          break;
        case kColId:
          p.id = static_cast<std::int64_t*>(out);
          break;
        case kColName:
          p.name = static_cast<std::int32_t*>(out);
          break;
        case kColX:
          p.x = static_cast<double*>(out);
          break;
        case kColY:
          p.y = static_cast<double*>(out);
          break;
        default:
          p.key = static_cast<std::int64_t*>(out);
          break;
      }
      generate_rows_parallel(spec, row0, n, bit, p, threads);
    };
    e.arrays.push_back(std::move(a));
  };
  column("timestamp", InputDtype::i64, kColTimestamp,
         "nanoseconds since 1970-01-01T00:00:00Z, one row per second from 2000-01-01");
  column("id", InputDtype::i64, kColId, "Poisson(1000)");
  column("name", InputDtype::i32, kColName, "code into name_dictionary (26 names)");
  column("x", InputDtype::f64, kColX, "uniform(-1, 1)");
  column("y", InputDtype::f64, kColY, "uniform(-1, 1)");
  column("key", InputDtype::i64, kColKey, "uniform integer in [0, cardinality)");
  e.arrays.back().attrs["cardinality"] = c.cardinality;
  nlohmann::json names = nlohmann::json::array();
  for (std::string_view n : kNames) names.push_back(std::string(n));
  e.constants["table"]["name_dictionary"] = names;

  // Answers: every low-cardinality query; by-key per group only up to the small preset.
  std::vector<Config> answered;
  e.answer_bytes = 4096;
  for (const Config& o : configs) {
    if (o.def.high_cardinality && !o.per_group()) continue;
    answered.push_back(o);
    e.answer_bytes +=
        8 * (2 + static_cast<std::int64_t>(o.def.outputs.size())) * o.max_groups(o.rows);
  }
  if (!answered.empty()) {
    e.answer = [answered](int threads) {
      nlohmann::json j = nlohmann::json::object();
      for (const Config& o : answered)
        j[std::string(to_string(o.def.query))] = query_answer(o, threads);
      return j;
    };
  }
  return e;
}

}  // namespace sb::groupby
