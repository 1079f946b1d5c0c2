#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "h5_tree.hpp"
#include "report_layout.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"

namespace sb::results {
namespace {

using h5::Handle;
using json = nlohmann::json;

bool is_scalar(const json& v) {
  return v.is_null() || v.is_boolean() || v.is_number() || v.is_string();
}

void set_units(hid_t parent, const char* name, const char* units) {
  Handle ds{SB_HDF5_CHECK(H5Dopen2(parent, name, H5P_DEFAULT)), H5Dclose};
  h5::set_text_attr(ds.get(), "units", units);
}

/// A table where the schema wants one; the generic form when the values do not fit a table.
void write_table_or_value(hid_t parent, const std::string& key, const json& v,
                          const std::vector<h5::Column>& cols) {
  if (!h5::write_table(parent, key, v, cols, true)) h5::write_value(parent, key, v);
}

void write_case(hid_t cases, std::size_t i, const json& c) {
  if (!c.is_object()) throw UsageError(fmt::format("report model: case {} is not an object", i));
  const auto wl = c.find("workload");
  const auto path = c.find("path");
  if (wl == c.end() || !wl->is_string() || path == c.end() || !path->is_string())
    throw UsageError(fmt::format("report model: case {} has no workload or path", i));
  Handle g = h5::create_group(
      cases, fmt::format("{:04d}_{}_{}", i, wl->get<std::string>(), path->get<std::string>()));
  if (const auto reps = c.find("repeats"); reps != c.end()) {
    bool done = false;
    if (reps->is_array() &&
        std::all_of(reps->begin(), reps->end(), [](const json& r) { return r.is_object(); })) {
      json rows = json::array();
      for (std::size_t r = 0; r < reps->size(); ++r) {
        json row = (*reps)[r];
        row["repeat"] = r;
        rows.push_back(std::move(row));
      }
      done = h5::write_table(g.get(), layout::kTimes, rows, layout::times_columns(), true);
      if (done) set_units(g.get(), layout::kTimes, "s");
    }
    if (!done) h5::write_value(g.get(), "repeats", *reps);
  }
  if (const auto v = c.find("validation"); v != c.end())
    write_table_or_value(g.get(), "validation", *v, layout::validation_columns());
  if (const auto te = c.find("task_events"); te != c.end()) {
    if (h5::write_columns(g.get(), "task_events", *te, layout::task_event_columns())) {
      set_units(g.get(), "task_events", "start, end: s since the case started; bytes: bytes");
    } else {
      h5::write_value(g.get(), "task_events", *te);
    }
  }
  h5::write_members(g.get(), c, {"repeats", "validation", "task_events"});
}

void write_model(hid_t file, const json& model) {
  json attrs = model.value("attrs", json::object());
  if (!attrs.is_object()) throw UsageError("report model: \"attrs\" is not an object");
  attrs["schema_version"] = kSchemaVersion;
  for (const auto& [k, v] : attrs.items()) {
    if (!is_scalar(v) && (k == layout::kSystem || k == layout::kCases || k == layout::kSummary ||
                          k == layout::kExtra))
      throw UsageError(fmt::format("report model: attrs.{} clashes with the /{} group", k, k));
  }
  h5::write_members(file, attrs);

  {
    const json system = model.value("system", json::object());
    if (!system.is_object()) throw UsageError("report model: \"system\" is not an object");
    Handle sys = h5::create_group(file, layout::kSystem);
    if (const auto n = system.find("nodes"); n != system.end())
      write_table_or_value(sys.get(), "nodes", *n, layout::node_columns());
    if (const auto gp = system.find("gpus"); gp != system.end())
      write_table_or_value(sys.get(), "gpus", *gp, layout::gpu_columns());
    if (const auto ce = system.find("ceilings"); ce != system.end())
      write_table_or_value(sys.get(), "ceilings", *ce, layout::ceiling_columns());
    if (const auto st = model.find("startup"); st != model.end()) {
      if (system.contains(layout::kStartup))
        throw UsageError("report model: both \"startup\" and \"system.startup\" are set");
      h5::write_value(sys.get(), layout::kStartup, *st);
    }
    h5::write_members(sys.get(), system, {"nodes", "gpus", "ceilings"});
  }

  {
    static const json no_cases = json::array();
    const auto it = model.find("cases");
    const json& cases = it != model.end() ? *it : no_cases;  // by reference: cases can be large
    if (!cases.is_array()) throw UsageError("report model: \"cases\" is not an array");
    Handle g = h5::create_group(file, layout::kCases);
    for (std::size_t i = 0; i < cases.size(); ++i) write_case(g.get(), i, cases[i]);
  }

  const json summary = summarize(model);
  if (!h5::write_table(file, layout::kSummary, summary, layout::summary_columns(), true))
    throw Error("internal error: the summary does not fit its table");
  set_units(file, layout::kSummary,
            "median_s, min_s, max_s, stddev_s: s; throughput: throughput_unit; speedups: ratio; "
            "efficiency: fraction of the ceiling; ceiling_value: ceiling_unit");

  const std::vector<std::string> known{"attrs", "system", "startup", "cases", "summary"};
  bool has_extra = false;
  for (const auto& [k, v] : model.items())
    has_extra = has_extra || std::find(known.begin(), known.end(), k) == known.end();
  if (has_extra) {
    Handle g = h5::create_group(file, layout::kExtra);
    h5::write_members(g.get(), model, known);
  }
}

/// Whether HDF5 opens `image` (read-only, in memory): nothing reaches the disk unchecked.
bool image_opens(std::vector<char>& image) {
  Handle fapl{SB_HDF5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose};
  SB_HDF5_CHECK(H5Pset_fapl_core(fapl.get(), std::size_t{1} << 20, /*backing_store=*/0));
  SB_HDF5_CHECK(H5Pset_file_image(fapl.get(), image.data(), image.size()));
  const hid_t f = H5Fopen("scalebench-report-check", H5F_ACC_RDONLY, fapl.get());
  if (f < 0) return false;
  H5Fclose(f);
  return true;
}

/// The whole file as bytes: HDF5 writes into memory (the core driver, no backing store) and
/// never touches the disk, so a full disk or a folder turned read-only fails in our own write()
/// with its errno, and HDF5's exit-time cleanup has no half-flushed file to trip over.
std::vector<char> report_image(const json& model) {
  static std::atomic<unsigned> serial{0};
  Handle fapl{SB_HDF5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose};
  // 1.8 file format: dense attribute storage, readable by every HDF5 >= 1.8 (h5py, h5dump).
  SB_HDF5_CHECK(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18));
  SB_HDF5_CHECK(H5Pset_fapl_core(fapl.get(), std::size_t{1} << 20, /*backing_store=*/0));
  const std::string name = fmt::format("scalebench-report-{}-{}", ::getpid(), serial++);
  Handle file{SB_HDF5_CHECK(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get())),
              H5Fclose};
  write_model(file.get(), model);
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

[[noreturn]] void fail(const std::string& path, const std::string& step, int err) {
  throw ReportWriteError(path, step, err);
}

/// Writes `bytes` to a new file `tmp` and makes them durable; removes `tmp` on failure.
void write_durably(const std::string& tmp, const std::string& path,
                   const std::vector<char>& bytes) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "cannot create " + tmp, errno);
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
    fail(path, "cannot write " + tmp, err);
  }
}

}  // namespace

