// One report is one file whatever its path (file_identity.hpp): ./x, ../d/x, a symlinked folder,
// a link to the file (also one that dangles), a hard link and a bind mount all name it; another
// name in the same folder does not.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/scratch_dir.hpp"
#include "scalebench/file_identity.hpp"

namespace fs = std::filesystem;

namespace {

using sb::test_support::TempDir;

/// Runs the test body from `dir` and comes back.
struct InFolder {
  fs::path before = fs::current_path();
  explicit InFolder(const fs::path& dir) { fs::current_path(dir); }
  ~InFolder() { fs::current_path(before); }
};

TEST(FileIdentity, EverySpellingOfANewFileIsTheSameFile) {
  TempDir dir("sbident");
  const fs::path d = dir.path / "d";
  fs::create_directories(d / "sub");
  fs::create_directory_symlink(d, dir.path / "l");
  fs::create_symlink("x.h5", d / "dangling.h5");  // points at the file not written yet
  const std::string x = (d / "x.h5").string();
  InFolder in(d / "sub");
  const std::vector<std::string> spellings = {"../x.h5",      "./../x.h5",      "../sub/../x.h5",
                                              "../../l/x.h5", "../dangling.h5", x};
  for (const std::string& p : spellings) {
    EXPECT_TRUE(sb::same_file(p, x)) << p;
    EXPECT_EQ(sb::canonical_file_path(p), fs::canonical(d).string() + "/x.h5") << p;
  }
  EXPECT_FALSE(sb::same_file("../y.h5", x));
  EXPECT_FALSE(sb::same_file("x.h5", x));  // sub/x.h5
  EXPECT_FALSE(sb::file_identity("../no/such/folder/x.h5").has_value());
}

TEST(FileIdentity, AnExistingFileIsKnownByItsInodeThroughLinksAndHardLinks) {
  TempDir dir("sbident");
  const fs::path d = dir.path / "d";
  fs::create_directories(d);
  std::ofstream(d / "x.h5") << "report";
  fs::create_hard_link(d / "x.h5", d / "hard.h5");
  fs::create_symlink(d / "x.h5", dir.path / "link.h5");
  EXPECT_TRUE(sb::same_file((d / "hard.h5").string(), (d / "x.h5").string()));
  EXPECT_TRUE(sb::same_file((dir.path / "link.h5").string(), (d / "x.h5").string()));
  std::ofstream(d / "other.h5") << "report";
  EXPECT_FALSE(sb::same_file((d / "other.h5").string(), (d / "x.h5").string()));
  // A link loop names no file.
  fs::create_symlink(dir.path / "loop2", dir.path / "loop1");
  fs::create_symlink(dir.path / "loop1", dir.path / "loop2");
  EXPECT_FALSE(sb::file_identity((dir.path / "loop1").string()).has_value());
}

TEST(FileIdentity, ABindMountOfTheFolderIsTheSameFolder) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to bind-mount";
  TempDir dir("sbident");
  const fs::path d = dir.path / "d", b = dir.path / "b";
  fs::create_directories(d);
  fs::create_directories(b);
  if (::mount(d.c_str(), b.c_str(), nullptr, MS_BIND, nullptr) != 0)
    GTEST_SKIP() << "cannot bind-mount here";
  EXPECT_TRUE(sb::same_file((b / "x.h5").string(), (d / "x.h5").string()));  // not written yet
  std::ofstream(d / "x.h5") << "report";
  EXPECT_TRUE(sb::same_file((b / "x.h5").string(), (d / "x.h5").string()));
  ::umount2(b.c_str(), MNT_DETACH);
}

}  // namespace
