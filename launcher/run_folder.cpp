#include "run_folder.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/file_identity.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/utc_time.hpp"

namespace fs = std::filesystem;

namespace sb {
namespace {

constexpr const char* kPrefix = ".scalebench-";
constexpr const char* kOwnerFile = "owner.json";
constexpr const char* kLifelineFile = "lifeline";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunOwner read_owner(const fs::path& folder) {
  RunOwner o;
  try {
    const auto j = nlohmann::json::parse(read_text(folder / kOwnerFile));
    o.pid = j.value("pid", 0);
    o.host = j.value("host", "");
    o.report = j.value("report", "");
    o.started_utc = j.value("started_utc", "");
    o.started = j.value("started", 0.0);
  } catch (const std::exception&) {
    o = RunOwner{};  // damaged or missing: an owner nobody can be matched with
  }
  return o;
}

bool is_run_folder(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_directory(ec) && e.path().filename().string().rfind(kPrefix, 0) == 0;
}

/// A live run (other than ours) writing `report`, or nothing.
std::optional<RunOwner> live_writer(const fs::path& dir, const fs::path& report,
                                    const fs::path& self, const RunOwner& me) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!is_run_folder(e) || e.path() == self) continue;
    if (probe_lifeline((e.path() / kLifelineFile).string()) != LifelineState::alive) continue;
    const RunOwner other = read_owner(e.path());
    if (!writes_report(other, report)) continue;
    // Two runs that start together see each other: the later one gives way.
    const bool other_first =
        other.started < me.started || (other.started == me.started && other.pid < me.pid);
    if (other_first) return other;
  }
  return std::nullopt;
}

[[noreturn]] void refuse_written(const fs::path& report, const RunOwner& other) {
  throw UsageError(fmt::format(
      "report {} is being written by another scalebench run (pid {} on {}, started {}): "
      "choose another --out, or wait for that run to end",
      report.string(), other.pid, other.host, other.started_utc));
}

/// Creates `.scalebench-<pid>` beside the report (`-<pid>-2`, ... when a killed process with
/// the same pid left one, which stays recoverable).
fs::path make_run_folder(const fs::path& report) {
  for (int attempt = 1; attempt < 100; ++attempt) {
    const fs::path dir = report.parent_path() /
                         (attempt == 1 ? fmt::format("{}{}", kPrefix, ::getpid())
                                       : fmt::format("{}{}-{}", kPrefix, ::getpid(), attempt));
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST)
      throw EnvironmentError(fmt::format("cannot create the run's work folder {}: {}", dir.string(),
                                         std::strerror(errno)));
  }
  throw EnvironmentError(fmt::format("cannot create a work folder beside {}", report.string()));
}

}  // namespace

void refuse_if_written(const fs::path& report) {
  RunOwner me;
  me.started = std::numeric_limits<double>::infinity();  // any live writer came first
  if (const auto other = live_writer(report.parent_path(), report, fs::path(), me))
    refuse_written(report, *other);
}

bool writes_report(const RunOwner& owner, const fs::path& report) {
  return !owner.report.empty() &&
         (owner.report == report.string() || same_file(owner.report, report.string()));
}

RunFolder::RunFolder(const fs::path& report)
    : dir_(make_run_folder(report)), lifeline_((dir_ / kLifelineFile).string()) {
  RunOwner me;
  me.pid = ::getpid();
  me.host = host_name();
  me.report = report.string();
  me.started_utc = utc_now();
  me.started =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  {
    std::ofstream out(dir_ / kOwnerFile);
    out << nlohmann::json{{"pid", me.pid},
                          {"host", me.host},
                          {"report", me.report},
                          {"started_utc", me.started_utc},
                          {"started", me.started}}
               .dump();
    if (!out) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
      throw EnvironmentError(fmt::format("cannot write {}", (dir_ / kOwnerFile).string()));
    }
  }
  if (const auto other = live_writer(report.parent_path(), report, dir_, me)) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    refuse_written(report, *other);
  }
}

RunFolder::~RunFolder() {
  if (keep_) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::vector<OrphanRun> find_orphan_runs(const fs::path& dir) {
  std::vector<OrphanRun> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!is_run_folder(e)) continue;
    const fs::path lifeline = e.path() / kLifelineFile;
    // A folder without a lifeline is a killed run's only when its pid is gone from this host.
    if (!fs::exists(lifeline, ec)) {
      const std::string name = e.path().filename().string().substr(std::strlen(kPrefix));
      char* end = nullptr;
      const long pid = std::strtol(name.c_str(), &end, 10);
      if (end == name.c_str() || *end != '\0' ||
          (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0))
        continue;
    } else if (probe_lifeline(lifeline.string()) != LifelineState::gone) {
      continue;
    }
    out.push_back({e.path(), read_owner(e.path())});
  }
  return out;
}

StreamRecords read_stream_records(const fs::path& folder) {
  StreamRecords r;
  std::vector<fs::path> streams;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("stream-", 0) == 0 && e.path().extension() == ".jsonl")
      streams.push_back(e.path());
  }
  // stream-N.jsonl in job order (N numeric)
  std::sort(streams.begin(), streams.end(), [](const fs::path& a, const fs::path& b) {
    const auto n = [](const fs::path& p) { return std::atoi(p.stem().string().c_str() + 7); };
    return n(a) < n(b);
  });
  std::map<std::string, std::size_t> by_id;
  for (const auto& s : streams) {
    std::ifstream in(s);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json rec;
      try {
        rec = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        continue;  // a torn last line of a killed job
      }
      // Only whole records of the scheduler's shape (a damaged stream must not stop recover).
      const auto type_it = rec.is_object() ? rec.find("type") : rec.end();
      if (!rec.is_object() || type_it == rec.end() || !type_it->is_string()) continue;
      if (const auto id = rec.find("id"); id != rec.end() && !id->is_string()) continue;
      if (const auto t = rec.find("ended_utc"); t != rec.end() && !t->is_string()) continue;
      const std::string type = type_it->get<std::string>();
      if (type == "start" && r.start.is_null()) {
        r.start = rec;
      } else if (type == "case") {
        rec.erase("type");
        const std::string id = rec.value("id", "");
        r.last_utc = rec.value("ended_utc", r.last_utc);
        if (const auto it = by_id.find(id); it != by_id.end()) {
          r.cases[it->second] = rec;  // a later job re-ran it
        } else {
          by_id[id] = r.cases.size();
          r.cases.push_back(rec);
        }
      }
    }
  }
  return r;
}

int remove_stale_temp_files(const fs::path& report) {
  int removed = 0;
  std::error_code ec;
  const std::string prefix = report.filename().string() + ".tmp-";
  for (const auto& e : fs::directory_iterator(report.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    char* end = nullptr;
    const long pid = std::strtol(pid_text.c_str(), &end, 10);
    if (end == pid_text.c_str() || *end != '\0' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // still running
    if (fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace sb
