// A merged report's cases as one dataset of JSON texts (report_parts.hpp; docs/report-schema.md,
// "Merged reports"). A group per case costs the HDF5 library about a millisecond to write and as
// much to read back, which made a fleet's merge of 18,000 cases take most of a minute
// (bench/merge_fleet.sh); one string per case costs a few microseconds each way.
#include <hdf5.h>

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "h5_tree_detail.hpp"
#include "report_layout.hpp"
#include "report_parts.hpp"
#include "scalebench/error.hpp"
#include "scalebench/h5_tree.hpp"
#include "scalebench/merge.hpp"

namespace sb::results {
namespace {

using h5::Handle;
using json = nlohmann::json;

constexpr const char* kJsonLayout = "json";

}  // namespace

bool cases_as_json(const json& model) {
  const auto a = model.find("attrs");
  if (a == model.end() || !a->is_object()) return false;
  const auto m = a->find("merge");
  return m != a->end() && m->is_string() && !m->get_ref<const std::string&>().empty();
}

void write_cases_json(hid_t parent, const json& cases) {
  if (!cases.is_array()) throw UsageError("report model: \"cases\" is not an array");
  std::vector<std::string> texts;
  texts.reserve(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    if (!c.is_object()) throw UsageError(fmt::format("report model: case {} is not an object", i));
    const auto wl = c.find("workload");
    const auto path = c.find("path");
    if (wl == c.end() || !wl->is_string() || path == c.end() || !path->is_string())
      throw UsageError(fmt::format("report model: case {} has no workload or path", i));
    // Text that is not UTF-8 (a message a library printed) becomes U+FFFD, as h5py would show it.
    texts.push_back(c.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  std::vector<const char*> ptrs;
  ptrs.reserve(texts.size());
  for (const auto& t : texts) ptrs.push_back(t.c_str());
  const Handle type = h5::detail::str_type();
  const hsize_t n = texts.size();
  const Handle space{SB_HDF5_CHECK(H5Screate_simple(1, &n, nullptr)), H5Sclose};
  const Handle ds{SB_HDF5_CHECK(H5Dcreate2(parent, layout::kCases, type.get(), space.get(),
                                           H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
                  H5Dclose};
  if (n > 0) {
    const Handle xfer = h5::detail::transfer_plist(type.get(), type.get(), ptrs.size());
    SB_HDF5_CHECK(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, xfer.get(), ptrs.data()));
  }
  h5::set_text_attr(ds.get(), h5::detail::kLayoutAttr, kJsonLayout);
}

json read_cases_json(hid_t ds, bool slim) {
  const Handle space{SB_HDF5_CHECK(H5Dget_space(ds)), H5Sclose};
  if (SB_HDF5_CHECK(H5Sget_simple_extent_ndims(space.get())) != 1)
    throw UsageError("/cases is a dataset but not one JSON text per case");
  hsize_t n = 0;
  SB_HDF5_CHECK(H5Sget_simple_extent_dims(space.get(), &n, nullptr));
  json cases = json::array();
  if (n == 0) return cases;
  const Handle type = h5::detail::str_type();
  std::vector<char*> texts(static_cast<std::size_t>(n), nullptr);
  const Handle xfer = h5::detail::transfer_plist(type.get(), type.get(), texts.size());
  SB_HDF5_CHECK(H5Dread(ds, type.get(), H5S_ALL, H5S_ALL, xfer.get(), texts.data()));
  struct Reclaim {
    hid_t type, space;
    std::vector<char*>& texts;
    ~Reclaim() { H5Dvlen_reclaim(type, space, H5P_DEFAULT, texts.data()); }
  } reclaim{type.get(), space.get(), texts};
  cases.get_ref<json::array_t&>().reserve(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const char* t = texts[i] != nullptr ? texts[i] : "";
    json c = json::parse(t, t + std::strlen(t), nullptr, /*allow_exceptions=*/false);
    if (!c.is_object())
      throw UsageError(fmt::format("case {} of /cases is not a JSON object (a damaged report)", i));
    cases.push_back(std::move(c));
  }
  if (slim) {
    json m = {{"cases", std::move(cases)}};
    drop_series(m);
    return std::move(m["cases"]);
  }
  return cases;
}

}  // namespace sb::results
