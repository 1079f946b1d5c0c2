// /ab: the sides of an A/B run (`scalebench run --baseline ...`): settings as attributes, the
// sides and the turns as tables, the baseline side's system and cases under /ab/baseline in
// the layout of /system and /cases (docs/report-schema.md, "A/B runs").
#include <string>
#include <vector>

#include "report_layout.hpp"
#include "report_parts.hpp"
#include "scalebench/error.hpp"
#include "scalebench/h5_tree.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using h5::Column;
using h5::Handle;
using h5::Kind;

const std::vector<Column>& side_columns() {
  static const std::vector<Column> c{
      {"side", Kind::Str},        {"label", Kind::Str},   {"rank_program", Kind::Str},
      {"rank_sha256", Kind::Str}, {"version", Kind::Str}, {"git_sha", Kind::Str},
      {"build_type", Kind::Str},  {"plugins", Kind::Str}, {"plugin_sha256", Kind::Str},
      {"env", Kind::Str},         {"params", Kind::Str},  {"mpiexec", Kind::Str}};
  return c;
}

const std::vector<Column>& turn_columns() {
  static const std::vector<Column> c{{"turn", Kind::Int},         {"index", Kind::Int},
                                     {"side", Kind::Str},         {"repeats", Kind::Int},
                                     {"first_repeat", Kind::Int}, {"round", Kind::Int},
                                     {"start_s", Kind::Float},    {"wall_s", Kind::Float}};
  return c;
}

constexpr const char* kBaselineSide = "baseline";

void write_table_or_value(hid_t parent, const std::string& key, const json& v,
                          const std::vector<Column>& cols) {
  if (!h5::write_table(parent, key, v, cols, true)) h5::write_value(parent, key, v);
}

}  // namespace

void write_ab(hid_t file, const json& ab) {
  if (!ab.is_object()) throw UsageError("report model: \"ab\" is not an object");
  Handle g = h5::create_group(file, layout::kAb);
  if (const auto s = ab.find("sides"); s != ab.end())
    write_table_or_value(g.get(), "sides", *s, side_columns());
  if (const auto t = ab.find("turns"); t != ab.end())
    write_table_or_value(g.get(), "turns", *t, turn_columns());
  if (const auto b = ab.find(kBaselineSide); b != ab.end()) {
    if (!b->is_object()) throw UsageError("report model: \"ab.baseline\" is not an object");
    Handle bg = h5::create_group(g.get(), kBaselineSide);
    const auto st = b->find("startup");
    write_system(bg.get(), b->value("system", json::object()), st != b->end() ? &*st : nullptr);
    static const json no_cases = json::array();
    const auto cs = b->find("cases");
    write_cases(bg.get(), cs != b->end() ? *cs : no_cases);
    h5::write_members(bg.get(), *b, {"system", "startup", "cases"});
  }
  h5::write_members(g.get(), ab, {"sides", "turns", kBaselineSide});
}

json read_ab(hid_t file) {
  Handle g = h5::open_group(file, layout::kAb);
  json ab = h5::read_attrs(g.get());
  for (const auto& name : h5::link_names(g.get())) {
    const std::string key = h5::unescape_name(name);
    if (key != kBaselineSide) {
      ab[key] = h5::read_link(g.get(), key);
      continue;
    }
    Handle bg = h5::open_group(g.get(), key);
    json side = h5::read_attrs(bg.get());
    for (const auto& n : h5::link_names(bg.get())) {
      const std::string k = h5::unescape_name(n);
      if (k == layout::kSystem) {
        read_system(bg.get(), side);
      } else if (k == layout::kCases) {
        side["cases"] = read_cases(bg.get());
      } else {
        side[k] = h5::read_link(bg.get(), k);
      }
    }
    ab[key] = std::move(side);
  }
  return ab;
}

}  // namespace sb::results
