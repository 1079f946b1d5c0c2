// The job plan and the record stream (job_plan.hpp).
#include "scalebench/job_plan.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "scalebench/ab_protocol.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"

namespace sb {

nlohmann::json case_spec_to_json(const CaseSpec& s) {
  return {{"index", s.index},
          {"id", s.id},
          {"workload", s.workload},
          {"path", std::string(to_string(s.path))},
          {"params", s.params.to_json()},
          {"preset", s.preset},
          {"repeats", s.repeats},
          {"warmup", s.warmup},
          {"workers", s.workers},
          {"min_repeats", s.min_repeats},
          {"max_time_s", s.max_time_s},
          {"target_spread", s.target_spread}};
}

CaseSpec case_spec_from_json(const nlohmann::json& j) {
  CaseSpec s;
  s.index = j.at("index").get<int>();
  s.id = j.at("id").get<std::string>();
  s.workload = j.at("workload").get<std::string>();
  const auto path = parse_exec_path(j.at("path").get<std::string>());
  if (!path) throw UsageError("job plan: unknown path " + j.at("path").dump());
  s.path = *path;
  s.params = Params::from_json(j.at("params"));
  s.preset = j.value("preset", std::string());
  s.repeats = j.at("repeats").get<int>();
  s.warmup = j.at("warmup").get<int>();
  s.workers = j.value("workers", 1);
  s.min_repeats = j.value("min_repeats", 0);
  s.max_time_s = j.value("max_time_s", 0.0);
  s.target_spread = j.value("target_spread", 0.0);
  return s;
}

nlohmann::json JobPlan::to_json() const {
  nlohmann::json c = nlohmann::json::array();
  for (const auto& s : cases) c.push_back(case_spec_to_json(s));
  nlohmann::json j = {{"cases", c},
                      {"stream", stream_path},
                      {"case_timeout_s", case_timeout_s},
                      {"measure_ceilings", measure_ceilings},
                      {"stop_path", stop_path},
                      {"trace", trace},
                      {"lifeline", lifeline_path},
                      {"fresh_ceilings", fresh_ceilings},
                      {"telemetry_period_s", telemetry_period_s},
                      {"telemetry_gpu_min_s", telemetry_gpu_min_s},
                      {"telemetry_counters_s", telemetry_counters_s},
                      {"keep_throttled", keep_throttled},
                      {"plugins", plugins}};
  if (!ab_side.empty()) {
    j["ab_side"] = ab_side;
    j["ab_run"] = ab_run;
    j["ab_protocol"] = ab::kProtocol;
  }
  return j;
}

JobPlan JobPlan::from_json(const nlohmann::json& j) {
  JobPlan p;
  for (const auto& c : j.at("cases")) p.cases.push_back(case_spec_from_json(c));
  p.stream_path = j.at("stream").get<std::string>();
  p.case_timeout_s = j.value("case_timeout_s", 0.0);
  p.measure_ceilings = j.value("measure_ceilings", true);
  p.stop_path = j.value("stop_path", std::string());
  p.trace = j.value("trace", false);
  p.lifeline_path = j.value("lifeline", std::string());
  p.fresh_ceilings = j.value("fresh_ceilings", false);
  p.telemetry_period_s = j.value("telemetry_period_s", 0.02);
  p.telemetry_gpu_min_s = j.value("telemetry_gpu_min_s", 0.01);
  p.telemetry_counters_s = j.value("telemetry_counters_s", 1.0);
  p.keep_throttled = j.value("keep_throttled", false);
  p.plugins = j.value("plugins", std::vector<std::string>());
  p.ab_side = j.value("ab_side", std::string());
  p.ab_run = j.value("ab_run", std::string());
  if (!p.ab_side.empty() && j.value("ab_protocol", 0) != ab::kProtocol)
    throw EnvironmentError(fmt::format(
        "this scalebench-rank speaks A/B protocol {} and the launcher {}: build both sides of "
        "an A/B run from commits of the same protocol",
        ab::kProtocol, j.value("ab_protocol", 0)));
  return p;
}

StreamWriter::StreamWriter(const std::string& path) {
  f_ = std::fopen(path.c_str(), "ae");
  if (f_ == nullptr)
    throw EnvironmentError(
        fmt::format("cannot open result stream {}: {}", path, std::strerror(errno)));
}

StreamWriter::~StreamWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

void StreamWriter::write(const nlohmann::json& record, bool durable) {
  const double t0 = now();
  const std::string line =
      record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0)
    throw EnvironmentError(fmt::format("cannot write result stream: {}", std::strerror(errno)));
  if (durable) ::fsync(fileno(f_));
  seconds_writing_ += now() - t0;
}

void StreamWriter::sync() {
  const double t0 = now();
  ::fsync(fileno(f_));
  seconds_writing_ += now() - t0;
}

}  // namespace sb
