// `scalebench datagen`: a case's exact inputs and answer in an HDF5 file (docs/datagen.md).
#include "datagen_command.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "case_plan.hpp"
#include "plugin_options.hpp"
#include "scalebench/byte_size.hpp"
#include "scalebench/error.hpp"
#include "scalebench/h5_handle.hpp"
#include "scalebench/h5_tree.hpp"
#include "scalebench/input_export.hpp"
#include "scalebench/utc_time.hpp"
#include "scalebench/version.hpp"

namespace sb {
namespace {

using json = nlohmann::json;

using H5Id = results::h5::Handle;
namespace h5 = results::h5;

/// The group at `path` below `parent` ("a/b"), created when missing.
H5Id open_or_create_group(hid_t parent, const std::string& path) {
  H5Id g(SB_HDF5_CHECK(H5Gopen2(parent, ".", H5P_DEFAULT)), H5Gclose);
  std::size_t start = 0;
  while (start < path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::string name = path.substr(start, slash == std::string::npos ? slash : slash - start);
    start = slash == std::string::npos ? path.size() : slash + 1;
    if (name.empty()) continue;
    g = h5::has_link(g.get(), name) ? h5::open_group(g.get(), name)
                                    : h5::create_group(g.get(), name);
  }
  return g;
}

hid_t file_type_of(InputDtype t) {
  switch (t) {
    case InputDtype::i32:
      return H5T_STD_I32LE;
    case InputDtype::i64:
      return H5T_STD_I64LE;
    default:
      return H5T_IEEE_F64LE;
  }
}

hid_t memory_type_of(InputDtype t) {
  switch (t) {
    case InputDtype::i32:
      return H5T_NATIVE_INT32;
    case InputDtype::i64:
      return H5T_NATIVE_INT64;
    default:
      return H5T_NATIVE_DOUBLE;
  }
}

/// One exported array, generated and written `rows_per_fill` rows at a time.
void write_input_array(hid_t file, const InputArray& a, int threads) {
  const std::size_t slash = a.path.rfind('/');
  H5Id parent =
      open_or_create_group(file, slash == std::string::npos ? "" : a.path.substr(0, slash));
  const std::string name = slash == std::string::npos ? a.path : a.path.substr(slash + 1);
  const int rank = static_cast<int>(a.shape.size());
  std::vector<hsize_t> dims(a.shape.begin(), a.shape.end());
  H5Id space(SB_HDF5_CHECK(H5Screate_simple(rank, dims.data(), nullptr)), H5Sclose);
  H5Id d(SB_HDF5_CHECK(H5Dcreate2(parent.get(), name.c_str(), file_type_of(a.dtype), space.get(),
                                  H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
         H5Dclose);
  const std::int64_t rows = a.shape.front();
  const std::int64_t cols = rank == 2 ? a.shape[1] : 1;
  const std::int64_t step = std::max<std::int64_t>(1, std::min(a.rows_per_fill, rows));
  std::vector<unsigned char> buffer(static_cast<std::size_t>(step * cols * dtype_size(a.dtype)));
  for (std::int64_t r0 = 0; r0 < rows; r0 += step) {
    const std::int64_t n = std::min(step, rows - r0);
    a.fill(r0, n, buffer.data(), threads);
    std::vector<hsize_t> start(static_cast<std::size_t>(rank), 0), count(dims);
    start[0] = static_cast<hsize_t>(r0);
    count[0] = static_cast<hsize_t>(n);
    H5Id memspace(SB_HDF5_CHECK(H5Screate_simple(rank, count.data(), nullptr)), H5Sclose);
    SB_HDF5_CHECK(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                      count.data(), nullptr));
    SB_HDF5_CHECK(H5Dwrite(d.get(), memory_type_of(a.dtype), memspace.get(), space.get(),
                           H5P_DEFAULT, buffer.data()));
  }
  h5::write_members(d.get(), a.attrs);
}

/// The parameters the variants agree on (groupby's variants differ only in `query`; a key
/// only some variants have, such as by-key's cardinality, is kept).
Params common_params(const std::vector<Params>& variants) {
  Params common;
  for (const Params& v : variants)
    for (const auto& item : v.items()) {
      // Not a structured binding: lambdas capture bindings only from clang 16 (tools/fuzz).
      const auto& k = item.first;
      const auto& value = item.second;
      const bool same = std::all_of(variants.begin(), variants.end(), [&](const Params& w) {
        return !w.has(k) || w.str(k) == value;
      });
      if (same) common.set(k, value);
    }
  return common;
}

void write_file(const std::string& path, const InputExport& e, const std::vector<CaseSpec>& cases,
                const DatagenOptions& o, const std::string& command_line, int threads) {
  h5::quiet_errors();
  H5Id file(SB_HDF5_CHECK(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)),
            H5Fclose);
  const hid_t root = file.get();
  json attrs = e.attrs;
  attrs["format"] = "scalebench-datagen";
  attrs["format_version"] = 1;
  attrs["workload"] = e.workload;
  attrs["preset"] = o.preset;
  const Params common = common_params(e.variants);
  attrs["params"] = common.canonical();
  attrs["scalebench_version"] = version();
  attrs["git_sha"] = git_sha();
  attrs["command_line"] = command_line;
  attrs["created_utc"] = utc_now_seconds();
  h5::write_members(root, attrs);
  {
    H5Id params = h5::create_group(root, "params");
    for (const auto& [k, v] : common.items()) h5::write_attr(params.get(), k, v);
  }
  json ids = json::array();
  for (const auto& c : cases) ids.push_back(c.id);
  h5::write_value(root, "case_ids", ids);
  h5::write_members(root, e.constants);
  for (const auto& a : e.arrays) write_input_array(root, a, threads);
  if (e.answer) {
    json answer = e.answer(threads);
    answer["computed_by"] = "scalebench's CPU code (the single-cpu path's kernels)";
    h5::write_value(root, "answer", answer);
  }
  file.close();
}

}  // namespace

std::int64_t parse_byte_size(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == 'e' ||
          text[i] == 'E' || text[i] == '+' || text[i] == '_' || text[i] == '^'))
    ++i;
  std::string number = text.substr(0, i);
  std::string unit = text.substr(i);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::pair<const char*, double> units[] = {{"", 1},
                                                  {"b", 1},
                                                  {"k", 1e3},
                                                  {"kb", 1e3},
                                                  {"m", 1e6},
                                                  {"mb", 1e6},
                                                  {"g", 1e9},
                                                  {"gb", 1e9},
                                                  {"t", 1e12},
                                                  {"tb", 1e12},
                                                  {"kib", 1024.0},
                                                  {"mib", 1048576.0},
                                                  {"gib", 1073741824.0},
                                                  {"tib", 1099511627776.0}};
  const std::string what = fmt::format("--max-bytes '{}'", text);
  for (const auto& [name, scale] : units) {
    if (unit != name) continue;
    if (number.empty()) break;
    const bool plain = number.find_first_of(".eE") == std::string::npos;
    const double v = plain ? static_cast<double>(parse_int(number, what)) * scale
                           : parse_double(number, what) * scale;
    if (!(v >= 1) || v > 9.2e18)
      throw UsageError(fmt::format("{}: expected a positive size such as 2GiB", what));
    return static_cast<std::int64_t>(std::llround(v));
  }
  throw UsageError(
      fmt::format("{}: expected bytes, optionally with a unit (KB, MB, GB, KiB, MiB, GiB)", what));
}

