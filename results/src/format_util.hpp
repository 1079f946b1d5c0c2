#pragma once
/// @file format_util.hpp
/// (private) Number formatting, escaping and aligned tables for the text formats.

#include <string>
#include <vector>

namespace sb::results::detail {

/// "1.234 s", "12.3 ms", "45.6 us", "-" for NaN.
std::string human_seconds(double s);
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

/// Column-aligned text table; row 0 is the header; right[c] right-aligns column c.
std::string render_aligned(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right);
/// GitHub-flavoured Markdown table; row 0 is the header.
std::string render_markdown(const std::vector<std::vector<std::string>>& rows,
                            const std::vector<bool>& right);

}  // namespace sb::results::detail
