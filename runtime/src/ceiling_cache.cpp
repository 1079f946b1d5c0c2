// Ceilings kept per machine (ceiling_cache.hpp).
#include "scalebench/ceiling_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/job_plan.hpp"
#include "scalebench/settings.hpp"
#include "scalebench/utc_time.hpp"

namespace fs = std::filesystem;

namespace sb {
namespace {

/// 2: CPU ceilings say what other processes took while they measured (worker.cpp); the
/// entries of version 1 were kept without that check and are measured again.
/// 3: the Philox rates (`philox`, `philox_simd`) join the ceilings; older entries lack them.
constexpr int kCacheVersion = 3;

double epoch_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// An exclusive flock on `path` for the scope of the object (no lock when it cannot be made).
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) (void)::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

nlohmann::json read_cache(const std::string& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    return j.is_object() && j.value("version", 0) == kCacheVersion ? j : nlohmann::json::object();
  } catch (const nlohmann::json::exception&) {
    return nlohmann::json::object();  // a damaged cache is measured over
  }
}

void write_cache(const std::string& file, const nlohmann::json& cache) {
  const std::string tmp = fmt::format("{}.tmp-{}", file, ::getpid());
  {
    std::ofstream out(tmp);
    out << cache.dump(1) << '\n';
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
}

nlohmann::json stamped(nlohmann::json records, const std::string& source, const std::string& utc) {
  for (auto& r : records) {
    r["source"] = source;
    r["measured_utc"] = utc;
  }
  return records;
}

}  // namespace

std::string ceiling_cache_file() {
  try {
    const std::string dir = settings::cache_dir();
    return dir.empty() ? std::string() : dir + "/ceilings.json";
  } catch (...) {
    return "";
  }
}

nlohmann::json cached_ceilings(const std::string& cache_file, const std::string& key, bool fresh,
                               const std::function<nlohmann::json()>& measure,
                               const std::function<bool(const nlohmann::json&)>& plausible) {
  if (cache_file.empty()) return stamped(measure(), "measured", utc_now());
  std::error_code ec;
  fs::create_directories(fs::path(cache_file).parent_path(), ec);
  // Workers of one node share the file: the lock makes each entry's read-measure-write whole,
  // and a second worker with the same key then reads what the first one measured.
  const FileLock lock(cache_file + ".lock");
  nlohmann::json cache = read_cache(cache_file);
  if (!fresh && cache.contains("entries") && cache["entries"].contains(key)) {
    const auto& e = cache["entries"][key];
    const double age_days = (epoch_now() - e.value("epoch", 0.0)) / 86400.0;
    if (age_days >= 0 && age_days < kCeilingMaxAgeDays && e.contains("ceilings"))
      return stamped(e["ceilings"], "cached", e.value("measured_utc", ""));
  }
  const std::string utc = utc_now();
  nlohmann::json records = measure();
  if (plausible && !plausible(records)) return stamped(std::move(records), "measured", utc);
  cache["version"] = kCacheVersion;
  cache["entries"][key] = {{"epoch", epoch_now()}, {"measured_utc", utc}, {"ceilings", records}};
  write_cache(cache_file, cache);
  return stamped(std::move(records), "measured", utc);
}

}  // namespace sb
