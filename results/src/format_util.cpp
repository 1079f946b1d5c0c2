#include "format_util.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scalebench/printable.hpp"

namespace sb::results::detail {

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

std::string human_mhz(double mhz) {
  if (!std::isfinite(mhz)) return "-";
  if (std::abs(mhz) >= 1000.0) return fmt::format("{:.2f} GHz", mhz / 1000.0);
  return fmt::format("{:.0f} MHz", mhz);
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
  return one_line(out);  // other control characters shown escaped, never sent to a terminal
}

std::size_t display_width(const std::string& s) {
  std::size_t w = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++w;
  return w;
}

namespace {

/// Byte offset of code point `n` of `s` (s.size() when it has fewer).
std::size_t byte_of(const std::string& s, std::size_t n) {
  std::size_t cp = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (cp++ == n) return i;
  }
  return s.size();
}

constexpr const char* kEllipsis = "\xE2\x80\xA6";  // "…"

}  // namespace

std::string elide_middle(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  if (w <= width) return s;
  if (width <= 1) return width == 0 ? std::string() : kEllipsis;
  const std::size_t tail = (width - 1) / 2;
  const std::size_t head = width - 1 - tail;
  return s.substr(0, byte_of(s, head)) + kEllipsis + s.substr(byte_of(s, w - tail));
}

std::string elide_id(const std::string& s, std::size_t width) {
  if (display_width(s) <= width) return s;
  const std::size_t slash = s.find('/');
  const std::size_t second = slash == std::string::npos ? slash : s.find('/', slash + 1);
  const std::size_t head_end = std::min(second, s.find(' '));
  if (head_end == std::string::npos) return elide_middle(s, width);
  const std::string head = s.substr(0, head_end + 1);
  const std::size_t hw = display_width(head);
  if (hw + 5 > width) return elide_middle(s, width);  // too little room left for the rest
  return head + elide_middle(s.substr(head_end + 1), width - hw);
}

std::string elide_end(const std::string& s, std::size_t width) {
  if (display_width(s) <= width) return s;
  if (width == 0) return {};
  return s.substr(0, byte_of(s, width - 1)) + kEllipsis;
}

