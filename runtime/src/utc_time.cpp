#include "scalebench/utc_time.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

namespace sb {
namespace {

std::string iso8601(bool millis) {
  const auto t = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  const std::string day = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900,
                                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (!millis) return day + "Z";
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  return fmt::format("{}.{:03}Z", day, ms);
}

}  // namespace

std::string utc_now() {
  return iso8601(true);
}

std::string utc_now_seconds() {
  return iso8601(false);
}

}  // namespace sb