std::int64_t run_datagen(const DatagenOptions& o, const std::string& command_line) {
  if (o.out.empty()) throw UsageError("datagen: --out FILE.h5 is required");
  RunRequest req;
  req.preset = o.preset;
  req.workloads = {o.workload};
  req.paths = {ExecPath::single_cpu};
  req.params = o.params;
  const std::vector<CaseSpec> cases = plan_cases(req);
  SB_EXPECTS(!cases.empty(), fmt::format("datagen: no case of '{}' to export", o.workload));
  std::vector<Params> variants;
  for (const auto& c : cases) variants.push_back(c.params);
  const InputExport e = export_inputs(cases.front().workload, variants);

  const std::int64_t bytes = e.bytes();
  if (bytes > o.max_bytes)
    throw UsageError(fmt::format(
        "datagen: {} {} needs {} bytes ({}), above the limit of {} bytes ({}); use a smaller "
        "--preset or --param, or raise --max-bytes",
        e.workload, common_params(variants).canonical(), bytes,
        human_bytes(static_cast<double>(bytes)), o.max_bytes,
        human_bytes(static_cast<double>(o.max_bytes))));

  namespace fs = std::filesystem;
  const fs::path out(o.out);
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(fmt::format("datagen: folder '{}' of --out does not exist", dir.string()));
  if (fs::is_directory(out, ec))
    throw UsageError(fmt::format("datagen: --out '{}' is a folder", o.out));

  const int threads = o.threads > 0
                          ? o.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const std::string tmp = o.out + ".tmp-" + std::to_string(::getpid());
  try {
    write_file(tmp, e, cases, o, command_line, threads);
    fs::rename(tmp, out);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  return bytes;
}

void add_datagen_command(CLI::App& app, int& exit_code, const std::string& command_line) {
  auto o = std::make_shared<DatagenOptions>();
  auto max_bytes = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "datagen", "Write a case's exact inputs and answer to an HDF5 file (docs/datagen.md)");
  cmd->add_option("workload", o->workload, workload_names(true))->required();
  add_plugin_option(*cmd);
  cmd->add_option("--out", o->out, "HDF5 file to write")->required();
  cmd->add_option("--preset", o->preset, "tiny, small (default), seed or large");
  cmd->add_option("--param", o->params, "workload.key=value (repeatable)");
  cmd->add_option("--max-bytes", *max_bytes,
                  "Refuse to write more than this (default 2GiB; units KB MB GB KiB MiB GiB)");
  cmd->add_option("--threads", o->threads, "Threads for generation (default: all)")
      ->check(CLI::Range(0, 1 << 16));
  cmd->callback([o, max_bytes, &exit_code, command_line] {
    if (!max_bytes->empty()) o->max_bytes = parse_byte_size(*max_bytes);
    const std::int64_t bytes = run_datagen(*o, command_line);
    std::printf("scalebench: %s inputs (%s) written to %s\n", o->workload.c_str(),
                human_bytes(static_cast<double>(bytes)).c_str(), o->out.c_str());
    exit_code = kExitOk;
  });
}

}  // namespace sb
