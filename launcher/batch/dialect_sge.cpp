/// @file dialect_sge.cpp
/// Grid Engine (SGE, UGE, OGS) in `scalebench submit`: slurm/sge.tmpl, `#$` directives,
/// qsub -terse.

#include "batch/scheduler_dialect.hpp"

#include <scalebench/error.hpp>

namespace sb::batch {
namespace {

class SgeDialect final : public SchedulerDialect {
 public:
  const char* name() const override { return "sge"; }
  const char* title() const override { return "Grid Engine"; }
  const char* template_file() const override { return "sge.tmpl"; }
  const char* directive() const override { return "#$"; }
  const char* program() const override { return "qsub"; }

  void validate(const SubmitRequest& r) const override {
    check_job_id(r.after, "[0-9]{1,12}", "a Grid Engine job id (digits)");
    if (std::stoi(r.cpus_per_node) == 0)
      throw UsageError(
          "Grid Engine needs --cpus-per-node (the slots per host: -pe PE NODES*C, with a PE whose "
          "allocation_rule is C)");
    if (r.pe.empty())
      throw UsageError(
          "Grid Engine needs --pe NAME, its parallel environment for MPI jobs (qconf -spl lists "
          "them)");
  }

  void add_variables(const SubmitRequest& r, const JobShape& s, TemplateVars& v) const override {
    v["SGE_PE"] = r.pe;
    v["SOFT_WALLTIME"] = hhmmss(s.seconds - s.warn_seconds);
    v["SGE_GPUS"] =
        s.gpus_per_node > 0 ? "#$ -l gpu=" + std::to_string(s.gpus_per_node) + "\n" : std::string();
    // Values are plain words (validated before), written as they are.
    std::string o;
    if (!r.partition.empty()) o += "#$ -q " + r.partition + "\n";
    if (!r.account.empty()) o += "#$ -P " + r.account + "\n";
    if (!r.after.empty()) o += "#$ -hold_jid " + r.after + "\n";
    v["SGE_OPTIONS"] = o;
    // Grid Engine expands $JOB_ID in the paths of -o.
    v["OUTPUT"] = r.output.empty() ? std::string("scalebench-$JOB_ID.out") : r.output;
  }

  void add_fleet_variables(int array_size, const std::string& node, const std::string& dir,
                           TemplateVars& v) const override {
    std::string d;
    if (array_size >= 2) d += "#$ -t 1-" + std::to_string(array_size) + "\n";
    if (!node.empty()) d += "#$ -l hostname=" + node + "\n";
    v["FLEET_DIRECTIVES"] = d;
    v["OUTPUT"] = dir + (array_size >= 2 ? "/sge-$JOB_ID.$TASK_ID.out" : "/sge-$JOB_ID.out");
  }
  const char* array_index_variable() const override { return "SGE_TASK_ID"; }
  int array_first_index() const override { return 1; }
  std::string array_element_id(const std::string& id, int position) const override {
    return id + "." + std::to_string(position + 1);
  }

  std::vector<std::string> submit_args(const std::string& path) const override {
    return {"-terse", path};
  }

  /// -terse prints `ID` (arrays: `ID.FIRST-LAST:STEP`).
  std::string job_id(const std::string& out) const override {
    const std::string line = SchedulerDialect::job_id(out);
    return line.substr(0, line.find('.'));
  }
};

}  // namespace

const SchedulerDialect& sge_dialect() {
  static const SgeDialect d;
  return d;
}

}  // namespace sb::batch
