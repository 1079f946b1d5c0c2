// Reading HDF5 groups back into JSON trees (h5_tree.hpp); writing them is h5_tree.cpp.
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "h5_tree_detail.hpp"
#include "scalebench/error.hpp"
#include "scalebench/h5_tree.hpp"

namespace sb::results::h5 {
namespace {

using namespace detail;

/// Names of a group's links or an object's attributes, collected by C callbacks (no throws).
herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}
herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

std::vector<std::string> attr_names(hid_t obj) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  SB_HDF5_CHECK(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &names));
  return names;
}

bool is_bool_enum(hid_t enum_type) {
  if (SB_HDF5_CHECK(H5Tget_nmembers(enum_type)) != 2) return false;
  bool ok = true;
  for (unsigned i = 0; i < 2; ++i) {
    char* n = H5Tget_member_name(enum_type, i);
    if (n == nullptr) return false;
    ok = ok && std::strcmp(n, i == 0 ? "FALSE" : "TRUE") == 0;
    SB_HDF5_CHECK(H5free_memory(n));
  }
  return ok;
}

/// H5Tget_size reports failure as 0, which SB_HDF5_CHECK cannot see.
std::size_t type_size(hid_t type) {
  const std::size_t n = H5Tget_size(type);
  if (n == 0) ::sb::detail::throw_hdf5_error("H5Tget_size(type)", __FILE__, __LINE__);
  return n;
}

/// How one element (or compound field) is brought into memory.
struct Field {
  enum class As { Int, UInt, Float, VStr, FStr, Enum, Skip } as = As::Skip;
  hid_t mem = -1;        ///< memory type of the element (owned by `own` or shared)
  Handle own;            ///< the memory type when it was made for this field alone
  std::size_t size = 0;  ///< bytes in memory
  H5T_str_t pad = H5T_STR_NULLTERM;
  bool boolean = false;  ///< enum {FALSE, TRUE}
};

Field field_for(hid_t ftype) {
  Field f;
  switch (SB_HDF5_CHECK(H5Tget_class(ftype))) {
    case H5T_INTEGER:
      if (SB_HDF5_CHECK(H5Tget_sign(ftype)) == H5T_SGN_NONE && type_size(ftype) >= 8) {
        f.as = Field::As::UInt;
        f.mem = H5T_NATIVE_UINT64;
      } else {
        f.as = Field::As::Int;
        f.mem = H5T_NATIVE_INT64;
      }
      f.size = 8;
      break;
    case H5T_FLOAT:
      f.as = Field::As::Float;
      f.mem = H5T_NATIVE_DOUBLE;
      f.size = 8;
      break;
    case H5T_STRING:
      if (SB_HDF5_CHECK(H5Tis_variable_str(ftype)) > 0) {
        f.as = Field::As::VStr;
        f.mem = shared_str_type(SB_HDF5_CHECK(H5Tget_cset(ftype)));
        f.size = sizeof(char*);
      } else {
        f.as = Field::As::FStr;
        f.own = Handle{SB_HDF5_CHECK(H5Tcopy(ftype)), H5Tclose};
        f.mem = f.own.get();
        f.size = type_size(ftype);
        f.pad = SB_HDF5_CHECK(H5Tget_strpad(ftype));
      }
      break;
    case H5T_ENUM:
      f.as = Field::As::Enum;
      if (SB_HDF5_CHECK(H5Tequal(ftype, shared_bool_type())) > 0) {
        f.mem = shared_bool_type();
        f.size = 1;
        f.boolean = true;
        break;
      }
      f.own = Handle{SB_HDF5_CHECK(H5Tget_native_type(ftype, H5T_DIR_ASCEND)), H5Tclose};
      f.mem = f.own.get();
      f.size = type_size(f.mem);
      f.boolean = is_bool_enum(ftype);
      break;
    default:
      break;  // arrays, references, nested compounds: not written by scalebench; skipped
  }
  return f;
}

json element_to_json(const Field& f, const unsigned char* p) {
  switch (f.as) {
    case Field::As::Int: {
      std::int64_t x;
      std::memcpy(&x, p, sizeof x);
      return x;
    }
    case Field::As::UInt: {
      std::uint64_t x;
      std::memcpy(&x, p, sizeof x);
      return x;
    }
    case Field::As::Float: {
      double x;
      std::memcpy(&x, p, sizeof x);
      return x;
    }
    case Field::As::VStr: {
      const char* s;
      std::memcpy(&s, p, sizeof s);
      return std::string(s != nullptr ? s : "");
    }
    case Field::As::FStr: {
      std::string s(reinterpret_cast<const char*>(p), f.size);
      s = s.substr(0, s.find('\0'));
      if (f.pad == H5T_STR_SPACEPAD) s.erase(s.find_last_not_of(' ') + 1);
      return s;
    }
    case Field::As::Enum: {
      if (f.mem == shared_bool_type() && (*p == 0 || *p == 1)) return *p == 1;
      std::array<char, 256> name{};
      SB_HDF5_CHECK(H5Tenum_nameof(f.mem, p, name.data(), name.size()));
      if (f.boolean) return std::strcmp(name.data(), "TRUE") == 0;
      return std::string(name.data());
    }
    case Field::As::Skip:
      break;
  }
  return nullptr;
}

