#pragma once
/// @file scheduler_dialect.hpp
/// What differs between batch systems in `scalebench submit`: their rules for a request, the
/// directives and template variables, how a value is quoted in a directive, the submit program
/// and how it answers. One dialect per file (dialect_slurm.cpp, dialect_pbs.cpp,
/// dialect_lsf.cpp, dialect_sge.cpp), looked up by name through dialect().

#include "batch/submit.hpp"

#include <map>
#include <string>
#include <vector>

namespace sb::batch {

using TemplateVars = std::map<std::string, std::string>;

/// The numbers of a validated request.
struct JobShape {
  int nodes = 1;
  int gpus_per_node = 0;
  int cpus_per_node = 0;  ///< 0: whole nodes (SLURM)
  long seconds = 0;       ///< time limit
  long warn_seconds = 0;  ///< the USR1 warning comes this long before the limit
};

class SchedulerDialect {
 public:
  virtual ~SchedulerDialect() = default;
  [[nodiscard]] virtual const char* name() const = 0;           ///< "slurm" (--scheduler)
  [[nodiscard]] virtual const char* title() const = 0;          ///< "SLURM" (messages)
  [[nodiscard]] virtual const char* template_file() const = 0;  ///< "sbatch.tmpl" in slurm/
  [[nodiscard]] virtual const char* directive() const = 0;      ///< "#SBATCH"
  [[nodiscard]] virtual const char* program() const = 0;        ///< "sbatch"
  /// Checks what only this batch system refuses or needs (the common fields are valid);
  /// throws sb::UsageError.
  virtual void validate(const SubmitRequest& r) const = 0;
  /// Adds this batch system's template variables, OUTPUT among them.
  virtual void add_variables(const SubmitRequest& r, const JobShape& shape,
                             TemplateVars& v) const = 0;
  /// Whether options spelled `--name[=value]` exist (SLURM); otherwise `-name [value]` only.
  [[nodiscard]] virtual bool long_options() const { return false; }
  /// A --batch-option value as its directive line writes it. Default: plain words
  /// ([A-Za-z0-9_./%+,=@:-]) bare, anything else in double quotes (values hold no quote or
  /// backslash: validated before).
  [[nodiscard]] virtual std::string quote_value(const std::string& value) const;
  /// The submit program's arguments after its name for the script at `path`; empty when the
  /// script goes to its standard input (bsub).
  [[nodiscard]] virtual std::vector<std::string> submit_args(const std::string& path) const = 0;
  /// The job id in the submit program's standard output; empty when it holds none. Default: the
  /// last non-blank line, trimmed.
  [[nodiscard]] virtual std::string job_id(const std::string& out) const;

  // Fleet sweeps (fleet_submit.hpp): one-node jobs, as a job array or pinned to a node.

  /// Sets FLEET_DIRECTIVES (and what else this batch system's template needs: PBS its select's
  /// host, LSF the array in the job name) for a job array of `array_size` elements (>= 2) or,
  /// with `array_size` 0, one job on `node` (when not empty); and OUTPUT, the batch system's own
  /// log, in the folder `dir` (each element's scalebench log is ELEMENT.out there).
  virtual void add_fleet_variables(int array_size, const std::string& node, const std::string& dir,
                                   TemplateVars& v) const = 0;
  /// The variable that holds an array element's index in its job, and the first index.
  [[nodiscard]] virtual const char* array_index_variable() const = 0;
  [[nodiscard]] virtual int array_first_index() const = 0;
  /// The job id of the element at `position` (0-based) of the array job whose submission printed
  /// `id` (job_id's answer), as the batch system names it: SLURM 123_4, PBS 123[4].server, LSF
  /// 123[5], Grid Engine 123.5.
  [[nodiscard]] virtual std::string array_element_id(const std::string& id, int position) const = 0;
};

/// The dialect named `name` (slurm, pbs, lsf, sge); sb::UsageError for any other.
[[nodiscard]] const SchedulerDialect& dialect(const std::string& name);

/// The names dialect() knows, in documentation order.
[[nodiscard]] const std::vector<std::string>& dialect_names();

const SchedulerDialect& slurm_dialect();
const SchedulerDialect& pbs_dialect();
const SchedulerDialect& lsf_dialect();
const SchedulerDialect& sge_dialect();

// Helpers of the dialects.

/// Whether all of `value` matches the ECMAScript regular expression `pattern`.
[[nodiscard]] bool matches(const std::string& value, const char* pattern);

/// `seconds` as HH:MM:SS (hours may exceed 24).
[[nodiscard]] std::string hhmmss(long seconds);

/// Throws sb::UsageError unless `value` is empty or a job id matching `pattern` (`what`
/// describes the accepted form in the message).
void check_job_id(const std::string& value, const char* pattern, const std::string& what);

}  // namespace sb::batch
