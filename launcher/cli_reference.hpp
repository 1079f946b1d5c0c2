#pragma once
/// @file cli_reference.hpp
/// The command line's own reference, made from its CLI11 definitions (so it never drifts from
/// them): `--help` wrapped to fit 100 columns (HelpFormatter), a man page (scalebench.1) and
/// bash and zsh completion scripts (`scalebench completion bash|zsh|man`). The build writes the
/// three files with the built program and `cmake --install` installs them with the docs
/// (cmake/ScalebenchPackage.cmake).

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace sb {

/// The columns `--help` fits.
inline constexpr std::size_t kHelpColumns = 100;

/// CLI11's formatter with every description, footer and usage line word-wrapped to kHelpColumns.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter();
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_footer(const CLI::App* app) const override;
};

/// The man page of `app` (roff, man(7)): every subcommand with its options.
[[nodiscard]] std::string man_page(const CLI::App& app, const std::string& version);
/// A bash completion script for `app` (complete -F): subcommands, then their options, and the
/// values of options that take one of a few words.
[[nodiscard]] std::string bash_completion(const CLI::App& app);
/// A zsh completion script for `app` (#compdef scalebench, _arguments per subcommand).
[[nodiscard]] std::string zsh_completion(const CLI::App& app);

/// Registers `scalebench completion bash|zsh|man`, which prints one of the above.
void add_completion_command(CLI::App& app, int& exit_code, const std::string& version);

}  // namespace sb