ReportWriteError::ReportWriteError(const std::string& path, const std::string& step, int err)
    : EnvironmentError(fmt::format("cannot write report {}: {}: {} (errno {})", path, step,
                                   std::strerror(err), err)),
      path_(path),
      errno_(err) {}

void write_report(const nlohmann::json& model, const std::string& path,
                  const std::string& temp_dir) {
  namespace fs = std::filesystem;
  h5::quiet_errors();
  SB_EXPECTS(!path.empty(), "the report path is empty");
  SB_EXPECTS(model.is_object(), "report model: not a JSON object");
  // Never rename over something that is not a regular file (/dev/null, a pipe, a folder);
  // follow a symlink so that it keeps pointing at the new report.
  std::error_code ec;
  std::string target = path;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    const fs::path resolved = fs::canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw UsageError(
        fmt::format("cannot write report {}: it exists and is not a regular file", path));
  fs::path dir = fs::path(target).parent_path();
  if (dir.empty()) dir = ".";
  const std::string tmp =
      temp_dir.empty() ? fmt::format("{}.tmp-{}", target, ::getpid())
                       : (fs::path(temp_dir) / fmt::format("report-{}.tmp", ::getpid())).string();

  const std::vector<char> image = report_image(model);  // before touching the disk
  write_durably(tmp, path, image);
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot rename " + tmp + " into place", err);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);  // some file systems refuse fsync on folders; the rename is done
    ::close(dfd);
  }
}

}  // namespace sb::results
