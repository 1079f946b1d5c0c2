/// @file submit.cpp
/// `scalebench submit` (see submit.hpp): validation, template filling, submission. What
/// differs between batch systems is in the dialects (scheduler_dialect.hpp).

#include "batch/submit.hpp"

#include "batch/run_capture.hpp"

#include "batch/scheduler_dialect.hpp"
#include "batch/sweep_submit.hpp"
#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>
#include <scalebench/find_program.hpp>
#include <scalebench/settings.hpp>

#include <CLI/CLI.hpp>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>

namespace sb::batch {
namespace {

namespace fs = std::filesystem;

int parse_int(const std::string& option, const std::string& value, int lo, int hi) {
  if (!matches(value, "[0-9]{1,9}"))
    throw UsageError(option + " '" + printable(value, 80) + "' is not a whole number");
  const int v = std::stoi(value);
  if (v < lo || v > hi)
    throw UsageError(option + " " + value + " is out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  return v;
}

/// Seconds of a HH:MM:SS or D-HH:MM:SS time limit.
long time_seconds(const std::string& value) {
  std::smatch m;
  if (!std::regex_match(value, m,
                        std::regex("(?:([0-9]{1,3})-)?([0-9]{1,4}):([0-5][0-9]):([0-5][0-9])")))
    throw UsageError("--time '" + printable(value, 80) + "' is not HH:MM:SS or D-HH:MM:SS");
  const long days = m[1].matched ? std::stol(m[1].str()) : 0;
  const long total = days * 86400 + std::stol(m[2].str()) * 3600 + std::stol(m[3].str()) * 60 +
                     std::stol(m[4].str());
  if (total < 60) throw UsageError("--time " + value + " is shorter than one minute");
  if (total > 365L * 86400) throw UsageError("--time " + value + " is longer than a year");
  return total;
}

void check_name(const char* option, const std::string& value) {
  if (value.empty()) return;
  if (value.size() > 128 || !matches(value, "[A-Za-z0-9_.-]+"))
    throw UsageError(std::string(option) + " '" + printable(value, 80) +
                     "' is not a valid name (letters, digits, '_', '.', '-')");
}

bool has_control(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

void check_run_args(const std::vector<std::string>& args) {
  if (args.size() > 256) throw UsageError("too many run options after -- (at most 256)");
  for (const auto& a : args) {
    if (a.size() > 4096) throw UsageError("run option '" + printable(a, 80) + "' is too long");
    if (has_control(a))
      throw UsageError("run option '" + printable(a, 80) + "' holds a control character");
    if (!a.empty() && a[0] == '-' && !matches(a, "--[a-z][a-z0-9-]*(=.*)?|-[A-Za-z]"))
      throw UsageError("run option '" + printable(a, 80) + "' is not an option of scalebench run");
  }
  if (!args.empty() && !args[0].empty() && args[0][0] != '-')
    throw UsageError("run options start with an option name, not '" + printable(args[0], 80) +
                     "' (e.g. -- --preset tiny)");
}

/// A --batch-option split into its option name and value (empty for a flag).
struct BatchOption {
  std::string name;
  std::string value;
};

/// Splits and checks one --batch-option for `d`: `--name`, `--name=value` or `--name value`
/// where the batch system has long options (SLURM), `-name` or `-name value` everywhere. The
/// value is printable ASCII without quotes, backslashes or backquotes: it is quoted here, for the
/// directive parser of the batch system, and can hold nothing that ends or escapes the quotes.
BatchOption parse_batch_option(const SchedulerDialect& d, const std::string& text) {
  const auto refuse = [&](const std::string& why) -> UsageError {
    return UsageError("--batch-option '" + printable(text, 80) + "' " + why);
  };
  if (text.size() > 1024) throw refuse("is too long (at most 1024 characters)");
  if (has_control(text)) throw refuse("holds a control character");
  BatchOption o;
  std::size_t name_end = 0;
  if (text.rfind("--", 0) == 0) {
    if (!d.long_options())
      throw refuse(std::string("is a long option; ") + d.title() +
                   " directives are -name [value] (e.g. '-l mem=4gb')");
    name_end = text.find_first_of("= ");
    o.name = text.substr(0, name_end);
    if (!matches(o.name, "--[a-z][a-z0-9-]*"))
      throw refuse("does not start with an option name (--name[=value])");
  } else {
    name_end = text.find(' ');
    o.name = text.substr(0, name_end);
    if (!matches(o.name, "-[A-Za-z][A-Za-z0-9_]*"))
      throw refuse(std::string("does not start with an option name (") +
                   (d.long_options() ? "--name[=value] or " : "") + "-name [value])");
  }
  if (name_end != std::string::npos) {
    const auto b = text.find_first_not_of(' ', name_end + 1);
    const auto e = text.find_last_not_of(' ');
    if (b == std::string::npos || b > e) throw refuse("has no value after its name");
    o.value = text.substr(b, e - b + 1);
  }
  for (const char c : o.value) {
    const auto u = static_cast<unsigned char>(c);
    if (u > 0x7e || c == '\'' || c == '"' || c == '\\' || c == '`')
      throw refuse(
          "holds a quote, backslash, backquote or non-ASCII character in its value "
          "(give the value bare: scalebench quotes it)");
  }
  return o;
}

/// The directive lines of the request's --batch-option values.
std::string extra_directives(const SchedulerDialect& d, const std::vector<std::string>& options) {
  std::string out;
  for (const auto& text : options) {
    const BatchOption o = parse_batch_option(d, text);
    out += std::string(d.directive()) + " " + o.name;
    if (!o.value.empty()) out += (o.name.rfind("--", 0) == 0 ? "=" : " ") + d.quote_value(o.value);
    out += "\n";
  }
  return out;
}

std::string join_quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

/// For the comment line: plain words bare, anything else quoted.
std::string join_readable(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words)
    out += (out.empty() ? "" : " ") +
           (!w.empty() && matches(w, "[A-Za-z0-9_./%+,=@:-]+") ? w : shell_quote(w));
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw EnvironmentError("cannot read template '" + path.string() + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string first_line(const std::string& text) {
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) return printable(line);
  return "(no message)";
}

}  // namespace

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scalebench") : p.string();
}

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

void validate_request(const SubmitRequest& r) {
  const SchedulerDialect& d = dialect(r.scheduler);
  (void)parse_int("--nodes", r.nodes, 1, 100000);
  (void)parse_int("--gpus-per-node", r.gpus_per_node, 0, 64);
  (void)parse_int("--cpus-per-node", r.cpus_per_node, 0, 100000);
  (void)time_seconds(r.time);
  check_name("--partition", r.partition);
  check_name("--account", r.account);
  check_name("--qos", r.qos);
  check_name("--pe", r.pe);
  if (!r.qos.empty() && r.scheduler != "slurm")
    throw UsageError(std::string("--qos is a SLURM option; ") + d.title() +
                     " has none (a site's own can go in --batch-option)");
  if (!r.pe.empty() && r.scheduler != "sge")
    throw UsageError("--pe is a Grid Engine option (its parallel environment)");
  if (!r.output.empty() && (r.output.size() > 1024 || !matches(r.output, "[A-Za-z0-9_./%+,=@-]+")))
    throw UsageError("--output '" + printable(r.output, 80) +
                     "' is not a plain path (letters, digits, / . _ - % + , = @)");
  if (!r.scalebench.empty() && (r.scalebench.size() > 4096 || has_control(r.scalebench)))
    throw UsageError("the scalebench path '" + printable(r.scalebench, 80) +
                     "' holds a control character");
  if (r.batch_options.size() > 64) throw UsageError("too many --batch-option values (at most 64)");
  for (const auto& o : r.batch_options) (void)parse_batch_option(d, o);
  d.validate(r);
  check_run_args(r.run_args);
}

std::map<std::string, std::string> template_variables(const SubmitRequest& r) {
  validate_request(r);
  const SchedulerDialect& d = dialect(r.scheduler);
  JobShape shape;
  shape.nodes = std::stoi(r.nodes);
  shape.gpus_per_node = std::stoi(r.gpus_per_node);
  shape.cpus_per_node = std::stoi(r.cpus_per_node);
  shape.seconds = time_seconds(r.time);
  // Warning before the limit: 120 s, or a fifth of a short limit.
  shape.warn_seconds = shape.seconds >= 600 ? 120 : std::max(10L, shape.seconds / 5);
  std::map<std::string, std::string> v;
  v["NODES"] = std::to_string(shape.nodes);
  v["GPUS_PER_NODE"] = std::to_string(shape.gpus_per_node);
  v["CPUS_PER_NODE"] = std::to_string(shape.cpus_per_node);
  v["SLOTS"] = std::to_string(static_cast<long long>(shape.nodes) * shape.cpus_per_node);
  v["TIME"] = r.time;
  v["WALLTIME"] = hhmmss(shape.seconds);
  v["WARN_SECONDS"] = std::to_string(shape.warn_seconds);
  v["WARN_AFTER_SECONDS"] = std::to_string(shape.seconds - shape.warn_seconds);
  v["SCALEBENCH"] = shell_quote(r.scalebench.empty() ? std::string("scalebench") : r.scalebench);
  v["RUN_ARGS"] = join_quoted(r.run_args);
  // Ranks on the busiest node: the scheduler plus one worker per GPU (or one CPU worker).
  v["MPIPROCS"] = std::to_string(std::max(shape.gpus_per_node, 1) + 1);
  v["EXTRA_DIRECTIVES"] = extra_directives(d, r.batch_options);
  // A fleet sweep's element and a scaling study set these (fleet_submit.hpp, scaling_submit.hpp).
  v["FLEET_DIRECTIVES"] = "";
  v["ELEMENT_SETUP"] = "";
  v["SUBCOMMAND"] = "run";

  std::vector<std::string> cmd{"scalebench", "submit"};
  for (auto& w : submit_words(r, true)) cmd.push_back(std::move(w));
  std::string submit = join_readable(cmd) + " --";
  if (!r.run_args.empty()) submit += " " + join_readable(r.run_args);
  v["SUBMIT_COMMAND"] = submit;
  d.add_variables(r, shape, v);
  return v;
}

std::string fill_template(const std::string& text, const std::map<std::string, std::string>& vars) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string filled;
    bool only_placeholder = true;
    std::size_t pos = 0;
    while (true) {
      const std::size_t open = line.find("{{", pos);
      const std::string literal =
          line.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
      if (literal.find_first_not_of(" \t") != std::string::npos) only_placeholder = false;
      filled += literal;
      if (open == std::string::npos) break;
      const std::size_t close = line.find("}}", open + 2);
      if (close == std::string::npos)
        throw UsageError("template line '" + printable(line, 80) + "' has an unclosed {{");
      const std::string name = line.substr(open + 2, close - open - 2);
      const auto it = vars.find(name);
      if (it == vars.end())
        throw UsageError("template names an unknown variable {{" + printable(name, 80) + "}}");
      filled += it->second;
      pos = close + 2;
    }
    const bool had_placeholder = line.find("{{") != std::string::npos;
    if (had_placeholder && only_placeholder) {
      // A line that is just a block of directives: kept without its trailing newline doubling.
      if (filled.find_first_not_of(" \t\n") == std::string::npos) continue;
      while (!filled.empty() && filled.back() == '\n') filled.pop_back();
    }
    out += filled + "\n";
  }
  return out;
}