/// Nests a flat element list by `dims` (row-major).
json reshape(const std::vector<json>& flat, const std::vector<hsize_t>& dims, std::size_t level,
             std::size_t& pos) {
  json arr = json::array();
  for (hsize_t i = 0; i < dims[level]; ++i) {
    if (level + 1 == dims.size()) {
      arr.push_back(flat[pos++]);
    } else {
      arr.push_back(reshape(flat, dims, level + 1, pos));
    }
  }
  return arr;
}

std::vector<hsize_t> dims_of(hid_t space) {
  const int rank = SB_HDF5_CHECK(H5Sget_simple_extent_ndims(space));
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) SB_HDF5_CHECK(H5Sget_simple_extent_dims(space, dims.data(), nullptr));
  return dims;
}

/// Reads the elements of an attribute or dataset of an atomic type. nullopt: unsupported type.
template <class ReadFn>
std::optional<std::vector<json>> read_atomic(hid_t ftype, hid_t space, std::size_t n, ReadFn read) {
  Field f = field_for(ftype);
  if (f.as == Field::As::Skip) return std::nullopt;
  std::vector<unsigned char> buf(std::max<std::size_t>(1, n * f.size), 0);
  std::vector<json> out;
  out.reserve(n);
  if (n > 0) {
    read(f.mem, buf.data());
    for (std::size_t i = 0; i < n; ++i) out.push_back(element_to_json(f, buf.data() + i * f.size));
    if (f.as == Field::As::VStr)
      SB_HDF5_CHECK(H5Dvlen_reclaim(f.mem, space, H5P_DEFAULT, buf.data()));
  }
  return out;
}

std::string read_text_attr(hid_t obj, const char* name) {
  if (SB_HDF5_CHECK(H5Aexists(obj, name)) <= 0) return {};
  json v = read_attrs(obj).value(unescape_name(name), json());
  return v.is_string() ? v.get<std::string>() : std::string();
}

json read_compound(hid_t ds, hid_t ftype, hid_t space, bool as_columns) {
  const auto dims = dims_of(space);
  std::size_t n = 1;
  for (hsize_t d : dims) n *= static_cast<std::size_t>(d);
  const int nm = SB_HDF5_CHECK(H5Tget_nmembers(ftype));
  std::vector<std::string> names;
  std::vector<Field> fields;
  std::vector<std::size_t> offsets;
  std::size_t rec = 0;
  bool vlen = false;
  for (int i = 0; i < nm; ++i) {
    char* cname = H5Tget_member_name(ftype, static_cast<unsigned>(i));
    if (cname == nullptr) continue;
    std::string name = cname;
    SB_HDF5_CHECK(H5free_memory(cname));
    Handle mt{SB_HDF5_CHECK(H5Tget_member_type(ftype, static_cast<unsigned>(i))), H5Tclose};
    Field f = field_for(mt.get());
    if (f.as == Field::As::Skip) continue;
    vlen = vlen || f.as == Field::As::VStr;
    names.push_back(name);
    offsets.push_back(rec);
    rec += (f.size + kSlot - 1) / kSlot * kSlot;
    fields.push_back(std::move(f));
  }
  json out = as_columns ? json::object() : json::array();
  std::vector<json*> columns;  // as_columns: the output array of each field
  if (as_columns) {
    for (const auto& nme : names) out[nme] = json::array();
    for (const auto& nme : names) {
      columns.push_back(&out[nme]);
      columns.back()->get_ref<json::array_t&>().reserve(n);
    }
  } else {
    out.get_ref<json::array_t&>().reserve(n);
  }
  if (fields.empty() || n == 0) return out;
  Handle mem{SB_HDF5_CHECK(H5Tcreate(H5T_COMPOUND, rec)), H5Tclose};
  for (std::size_t c = 0; c < fields.size(); ++c)
    SB_HDF5_CHECK(H5Tinsert(mem.get(), names[c].c_str(), offsets[c], fields[c].mem));
  std::vector<unsigned char> buf(rec * n, 0);
  const Handle xfer = transfer_plist(ftype, mem.get(), n);
  SB_HDF5_CHECK(H5Dread(ds, mem.get(), H5S_ALL, H5S_ALL, xfer.get(), buf.data()));
  for (std::size_t r = 0; r < n; ++r) {
    json row = json::object();
    for (std::size_t c = 0; c < fields.size(); ++c) {
      json v = element_to_json(fields[c], buf.data() + r * rec + offsets[c]);
      if (v.is_number_float() && std::isnan(v.get<double>())) v = nullptr;  // NaN = missing
      if (as_columns) {
        columns[c]->get_ref<json::array_t&>().push_back(std::move(v));
      } else {
        row[names[c]] = std::move(v);
      }
    }
    if (!as_columns) out.push_back(std::move(row));
  }
  if (vlen) SB_HDF5_CHECK(H5Dvlen_reclaim(mem.get(), space, H5P_DEFAULT, buf.data()));
  return out;
}

