/// @file dialect_lsf.cpp
/// IBM Spectrum LSF in `scalebench submit`: slurm/lsf.tmpl, `#BSUB` directives, `bsub < script`
/// (bsub reads directives only from a script on its standard input).

#include "batch/scheduler_dialect.hpp"

#include <scalebench/error.hpp>

#include <algorithm>
#include <regex>

namespace sb::batch {
namespace {

class LsfDialect final : public SchedulerDialect {
 public:
  const char* name() const override { return "lsf"; }
  const char* title() const override { return "LSF"; }
  const char* template_file() const override { return "lsf.tmpl"; }
  const char* directive() const override { return "#BSUB"; }
  const char* program() const override { return "bsub"; }

  void validate(const SubmitRequest& r) const override {
    check_job_id(r.after, "[0-9]{1,12}(\\[[0-9]{1,9}\\])?",
                 "an LSF job id (digits, optionally [N] for an array element)");
    if (std::stoi(r.cpus_per_node) == 0)
      throw UsageError(
          "LSF needs --cpus-per-node (the slots per host: -n NODES*C with span[ptile=C])");
  }

  void add_variables(const SubmitRequest& r, const JobShape& s, TemplateVars& v) const override {
    // -W and -wt take [hours:]minutes: the limit rounded up, the warning at least a minute.
    const long minutes = (s.seconds + 59) / 60;
    v["LSF_RUNLIMIT"] = std::to_string(minutes / 60) + ":" + (minutes % 60 < 10 ? "0" : "") +
                        std::to_string(minutes % 60);
    v["LSF_WARN_MINUTES"] = std::to_string(std::max(1L, (s.warn_seconds + 30) / 60));
    v["LSF_GPUS"] = s.gpus_per_node > 0
                        ? "#BSUB -gpu \"num=" + std::to_string(s.gpus_per_node) + "\"\n"
                        : std::string();
    // Values are plain words (validated before), written as they are.
    std::string o;
    if (!r.partition.empty()) o += "#BSUB -q " + r.partition + "\n";
    if (!r.account.empty()) o += "#BSUB -P " + r.account + "\n";
    if (!r.after.empty()) o += "#BSUB -w \"ended(" + r.after + ")\"\n";
    v["LSF_OPTIONS"] = o;
    v["OUTPUT"] = r.output.empty() ? std::string("scalebench-%J.out") : r.output;
    v["LSF_JOB_NAME"] = "scalebench";
  }

  void add_fleet_variables(int array_size, const std::string& node, const std::string& dir,
                           TemplateVars& v) const override {
    // An LSF job array is a job name with an index range; -m names the host.
    if (array_size >= 2) v["LSF_JOB_NAME"] = "\"scalebench[1-" + std::to_string(array_size) + "]\"";
    v["FLEET_DIRECTIVES"] = node.empty() ? std::string() : "#BSUB -m " + node + "\n";
    v["OUTPUT"] = dir + (array_size >= 2 ? "/lsf-%J_%I.out" : "/lsf-%J.out");
  }
  const char* array_index_variable() const override { return "LSB_JOBINDEX"; }
  int array_first_index() const override { return 1; }
  std::string array_element_id(const std::string& id, int position) const override {
    return id + "[" + std::to_string(position + 1) + "]";
  }

  std::vector<std::string> submit_args(const std::string&) const override { return {}; }

  /// `Job <ID> is submitted to queue <QUEUE>.`
  std::string job_id(const std::string& out) const override {
    std::smatch m;
    return std::regex_search(out, m, std::regex("Job <([0-9]+(\\[[0-9]+\\])?)>")) ? m[1].str()
                                                                                  : std::string();
  }
};

}  // namespace

const SchedulerDialect& lsf_dialect() {
  static const LsfDialect d;
  return d;
}

}  // namespace sb::batch
