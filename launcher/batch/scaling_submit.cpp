/// @file scaling_submit.cpp
/// Scaling studies in `scalebench submit` (sweep_submit.hpp): `scalebench scale` in one
/// allocation of the largest node count, or one job per node count chained with dependencies.

#include "batch/fleet_folder.hpp"
#include "batch/scheduler_dialect.hpp"
#include "batch/sweep_submit.hpp"
#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <set>

namespace sb::batch {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxNodes = 100000;

std::string utc_compact() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

int count_of(const std::string& text, const std::string& what, const std::string& whole) {
  if (!matches(text, "[0-9]{1,6}"))
    throw UsageError(what + " '" + printable(whole, 80) + "': '" + printable(text, 40) +
                     "' is not a node count");
  const int v = std::stoi(text);
  if (v < 1 || v > kMaxNodes)
    throw UsageError(what + " '" + printable(whole, 80) + "': " + text + " is out of range [1, " +
                     std::to_string(kMaxNodes) + "]");
  return v;
}

std::string counts_text(const std::vector<int>& counts) {
  std::string out;
  for (const int c : counts) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

}  // namespace

std::vector<int> parse_node_counts(const std::string& text, const std::string& what) {
  std::set<int> out;
  if (text.empty()) throw UsageError(what + ": no node count given");
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    const auto colon = item.find(':');
    const auto dash = item.find('-');
    if (colon != std::string::npos) {
      // lo:hi[:step], step +k (default +1) or *f / xf
      const std::string lo_t = item.substr(0, colon);
      const std::string rest = item.substr(colon + 1);
      const auto colon2 = rest.find(':');
      const std::string hi_t = rest.substr(0, colon2);
      const std::string step_t = colon2 == std::string::npos ? "+1" : rest.substr(colon2 + 1);
      const int lo = count_of(lo_t, what, text), hi = count_of(hi_t, what, text);
      if (hi < lo)
        throw UsageError(what + " '" + printable(text, 80) + "': " + item +
                         " ends before it starts");
      const bool geometric = !step_t.empty() && (step_t[0] == '*' || step_t[0] == 'x');
      const std::string number =
          !step_t.empty() && (geometric || step_t[0] == '+') ? step_t.substr(1) : step_t;
      const int step = count_of(number, what, text);
      if (geometric ? step < 2 : step < 1)
        throw UsageError(what + " '" + printable(text, 80) + "': step '" + step_t + "' must be " +
                         (geometric ? "a factor of 2 or more" : "1 or more"));
      for (long long v = lo; v <= hi; v = geometric ? v * step : v + step)
        out.insert(static_cast<int>(v));
    } else if (dash != std::string::npos) {
      const int lo = count_of(item.substr(0, dash), what, text);
      const int hi = count_of(item.substr(dash + 1), what, text);
      if (hi < lo)
        throw UsageError(what + " '" + printable(text, 80) + "': " + item +
                         " ends before it starts");
      if (hi - lo > 4096)
        throw UsageError(what + " '" + printable(text, 80) + "': too many counts");
      for (int v = lo; v <= hi; ++v) out.insert(v);
    } else {
      out.insert(count_of(item, what, text));
    }
    if (out.size() > 4096)
      throw UsageError(what + " '" + printable(text, 80) + "': too many counts");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {out.begin(), out.end()};
}

int submit_scaling(const SubmitRequest& request, const SweepRequest& s, bool dry_run) {
  if (s.scaling != "strong" && s.scaling != "weak")
    throw UsageError("--scaling '" + printable(s.scaling, 40) + "' is not strong or weak");
  const std::vector<int> counts = parse_node_counts(request.nodes, "--nodes");
  if (counts.size() < 2)
    throw UsageError("--scaling needs two node counts or more in --nodes (e.g. 1,2,4,8 or 1:8:*2)");
  for (const auto& a : request.run_args)
    if (a == "--out" || a.rfind("--out=", 0) == 0 || a == "--nodes" ||
        a.rfind("--nodes=", 0) == 0 || a == "--resume" || a.rfind("--resume=", 0) == 0)
      throw UsageError("run option " + a.substr(0, a.find('=')) +
                       ": a scaling study sets it for each node count (its reports go into "
                       "--scaling-dir)");
  const std::string dir_text =
      s.scaling_dir.empty() ? "scalebench-scaling-" + utc_compact() : s.scaling_dir;
  const std::string dir = fs::absolute(dir_text).lexically_normal().string();
  if (dir.size() > 1024 || !matches(dir, "[A-Za-z0-9_./%+,=@-]+"))
    throw UsageError("--scaling-dir '" + printable(dir, 80) +
                     "' is not a plain path (letters, digits, / . _ - % + , = @)");

  SubmitRequest r = request;
  if (r.scalebench.empty()) r.scalebench = self_executable();
  // One job of `nodes` nodes running `scale` at `step` (0: every count).
  const auto script_for = [&](int nodes, int step, const std::string& after) {
    SubmitRequest q = r;
    q.nodes = std::to_string(nodes);
    q.after = after;
    std::vector<std::string> args{"--nodes", counts_text(counts), "--mode", s.scaling, "--dir",
                                  dir};
    if (step > 0) args.insert(args.end(), {"--step", std::to_string(step)});
    args.emplace_back("--");
    args.insert(args.end(), r.run_args.begin(), r.run_args.end());
    q.run_args.clear();
    validate_request(q);
    TemplateVars v = template_variables(q);
    std::string words;
    for (const auto& a : args) words += (words.empty() ? "" : " ") + shell_quote(a);
    v["SUBCOMMAND"] = "scale";
    v["RUN_ARGS"] = words;
    std::string comment = "scalebench submit";
    for (const auto& w : submit_words(r)) comment += " " + readable_word(w);
    comment += " --nodes " + counts_text(counts) + " --scaling " + s.scaling +
               (s.chain ? " --chain" : "") + " --scaling-dir " + readable_word(dir) + " --";
    for (const auto& a : r.run_args) comment += " " + readable_word(a);
    v["SUBMIT_COMMAND"] = comment;
    return render_script(q, v);
  };
  const SchedulerDialect& d = dialect(r.scheduler);
  if (!s.chain) {
    const std::string script = script_for(counts.back(), 0, r.after);
    if (dry_run) {
      std::cout << script << std::flush;
      return kExitOk;
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string id = submit_script(r.scheduler, script);
    std::cerr << "scalebench: submitted " << d.title() << " job " << id << ": a " << s.scaling
              << " scaling study at " << counts_text(counts) << " nodes in one allocation of "
              << counts.back() << "; its merged report will be " << dir << "/scaling.h5\n";
    std::cout << id << "\n" << std::flush;
    return kExitOk;
  }
  // A chain: each job waits for the previous one, whatever its end.
  std::string after = r.after;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    // A dry run cannot know the previous job's id: its later scripts say where it goes.
    const std::string script = script_for(counts[i], counts[i], dry_run && i > 0 ? "" : after);
    if (dry_run) {
      std::cout << "# ---- job " << i + 1 << " of " << counts.size() << ": " << counts[i]
                << " node(s)" << (i > 0 ? ", submitted with --after the previous job's id" : "")
                << "\n"
                << script;
      continue;
    }
    if (i == 0) {
      std::error_code ec;
      fs::create_directories(dir, ec);
    }
    const std::string id = submit_script(r.scheduler, script);
    std::cerr << "scalebench: submitted " << d.title() << " job " << id << " (" << counts[i]
              << " node(s)" << (after.empty() ? "" : ", after job " + after) << ")\n";
    std::cout << id << "\n" << std::flush;
    // The next job starts after this one; arrays aside, the id is what --after takes.
    after = id;
  }
  if (!dry_run)
    std::cerr << "scalebench: a " << s.scaling << " scaling study at " << counts_text(counts)
              << " nodes as a chain of " << counts.size() << " jobs; every job merges what has "
              << "run into " << dir << "/scaling.h5\n";
  std::cout << std::flush;
  return kExitOk;
}

}  // namespace sb::batch
