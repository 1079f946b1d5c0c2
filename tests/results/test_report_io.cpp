// Round trip, crash safety and bad input files of the HDF5 report (schema version 1).

#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::read_report;
using sb::results::write_report;
using sb::results::test::make_model;
using sb::results::test::TempDir;
namespace fs = std::filesystem;

/// Runs `fn`, expects sb::UsageError, returns its one-line message.
template <class Fn>
std::string usage_error(Fn fn) {
  try {
    fn();
  } catch (const sb::UsageError& e) {
    EXPECT_EQ(e.exit_code(), sb::kExitUsage);
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected sb::UsageError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected sb::UsageError, nothing thrown";
  return {};
}

std::vector<std::string> temp_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos)
      out.push_back(e.path().string());
  return out;
}

TEST(ReportIo, RoundTripKeepsEveryKindOfField) {
  TempDir dir("report-roundtrip");
  const json model = make_model();
  const std::string path = dir.file("r.h5");
  write_report(model, path);
  const json back = read_report(path);
  EXPECT_EQ(back, model) << "differences: " << json::diff(model, back).dump(1);
  EXPECT_TRUE(temp_files(dir.path).empty());
}

TEST(ReportIo, RoundTripOfAMinimalModelAddsTheSchemaVersion) {
  TempDir dir("report-minimal");
  const std::string path = dir.file("m.h5");
  write_report(json::object(), path);
  const json back = read_report(path);
  EXPECT_EQ(back["attrs"]["schema_version"], sb::results::kSchemaVersion);
  EXPECT_EQ(back["cases"], json::array());
  EXPECT_EQ(back["system"], json::object());
}

TEST(ReportIo, WritingOverAnExistingReportReplacesIt) {
  TempDir dir("report-replace");
  const std::string path = dir.file("r.h5");
  json a = make_model();
  write_report(a, path);
  a["attrs"]["preset"] = "small";
  a["cases"].erase(a["cases"].begin());
  write_report(a, path);
  const json back = read_report(path);
  EXPECT_EQ(back["attrs"]["preset"], "small");
  EXPECT_EQ(back["cases"].size(), a["cases"].size());
}

TEST(ReportIo, FailedWriteLeavesTheOldReportUntouched) {
  TempDir dir("report-failed-write");
  const std::string path = dir.file("r.h5");
  const json good = make_model();
  write_report(good, path);
  const auto bytes_before = fs::file_size(path);

  json bad = make_model();
  bad["attrs"]["preset"] = "bad";
  bad["cases"].push_back({{"index", 9}, {"status", "ok"}});  // no workload/path: fails mid-write
  const std::string msg = usage_error([&] { write_report(bad, path); });
  EXPECT_NE(msg.find("case 6"), std::string::npos) << msg;

  EXPECT_EQ(fs::file_size(path), bytes_before);
  EXPECT_EQ(read_report(path), good);
  EXPECT_TRUE(temp_files(dir.path).empty()) << "the temporary file must be removed";
}

TEST(ReportIo, KilledWriterNeverLeavesAnInvalidReport) {
  TempDir dir("report-killed");
  const std::string path = dir.file("r.h5");
  json old_model = make_model();
  write_report(old_model, path);
  json new_model = make_model();
  new_model["attrs"]["preset"] = "new";
  // a bigger model so that a write takes a while
  for (auto& c : new_model["cases"]) c["task_events"] = sb::results::test::task_events(2, 4000);

  for (int round = 0; round < 6; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        for (;;) write_report(new_model, path);
      } catch (...) {
      }
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + 17 * round));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    // Whenever the kill landed, the report on disk is complete: the old or the new one.
    const json back = read_report(path);
    const std::string preset = back["attrs"]["preset"].get<std::string>();
    EXPECT_TRUE(preset == "tiny" || preset == "new") << preset;
    EXPECT_EQ(back["cases"].size(), old_model["cases"].size());
    for (const auto& t : temp_files(dir.path)) fs::remove(t);  // the killed writer's leftovers
  }
}

TEST(ReportIo, UnwritableFolderIsAnEnvironmentErrorNamingPathAndErrno) {
  try {
    write_report(make_model(), "/nonexistent-folder-scalebench/x/r.h5");
    FAIL() << "no error";
  } catch (const sb::results::ReportWriteError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.exit_code(), sb::kExitEnvironment);
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_NE(msg.find("/nonexistent-folder-scalebench/x/r.h5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(errno 2)"), std::string::npos) << msg;
  }
}

