/// @file fleet_submit.cpp
/// Fleet sweeps in `scalebench submit` (sweep_submit.hpp): a job array of one-node elements, or
/// one job pinned to each named node, all writing into one folder.

#include "batch/fleet_folder.hpp"
#include "batch/hostlist.hpp"
#include "batch/scheduler_dialect.hpp"
#include "batch/sweep_submit.hpp"
#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

namespace sb::batch {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxElements = 100000;

std::string utc_stamp(bool compact) {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool plain_path(const std::string& p) {
  return !p.empty() && p.size() <= 1024 && matches(p, "[A-Za-z0-9_./%+,=@-]+");
}

/// "0-3,7" into indices.
std::vector<int> parse_indices(const std::string& text) {
  std::vector<int> out;
  std::set<int> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    int lo = 0, hi = 0;
    if (matches(item, "[0-9]{1,6}")) {
      lo = hi = std::stoi(item);
    } else if (matches(item, "[0-9]{1,6}-[0-9]{1,6}")) {
      lo = std::stoi(item.substr(0, item.find('-')));
      hi = std::stoi(item.substr(item.find('-') + 1));
    } else {
      throw UsageError("--fleet-elements '" + printable(text, 80) +
                       "' is not a list of element numbers (e.g. 2,5 or 0-9)");
    }
    if (hi < lo || hi >= kMaxElements)
      throw UsageError("--fleet-elements '" + printable(text, 80) + "': '" + item +
                       "' is not a range of elements 0.." + std::to_string(kMaxElements - 1));
    for (int i = lo; i <= hi; ++i)
      if (seen.insert(i).second) out.push_back(i);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

/// The shell lines that make a fleet job one element of the sweep: its name from the array
/// index (or the one element of a job of its own), its log in the folder from here on.
std::string element_setup(const SchedulerDialect& d, const std::string& dir,
                          const std::vector<std::string>& elements) {
  std::string list;
  for (const auto& e : elements) list += (list.empty() ? "" : " ") + shell_quote(e);
  std::string out =
      "# One element of the fleet sweep in the folder below (docs/acceptance.md, \"A fleet\"):\n"
      "# its report is ELEMENT.h5 there and its log ELEMENT.out.\n";
  out += "sb_fleet_dir=" + shell_quote(dir) + "\n";
  out += "sb_elements=(" + list + ")\n";
  out += std::string("SB_ELEMENT=${sb_elements[$(( ${") + d.array_index_variable() + ":-" +
         std::to_string(d.array_first_index()) + "} - " + std::to_string(d.array_first_index()) +
         " ))]}\n";
  out += "exec >>\"$sb_fleet_dir/$SB_ELEMENT.out\" 2>&1\n";
  out += "echo \"scalebench: fleet element $SB_ELEMENT on $(hostname) ($(date -u +%FT%TZ))\"";
  return out;
}

/// The options of `scalebench run` each element gets: the user's, --fleet-element (a device
/// without a peer on its node is judged by the merge, not an exit 5 of --check), and the report
/// in the folder.
std::string element_run_args(const std::vector<std::string>& run_args) {
  std::string out;
  for (const auto& a : run_args) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out + (out.empty() ? "" : " ") +
         "'--fleet-element' '--out' \"$sb_fleet_dir/$SB_ELEMENT.h5\"";
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + readable_word(w);
  return out;
}

void check_fleet_request(const SubmitRequest& r, const SweepRequest& s) {
  if (s.scaling_requested())
    throw UsageError("--fleet and --scaling are two kinds of sweep: give one of them");
  if (!s.fleet.empty() && !s.fleet_elements.empty())
    throw UsageError(
        "--fleet COUNT submits a whole job array; --fleet-elements submits some of its elements "
        "again: give one of them");
  if (r.nodes != "1")
    throw UsageError("--nodes " + printable(r.nodes, 40) +
                     ": a fleet sweep's jobs are one node each (--fleet COUNT or --fleet-nodes "
                     "names how many)");
  if (!r.output.empty())
    throw UsageError(
        "--output: a fleet sweep's logs go into its folder (--fleet-dir), one per "
        "element");
  for (const auto& a : r.run_args)
    if (a == "--out" || a.rfind("--out=", 0) == 0 || a == "--resume" ||
        a.rfind("--resume=", 0) == 0)
      throw UsageError("run option " + a.substr(0, a.find('=')) +
                       ": each element of a fleet sweep writes its report into the fleet folder "
                       "(--fleet-dir)");
  if (!s.fleet_dir.empty() && !plain_path(s.fleet_dir))
    throw UsageError("--fleet-dir '" + printable(s.fleet_dir, 80) +
                     "' is not a plain path (letters, digits, / . _ - % + , = @)");
}

}  // namespace

void add_sweep_options(CLI::App& sub, SweepRequest& s) {
  sub.add_option("--fleet", s.fleet,
                 "fleet sweep: a job array of COUNT one-node elements, each writing its report "
                 "into --fleet-dir (docs/acceptance.md)");
  sub.add_option("--fleet-nodes", s.fleet_nodes,
                 "fleet sweep: one job on each of these nodes (node[01-04],gpu7 or @FILE)");
  sub.add_option("--fleet-elements", s.fleet_elements,
                 "fleet sweep: these elements of a --fleet job array again (2,5 or 0-9)");
  sub.add_option("--fleet-dir", s.fleet_dir,
                 "the fleet sweep's folder (default scalebench-fleet-<UTC>)");
  sub.add_option("--scaling", s.scaling,
                 "scaling study: strong or weak, at every node count of --nodes (1,2,4,8 or "
                 "1:16:*2; docs/batch.md)");
  sub.add_flag("--chain", s.chain,
               "scaling study: one job per node count, each after the previous one (default: "
               "one allocation of the largest count)");
  sub.add_option("--scaling-dir", s.scaling_dir,
                 "the scaling study's folder (default scalebench-scaling-<UTC>)");
}

std::vector<std::string> parse_fleet_nodes(const std::string& text) {
  std::vector<std::string> names;
  if (!text.empty() && text[0] == '@') {
    std::ifstream in(text.substr(1));
    if (!in) throw UsageError("--fleet-nodes " + printable(text, 80) + ": cannot read the file");
    std::string line;
    while (std::getline(in, line)) {
      if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      const auto b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos) continue;
      names.push_back(line.substr(b, line.find_last_not_of(" \t\r") - b + 1));
    }
  } else {
    try {
      names = expand_hostlist(text);
    } catch (const EnvironmentError& e) {
      throw UsageError("--fleet-nodes: " + std::string(e.what()));
    }
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (n.empty() || n.size() > 253 || !matches(n, "[A-Za-z0-9][A-Za-z0-9_.-]*"))
      throw UsageError("--fleet-nodes: '" + printable(n, 80) +
                       "' is not a node name (letters, digits, '_', '.', '-')");
    if (seen.insert(n).second) out.push_back(n);
  }
  if (out.empty()) throw UsageError("--fleet-nodes: no node given");
  if (out.size() > kMaxElements)
    throw UsageError("--fleet-nodes: more than " + std::to_string(kMaxElements) + " nodes");
  return out;
}

std::vector<std::string> submit_words(const SubmitRequest& r, bool with_job) {
  std::vector<std::string> w{"--scheduler", r.scheduler};
  auto opt = [&](const char* name, const std::string& value, const std::string& skip) {
    if (!value.empty() && value != skip) w.insert(w.end(), {name, value});
  };
  if (with_job) w.insert(w.end(), {"--nodes", r.nodes});
  opt("--gpus-per-node", r.gpus_per_node, "0");
  opt("--cpus-per-node", r.cpus_per_node, "0");
  opt("--time", r.time, "");
  opt("--partition", r.partition, "");
  opt("--account", r.account, "");
  opt("--qos", r.qos, "");
  opt("--pe", r.pe, "");
  if (with_job) {
    opt("--after", r.after, "");
    opt("--output", r.output, "");
  }
  for (const auto& b : r.batch_options) opt("--batch-option", b, "");
  return w;
}

int submit_fleet(const SubmitRequest& request, const SweepRequest& s, bool dry_run) {
  check_fleet_request(request, s);
  SubmitRequest r = request;
  if (r.scalebench.empty()) r.scalebench = self_executable();
  validate_request(r);
  const SchedulerDialect& d = dialect(r.scheduler);

  std::vector<int> indices;
  if (!s.fleet.empty()) {
    if (!matches(s.fleet, "[0-9]{1,6}") || std::stoi(s.fleet) < 1 ||
        std::stoi(s.fleet) > kMaxElements)
      throw UsageError("--fleet '" + printable(s.fleet, 40) + "' is not a count of nodes 1.." +
                       std::to_string(kMaxElements));
    for (int i = 0; i < std::stoi(s.fleet); ++i) indices.push_back(i);
  } else if (!s.fleet_elements.empty()) {
    indices = parse_indices(s.fleet_elements);
  }
  const std::vector<std::string> nodes =
      s.fleet_nodes.empty() ? std::vector<std::string>{} : parse_fleet_nodes(s.fleet_nodes);

  const std::string dir_text =
      s.fleet_dir.empty() ? "scalebench-fleet-" + utc_stamp(true) : s.fleet_dir;
  const std::string dir = fs::absolute(dir_text).lexically_normal().string();
  if (!plain_path(dir))
    throw UsageError("the fleet folder '" + printable(dir, 80) +
                     "' is not a plain path (letters, digits, / . _ - % + , = @)");
  bool have_manifest = false;
  FleetManifest manifest;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) manifest = read_fleet_manifest(dir, &have_manifest);
  if (have_manifest && manifest.scheduler != r.scheduler)
    throw UsageError("--fleet-dir " + dir + " holds a " + manifest.scheduler +
                     " sweep; this submission is for " + r.scheduler);
  manifest.scheduler = r.scheduler;
  manifest.submit_args = submit_words(r);
  manifest.run_args = r.run_args;

