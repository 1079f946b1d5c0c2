#pragma once
/// @file format_util.hpp
/// (private) Number formatting, escaping and aligned tables for the text formats.

#include <cstddef>
#include <string>
#include <vector>

#include "scalebench/byte_size.hpp"
#include "scalebench/duration_text.hpp"

namespace sb::results::detail {

/// Durations: sb::human_seconds (scalebench/duration_text.hpp).
using sb::human_seconds;
/// "1.92 G draws/s": an SI prefix in front of the unit; "-" for NaN.
std::string human_rate(double v, const std::string& unit);
/// "4.21x"; "-" for NaN.
std::string human_ratio(double r);
/// "81.2%" of a fraction; "-" for NaN.
std::string human_percent(double f);
/// Shortest round-trip text of a double ("" for NaN): for csv.
std::string plain_number(double v);

std::string csv_field(const std::string& s);
std::string html_escape(const std::string& s);
/// XML 1.0 text: escapes markup and drops characters XML cannot hold.
std::string xml_escape(const std::string& s);
std::string markdown_cell(const std::string& s);

// Sizes: sb::human_bytes (scalebench/byte_size.hpp).
/// "2.40 GHz", "900 MHz" of a frequency in MHz; "-" for NaN.
std::string human_mhz(double mhz);

/// Display width of UTF-8 text (code points; the text is ASCII plus a few symbols).
std::size_t display_width(const std::string& s);
/// `s` cut to `width` code points with "…" in the middle (the start and the end kept).
std::string elide_middle(const std::string& s, std::size_t width);
/// A case id cut to `width` code points: its head (up to the second '/' or the first ' ': the
/// workload and path of "workload/path/k=v,.." or "workload/path k=v,..") kept whole when there
/// is room, the rest cut in the middle; else elide_middle.
std::string elide_id(const std::string& s, std::size_t width);
/// `s` cut to `width` code points, ending in "…".
std::string elide_end(const std::string& s, std::size_t width);
/// Words of `text` on lines of at most `width` code points (0: one line); lines after the first
/// start with `indent`. A word longer than a line stays whole.
std::vector<std::string> wrap_words(const std::string& text, std::size_t width,
                                    const std::string& indent = "");

/// How a column-aligned table fits a width. Columns past the end of a vector take the default.
struct AlignedLayout {
  std::vector<bool> right;  ///< right-align column c
  /// Narrow widths: 0 keeps column c; k > 0 drops it as the k-th when the table does not fit;
  /// -1 drops it first and for good (a column with nothing in it).
  std::vector<int> drop;
  /// Columns whose cells may be cut ("…") to fit; the first column as a case id (elide_id: its
  /// workload, path and end kept), the others at the end.
  std::vector<bool> elide;
  std::size_t width = 0;        ///< 0: no limit (the full table)
  std::size_t soft_floor = 32;  ///< cut columns down to this before dropping rank > cheap_drops
  int cheap_drops = 0;          ///< drop ranks 1..cheap_drops before cutting anything
  std::size_t hard_floor = 12;  ///< cut columns down to this as the last resort
};

/// Column-aligned text table; row 0 is the header (underlined). With layout.width > 0 the table
/// is fitted to that many columns (dropping and cutting columns as the layout allows; a table
/// that cannot fit keeps its floors); `dropped` receives the headers of dropped columns.
std::string render_aligned(const std::vector<std::vector<std::string>>& rows,
                           const AlignedLayout& layout,
                           std::vector<std::string>* dropped = nullptr);
/// render_aligned with right-aligned columns `right`; at a `width` (0: none) the left-aligned
/// columns are cut to fit, the widest first.
std::string render_aligned(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right, std::size_t width = 0);
/// GitHub-flavoured Markdown table; row 0 is the header.
std::string render_markdown(const std::vector<std::vector<std::string>>& rows,
                            const std::vector<bool>& right);

}  // namespace sb::results::detail
