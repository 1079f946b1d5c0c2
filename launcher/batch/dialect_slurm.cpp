/// @file dialect_slurm.cpp
/// SLURM in `scalebench submit`: slurm/sbatch.tmpl, `#SBATCH` directives, sbatch --parsable.

#include "batch/scheduler_dialect.hpp"

namespace sb::batch {
namespace {

class SlurmDialect final : public SchedulerDialect {
 public:
  const char* name() const override { return "slurm"; }
  const char* title() const override { return "SLURM"; }
  const char* template_file() const override { return "sbatch.tmpl"; }
  const char* directive() const override { return "#SBATCH"; }
  const char* program() const override { return "sbatch"; }
  bool long_options() const override { return true; }

  void validate(const SubmitRequest& r) const override {
    check_job_id(r.after, "[0-9]{1,12}(_[0-9]{1,9})?",
                 "a SLURM job id (digits, optionally _N for an array task)");
  }

  void add_variables(const SubmitRequest& r, const JobShape& s, TemplateVars& v) const override {
    std::string res;
    if (s.cpus_per_node > 0)
      res += "#SBATCH --cpus-per-task=" + std::to_string(s.cpus_per_node) + "\n";
    else
      res += "#SBATCH --exclusive\n";
    if (s.gpus_per_node > 0)
      res += "#SBATCH --gpus-per-node=" + std::to_string(s.gpus_per_node) + "\n";
    v["SBATCH_RESOURCES"] = res;
    std::string o;
    if (!r.partition.empty()) o += "#SBATCH --partition=" + shell_quote(r.partition) + "\n";
    if (!r.account.empty()) o += "#SBATCH --account=" + shell_quote(r.account) + "\n";
    if (!r.qos.empty()) o += "#SBATCH --qos=" + shell_quote(r.qos) + "\n";
    if (!r.after.empty()) o += "#SBATCH --dependency=afterany:" + r.after + "\n";
    v["SBATCH_OPTIONS"] = o;
    v["OUTPUT"] = shell_quote(r.output.empty() ? std::string("scalebench-%j.out") : r.output);
  }

  /// sbatch removes single quotes from directive values.
  std::string quote_value(const std::string& value) const override { return shell_quote(value); }

  std::vector<std::string> submit_args(const std::string& path) const override {
    return {"--parsable", path};
  }

  /// --parsable prints `ID` or `ID;CLUSTER`.
  std::string job_id(const std::string& out) const override {
    const std::string line = SchedulerDialect::job_id(out);
    return line.substr(0, line.find(';'));
  }

  void add_fleet_variables(int array_size, const std::string& node, const std::string& dir,
                           TemplateVars& v) const override {
    std::string d;
    if (array_size >= 2) d += "#SBATCH --array=0-" + std::to_string(array_size - 1) + "\n";
    if (!node.empty()) d += "#SBATCH --nodelist=" + shell_quote(node) + "\n";
    v["FLEET_DIRECTIVES"] = d;
    v["OUTPUT"] = shell_quote(dir + (array_size >= 2 ? "/slurm-%A_%a.out" : "/slurm-%j.out"));
  }
  const char* array_index_variable() const override { return "SLURM_ARRAY_TASK_ID"; }
  int array_first_index() const override { return 0; }
  std::string array_element_id(const std::string& id, int position) const override {
    return id + "_" + std::to_string(position);
  }
};

}  // namespace

const SchedulerDialect& slurm_dialect() {
  static const SlurmDialect d;
  return d;
}

}  // namespace sb::batch