  // The scripts: one for the array, one per node.
  struct Job {
    std::string script;
    std::vector<std::string> elements;
    std::vector<std::string> nodes;  ///< the pinned node ("" for an array)
    bool array = false;
  };
  std::vector<Job> jobs;
  // The comment line of every script names the whole submission.
  std::string fleet_options;
  if (!s.fleet.empty()) fleet_options += " --fleet " + s.fleet;
  if (!s.fleet_elements.empty()) fleet_options += " --fleet-elements " + s.fleet_elements;
  if (!nodes.empty()) fleet_options += " --fleet-nodes " + readable_word(s.fleet_nodes);
  const std::string comment = "scalebench submit " + joined(submit_words(r)) + fleet_options +
                              " --fleet-dir " + readable_word(dir) + " -- " + joined(r.run_args);
  if (!indices.empty()) {
    std::vector<std::string> names;
    for (const int i : indices) names.push_back(array_element(i));
    TemplateVars v = template_variables(r);
    const int size = static_cast<int>(indices.size());
    d.add_fleet_variables(size >= 2 ? size : 0, "", dir, v);
    v["ELEMENT_SETUP"] = element_setup(d, dir, names);
    v["RUN_ARGS"] = element_run_args(r.run_args);
    v["SUBMIT_COMMAND"] = comment;
    jobs.push_back({render_script(r, v), names, std::vector<std::string>(names.size()), size >= 2});
  }
  for (const auto& n : nodes) {
    TemplateVars v = template_variables(r);
    d.add_fleet_variables(0, n, dir, v);
    v["ELEMENT_SETUP"] = element_setup(d, dir, {node_element(n)});
    v["RUN_ARGS"] = element_run_args(r.run_args);
    v["SUBMIT_COMMAND"] = comment;
    jobs.push_back({render_script(r, v), {node_element(n)}, {n}, false});
  }

