// The workload registry: the workloads this program registers itself (SB_REGISTER_WORKLOAD in
// workloads/<name>/, linked whole so that no registration is dropped; suite order is link
// order), then those of the loaded plugins (plugin_loader.cpp), in load order.
#include "registry.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb {
namespace {

constexpr const char* kBuiltIn = "scalebench (built-in)";

struct Registry {
  std::vector<Workload> workloads;
  std::vector<std::string> origins;  ///< per workload: kBuiltIn or the plugin's label
};

Registry make_builtin() {
  Registry r;
  r.workloads = detail::make_workloads(detail::RegistrationList::head);
  for (const auto& w : r.workloads) {
    const std::string problem = detail::workload_problem(w);
    if (!problem.empty()) throw Error(fmt::format("internal: built-in workload {}", problem));
    r.origins.emplace_back(kBuiltIn);
  }
  return r;
}

Registry& registry() {
  static Registry r = make_builtin();
  return r;
}

bool valid_name(const std::string& name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

}  // namespace

namespace detail {

std::vector<Workload> make_workloads(const WorkloadRegistration* head) {
  std::vector<Workload> out;
  for (const WorkloadRegistration* r = head; r != nullptr; r = r->next) {
    if (r->make == nullptr) continue;
    out.push_back(r->make());
  }
  return out;
}

std::string workload_problem(const Workload& w) {
  if (!valid_name(w.name))
    return fmt::format(
        "'{}': a name must start with a letter or digit and hold only letters, digits, '-' and "
        "'_'",
        w.name);
  const std::pair<bool, const char*> required[] = {
      {static_cast<bool>(w.preset), "preset"},
      {static_cast<bool>(w.expand), "expand"},
      {static_cast<bool>(w.make_scheduler), "make_scheduler"},
      {static_cast<bool>(w.make_worker), "make_worker"},
      {static_cast<bool>(w.cross_check), "cross_check"}};
  for (const auto& [set, member] : required)
    if (!set) return fmt::format("'{}' leaves the required member {} empty", w.name, member);
  return {};
}

void append_workloads(std::vector<Workload> added, const std::string& origin) {
  Registry& r = registry();
  for (std::size_t i = 0; i < added.size(); ++i) {
    const Workload& w = added[i];
    const std::string problem = workload_problem(w);
    if (!problem.empty()) throw UsageError(fmt::format("{}: workload {}", origin, problem));
    for (std::size_t k = 0; k < r.workloads.size(); ++k)
      if (r.workloads[k].name == w.name)
        throw UsageError(fmt::format("{}: workload '{}' is already registered by {}", origin,
                                     w.name, r.origins[k]));
    for (std::size_t k = 0; k < i; ++k)
      if (added[k].name == w.name)
        throw UsageError(fmt::format("{}: registers workload '{}' twice", origin, w.name));
  }
  for (auto& w : added) {
    r.workloads.push_back(std::move(w));
    r.origins.push_back(origin);
  }
}

}  // namespace detail

const std::vector<Workload>& workloads() {
  return registry().workloads;
}

const Workload& find_workload(std::string_view name) {
  std::string known;
  for (const auto& w : workloads()) {
    if (w.name == name) return w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  throw UsageError(fmt::format(
      "unknown workload '{}' (known: {}; a plugin's workloads need --plugin LIB.so)", name, known));
}

InputExport export_inputs(const std::string& workload, const std::vector<Params>& variants) {
  const Workload& w = find_workload(workload);
  if (!w.export_inputs)
    throw UsageError(fmt::format("datagen: workload '{}' has no input exporter", workload));
  return w.export_inputs(variants);
}

}  // namespace sb