TEST(ReportIo, NeverReplacesAnythingButARegularFile) {
  TempDir dir("report-special");
  const std::string fifo = dir.file("pipe.h5");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string msg = usage_error([&] { write_report(make_model(), fifo); });
  EXPECT_NE(msg.find("not a regular file"), std::string::npos) << msg;
  EXPECT_TRUE(fs::is_fifo(fifo));
  msg = usage_error([&] { write_report(make_model(), dir.path.string()); });
  EXPECT_NE(msg.find("not a regular file"), std::string::npos) << msg;
  EXPECT_TRUE(temp_files(dir.path).empty());

  // a symlink is followed: the link stays, its target gets the new report
  const std::string real = dir.file("real.h5"), link = dir.file("link.h5");
  json m = make_model();
  write_report(m, real);
  fs::create_symlink(real, link);
  m["attrs"]["preset"] = "linked";
  write_report(m, link);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_report(real)["attrs"]["preset"], "linked");
}

TEST(ReportIo, MissingFile) {
  const std::string msg = usage_error([] { (void)read_report("/nonexistent/report.h5"); });
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
}

TEST(ReportIo, NotHdf5) {
  TempDir dir("report-not-hdf5");
  const std::string path = dir.file("notes.h5");
  std::ofstream(path) << "this is not an HDF5 file\n";
  std::string msg = usage_error([&] { (void)read_report(path); });
  EXPECT_NE(msg.find("not an HDF5 file"), std::string::npos) << msg;

  const std::string empty = dir.file("empty.h5");
  std::ofstream{empty};
  msg = usage_error([&] { (void)read_report(empty); });
  EXPECT_NE(msg.find("not an HDF5 file"), std::string::npos) << msg;

  msg = usage_error([&] { (void)read_report(dir.path.string()); });
  EXPECT_NE(msg.find("folder"), std::string::npos) << msg;
}

TEST(ReportIo, TruncatedFile) {
  TempDir dir("report-truncated");
  const std::string path = dir.file("r.h5");
  write_report(make_model(), path);
  for (double keep : {0.5, 0.9, 0.99}) {
    const std::string cut = dir.file("cut.h5");
    fs::copy_file(path, cut, fs::copy_options::overwrite_existing);
    fs::resize_file(cut,
                    static_cast<std::uintmax_t>(static_cast<double>(fs::file_size(path)) * keep));
    const std::string msg = usage_error([&] { (void)read_report(cut); });
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  }
}

/// Replaces the root attribute schema_version of an existing file (HDF5 C API directly).
void set_schema_version(const std::string& path, long long version, bool remove_only = false) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  ASSERT_GE(H5Adelete(f, "schema_version"), 0);
  if (!remove_only) {
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(f, "schema_version", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(a, 0);
    ASSERT_GE(H5Awrite(a, H5T_NATIVE_LLONG, &version), 0);
    H5Aclose(a);
    H5Sclose(space);
  }
  H5Fclose(f);
}

TEST(ReportIo, OtherSchemaVersion) {
  TempDir dir("report-schema");
  const std::string path = dir.file("r.h5");
  write_report(make_model(), path);
  set_schema_version(path, 2);
  const std::string msg = usage_error([&] { (void)read_report(path); });
  EXPECT_EQ(msg, "report " + path + " has schema version 2; this scalebench reads version 1");

  set_schema_version(path, 0, true);
  const std::string msg2 = usage_error([&] { (void)read_report(path); });
  EXPECT_NE(msg2.find("not a scalebench report"), std::string::npos) << msg2;
}

TEST(ReportIo, H5dumpReadsTheReport) {
  const std::string h5dump = SB_H5DUMP;
  if (h5dump.empty() || !fs::exists(h5dump)) GTEST_SKIP() << "h5dump not installed (hdf5-tools)";
  TempDir dir("report-h5dump");
  const std::string path = dir.file("r.h5");
  write_report(make_model(), path);
  const std::string out = dir.file("dump.txt");
  const std::string cmd = h5dump + " '" + path + "' > '" + out + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* needle :
       {"schema_version", "GROUP \"0000_subset-mean_single-cpu\"", "times", "task_events",
        "\"median_s\"", "speedup_vs_single_cpu", "ceilings", "\"NVIDIA H200\""})
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
}

}  // namespace