std::string render_script(const SubmitRequest& request, const std::string& template_text) {
  return fill_template(template_text, template_variables(request));
}

std::string template_dir() {
  if (const std::string dir = settings::template_dir(); !dir.empty()) return dir;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path() / SB_TEMPLATE_INSTALL_REL;
    if (fs::exists(installed / "sbatch.tmpl", ec)) return fs::weakly_canonical(installed).string();
  }
  return SB_TEMPLATE_SOURCE_DIR;
}

namespace {

std::string installed_template(const SubmitRequest& request) {
  validate_request(request);
  const fs::path file = fs::path(template_dir()) / dialect(request.scheduler).template_file();
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw EnvironmentError("no batch template at '" + printable(file.string()) +
                           "': reinstall scalebench or set SCALEBENCH_TEMPLATE_DIR");
  return read_file(file);
}

}  // namespace

std::string render_script(const SubmitRequest& request) {
  return render_script(request, installed_template(request));
}

std::string render_script(const SubmitRequest& request,
                          const std::map<std::string, std::string>& overrides) {
  const std::string text = installed_template(request);
  std::map<std::string, std::string> vars = template_variables(request);
  for (const auto& [k, v] : overrides) vars[k] = v;
  return fill_template(text, vars);
}

std::string submit_script(const std::string& scheduler, const std::string& script) {
  const SchedulerDialect& d = dialect(scheduler);
  const std::string program = find_program(settings::submit_program(d.name()));
  if (program.empty())
    throw EnvironmentError(std::string(d.program()) + " not found in PATH: submit from a " +
                           d.title() + " login node, or print the script with --dry-run");
  // The script goes through a private temporary file (batch systems copy it at submission).
  std::string path = (fs::temp_directory_path() / "scalebench-submit-XXXXXX").string();
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw EnvironmentError("cannot create a temporary file for the batch script");
  const bool written =
      ::write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    throw EnvironmentError("cannot write the batch script to " + path);
  }
  std::vector<std::string> argv{program};
  const std::vector<std::string> args = d.submit_args(path);
  argv.insert(argv.end(), args.begin(), args.end());
  Captured c;
  try {
    c = run_capture(argv, args.empty() ? path : std::string());
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  ::unlink(path.c_str());
  if (c.status != 0)
    throw EnvironmentError(std::string(d.program()) + " refused the job (exit " +
                           std::to_string(c.status) +
                           "): " + first_line(c.err.empty() ? c.out : c.err));
  const std::string id = d.job_id(c.out);
  if (id.empty())
    throw EnvironmentError(std::string(d.program()) + " printed no job id: " + first_line(c.out));
  return id;
}

