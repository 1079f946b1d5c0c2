#pragma once
/// @file submit.hpp
/// `scalebench submit`: renders slurm/sbatch.tmpl or slurm/pbs.tmpl for the allocation the user
/// asks for and submits it with sbatch or qsub (or prints it with --dry-run). Every user value is
/// validated against a strict pattern and single-quoted in shell context, so no value can inject
/// shell. Template variables are documented in docs/batch.md.

#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sb::batch {

/// What the user asked for. Empty strings and 0 mean "not given".
struct SubmitRequest {
  std::string scheduler;            ///< "slurm" or "pbs"
  std::string nodes = "1";          ///< 1..100000
  std::string gpus_per_node = "0";  ///< 0..64; 0 requests no GPU
  std::string cpus_per_node = "0";  ///< 0..100000; 0: whole nodes (SLURM --exclusive)
  std::string time = "01:00:00";    ///< HH:MM:SS or D-HH:MM:SS
  std::string partition;            ///< SLURM partition / PBS queue
  std::string account;
  std::string qos;                    ///< SLURM only
  std::string after;                  ///< job id to start after (afterany)
  std::string output;                 ///< job log path; SLURM default scalebench-%j.out
  std::string scalebench;             ///< absolute path of scalebench run inside the job
  std::vector<std::string> run_args;  ///< options of `scalebench run` (after `--`)
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

/// The folder the templates are read from (see render_script).
[[nodiscard]] std::string template_dir();

/// `word` in single quotes for a POSIX shell ('it'\''s').
[[nodiscard]] std::string shell_quote(const std::string& word);

/// Registers `scalebench submit` on `app`. Its callback prints the script (--dry-run) or the job
/// id, sets exit_code to 0, and throws sb::UsageError / sb::EnvironmentError (missing sbatch or
/// qsub, refused submission) for main to report.
void add_submit_command(CLI::App& app, int& exit_code);

}  // namespace sb::batch
