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
  }

  std::vector<std::string> submit_args(const std::string& path) const override { return {path}; }
};

}  // namespace

const SchedulerDialect& pbs_dialect() {
  static const PbsDialect d;
  return d;
}

}  // namespace sb::batch