void add_submit_command(CLI::App& app, int& exit_code, RunCheck check_run) {
  auto request = std::make_shared<SubmitRequest>();
  auto dry_run = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand(
      "submit",
      "Submit `scalebench run` as a SLURM, PBS, LSF or Grid Engine batch job (or print it: "
      "--dry-run)");
  sub->add_option("--scheduler", request->scheduler, "slurm, pbs, lsf or sge")->required();
  sub->add_option("--nodes", request->nodes, "nodes (default 1)");
  sub->add_option("--gpus-per-node", request->gpus_per_node, "GPUs per node (default 0: none)");
  sub->add_option("--cpus-per-node", request->cpus_per_node,
                  "cores per node (default: whole nodes with SLURM; required with PBS, LSF, SGE)");
  sub->add_option("--time", request->time, "time limit HH:MM:SS or D-HH:MM:SS (default 01:00:00)");
  sub->add_option("--partition", request->partition, "SLURM partition / PBS, LSF, SGE queue");
  sub->add_option("--account", request->account, "account (LSF, SGE: project) to charge");
  sub->add_option("--qos", request->qos, "SLURM quality of service");
  sub->add_option("--pe", request->pe, "Grid Engine parallel environment (required with sge)");
  sub->add_option("--after", request->after, "start after this job has ended, whatever its end");
  sub->add_option("--output", request->output, "job log (default scalebench-<job id>.out)");
  // One value per occurrence, taken whole even when it starts with '-' (a vector option would
  // also swallow the words up to `--`).
  sub->add_option_function<std::string>(
         "--batch-option", [request](const std::string& v) { request->batch_options.push_back(v); },
         "one more directive, e.g. --constraint=a100 (SLURM) or '-l mem=4gb' (repeatable)")
      ->trigger_on_parse()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_flag("--dry-run", *dry_run, "print the batch script instead of submitting it");
  auto sweep = std::make_shared<SweepRequest>();  // fleet sweeps, scaling studies
  add_sweep_options(*sub, *sweep);
  sub->add_option("run_options", request->run_args,
                  "options of `scalebench run`, after -- (checked as run checks them before "
                  "anything is queued)");
  sub->footer(
      "Example: scalebench submit --scheduler slurm --nodes 2 --gpus-per-node 4 --time 00:30:00 "
      "-- --preset small --out run.h5");
  sub->callback([request, dry_run, sweep, &exit_code, check_run]() {
    if (sweep->fleet_requested()) {
      exit_code = submit_fleet(*request, *sweep, *dry_run);
      return;
    }
    if (sweep->scaling_requested()) {
      exit_code = submit_scaling(*request, *sweep, *dry_run);
      return;
    }
    if (sweep->chain || !sweep->fleet_dir.empty() || !sweep->scaling_dir.empty())
      throw UsageError(sweep->chain ? "--chain belongs to a scaling study (--scaling)"
                       : !sweep->fleet_dir.empty()
                           ? "--fleet-dir belongs to a fleet sweep (--fleet or --fleet-nodes)"
                           : "--scaling-dir belongs to a scaling study (--scaling)");
    SubmitRequest r = *request;
    if (r.scalebench.empty()) r.scalebench = self_executable();
    validate_request(r);
    // What `scalebench run` would refuse is refused now, not after the job waited in a queue.
    if (check_run)
      for (const auto& line : check_run(r))
        std::cerr << "scalebench: " << printable(line, 4000) << "\n";
    const std::string script = render_script(r);
    if (*dry_run) {
      std::cout << script << std::flush;
      exit_code = kExitOk;
      return;
    }
    const SchedulerDialect& d = dialect(r.scheduler);
    const std::string id = submit_script(r.scheduler, script);
    std::cerr << "scalebench: submitted " << d.title() << " job " << id << "\n";
    std::cout << id << "\n" << std::flush;
    exit_code = kExitOk;
  });
}

}  // namespace sb::batch
