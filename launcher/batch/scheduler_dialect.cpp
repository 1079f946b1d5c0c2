/// @file scheduler_dialect.cpp
/// The dialect registry and the dialects' shared helpers (see scheduler_dialect.hpp).

#include "batch/scheduler_dialect.hpp"

#include "scalebench/printable.hpp"

#include <scalebench/error.hpp>

#include <cstdio>
#include <regex>
#include <sstream>

namespace sb::batch {

std::string SchedulerDialect::quote_value(const std::string& value) const {
  return matches(value, "[A-Za-z0-9_./%+,=@:-]+") ? value : "\"" + value + "\"";
}

std::string SchedulerDialect::job_id(const std::string& out) const {
  std::istringstream in(out);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    last = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
  }
  return last;
}

const SchedulerDialect& dialect(const std::string& name) {
  for (const SchedulerDialect* d :
       {&slurm_dialect(), &pbs_dialect(), &lsf_dialect(), &sge_dialect()})
    if (name == d->name()) return *d;
  throw UsageError("--scheduler '" + printable(name, 80) + "' is not slurm, pbs, lsf or sge");
}

const std::vector<std::string>& dialect_names() {
  static const std::vector<std::string> names{"slurm", "pbs", "lsf", "sge"};
  return names;
}

bool matches(const std::string& value, const char* pattern) {
  return std::regex_match(value, std::regex(pattern));
}

std::string hhmmss(long seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02ld:%02ld:%02ld", seconds / 3600, (seconds / 60) % 60,
                seconds % 60);
  return buf;
}

void check_job_id(const std::string& value, const char* pattern, const std::string& what) {
  if (!value.empty() && !matches(value, pattern))
    throw UsageError("--after '" + printable(value, 80) + "' is not " + what);
}

}  // namespace sb::batch
