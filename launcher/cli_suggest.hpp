#pragma once
/// @file cli_suggest.hpp
/// What a refused command line says: CLI11's message in one line, and for a misspelt
/// subcommand or option the nearest known name ("unknown subcommand 'reprot'; did you mean
/// `report`?"), as git and cargo answer. main.cpp prints it; submit's check of the run options
/// after `--` (submit_check.hpp) says the same.

#include <string>
#include <vector>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace sb {

/// The name of `names` nearest to `word` (edit distance with transpositions, at most a third
/// of the word and never more than 3; or the one name `word` starts), "" when none is near.
[[nodiscard]] std::string nearest_name(const std::string& word,
                                       const std::vector<std::string>& names);

/// One line for a command line that `app` refused with `error` (after app.parse threw it),
/// ending with where to read more ("see scalebench run --help"). `program` starts the
/// command names ("scalebench").
[[nodiscard]] std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& error,
                                              const std::string& program);

}  // namespace sb
