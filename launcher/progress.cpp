#include "progress.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "console.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/report.hpp"

namespace sb {

namespace {
std::string seconds(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 0.01) return fmt::format("{:.3g} ms", s * 1e3);  // sub-millisecond medians too
  if (s < 1) return fmt::format("{:.0f} ms", s * 1e3);
  if (s < 120) return fmt::format("{:.1f} s", s);
  return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}
}  // namespace

Progress::Progress(const std::vector<CaseSpec>& cases, std::FILE* out, bool tty)
    : total_(static_cast<int>(cases.size())), out_(out), tty_(tty), t0_(now()) {
  // Keys whose value differs between the planned cases of a workload tell those cases apart.
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;
  for (const auto& c : cases)
    for (const auto& [k, v] : c.params.items()) values[c.workload][k].insert(v);
  for (const auto& c : cases) {
    std::string l = fmt::format("{} {}", c.workload, to_string(c.path));
    for (const auto& [k, v] : c.params.items())
      if (values[c.workload][k].size() > 1) l += fmt::format(" {}={}", k, v);
    labels_[c.id] = l;
  }
}

std::string Progress::label(const std::string& id) const {
  const auto it = labels_.find(id);
  return one_line(it != labels_.end() ? it->second : id);  // a kept report's ids may hold anything
}

void Progress::on_progress(const nlohmann::json& p) {
  const std::string id = p.value("id", "");
  const int repeats = std::max(1, p.value("repeats", 1));
  const bool warm = p.value("warmup", false);
  const int r = p.value("repeat", 0);
  const bool adaptive = p.value("auto", false);  // `--repeats auto`: `repeats` is the most
  const auto repeat_text = [&](int k) {
    return adaptive ? fmt::format("repeat {} (auto, at most {})", k + 1, repeats)
                    : fmt::format("repeat {}/{}", k + 1, repeats);
  };
  const double t = now();
  const bool new_case = id != current_;
  // The repeat that just ended, when this record starts the next one of the same case.
  const double last_repeat = new_case ? 0.0 : t - repeat_t0_;
  const bool last_was_warmup = warmup_;
  const int last_r = repeat_;
  if (new_case) {
    current_ = id;
    case_t0_ = t;
    timed_t0_ = -1;
  }
  if (!warm && timed_t0_ < 0) timed_t0_ = t;
  repeat_t0_ = t;
  repeat_ = r;
  warmup_ = warm;
  repeats_ = repeats;
  adaptive_ = adaptive;
  // A restarted job numbers its cases from 0: offset by the cases it does not hold.
  const int number = p.value("case", 0) + 1 + (total_ - p.value("cases", total_));
  const std::string what = fmt::format("[{}/{}] {}", number, total_, label(id));
  what_ = what;
  const double elapsed = t - t0_;
  const double frac = warm ? 0.0 : static_cast<double>(r) / repeats;
  const double done = finished_ + frac;
  const double eta = done > 0 ? elapsed / done * (total_ - done) : NAN;
  if (tty_) {
    const std::string step = warm ? std::string("warm-up") : repeat_text(r);
    say(out_, fmt::format("\r\033[K{} {}  elapsed {}  ETA {}", what, step, seconds(elapsed),
                          seconds(eta)));
    line_open_ = true;
    return;
  }
  if (new_case) {
    sayf(out_, "scalebench: {} started (elapsed {})\n", what, seconds(elapsed));
    last_line_t_ = t;
  } else if (last_repeat > kSlowRepeatS) {
    const double case_eta = last_repeat * (repeats - r);
    sayf(out_, "scalebench: {} {} done in {} (case ETA {})\n", what,
         last_was_warmup ? std::string("warm-up") : repeat_text(last_r), seconds(last_repeat),
         seconds(case_eta));
    last_line_t_ = t;
  }
}

