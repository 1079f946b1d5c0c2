// The run's reference files (reference_files.hpp).
#include "reference_files.hpp"

#include <algorithm>
#include <filesystem>

#include "scalebench/settings.hpp"

namespace fs = std::filesystem;

namespace sb {

std::string shipped_reference_dir() {
  if (const std::string dir = settings::reference_dir(); !dir.empty()) return dir;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path() / SB_REFERENCE_INSTALL_REL;
    if (fs::is_directory(installed, ec)) return fs::weakly_canonical(installed).string();
  }
  return fs::is_directory(SB_REFERENCE_SOURCE_DIR, ec) ? SB_REFERENCE_SOURCE_DIR : "";
}

results::ReferenceSet load_references(const std::vector<std::string>& files) {
  results::ReferenceSet set;
  for (const auto& f : files) results::read_references(f, set);
  const std::string dir = shipped_reference_dir();
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return set;
  std::vector<fs::path> shipped;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".toml") shipped.push_back(e.path());
  std::sort(shipped.begin(), shipped.end());
  for (const auto& p : shipped) results::read_references(p.string(), set);
  return set;
}

}  // namespace sb
