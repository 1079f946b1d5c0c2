// The workload registry and the plugin loader (scalebench/plugins.hpp): the built-in workloads
// register through SB_REGISTER_WORKLOAD like a plugin's, and each broken plugin (fixtures built
// by tests/plugin/CMakeLists.txt) is refused with one line naming the file and what is wrong,
// leaving the registry as it was. Each test runs in a process of its own (gtest_discover_tests).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/scratch_dir.hpp"
#include "registry.hpp"
#include "scalebench/api_version.hpp"
#include "scalebench/error.hpp"
#include "scalebench/file_sha256.hpp"
#include "scalebench/plugins.hpp"
#include "scalebench/workload.hpp"
#include "scalebench/workload_registration.hpp"

namespace {

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& w : sb::workloads()) out.push_back(w.name);
  return out;
}

/// The message load_plugin throws for `path`, as sb::UsageError (exit code 2).
std::string refusal(const std::string& path) {
  try {
    (void)sb::load_plugin(path);
  } catch (const sb::UsageError& e) {
    EXPECT_EQ(e.exit_code(), sb::kExitUsage);
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << path << " was loaded";
  return {};
}

/// load_plugin refuses `path` with a line holding `words`, and the registry is unchanged.
void expect_refused(const std::string& path, const std::string& words) {
  const auto before = names();
  const std::string what = refusal(path);
  EXPECT_NE(what.find("plugin " + path), std::string::npos) << what;
  EXPECT_NE(what.find(words), std::string::npos) << what;
  EXPECT_EQ(names(), before);
  EXPECT_TRUE(sb::loaded_plugins().empty());
}

TEST(Registry, BuiltInWorkloadsRegisterThroughTheMacroInSuiteOrder) {
  // This program's registrations are those of workloads/<folder>/ (linked whole).
  std::vector<std::string> files;
  for (const sb::WorkloadRegistration* r = sb::detail::RegistrationList::head; r != nullptr;
       r = r->next) {
    ASSERT_NE(r->make, nullptr);
    files.emplace_back(r->file);
  }
  ASSERT_GE(files.size(), 3U);
  EXPECT_NE(files[0].find("workloads/subset_mean/"), std::string::npos) << files[0];
  EXPECT_NE(files[1].find("workloads/svd/"), std::string::npos) << files[1];
  EXPECT_NE(files[2].find("workloads/groupby/"), std::string::npos) << files[2];
  const auto all = names();
  ASSERT_EQ(all.size(), files.size());
  EXPECT_EQ(std::vector<std::string>(all.begin(), all.begin() + 3),
            (std::vector<std::string>{"subset-mean", "svd", "groupby"}));
  for (const auto& w : sb::workloads()) {
    EXPECT_EQ(sb::detail::workload_problem(w), "") << w.name;
    EXPECT_EQ(sb::plugin_of(w.name), nullptr) << w.name;
  }
  // datagen's exporters are members of the workloads that generate data, not a name dispatch.
  for (const char* name : {"subset-mean", "svd", "groupby"})
    EXPECT_TRUE(static_cast<bool>(sb::find_workload(name).export_inputs)) << name;
  // The symbols a plugin exports are this program's too, of this API version.
  EXPECT_EQ(scalebench_plugin_api_version(), SCALEBENCH_API_VERSION);
  EXPECT_EQ(scalebench_plugin_workloads(), sb::detail::RegistrationList::head);
}

TEST(Registry, UnknownWorkloadNamesTheKnownOnesAndThePluginOption) {
  try {
    (void)sb::find_workload("fft");
    FAIL() << "found";
  } catch (const sb::UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown workload 'fft'"), std::string::npos) << what;
    EXPECT_NE(what.find("subset-mean, svd, groupby"), std::string::npos) << what;
    EXPECT_NE(what.find("--plugin"), std::string::npos) << what;
  }
}

TEST(Registry, AppendRefusesClashesAndMalformedWorkloadsAtomically) {
  const auto before = names();
  sb::Workload ok = sb::find_workload("svd");
  ok.name = "svd-copy";
  sb::Workload clash = ok;
  clash.name = "groupby";
  EXPECT_THROW(sb::detail::append_workloads({ok, clash}, "test"), sb::UsageError);
  EXPECT_EQ(names(), before);  // nothing of the batch was appended
  sb::Workload no_expand = ok;
  no_expand.expand = nullptr;
  EXPECT_NE(sb::detail::workload_problem(no_expand).find("expand"), std::string::npos);
  sb::Workload bad = ok;
  bad.name = "-dash-first";
  EXPECT_NE(sb::detail::workload_problem(bad).find("a name must start"), std::string::npos);
  sb::detail::append_workloads({ok}, "test");
  EXPECT_EQ(names().back(), "svd-copy");
}

TEST(PluginLoader, LoadsAGoodPluginOnceAndRecordsIt) {
  const auto before = names();
  const sb::PluginInfo& info = sb::load_plugin(SB_FIXTURE_GOOD);
  EXPECT_EQ(info.path, std::filesystem::canonical(SB_FIXTURE_GOOD).string());
  EXPECT_EQ(info.workloads, (std::vector<std::string>{"fixture-a", "fixture-b"}));
  EXPECT_EQ(info.api_version, SCALEBENCH_API_VERSION);
  EXPECT_EQ(info.sha256, sb::detail::file_sha256(SB_FIXTURE_GOOD));
  auto expected = before;
  expected.emplace_back("fixture-a");
  expected.emplace_back("fixture-b");
  EXPECT_EQ(names(), expected);
  EXPECT_EQ(sb::find_workload("fixture-b").description, "loader test fixture");
  ASSERT_NE(sb::plugin_of("fixture-a"), nullptr);
  EXPECT_EQ(sb::plugin_of("fixture-a")->path, info.path);
  EXPECT_EQ(sb::plugin_of("svd"), nullptr);
  // Loading the same file again, by another spelling of its path, does nothing.
  const std::string again = std::filesystem::path(SB_FIXTURE_GOOD).parent_path().string() + "/./" +
                            std::filesystem::path(SB_FIXTURE_GOOD).filename().string();
  EXPECT_EQ(&sb::load_plugin(again), &info);
  EXPECT_EQ(names(), expected);
  EXPECT_EQ(sb::loaded_plugins().size(), 1U);
}

TEST(PluginLoader, RefusesACopyOfALoadedPlugin) {
  sb::test_support::TempDir dir("plugin-copy-");
  const std::string copy = (dir.path / "copy.so").string();
  std::filesystem::copy_file(SB_FIXTURE_GOOD, copy);
  (void)sb::load_plugin(SB_FIXTURE_GOOD);
  const auto before = names();
  const std::string what = refusal(copy);
  EXPECT_NE(what.find("workload 'fixture-a' is already registered by plugin "), std::string::npos)
      << what;
  EXPECT_EQ(names(), before);
}

TEST(PluginLoader, RefusesAMissingFileAndAFolder) {
  expect_refused("/nonexistent/libnothing.so", "no such file");
  sb::test_support::TempDir dir("plugin-folder-");
  expect_refused(dir.path.string(), "not a file");
}

TEST(PluginLoader, RefusesAFileThatIsNotALibrary) {
  sb::test_support::TempDir dir("plugin-text-");
  const std::string path = (dir.path / "libtext.so").string();
  std::ofstream(path) << "not a shared library\n";
  expect_refused(path, "cannot be loaded");
}

TEST(PluginLoader, RefusesALibraryWithoutThePluginSymbols) {
  expect_refused(SB_FIXTURE_NO_SYMBOLS,
                 "not a scalebench plugin: it has no symbol scalebench_plugin_api_version");
}

TEST(PluginLoader, RefusesAnotherApiVersionNamingBoth) {
  expect_refused(SB_FIXTURE_BAD_VERSION, "built against workload API version " +
                                             std::to_string(SCALEBENCH_API_VERSION + 1) +
                                             ", but this scalebench has " + "version " +
                                             std::to_string(SCALEBENCH_API_VERSION));
}

TEST(PluginLoader, RefusesAMissingSymbolOfTheApi) {
  expect_refused(SB_FIXTURE_UNDEFINED_SYMBOL,
                 "undefined symbol: sb::function_of_another_api(int) (scalebench has no such "
                 "function");
}

TEST(PluginLoader, RefusesANameOfABuiltInWorkload) {
  expect_refused(SB_FIXTURE_CLASH, "workload 'svd' is already registered by scalebench (built-in)");
}

TEST(PluginLoader, RefusesANameRegisteredTwice) {
  expect_refused(SB_FIXTURE_TWICE, "registers workload 'fixture-twice' twice");
}

TEST(PluginLoader, RefusesABadName) {
  expect_refused(SB_FIXTURE_BAD_NAME, "a name must start with a letter or digit");
}

TEST(PluginLoader, RefusesAWorkloadWithoutARequiredMember) {
  expect_refused(SB_FIXTURE_INCOMPLETE, "leaves the required member make_worker empty");
}

TEST(PluginLoader, RefusesAWorkloadThatCannotBeDescribed) {
  expect_refused(SB_FIXTURE_THROWS, "describing its workloads failed: fixture: cannot describe");
}

TEST(PluginLoader, RefusesAPluginWithoutWorkloads) {
  expect_refused(SB_FIXTURE_EMPTY, "registers no workload");
}

TEST(PluginLoader, RefusesAPluginThatCrashesAbortsOrExitsWhileLoading) {
  // Tried in a child process first: this process lives on, the registry untouched.
  expect_refused(SB_FIXTURE_CRASH_SEGV, "crashed while loading: SIGSEGV (Segmentation fault)");
  expect_refused(SB_FIXTURE_CRASH_ABORT,
                 "crashed while loading: SIGABRT (Aborted) (fixture: giving up while loading)");
  expect_refused(SB_FIXTURE_CRASH_EXIT, "ended the program while loading (it called exit(0))");
}

TEST(FileSha256, MatchesTheFipsExamples) {
  EXPECT_EQ(sb::detail::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sb::detail::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sb::detail::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Across the 64 KiB reads of a file: a million 'a'.
  sb::test_support::TempDir dir("sha256-");
  const std::string path = (dir.path / "a.bin").string();
  std::ofstream(path, std::ios::binary) << std::string(1000000, 'a');
  EXPECT_EQ(sb::detail::file_sha256(path),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_THROW((void)sb::detail::file_sha256((dir.path / "none").string()), sb::UsageError);
}

}  // namespace
