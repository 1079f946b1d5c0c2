// The worker's telemetry sampler (telemetry_recorder.hpp).
#include "scalebench/telemetry_recorder.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "scalebench/clock.hpp"
#include "scalebench/json_number.hpp"

namespace sb {
namespace {

/// The energy counters from the case's first reading to its last (in time order): per kind
/// ("gpu", "cpu") {"joules", "seconds", "t_begin_unix", "t_end_unix", "updates" (readings in
/// which the counter had moved: how finely it resolved the case)}; a kind without two readings
/// is left out.
template <class Reading>
nlohmann::json energy_span(const std::vector<Reading>& readings) {
  nlohmann::json out = nlohmann::json::object();
  auto span = [&](const char* kind, double TelemetrySample::*field) {
    const TelemetrySample* first = nullptr;
    const TelemetrySample* last = nullptr;
    double previous = kNoReading;
    int updates = 0;
    for (const auto& r : readings) {
      const double v = r.s.*field;
      if (!std::isfinite(v)) continue;
      if (first == nullptr) first = &r.s;
      if (std::isfinite(previous) && v > previous) ++updates;
      previous = v;
      last = &r.s;
    }
    if (first == nullptr || last == first) return;
    out[kind] = {{"joules", std::max(0.0, last->*field - first->*field)},
                 {"seconds", last->t - first->t},
                 {"t_begin_unix", finite_or_null(first->t_unix)},
                 {"t_end_unix", finite_or_null(last->t_unix)},
                 {"updates", updates}};
  };
  span("gpu", &TelemetrySample::gpu_energy_j);
  span("cpu", &TelemetrySample::cpu_energy_j);
  return out;
}

}  // namespace

TelemetryRecorder::TelemetryRecorder(std::vector<std::unique_ptr<TelemetrySource>> sources,
                                     double period_s)
    : sources_(std::move(sources)), period_s_(period_s), last_read_(sources_.size(), 0.0) {
  thread_ = std::thread([this] { loop(); });
}

TelemetryRecorder::~TelemetryRecorder() {
  {
    std::lock_guard lk(m_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TelemetryRecorder::begin_case(bool gpu) {
  std::unique_lock lk(m_);
  served_.wait(lk, [&] { return pending_.empty() && !busy_; });
  readings_.clear();
  active_ = -1;
  gpu_ = gpu;
  last_read_.assign(sources_.size(), 0.0);  // the case's first reading reads every source
  // No reading is under way and none starts while the lock is held.
  for (auto& src : sources_) src->begin_case(gpu);
}

void TelemetryRecorder::begin_repeat(int repeat) noexcept {
  {
    std::lock_guard lk(m_);
    active_ = repeat;
    pending_.push_back({repeat, true});
  }
  wake_.notify_one();
}

void TelemetryRecorder::end_repeat(int repeat) noexcept {
  {
    std::lock_guard lk(m_);
    active_ = -1;
    pending_.push_back({repeat, false});
  }
  wake_.notify_one();
}

void TelemetryRecorder::loop() {
  std::unique_lock lk(m_);
  const auto period = std::chrono::duration<double>(period_s_);
  while (!stop_) {
    if (pending_.empty()) {
      if (active_ >= 0 && period_s_ > 0) {
        wake_.wait_for(lk, period, [&] { return stop_ || !pending_.empty(); });
      } else {
        wake_.wait(lk, [&] { return stop_ || !pending_.empty(); });
      }
    }
    if (stop_) break;
    int repeat = -1;
    if (!pending_.empty()) {
      repeat = pending_.front().repeat;
      pending_.pop_front();
    } else if (active_ >= 0) {
      repeat = active_;
    } else {
      continue;
    }
    const bool gpu = gpu_;
    busy_ = true;
    lk.unlock();
    TelemetrySample s;
    s.t = now();
    s.t_unix =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::vector<double> took(sources_.size(), 0.0);
    for (std::size_t i = 0; i < sources_.size(); ++i) {
      if (gpu ? sources_[i]->cpu_cases_only() : sources_[i]->gpu()) continue;
      // A source read less than its interval ago sits this reading out (short repeats).
      const double r0 = now();
      if (last_read_[i] > 0 && r0 - last_read_[i] < sources_[i]->min_interval_s()) continue;
      sources_[i]->read(s);
      last_read_[i] = r0;
      took[i] = now() - r0;
    }
    lk.lock();
    read_max_s_.resize(sources_.size(), 0.0);
    read_sum_s_.resize(sources_.size(), 0.0);
    read_n_.resize(sources_.size(), 0);
    for (std::size_t i = 0; i < took.size(); ++i) {
      if (took[i] <= 0) continue;
      read_max_s_[i] = std::max(read_max_s_[i], took[i]);
      read_sum_s_[i] += took[i];
      ++read_n_[i];
    }
    busy_ = false;
    readings_.push_back({s, repeat});
    if (pending_.empty()) served_.notify_all();
  }
  served_.notify_all();
}

nlohmann::json TelemetryRecorder::finish_case(std::size_t max_series) {
  std::vector<Reading> readings;
  std::vector<double> read_max, read_sum;
  std::vector<std::size_t> read_n;
  bool gpu = false;
  nlohmann::json summaries = nlohmann::json::object();
  {
    std::unique_lock lk(m_);
    served_.wait(lk, [&] { return stop_ || (pending_.empty() && !busy_); });
    readings.swap(readings_);
    read_max.swap(read_max_s_);
    read_sum.swap(read_sum_s_);
    read_n.swap(read_n_);
    active_ = -1;
    gpu = gpu_;
    for (const auto& src : sources_)
      if (nlohmann::json sum = src->case_summary(); !sum.is_null())
        summaries[src->name()] = std::move(sum);
  }
  std::stable_sort(readings.begin(), readings.end(),
                   [](const Reading& a, const Reading& b) { return a.s.t < b.s.t; });
  const double origin = readings.empty() ? 0.0 : readings.front().s.t;
  std::map<int, std::vector<TelemetrySample>> by_repeat;
  for (const auto& r : readings) by_repeat[r.repeat].push_back(r.s);
  nlohmann::json reps = nlohmann::json::array();
  for (const auto& [repeat, xs] : by_repeat)
    reps.push_back(to_json(summarize_repeat(xs, repeat, origin)));

  nlohmann::json series = {{"t", nlohmann::json::array()},
                           {"repeat", nlohmann::json::array()},
                           {"cpu_mhz", nlohmann::json::array()}};
  if (gpu)
    for (const char* k :
         {"gpu_sm_mhz", "gpu_mem_mhz", "gpu_power_w", "gpu_temp_c", "gpu_clock_event_reasons"})
      series[k] = nlohmann::json::array();
  const std::size_t n = readings.size();
  const std::size_t stride =
      max_series > 0 && n > max_series ? (n + max_series - 1) / max_series : 1;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % stride != 0 && i + 1 != n) continue;
    const TelemetrySample& s = readings[i].s;
    series["t"].push_back(s.t - origin);
    series["repeat"].push_back(readings[i].repeat);
    series["cpu_mhz"].push_back(finite_or_null(s.cpu_mhz));
    if (!gpu) continue;
    series["gpu_sm_mhz"].push_back(finite_or_null(s.gpu_sm_mhz));
    series["gpu_mem_mhz"].push_back(finite_or_null(s.gpu_mem_mhz));
    series["gpu_power_w"].push_back(finite_or_null(s.gpu_power_w));
    series["gpu_temp_c"].push_back(finite_or_null(s.gpu_temp_c));
    series["gpu_clock_event_reasons"].push_back(finite_or_null(s.gpu_reasons));
  }
  // What sampling cost: each source's longest read, its mean and how often it was read.
  nlohmann::json read_s = nlohmann::json::object();
  for (std::size_t i = 0; i < read_max.size() && i < sources_.size(); ++i) {
    if (read_max[i] <= 0) continue;
    read_s[sources_[i]->name()] = {
        {"max", read_max[i]},
        {"mean", read_sum[i] / static_cast<double>(std::max<std::size_t>(1, read_n[i]))},
        {"count", read_n[i]}};
  }
  return {{"period_s", period_s_},
          {"sources", describe()},
          {"read_s", std::move(read_s)},
          {"repeats", std::move(reps)},
          {"series", std::move(series)},
          {"energy", energy_span(readings)},
          {"summaries", std::move(summaries)}};
}

nlohmann::json TelemetryRecorder::describe() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& src : sources_) out.update(src->describe());
  return out;
}

}  // namespace sb
