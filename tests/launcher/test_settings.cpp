// The settings table (runtime/include/scalebench/settings.hpp): documented in docs/settings.md
// row by row, validated with one line naming the variable, recorded when set, and the only
// place scalebench reads its environment.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "scalebench/settings.hpp"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string without_backticks(std::string s) {
  std::erase(s, '`');
  return s;
}

/// Sets a variable for the scope of the object.
struct Env {
  std::string name;
  Env(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~Env() { ::unsetenv(name.c_str()); }
};

TEST(Settings, EveryRowIsDocumentedAsItIsDeclared) {
  const std::string doc = read(fs::path(SB_SOURCE_DIR) / "docs/settings.md");
  std::map<std::string, std::vector<std::string>> rows;  // name -> default, accepts, meaning
  const std::regex row(R"(^\| `(SCALEBENCH_[A-Z0-9_]+)` \| (.*) \| (.*) \| (.*) \|$)");
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows[m[1]] = {m[2], m[3], m[4]};
  }
  for (const auto& s : sb::settings::all()) {
    const auto it = rows.find(std::string(s.name));
    ASSERT_NE(it, rows.end()) << s.name << " is not in docs/settings.md";
    EXPECT_EQ(it->second[0], sb::settings::default_text(s)) << s.name;
    EXPECT_EQ(it->second[1], s.accepts) << s.name;
    EXPECT_EQ(without_backticks(it->second[2]), without_backticks(std::string(s.meaning)))
        << s.name;
    rows.erase(it);
  }
  for (const auto& [name, cells] : rows) ADD_FAILURE() << name << " is documented but not declared";
}

TEST(Settings, BadValuesAreOneLineNamingTheVariable) {
  {
    const Env e("SCALEBENCH_MPI_TUNING", "yes");
    try {
      (void)sb::settings::mpi_tuning();
      FAIL() << "accepted";
    } catch (const sb::UsageError& err) {
      const std::string msg = err.what();
      EXPECT_NE(msg.find("SCALEBENCH_MPI_TUNING='yes'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("0 or 1"), std::string::npos) << msg;
    }
    EXPECT_THROW(sb::settings::validate_all(), sb::UsageError);
  }
  {
    const Env e("SCALEBENCH_HOST_MEMORY_BYTES", "12\nGB");
    try {
      (void)sb::settings::host_memory_bytes();
      FAIL() << "accepted";
    } catch (const sb::UsageError& err) {
      EXPECT_EQ(std::string(err.what()).find('\n'), std::string::npos) << err.what();
    }
  }
  {
    const Env e("SCALEBENCH_EARLY_GPU", "maybe");
    EXPECT_THROW((void)sb::settings::early_gpu(), sb::UsageError);
  }
  EXPECT_NO_THROW(sb::settings::validate_all());
}

TEST(Settings, DefaultsAndValues) {
  EXPECT_TRUE(sb::settings::mpi_tuning());
  EXPECT_FALSE(sb::settings::keep_workdir());
  EXPECT_EQ(sb::settings::early_gpu(), "auto");
  EXPECT_EQ(sb::settings::submit_program("slurm"), "sbatch");
  EXPECT_EQ(sb::settings::submit_program("lsf"), "bsub");
  EXPECT_EQ(sb::settings::submit_program("sge"), "qsub");
  const Env a("SCALEBENCH_MPIEXEC_ARGS", "  --mca  btl self,tcp ");
  EXPECT_EQ(sb::settings::mpiexec_args(), (std::vector<std::string>{"--mca", "btl", "self,tcp"}));
  const Env b("SCALEBENCH_CACHE_DIR", "none");
  EXPECT_EQ(sb::settings::cache_dir(), "");
}

TEST(Settings, TheSetOnesAreRecorded) {
  const Env e("SCALEBENCH_MPI_TUNING", "0");
  const auto set = sb::settings::set_in_environment();
  EXPECT_EQ(set.value("SCALEBENCH_MPI_TUNING", ""), "0");
  EXPECT_FALSE(set.contains("SCALEBENCH_KEEP_WORKDIR"));
}

TEST(Settings, NothingElseReadsTheEnvironment) {
  const std::regex getenv_call(R"(\b(std::)?(secure_)?getenv\s*\()");
  for (const char* dir : {"launcher", "runtime", "workloads", "results"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(SB_SOURCE_DIR) / dir)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh" && ext != ".h") continue;
      if (e.path().filename() == "settings.cpp") continue;
      std::istringstream lines(read(e.path()));
      int n = 0;
      for (std::string line; std::getline(lines, line);) {
        ++n;
        const auto comment = line.find("//");
        const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
        EXPECT_FALSE(std::regex_search(code, getenv_call))
            << e.path().string() << ":" << n << ": " << line
            << " (read the environment through scalebench/settings.hpp)";
      }
    }
  }
}

}  // namespace