json read_dataset(hid_t ds) {
  Handle space{SB_HDF5_CHECK(H5Dget_space(ds)), H5Sclose};
  Handle type{SB_HDF5_CHECK(H5Dget_type(ds)), H5Tclose};
  if (SB_HDF5_CHECK(H5Sget_simple_extent_type(space.get())) == H5S_NULL) return nullptr;
  if (SB_HDF5_CHECK(H5Tget_class(type.get())) == H5T_COMPOUND) {
    const bool cols = read_text_attr(ds, kLayoutAttr) == "columns";
    return read_compound(ds, type.get(), space.get(), cols);
  }
  const auto dims = dims_of(space.get());
  std::size_t n = 1;
  for (hsize_t d : dims) n *= static_cast<std::size_t>(d);
  auto flat = read_atomic(type.get(), space.get(), n, [&](hid_t mem, void* buf) {
    const Handle xfer = transfer_plist(type.get(), mem, n);
    SB_HDF5_CHECK(H5Dread(ds, mem, H5S_ALL, H5S_ALL, xfer.get(), buf));
  });
  if (!flat) return nullptr;
  if (dims.empty()) return flat->empty() ? json() : (*flat)[0];
  std::size_t pos = 0;
  return reshape(*flat, dims, 0, pos);
}

}  // namespace

std::vector<std::string> link_names(hid_t group) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  SB_HDF5_CHECK(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_link, &names));
  return names;
}

json read_attrs(hid_t obj) {
  json out = json::object();
  for (const auto& name : attr_names(obj)) {
    Handle a{SB_HDF5_CHECK(H5Aopen(obj, name.c_str(), H5P_DEFAULT)), H5Aclose};
    Handle space{SB_HDF5_CHECK(H5Aget_space(a.get())), H5Sclose};
    const std::string key = unescape_name(name);
    if (SB_HDF5_CHECK(H5Sget_simple_extent_type(space.get())) == H5S_NULL) {
      out[key] = nullptr;
      continue;
    }
    Handle type{SB_HDF5_CHECK(H5Aget_type(a.get())), H5Tclose};
    const auto dims = dims_of(space.get());
    std::size_t n = 1;
    for (hsize_t d : dims) n *= static_cast<std::size_t>(d);
    auto flat = read_atomic(type.get(), space.get(), n, [&](hid_t mem, void* buf) {
      SB_HDF5_CHECK(H5Aread(a.get(), mem, buf));
    });
    if (!flat) continue;  // a type scalebench never writes: skipped
    if (dims.empty()) {
      out[key] = flat->empty() ? json() : (*flat)[0];
    } else {
      std::size_t pos = 0;
      out[key] = reshape(*flat, dims, 0, pos);
    }
  }
  return out;
}

json read_link(hid_t parent, const std::string& key) {
  const std::string name = escape_name(key);
  Handle obj{SB_HDF5_CHECK(H5Oopen(parent, name.c_str(), H5P_DEFAULT)), H5Oclose};
  switch (SB_HDF5_CHECK(H5Iget_type(obj.get()))) {
    case H5I_GROUP:
      return read_group(obj.get());
    case H5I_DATASET:
      return read_dataset(obj.get());
    default:
      return nullptr;
  }
}

json read_group(hid_t group) {
  json attrs = read_attrs(group);
  const bool is_array = attrs.contains(kArrayMarker);
  if (!is_array) {
    json out = std::move(attrs);
    for (const auto& name : link_names(group))
      out[unescape_name(name)] = read_link(group, unescape_name(name));
    return out;
  }
  attrs.erase(kArrayMarker);
  std::vector<std::pair<long long, json>> items;
  auto add = [&](const std::string& k, json v) {
    char* end = nullptr;
    const long long i = std::strtoll(k.c_str(), &end, 10);
    if (!k.empty() && *end == '\0') items.emplace_back(i, std::move(v));
  };
  for (auto& [k, v] : attrs.items()) add(k, v);
  for (const auto& name : link_names(group))
    add(unescape_name(name), read_link(group, unescape_name(name)));
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  json out = json::array();
  for (auto& [i, v] : items) out.push_back(std::move(v));
  return out;
}

}  // namespace sb::results::h5
