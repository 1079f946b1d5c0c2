// One-line rendering of text from outside (printable.hpp).
#include "scalebench/printable.hpp"

namespace sb {
namespace {

void escape_into(std::string& out, std::string_view text, bool escape_backslash,
                 bool keep_layout = false) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    // A kept line break or tab is written as it is, by the last branch.
    const bool layout = keep_layout && (c == '\n' || c == '\t');
    if (c == '\n' && !layout) {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t' && !layout) {
      out += "\\t";
    } else if (c == '\\' && escape_backslash) {
      out += "\\\\";
    } else if ((u < 0x20 && !layout) || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else if (u == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // U+0080..U+009F in UTF-8: C1 controls (U+009B is CSI on terminals that take 8-bit ones).
      const auto cp = static_cast<unsigned char>(text[++i]);
      out += "\\u00";
      out += kHex[cp >> 4];
      out += kHex[cp & 0xf];
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_chars) {
  const std::string_view shown = text.substr(0, max_chars);
  std::string out;
  out.reserve(shown.size() + 16);
  escape_into(out, shown, true);
  if (text.size() > shown.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  escape_into(out, text, false);
  return out;
}

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  escape_into(out, text, false, true);
  return out;
}

}  // namespace sb