std::vector<std::string> wrap_words(const std::string& text, std::size_t width,
                                    const std::string& indent) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    const bool first = lines.empty();
    const std::size_t lead = first ? 0 : display_width(indent);
    if (!line.empty() && width > 0 &&
        lead + display_width(line) + 1 + display_width(word) > width) {
      lines.push_back((first ? "" : indent) + line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back((lines.empty() ? "" : indent) + line);
  return lines;
}

namespace {

template <typename T>
T at_or(const std::vector<T>& v, std::size_t i, T fallback) {
  return i < v.size() ? v[i] : fallback;
}

/// The fitting state of one table: which columns are shown and how wide each is.
struct Fitting {
  const std::vector<std::vector<std::string>>& rows;
  const AlignedLayout& layout;
  std::vector<std::size_t> natural, w;
  std::vector<bool> shown;

  Fitting(const std::vector<std::vector<std::string>>& r, const AlignedLayout& l)
      : rows(r), layout(l) {
    for (const auto& row : rows) {
      if (natural.size() < row.size()) natural.resize(row.size(), 0);
      for (std::size_t c = 0; c < row.size(); ++c)
        natural[c] = std::max(natural[c], display_width(row[c]));
    }
    w = natural;
    shown.assign(w.size(), true);
  }
  [[nodiscard]] std::size_t total() const {
    std::size_t t = 0, n = 0;
    for (std::size_t c = 0; c < w.size(); ++c)
      if (shown[c]) t += w[c] + (n++ > 0 ? 2 : 0);
    return t;
  }
  [[nodiscard]] bool fits() const { return layout.width == 0 || total() <= layout.width; }
  /// Cuts the elidable columns a character at a time, the widest first (so long ones end up
  /// alike), until the table fits or all are at `floor` (never below their header).
  void cut_to(std::size_t floor) {
    while (!fits()) {
      std::size_t widest = w.size();
      for (std::size_t c = 0; c < w.size(); ++c) {
        if (!shown[c] || !at_or(layout.elide, c, false)) continue;
        const std::size_t min_c = std::max(floor, display_width(rows.front()[c]));
        if (w[c] > min_c && (widest == w.size() || w[c] > w[widest])) widest = c;
      }
      if (widest == w.size()) return;
      --w[widest];
    }
  }
  std::vector<std::size_t> dropped_cols;  // in the order they were dropped
  void drop_rank(int r) {
    for (std::size_t c = 0; c < w.size(); ++c)
      if (shown[c] && at_or(layout.drop, c, 0) == r) {
        shown[c] = false;
        dropped_cols.push_back(c);
      }
  }
  void fit(std::vector<std::string>* dropped) {
    int max_rank = 0;
    for (int r : layout.drop) max_rank = std::max(max_rank, r);
    // Columns with nothing to say go first, and do not come back.
    std::size_t never_back = 0;
    if (!fits()) {
      drop_rank(-1);
      never_back = dropped_cols.size();
    }
    for (int r = 1; r <= max_rank && !fits(); ++r) {
      if (r > layout.cheap_drops) cut_to(layout.soft_floor);
      if (!fits()) drop_rank(r);
    }
    cut_to(layout.soft_floor);
    cut_to(layout.hard_floor);
    // A column dropped with others of its rank may fit again on its own: the last dropped first.
    for (std::size_t k = dropped_cols.size(); k > never_back; --k) {
      const std::size_t c = dropped_cols[k - 1];
      shown[c] = true;
      if (!fits()) shown[c] = false;
    }
    if (dropped != nullptr)
      for (std::size_t c : dropped_cols)
        if (!shown[c]) dropped->push_back(rows.front()[c]);
  }
};

}  // namespace

namespace {

std::string render_aligned_safe(const std::vector<std::vector<std::string>>& rows,
                                const AlignedLayout& layout, std::vector<std::string>* dropped) {
  Fitting f(rows, layout);
  f.fit(dropped);
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    bool first = true;
    std::size_t last = 0;  // the last shown column of this row: no trailing padding
    for (std::size_t c = 0; c < rows[i].size(); ++c)
      if (f.shown[c]) last = c;
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      if (!f.shown[c]) continue;
      std::string cell = rows[i][c];
      if (display_width(cell) > f.w[c])
        cell = c == 0 ? elide_id(cell, f.w[c]) : elide_end(cell, f.w[c]);
      const std::string pad(f.w[c] - display_width(cell), ' ');
      if (!first) line += "  ";
      first = false;
      line += at_or(layout.right, c, false) ? pad + cell : cell + (c < last ? pad : "");
    }
    out += line + '\n';
    if (i == 0) out += std::string(f.total(), '-') + '\n';
  }
  return out;
}

}  // namespace

std::string render_aligned(const std::vector<std::vector<std::string>>& rows,
                           const AlignedLayout& layout, std::vector<std::string>* dropped) {
  if (rows.empty()) return {};
  // Cells hold names from reports (case ids, hosts, messages): control characters are shown
  // escaped before the widths are measured, so no cell moves the cursor or breaks a line.
  std::vector<std::vector<std::string>> safe = rows;
  for (auto& row : safe)
    for (auto& cell : row) cell = one_line(cell);
  return render_aligned_safe(safe, layout, dropped);
}

std::string render_aligned(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right, std::size_t width) {
  AlignedLayout layout;
  layout.right = right;
  layout.width = width;
  for (std::size_t c = 0; c < right.size() || (!rows.empty() && c < rows.front().size()); ++c)
    layout.elide.push_back(!at_or(right, c, false));
  return render_aligned(rows, layout);
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
