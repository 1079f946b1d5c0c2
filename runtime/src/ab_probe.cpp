#include "ab_probe.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/ab_protocol.hpp"
#include "scalebench/error.hpp"
#include "scalebench/plugins.hpp"
#include "scalebench/settings.hpp"
#include "scalebench/version.hpp"
#include "scalebench/workload.hpp"

namespace sb::detail {
namespace {

std::string flat(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

int run_ab_probe(int argc, char** argv) noexcept {
  try {
    settings::validate_all();  // the side's environment, as its job will see it
    for (int i = 2; i < argc; ++i) {
      if (std::strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) {
        (void)load_plugin(argv[++i]);
      } else {
        throw UsageError(
            fmt::format("scalebench-rank {}: unknown argument '{}'", ab::kProbeFlag, argv[i]));
      }
    }
    nlohmann::json names = nlohmann::json::array();
    for (const auto& w : workloads()) names.push_back(w.name);
    nlohmann::json plugins = nlohmann::json::array();
    for (const auto& p : loaded_plugins())
      plugins.push_back({{"path", p.path},
                         {"workloads", p.workloads},
                         {"api_version", p.api_version},
                         {"sha256", p.sha256}});
    const nlohmann::json out = {{"protocol", ab::kProtocol}, {"version", version()},
                                {"git_sha", git_sha()},
#ifdef NDEBUG
                                {"build_type", "release"},
#else
                                {"build_type", "debug"},
#endif
                                {"workloads", names},        {"plugins", plugins}};
    std::printf("%s\n", out.dump().c_str());
    return std::fflush(stdout) == 0 ? 0 : kExitEnvironment;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", flat(e.what()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", flat(e.what()).c_str());
    return kExitUsage;
  }
}

}  // namespace sb::detail