void Progress::tick() {
  if (tty_ || current_.empty()) return;
  const double t = now();
  if (t - last_line_t_ < kQuietS) return;
  last_line_t_ = t;
  if (warmup_ || timed_t0_ < 0) {
    sayf(out_, "scalebench: {} warming up, case running for {}\n", what_, seconds(t - case_t0_));
    return;
  }
  const std::string done =
      adaptive_ ? fmt::format("{} repeat(s) done (auto, at most {})", repeat_, repeats_)
                : fmt::format("{}/{} repeats done", repeat_, repeats_);
  std::string eta;
  if (repeat_ > 0) {
    // The repeats so far, each as long as their mean; the running one counts as begun.
    const double per = (repeat_t0_ - timed_t0_) / repeat_;
    eta = fmt::format(", case ETA {}{}", adaptive_ ? "at most " : "",
                      seconds(std::max(0.0, per * (repeats_ - repeat_) - (t - repeat_t0_))));
  }
  sayf(out_, "scalebench: {} {}, repeat {} running for {}, case running for {}{}\n", what_, done,
       repeat_ + 1, seconds(t - repeat_t0_), seconds(t - case_t0_), eta);
}

void Progress::on_record(const nlohmann::json& rec) {
  const std::string type = rec.value("type", "");
  if (type == "progress") {
    on_progress(rec);
  } else if (type == "case" && rec.contains("device_id")) {
    on_device(rec);
  } else if (type == "case") {
    ++finished_;
    finish();
    const auto& m = rec.contains("metrics") ? rec.at("metrics") : nlohmann::json::object();
    std::string figures;
    if (m.contains("median_s"))
      figures = fmt::format("  median {}  {}", seconds(m.value("median_s", 0.0)),
                            one_line(results::format_rate(m.value("throughput", 0.0),
                                                          m.value("throughput_unit", ""))));
    if (const auto st = rec.find("repeat_stop");
        st != rec.end() && st->is_object() && st->value("reason", "count") != "count") {
      if (st->contains("rounds"))  // an A/B run: its decision is the line before
        figures += fmt::format("  ({} repeats, {})", st->value("repeats", 0),
                               one_line(st->value("reason", "")));
      else
        figures += fmt::format("  ({} repeats, stopped by {}; median within +-{:.1f}%)",
                               st->value("repeats", 0), one_line(st->value("reason", "")),
                               100.0 * st->value("spread", 0.0));
    }
    const std::string status = rec.value("status", "?");
    const std::string msg = rec.value("message", "");
    sayf(out_, "scalebench: [{}/{}] {:<7} {}{}{}\n", finished_, total_, one_line(status),
         label(rec.value("id", "")), figures, msg.empty() ? "" : "  (" + one_line(msg) + ")");
    current_.clear();
  } else if (type == "start") {
    const auto& st = rec.at("startup");
    sayf(out_, "scalebench: runtime up: {} ranks ({} workers, {} on GPUs) in {}\n",
         rec.value("ranks", 0), rec.value("workers", 0), rec.value("gpu_workers", 0),
         seconds(st.value("total_s", 0.0)));
  }
}

void Progress::on_device(const nlohmann::json& rec) {
  const std::string planned = rec.value("planned_id", "");
  auto& recs = devices_[planned];
  recs.push_back(rec);
  const std::string status = rec.value("status", "?");
  if (status != "ok") {
    finish();
    const std::string msg = rec.value("message", "");
    sayf(out_, "scalebench: {:<7} {} {}{}\n", one_line(status), label(planned),
         one_line(rec.value("device_id", "")), msg.empty() ? "" : "  (" + one_line(msg) + ")");
  }
  const int devices = rec.value("devices", 1);
  if (static_cast<int>(recs.size()) < devices) return;
  ++finished_;
  finish();
  int ok = 0;
  double lo = NAN, hi = NAN;
  for (const auto& r : recs) {
    if (r.value("status", "") != "ok") continue;
    ++ok;
    const double m = r.contains("metrics") ? r["metrics"].value("median_s", NAN) : NAN;
    if (std::isfinite(m)) {
      lo = std::isfinite(lo) ? std::min(lo, m) : m;
      hi = std::isfinite(hi) ? std::max(hi, m) : m;
    }
  }
  const std::string figures =
      std::isfinite(lo) ? fmt::format("  medians {} to {}", seconds(lo), seconds(hi)) : "";
  sayf(out_, "scalebench: [{}/{}] {:<7} {}  {} device(s), {} ok{}\n", finished_, total_,
       ok == devices ? "ok" : "failed", label(planned), devices, ok, figures);
  devices_.erase(planned);
  current_.clear();
}

void Progress::finish() {
  if (tty_ && line_open_) {
    say(out_, "\r\033[K");
    line_open_ = false;
  }
}

}  // namespace sb
