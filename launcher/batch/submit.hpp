#pragma once
/// @file submit.hpp
/// `scalebench submit`: renders the batch script for the allocation the user asks for from
/// slurm/sbatch.tmpl, pbs.tmpl, lsf.tmpl or sge.tmpl and submits it with sbatch, qsub (PBS),
/// bsub or qsub (Grid Engine), or prints it with --dry-run. What differs between the batch
/// systems is in scheduler_dialect.hpp. Every user value is validated against a strict pattern
/// and quoted where a shell or a directive parser reads it, so no value can inject shell or an
/// extra directive. Template variables are documented in docs/batch.md.

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sb::batch {

/// What the user asked for. Empty strings and 0 mean "not given".
struct SubmitRequest {
  std::string scheduler;            ///< "slurm", "pbs", "lsf" or "sge"
  std::string nodes = "1";          ///< 1..100000
  std::string gpus_per_node = "0";  ///< 0..64; 0 requests no GPU
  std::string cpus_per_node = "0";  ///< 0..100000; 0: whole nodes (SLURM --exclusive)
  std::string time = "01:00:00";    ///< HH:MM:SS or D-HH:MM:SS
  std::string partition;            ///< SLURM partition / PBS, LSF, Grid Engine queue
  std::string account;              ///< SLURM, PBS account / LSF, Grid Engine project
  std::string qos;                  ///< SLURM only
  std::string pe;                   ///< Grid Engine parallel environment (required there)
  std::string after;                ///< job id to start after, whatever its end
  std::string output;  ///< job log path; default scalebench-<job id>.out (PBS: its own)
  std::vector<std::string> batch_options;  ///< extra directives, e.g. "--constraint=a100"
  std::string scalebench;                  ///< absolute path of scalebench run inside the job
  std::vector<std::string> run_args;       ///< options of `scalebench run` (after `--`)
};

/// Throws sb::UsageError (one line) unless every field of `request` is valid.
void validate_request(const SubmitRequest& request);

/// The template variables for `request` (validated first), e.g. {"NODES","2"}, {"RUN_ARGS",
/// "'--preset' 'tiny'"}. docs/batch.md lists them all.
[[nodiscard]] std::map<std::string, std::string> template_variables(const SubmitRequest& request);

/// Replaces every {{NAME}} in `text` with vars[NAME]; a line holding only a placeholder that
/// expands to nothing is dropped. An unknown name throws sb::UsageError.
[[nodiscard]] std::string fill_template(const std::string& text,
                                        const std::map<std::string, std::string>& vars);

/// The batch script for `request`, from the given template text (pure; for tests).
[[nodiscard]] std::string render_script(const SubmitRequest& request,
                                        const std::string& template_text);

/// The batch script for `request`, from the installed template (<exe dir>/../share/scalebench/
/// slurm, SCALEBENCH_TEMPLATE_DIR, or the source tree). Throws sb::UsageError on a bad value and
/// sb::EnvironmentError when no template is found.
[[nodiscard]] std::string render_script(const SubmitRequest& request);

/// render_script with `overrides` over the request's template variables (fleet sweeps and scaling
/// studies: fleet_submit.hpp, scaling_submit.hpp).
[[nodiscard]] std::string render_script(const SubmitRequest& request,
                                        const std::map<std::string, std::string>& overrides);

/// Submits `script` with the request's batch system (its submit program, SCALEBENCH_SBATCH and
/// the like); returns the job id. Throws sb::EnvironmentError when the program is missing, refuses
/// the job or prints no job id.
[[nodiscard]] std::string submit_script(const std::string& scheduler, const std::string& script);

/// The scalebench executable running now (/proc/self/exe), for the jobs to start.
[[nodiscard]] std::string self_executable();

/// The folder the templates are read from (see render_script).
[[nodiscard]] std::string template_dir();

/// `word` in single quotes for a POSIX shell ('it'\''s').
[[nodiscard]] std::string shell_quote(const std::string& word);

/// Checks the `scalebench run` options of a request (after its own fields are valid) before the
/// script is made: throws sb::UsageError for what run would refuse, and returns lines to say on
/// stderr. The launcher's is sb::check_submitted_run (launcher/submit_check.hpp).
using RunCheck = std::function<std::vector<std::string>(const SubmitRequest&)>;

/// Registers `scalebench submit` on `app`. Its callback checks the request and its run options
/// (`check_run`, when given), prints the script (--dry-run) or the job id, sets exit_code to 0,
/// and throws sb::UsageError / sb::EnvironmentError (missing sbatch or qsub, refused submission)
/// for main to report.
void add_submit_command(CLI::App& app, int& exit_code, RunCheck check_run = {});

}  // namespace sb::batch
