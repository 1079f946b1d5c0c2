#include "h5_image.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/h5_tree.hpp"

namespace sb::results::h5 {
namespace {

/// Whether HDF5 opens `image` (read-only, in memory): nothing reaches the disk unchecked.
bool image_opens(std::vector<char>& image) {
  Handle fapl{SB_HDF5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose};
  SB_HDF5_CHECK(H5Pset_fapl_core(fapl.get(), std::size_t{1} << 20, /*backing_store=*/0));
  SB_HDF5_CHECK(H5Pset_file_image(fapl.get(), image.data(), image.size()));
  const hid_t f = H5Fopen("scalebench-image-check", H5F_ACC_RDONLY, fapl.get());
  if (f < 0) return false;
  H5Fclose(f);
  return true;
}

}  // namespace

std::vector<char> file_image(const std::function<void(hid_t file)>& fill) {
  static std::atomic<unsigned> serial{0};
  Handle fapl{SB_HDF5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose};
  SB_HDF5_CHECK(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18));
  SB_HDF5_CHECK(H5Pset_fapl_core(fapl.get(), std::size_t{1} << 20, /*backing_store=*/0));
  // The file is in memory: a metadata cache that holds it saves evicting (serialising) and
  // loading back the headers of thousands of cases (a merged fleet's) while they are written.
  H5AC_cache_config_t mdc{};
  mdc.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  SB_HDF5_CHECK(H5Pget_mdc_config(fapl.get(), &mdc));
  mdc.set_initial_size = true;
  mdc.initial_size = std::size_t{32} << 20;
  mdc.max_size = std::size_t{128} << 20;  // HDF5 1.10 takes at most 128 MiB
  mdc.min_size = std::size_t{1} << 20;
  SB_HDF5_CHECK(H5Pset_mdc_config(fapl.get(), &mdc));
  const std::string name = fmt::format("scalebench-image-{}-{}", ::getpid(), serial++);
  Handle file{SB_HDF5_CHECK(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get())),
              H5Fclose};
  fill(file.get());
  SB_HDF5_CHECK(H5Fflush(file.get(), H5F_SCOPE_GLOBAL));
  const ssize_t size = SB_HDF5_CHECK(H5Fget_file_image(file.get(), nullptr, 0));
  std::vector<char> image(static_cast<std::size_t>(size));
  SB_HDF5_CHECK(H5Fget_file_image(file.get(), image.data(), image.size()));
  file.close();
  if (!image_opens(image)) {
    // HDF5 1.10 clears the version-2 superblock's status flags in the image without updating
    // its checksum; readers ignore these flags in version 2, so restore the byte it summed.
    constexpr std::size_t kStatusFlags = 11;
    if (image.size() > kStatusFlags && image[8] == 2) image[kStatusFlags] = 0x01;
    if (!image_opens(image))
      throw Error("internal error: HDF5 gave a file image it cannot open again");
  }
  return image;
}

WriteFailure write_durably(const std::string& tmp, const std::string& target,
                           const std::vector<char>& bytes) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return {"cannot create " + tmp, errno};
  std::size_t done = 0;
  int err = 0;
  while (done < bytes.size() && err == 0) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      err = errno;
    }
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return {"cannot write " + tmp, err};
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    return {"cannot rename " + tmp + " into place", err};
  }
  std::filesystem::path dir = std::filesystem::path(target).parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);  // some file systems refuse fsync on folders; the rename is done
    ::close(dfd);
  }
  return {};
}

WriteFailure write_in_place(const std::string& target, const std::vector<char>& bytes) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return {"cannot open " + target, errno};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return {"cannot open " + target, EINVAL};
  }
  std::size_t done = 0;
  int err = 0;
  while (done < bytes.size() && err == 0) {
    const ssize_t n =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      err = errno;
    }
  }
  if (err == 0 && ::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) err = errno;
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) return {"cannot write " + target, err};
  return {};
}

}  // namespace sb::results::h5
