/// @file dialect_pbs.cpp
/// PBS (PBS Pro, OpenPBS) in `scalebench submit`: slurm/pbs.tmpl, `#PBS` directives, qsub.

#include "batch/scheduler_dialect.hpp"

#include <scalebench/error.hpp>

namespace sb::batch {
namespace {

class PbsDialect final : public SchedulerDialect {
 public:
  const char* name() const override { return "pbs"; }
  const char* title() const override { return "PBS"; }
  const char* template_file() const override { return "pbs.tmpl"; }
  const char* directive() const override { return "#PBS"; }
  const char* program() const override { return "qsub"; }

  void validate(const SubmitRequest& r) const override {
    check_job_id(r.after, "[0-9]{1,12}(\\[[0-9]{0,9}\\])?(\\.[A-Za-z0-9_-]+)*",
                 "a PBS job id (digits, optionally [N] and .server)");
    if (std::stoi(r.cpus_per_node) == 0)
      throw UsageError("PBS needs --cpus-per-node (select=...:ncpus=C has no whole-node default)");
  }

  void add_variables(const SubmitRequest& r, const JobShape& s, TemplateVars& v) const override {
    // PBS directives are not parsed by a shell and qsub does not strip quotes everywhere: the
    // values are plain words (validated before), written as they are.
    v["PBS_GPUS"] = s.gpus_per_node > 0 ? ":ngpus=" + std::to_string(s.gpus_per_node) : "";
    std::string o;
    if (!r.partition.empty()) o += "#PBS -q " + r.partition + "\n";
    if (!r.account.empty()) o += "#PBS -A " + r.account + "\n";
    if (!r.after.empty()) o += "#PBS -W depend=afterany:" + r.after + "\n";
    if (!r.output.empty()) o += "#PBS -o " + r.output + "\n";
    v["PBS_OPTIONS"] = o;
    v["OUTPUT"] = r.output;
    v["PBS_HOST"] = "";
  }

  void add_fleet_variables(int array_size, const std::string& node, const std::string& dir,
                           TemplateVars& v) const override {
    // A node name goes into the select statement's chunk; -o names a folder: PBS writes
    // JOBNAME.oSEQ there.
    v["FLEET_DIRECTIVES"] =
        array_size >= 2 ? "#PBS -J 0-" + std::to_string(array_size - 1) + "\n" : std::string();
    v["PBS_HOST"] = node.empty() ? std::string() : ":host=" + node;
    std::string& o = v["PBS_OPTIONS"];
    std::string kept;
    std::size_t start = 0;
    while (start < o.size()) {  // the request's -o gives way to the fleet folder
      const std::size_t end = o.find('\n', start);
      const std::string line = o.substr(start, end == std::string::npos ? end : end - start + 1);
      if (line.rfind("#PBS -o ", 0) != 0) kept += line;
      if (end == std::string::npos) break;
      start = end + 1;
    }
    o = kept + "#PBS -o " + dir + "/\n";
    v["OUTPUT"] = dir + "/";
  }
  const char* array_index_variable() const override { return "PBS_ARRAY_INDEX"; }
  int array_first_index() const override { return 0; }
  /// qsub prints `123[].server` for an array.
  std::string array_element_id(const std::string& id, int position) const override {
    const auto open = id.find("[]");
    return open == std::string::npos
               ? id + "[" + std::to_string(position) + "]"
               : id.substr(0, open) + "[" + std::to_string(position) + "]" + id.substr(open + 2);
  }

  std::vector<std::string> submit_args(const std::string& path) const override { return {path}; }
};

}  // namespace

const SchedulerDialect& pbs_dialect() {
  static const PbsDialect d;
  return d;
}

}  // namespace sb::batch
