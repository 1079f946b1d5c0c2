#include "format_util.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace sb::results::detail {

std::string human_seconds(double s) {
  if (!std::isfinite(s)) return "-";
  const double a = std::abs(s);
  if (a >= 1.0) return fmt::format("{:.3f} s", s);
  if (a >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  if (a >= 1e-6) return fmt::format("{:.2f} us", s * 1e6);
  if (a == 0.0) return "0 s";
  return fmt::format("{:.1f} ns", s * 1e9);
}

std::string human_rate(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int p = 0;
  double x = v;
  while (std::abs(x) >= 1000.0 && p < 6) {
    x /= 1000.0;
    ++p;
  }
  const std::string digits = std::abs(x) < 10.0    ? fmt::format("{:.2f}", x)
                             : std::abs(x) < 100.0 ? fmt::format("{:.1f}", x)
                                                   : fmt::format("{:.0f}", x);
  if (unit.empty()) return digits + prefixes[p];
  // SI units take the prefix directly (GB/s, Tflop/s); counted things get a space (M draws/s)
  const bool si = unit.rfind("B/", 0) == 0 || unit == "B" || unit.rfind("flop", 0) == 0 ||
                  unit.rfind("FLOP", 0) == 0 || unit.rfind("Hz", 0) == 0;
  if (si || p == 0) return fmt::format("{} {}{}", digits, prefixes[p], unit);
  return fmt::format("{} {} {}", digits, prefixes[p], unit);
}

std::string human_ratio(double r) {
  if (!std::isfinite(r)) return "-";
  if (r >= 100.0) return fmt::format("{:.0f}x", r);
  if (r >= 10.0) return fmt::format("{:.1f}x", r);
  return fmt::format("{:.2f}x", r);
}

std::string human_percent(double f) {
  if (!std::isfinite(f)) return "-";
  const double p = f * 100.0;
  if (std::abs(p) >= 10.0 || p == 0.0) return fmt::format("{:.1f}%", p);
  return fmt::format("{:.2g}%", p);
}

std::string plain_number(double v) {
  if (std::isnan(v)) return "";
  return fmt::format("{}", v);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

/// The five markup characters as entities (the apostrophe as `apos`); control characters other
/// than tab and line breaks dropped when `drop_controls` (XML 1.0 forbids them).
std::string escape_markup(const std::string& s, const char* apos, bool drop_controls) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (drop_controls && u < 0x20 && c != '\t' && c != '\n' && c != '\r') continue;
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += apos;
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string html_escape(const std::string& s) {
  return escape_markup(s, "&#39;", false);
}

std::string xml_escape(const std::string& s) {
  return escape_markup(s, "&apos;", true);
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

namespace {
/// Display width of UTF-8 text (code points; good enough for the ASCII we print).
std::size_t width(const std::string& s) {
  std::size_t w = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++w;
  return w;
}
}  // namespace

std::string render_aligned(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right) {
  std::vector<std::size_t> w;
  for (const auto& r : rows) {
    if (w.size() < r.size()) w.resize(r.size(), 0);
    for (std::size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], width(r[c]));
  }
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      const std::string& cell = rows[i][c];
      const std::string pad(w[c] - width(cell), ' ');
      if (c > 0) line += "  ";
      const bool r = c < right.size() && right[c];
      line += r ? pad + cell : cell + (c + 1 < rows[i].size() ? pad : "");
    }
    out += line + '\n';
    if (i == 0) {
      std::size_t total = 0;
      for (std::size_t c = 0; c < w.size(); ++c) total += w[c] + (c > 0 ? 2 : 0);
      out += std::string(total, '-') + '\n';
    }
  }
  return out;
}

std::string render_markdown(const std::vector<std::vector<std::string>>& rows,
                            const std::vector<bool>& right) {
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += '|';
    for (const auto& cell : rows[i]) out += ' ' + markdown_cell(cell) + " |";
    out += '\n';
    if (i == 0) {
      out += '|';
      for (std::size_t c = 0; c < rows[i].size(); ++c)
        out += (c < right.size() && right[c]) ? "---:|" : "---|";
      out += '\n';
    }
  }
  return out;
}

}  // namespace sb::results::detail
