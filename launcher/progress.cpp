#include "progress.hpp"

#include <cmath>

#include <fmt/format.h>

#include "scalebench/clock.hpp"

namespace sb {

namespace {
std::string seconds(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 1) return fmt::format("{:.0f} ms", s * 1e3);
  if (s < 120) return fmt::format("{:.1f} s", s);
  return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}
}  // namespace

Progress::Progress(int total_cases, std::FILE* out, bool tty)
    : total_(total_cases), out_(out), tty_(tty), t0_(now()) {}

void Progress::redraw(const nlohmann::json& p) {
  const int k = p.value("case", 0);
  const int repeats = p.value("repeats", 1);
  const bool warm = p.value("warmup", false);
  const int r = p.value("repeat", 0);
  const double elapsed = now() - t0_;
  const double frac = warm ? 0.0 : static_cast<double>(r) / std::max(1, repeats);
  const double done = finished_ + frac;
  const double eta = done > 0 ? elapsed / done * (total_ - done) : NAN;
  // A restarted job numbers its cases from 0: offset by the cases it does not hold.
  const int number = k + 1 + (total_ - p.value("cases", total_));
  const std::string what =
      fmt::format("[{}/{}] {} {}", number, total_, p.value("workload", ""), p.value("path", ""));
  if (tty_) {
    const std::string step =
        warm ? std::string("warm-up") : fmt::format("repeat {}/{}", r + 1, repeats);
    fmt::print(out_, "\r\033[K{} {}  elapsed {}  ETA {}", what, step, seconds(elapsed),
               seconds(eta));
    std::fflush(out_);
    line_open_ = true;
  } else if (p.value("id", "") != last_started_) {
    last_started_ = p.value("id", "");
    fmt::print(out_, "scalebench: {} started (elapsed {})\n", what, seconds(elapsed));
    std::fflush(out_);
  }
}

void Progress::on_record(const nlohmann::json& rec) {
  const std::string type = rec.value("type", "");
  if (type == "progress") {
    redraw(rec);
  } else if (type == "case") {
    ++finished_;
    finish();
    const auto& m = rec.contains("metrics") ? rec.at("metrics") : nlohmann::json::object();
    std::string figures;
    if (m.contains("median_s"))
      figures = fmt::format("median {}  {:.3g} {}", seconds(m.value("median_s", 0.0)),
                            m.value("throughput", 0.0), m.value("throughput_unit", ""));
    const std::string status = rec.value("status", "?");
    fmt::print(out_, "scalebench: [{}/{}] {:<7} {} {}  {}{}\n", finished_, total_, status,
               rec.value("workload", ""), rec.value("path", ""), figures,
               rec.value("message", "").empty() ? "" : "  (" + rec.value("message", "") + ")");
    std::fflush(out_);
  } else if (type == "start") {
    const auto& st = rec.at("startup");
    fmt::print(out_, "scalebench: runtime up: {} ranks ({} workers, {} on GPUs) in {}\n",
               rec.value("ranks", 0), rec.value("workers", 0), rec.value("gpu_workers", 0),
               seconds(st.value("total_s", 0.0)));
    std::fflush(out_);
  }
}

void Progress::finish() {
  if (tty_ && line_open_) {
    fmt::print(out_, "\r\033[K");
    std::fflush(out_);
    line_open_ = false;
  }
}

}  // namespace sb