  if (dry_run) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (jobs.size() > 1)
        std::cout << "# ---- job " << i + 1 << " of " << jobs.size() << ": "
                  << (jobs[i].array ? std::to_string(jobs[i].elements.size()) + " array elements"
                                    : jobs[i].elements.front())
                  << "\n";
      std::cout << jobs[i].script;
    }
    std::cout << std::flush;
    return kExitOk;
  }

  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw EnvironmentError("cannot create the fleet folder " + printable(dir) + ": " +
                           ec.message());
  std::size_t submitted = 0;
  for (const auto& j : jobs) {
    const std::string id = submit_script(r.scheduler, j.script);
    std::vector<FleetElement> added;
    const std::string now = utc_stamp(false);
    for (std::size_t k = 0; k < j.elements.size(); ++k)
      added.push_back({j.elements[k], j.nodes[k],
                       j.array ? d.array_element_id(id, static_cast<int>(k)) : id, now});
    add_elements(manifest, added);
    write_fleet_manifest(dir, manifest);
    submitted += j.elements.size();
    std::cerr << "scalebench: submitted " << d.title() << " job " << id << " ("
              << (j.array                   ? std::to_string(j.elements.size()) + " array elements"
                  : j.nodes.front().empty() ? j.elements.front()
                                            : "node " + j.nodes.front())
              << ")\n";
    std::cout << id << "\n" << std::flush;
  }
  std::cerr << "scalebench: fleet sweep of " << submitted << " element(s) into " << dir
            << "; when they have run: scalebench report merge " << readable_word(dir) << "\n";
  return kExitOk;
}

}  // namespace sb::batch
