// Writing JSON trees into HDF5 (h5_tree.hpp); reading them back is h5_tree_read.cpp.
#include "scalebench/h5_tree.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>

#include "h5_tree_detail.hpp"
#include "scalebench/error.hpp"

namespace sb::results::h5 {
namespace detail {

Handle str_type(H5T_cset_t cset) {
  Handle t{SB_HDF5_CHECK(H5Tcopy(H5T_C_S1)), H5Tclose};
  SB_HDF5_CHECK(H5Tset_size(t.get(), H5T_VARIABLE));
  SB_HDF5_CHECK(H5Tset_cset(t.get(), cset));
  return t;
}

Handle transfer_plist(hid_t a, hid_t b, std::size_t n) {
  const std::size_t element = std::max(H5Tget_size(a), H5Tget_size(b));
  Handle p{SB_HDF5_CHECK(H5Pcreate(H5P_DATASET_XFER)), H5Pclose};
  SB_HDF5_CHECK(H5Pset_buffer(p.get(),
                              std::max<std::size_t>(4096, element * std::max<std::size_t>(n, 1)),
                              nullptr, nullptr));
  return p;
}

Handle bool_type() {
  Handle t{SB_HDF5_CHECK(H5Tenum_create(H5T_NATIVE_INT8)), H5Tclose};
  std::int8_t v = 0;
  SB_HDF5_CHECK(H5Tenum_insert(t.get(), "FALSE", &v));
  v = 1;
  SB_HDF5_CHECK(H5Tenum_insert(t.get(), "TRUE", &v));
  return t;
}

// Made once per process: a merged report writes, and a merge reads, hundreds of thousands of
// attributes (bench/merge_fleet.sh), and a type copied for each cost more than the value.
hid_t shared_str_type(H5T_cset_t cset) {
  static const Handle utf8 = str_type(H5T_CSET_UTF8);
  static const Handle ascii = str_type(H5T_CSET_ASCII);
  return cset == H5T_CSET_ASCII ? ascii.get() : utf8.get();
}

hid_t shared_bool_type() {
  static const Handle t = bool_type();
  return t.get();
}

}  // namespace detail

namespace {

using namespace detail;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Handle scalar_space() {
  return Handle{SB_HDF5_CHECK(H5Screate(H5S_SCALAR)), H5Sclose};
}

// The dataspace every attribute of a report uses, made once per process, as the types are.
hid_t shared_scalar_space() {
  static const Handle s = scalar_space();
  return s.get();
}

Handle simple_space(std::initializer_list<hsize_t> dims) {
  std::vector<hsize_t> d(dims);
  return Handle{SB_HDF5_CHECK(H5Screate_simple(static_cast<int>(d.size()), d.data(), nullptr)),
                H5Sclose};
}

bool is_scalar(const json& v) {
  return v.is_null() || v.is_boolean() || v.is_number() || v.is_string();
}

bool fits_i64(const json& v) {
  return v.is_number_integer() && (!v.is_number_unsigned() ||
                                   v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX));
}

Handle create_dataset(hid_t parent, const std::string& name, hid_t type, hid_t space) {
  static const hid_t dcpl = [] {
    const hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    if (p >= 0) H5Pset_obj_track_times(p, 0);
    return p;
  }();
  return Handle{SB_HDF5_CHECK(H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT,
                                         dcpl >= 0 ? dcpl : H5P_DEFAULT, H5P_DEFAULT)),
                H5Dclose};
}

void write_dataset(hid_t parent, const std::string& name, hid_t file_type, hid_t mem_type,
                   std::initializer_list<hsize_t> dims, const void* data) {
  Handle space = simple_space(dims);
  Handle ds = create_dataset(parent, name, file_type, space.get());
  hsize_t n = 1;
  for (hsize_t d : dims) n *= d;
  if (n > 0) {
    const Handle xfer = transfer_plist(file_type, mem_type, static_cast<std::size_t>(n));
    SB_HDF5_CHECK(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, xfer.get(), data));
  }
}

/// Homogeneous arrays of scalars (1-D) or of equal-length number arrays (2-D). False when the
/// array is anything else.
bool write_array_dataset(hid_t parent, const std::string& name, const json& v) {
  const std::size_t n = v.size();
  if (n == 0) {
    write_dataset(parent, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {0}, nullptr);
    return true;
  }
  auto all = [&](auto pred) { return std::all_of(v.begin(), v.end(), pred); };
  if (all([](const json& x) { return x.is_number(); })) {
    if (all([](const json& x) { return fits_i64(x); })) {
      std::vector<std::int64_t> d;
      d.reserve(n);
      for (const auto& x : v) d.push_back(x.get<std::int64_t>());
      write_dataset(parent, name, H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, d.data());
    } else {
      std::vector<double> d;
      d.reserve(n);
      for (const auto& x : v) d.push_back(x.get<double>());
      write_dataset(parent, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, d.data());
    }
    return true;
  }
  if (all([](const json& x) { return x.is_string(); })) {
    std::vector<const char*> d;
    d.reserve(n);
    for (const auto& x : v) d.push_back(x.get_ref<const std::string&>().c_str());
    Handle t = str_type();
    write_dataset(parent, name, t.get(), t.get(), {n}, d.data());
    return true;
  }
  if (all([](const json& x) { return x.is_boolean(); })) {
    std::vector<std::int8_t> d;
    d.reserve(n);
    for (const auto& x : v) d.push_back(x.get<bool>() ? 1 : 0);
    Handle t = bool_type();
    write_dataset(parent, name, t.get(), t.get(), {n}, d.data());
    return true;
  }
  const std::size_t cols = v[0].is_array() ? v[0].size() : 0;
  if (cols > 0 && all([&](const json& row) {
        return row.is_array() && row.size() == cols &&
               std::all_of(row.begin(), row.end(), [](const json& x) { return x.is_number(); });
      })) {
    const bool ints = all([](const json& row) {
      return std::all_of(row.begin(), row.end(), [](const json& x) { return fits_i64(x); });
    });
    if (ints) {
      std::vector<std::int64_t> d;
      d.reserve(n * cols);
      for (const auto& row : v)
        for (const auto& x : row) d.push_back(x.get<std::int64_t>());
      write_dataset(parent, name, H5T_STD_I64LE, H5T_NATIVE_INT64, {n, cols}, d.data());
    } else {
      std::vector<double> d;
      d.reserve(n * cols);
      for (const auto& row : v)
        for (const auto& x : row) d.push_back(x.get<double>());
      write_dataset(parent, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n, cols}, d.data());
    }
    return true;
  }
  return false;
}

/// A table seen column by column: cell(r, c) is the value or nullptr when missing.
struct TableSource {
  std::size_t rows = 0;
  std::vector<std::string> names;
  std::function<const json*(std::size_t, std::size_t)> cell;
};

/// Column kinds for a table; nullopt when the values do not fit one compound type.
std::optional<std::vector<Column>> infer_kinds(const TableSource& src,
                                               const std::vector<Column>& known,
                                               bool allow_missing) {
  if (src.rows == 0) return known;
  std::vector<Column> cols;
  for (std::size_t c = 0; c < src.names.size(); ++c) {
    bool s = false, b = false, i = false, f = false, nul = false;
    std::size_t present = 0;
    for (std::size_t r = 0; r < src.rows; ++r) {
      const json* v = src.cell(r, c);
      if (v == nullptr) continue;
      ++present;
      if (v->is_string()) {
        s = true;
      } else if (v->is_boolean()) {
        b = true;
      } else if (v->is_number()) {
        (fits_i64(*v) ? i : f) = true;
      } else if (v->is_null()) {
        nul = true;
      } else {
        return std::nullopt;  // nested value: not a flat table
      }
    }
    const bool missing = present < src.rows;
    if (missing && !allow_missing) return std::nullopt;
    Kind k = Kind::Float;
    if (s) {
      if (b || i || f || nul) return std::nullopt;
      k = Kind::Str;
    } else if (b) {
      if (i || f || nul) return std::nullopt;
      k = Kind::Bool;
    } else if (i && !f && !nul && !missing) {
      k = Kind::Int;
    }
    cols.push_back({src.names[c], k});
  }
  if (cols.empty()) return std::nullopt;
  return cols;
}

void write_compound(hid_t parent, const std::string& name, const std::vector<Column>& cols,
                    const TableSource& src, const std::vector<std::size_t>& source_col) {
  const std::size_t rec = kSlot * cols.size();
  // The memory and file types of a table's columns, made once per column set: the same tables
  // (times, validation, telemetry) recur in every case.
  static std::map<std::string, std::pair<Handle, Handle>> types;
  std::string signature;
  for (const auto& c : cols)
    signature += c.name + '\x1f' + static_cast<char>('0' + static_cast<int>(c.kind));
  auto it = types.find(signature);
  if (it == types.end()) {
    Handle mem_t{SB_HDF5_CHECK(H5Tcreate(H5T_COMPOUND, rec)), H5Tclose};
    for (std::size_t c = 0; c < cols.size(); ++c) {
      hid_t t = H5T_NATIVE_DOUBLE;
      switch (cols[c].kind) {
        case Kind::Int:
          t = H5T_NATIVE_INT64;
          break;
        case Kind::Float:
          t = H5T_NATIVE_DOUBLE;
          break;
        case Kind::Str:
          t = shared_str_type();
          break;
        case Kind::Bool:
          t = shared_bool_type();
          break;
      }
      SB_HDF5_CHECK(H5Tinsert(mem_t.get(), cols[c].name.c_str(), kSlot * c, t));
    }
    Handle file_t{SB_HDF5_CHECK(H5Tcopy(mem_t.get())), H5Tclose};
    SB_HDF5_CHECK(H5Tpack(file_t.get()));
    it = types.emplace(signature, std::make_pair(std::move(mem_t), std::move(file_t))).first;
  }
  const Handle& mem = it->second.first;
  const Handle& file_type = it->second.second;

  static const char* const kEmpty = "";
  std::vector<unsigned char> buf(rec * src.rows, 0);
  for (std::size_t r = 0; r < src.rows; ++r) {
    for (std::size_t c = 0; c < cols.size(); ++c) {
      unsigned char* slot = buf.data() + r * rec + c * kSlot;
      const json* v = source_col[c] < src.names.size() ? src.cell(r, source_col[c]) : nullptr;
      switch (cols[c].kind) {
        case Kind::Int: {
          const std::int64_t x = v != nullptr ? v->get<std::int64_t>() : 0;
          std::memcpy(slot, &x, sizeof x);
          break;
        }
        case Kind::Float: {
          const double x = (v != nullptr && v->is_number()) ? v->get<double>() : kNaN;
          std::memcpy(slot, &x, sizeof x);
          break;
        }
        case Kind::Str: {
          const char* p = v != nullptr ? v->get_ref<const std::string&>().c_str() : kEmpty;
          std::memcpy(slot, &p, sizeof p);
          break;
        }
        case Kind::Bool: {
          const std::int8_t x = (v != nullptr && v->get<bool>()) ? 1 : 0;
          std::memcpy(slot, &x, sizeof x);
          break;
        }
      }
    }
  }
  write_dataset(parent, name, file_type.get(), mem.get(), {src.rows}, buf.data());
}

/// Orders columns: known ones first (in their order), then the others by name.
std::vector<Column> order_columns(std::vector<Column> cols, const std::vector<Column>& known) {
  std::vector<Column> out;
  for (const auto& k : known) {
    auto it =
        std::find_if(cols.begin(), cols.end(), [&](const Column& c) { return c.name == k.name; });
    if (it != cols.end()) {
      out.push_back(*it);
      cols.erase(it);
    }
  }
  out.insert(out.end(), cols.begin(), cols.end());
  return out;
}

bool write_table_source(hid_t parent, const std::string& key, const TableSource& src,
                        const std::vector<Column>& known, bool allow_missing) {
  auto kinds = infer_kinds(src, known, allow_missing);
  if (!kinds) return false;
  const std::vector<Column> cols = src.rows == 0 ? *kinds : order_columns(*kinds, known);
  std::vector<std::size_t> source_col;
  for (const auto& c : cols) {
    auto it = std::find(src.names.begin(), src.names.end(), c.name);
    source_col.push_back(static_cast<std::size_t>(it - src.names.begin()));
  }
  write_compound(parent, escape_name(key), cols, src, source_col);
  return true;
}

}  // namespace

void Handle::close() {
  if (id_ < 0) return;
  const hid_t id = std::exchange(id_, -1);
  SB_HDF5_CHECK(closer_(id));
}

void quiet_errors() {
  static std::once_flag once;
  std::call_once(once, [] { SB_HDF5_CHECK(H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr)); });
}

std::string escape_name(const std::string& key) {
  if (key.empty()) return "%";
  if (key == ".") return "%2E";
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '%') {
      out += "%25";
    } else if (c == '/') {
      out += "%2F";
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_name(const std::string& name) {
  if (name == "%") return {};
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%' && i + 2 < name.size()) {
      const std::string hex = name.substr(i + 1, 2);
      char* end = nullptr;
      const long v = std::strtol(hex.c_str(), &end, 16);
      if (end == hex.c_str() + 2) {
        out += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    out += name[i];
  }
  return out;
}

Handle create_group(hid_t parent, const std::string& key) {
  // Attributes stay in the group's header up to 64 of them (HDF5 moves more than 8 into a heap
  // and a B-tree of their own per group, which made writing a merged report of thousands of
  // cases several times slower: bench/merge_fleet.sh). Readers of every HDF5 version read both.
  static const hid_t gcpl = [] {
    const hid_t p = H5Pcreate(H5P_GROUP_CREATE);
    if (p >= 0) {
      H5Pset_attr_phase_change(p, 64, 48);
      // Links too stay in the header up to 32 of them, and the header starts with room for 8:
      // a case group grown a chunk at a time took a cache entry per chunk to write and to read
      // back (bench/merge_fleet.sh reads 18,000 of them).
      H5Pset_link_phase_change(p, 32, 24);
      H5Pset_est_link_info(p, 8, 20);
      H5Pset_obj_track_times(p, 0);
    }
    return p;
  }();
  return Handle{SB_HDF5_CHECK(H5Gcreate2(parent, escape_name(key).c_str(), H5P_DEFAULT,
                                         gcpl >= 0 ? gcpl : H5P_DEFAULT, H5P_DEFAULT)),
                H5Gclose};
}

Handle open_group(hid_t parent, const std::string& key) {
  return Handle{SB_HDF5_CHECK(H5Gopen2(parent, escape_name(key).c_str(), H5P_DEFAULT)), H5Gclose};
}

bool has_link(hid_t parent, const std::string& key) {
  return SB_HDF5_CHECK(H5Lexists(parent, escape_name(key).c_str(), H5P_DEFAULT)) > 0;
}

void set_text_attr(hid_t obj, const std::string& name, const std::string& text) {
  write_attr(obj, name, text);
}

void write_attr(hid_t obj, const std::string& key, const json& v) {
  const std::string name = escape_name(key);
  auto create = [&](hid_t type, hid_t space) {
    return Handle{
        SB_HDF5_CHECK(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT)),
        H5Aclose};
  };
  if (v.is_null()) {
    Handle space{SB_HDF5_CHECK(H5Screate(H5S_NULL)), H5Sclose};
    create(H5T_STD_I8LE, space.get());
    return;
  }
  const hid_t space = shared_scalar_space();
  if (v.is_boolean()) {
    const hid_t t = shared_bool_type();
    const std::int8_t x = v.get<bool>() ? 1 : 0;
    Handle a = create(t, space);
    SB_HDF5_CHECK(H5Awrite(a.get(), t, &x));
  } else if (fits_i64(v)) {
    const std::int64_t x = v.get<std::int64_t>();
    Handle a = create(H5T_STD_I64LE, space);
    SB_HDF5_CHECK(H5Awrite(a.get(), H5T_NATIVE_INT64, &x));
  } else if (v.is_number_unsigned()) {
    const std::uint64_t x = v.get<std::uint64_t>();
    Handle a = create(H5T_STD_U64LE, space);
    SB_HDF5_CHECK(H5Awrite(a.get(), H5T_NATIVE_UINT64, &x));
  } else if (v.is_number()) {
    const double x = v.get<double>();
    Handle a = create(H5T_IEEE_F64LE, space);
    SB_HDF5_CHECK(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &x));
  } else if (v.is_string()) {
    const hid_t t = shared_str_type();
    const char* p = v.get_ref<const std::string&>().c_str();
    Handle a = create(t, space);
    SB_HDF5_CHECK(H5Awrite(a.get(), t, &p));
  } else {
    throw Error("internal error: attribute '" + key + "' is not a scalar");
  }
}

void write_value(hid_t parent, const std::string& key, const json& value) {
  if (is_scalar(value)) {
    write_attr(parent, key, value);
    return;
  }
  if (value.is_object()) {
    Handle g = create_group(parent, key);
    write_members(g.get(), value);
    return;
  }
  const std::string name = escape_name(key);
  if (write_array_dataset(parent, name, value)) return;
  if (std::all_of(value.begin(), value.end(), [](const json& x) { return x.is_object(); }) &&
      write_table(parent, key, value, {}, false))
    return;
  Handle g = create_group(parent, key);
  write_attr(g.get(), kArrayMarker, true);
  for (std::size_t i = 0; i < value.size(); ++i) write_value(g.get(), std::to_string(i), value[i]);
}

void write_members(hid_t group, const json& object, const std::vector<std::string>& skip) {
  for (const auto& [k, v] : object.items()) {
    if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
    write_value(group, k, v);
  }
}

bool write_table(hid_t parent, const std::string& name, const json& rows,
                 const std::vector<Column>& known, bool allow_missing) {
  if (!rows.is_array()) return false;
  TableSource src;
  src.rows = rows.size();
  std::map<std::string, std::size_t> index;
  for (const auto& row : rows) {
    if (!row.is_object()) return false;
    for (const auto& [k, v] : row.items()) {
      if (index.emplace(k, src.names.size()).second) src.names.push_back(k);
    }
  }
  std::vector<std::string> names = src.names;
  src.cell = [&rows, names](std::size_t r, std::size_t c) -> const json* {
    auto it = rows[r].find(names[c]);
    return it == rows[r].end() ? nullptr : &*it;
  };
  return write_table_source(parent, name, src, known, allow_missing);
}

bool write_columns(hid_t parent, const std::string& name, const json& columns,
                   const std::vector<Column>& known) {
  if (!columns.is_object() || columns.empty()) return false;
  TableSource src;
  std::vector<const json*> arrays;
  bool first = true;
  for (const auto& [k, v] : columns.items()) {
    if (!v.is_array()) return false;
    if (first) {
      src.rows = v.size();
      first = false;
    } else if (v.size() != src.rows) {
      return false;
    }
    src.names.push_back(k);
    arrays.push_back(&v);
  }
  src.cell = [arrays](std::size_t r, std::size_t c) -> const json* { return &(*arrays[c])[r]; };
  std::vector<Column> kinds = known;
  if (src.rows == 0) {  // empty columns: known kinds where named, float otherwise
    kinds.clear();
    for (const auto& n : src.names) {
      auto it =
          std::find_if(known.begin(), known.end(), [&](const Column& c) { return c.name == n; });
      kinds.push_back(it != known.end() ? *it : Column{n, Kind::Float});
    }
    kinds = order_columns(kinds, known);
  }
  if (!write_table_source(parent, name, src, kinds, false)) return false;
  Handle ds{SB_HDF5_CHECK(H5Dopen2(parent, escape_name(name).c_str(), H5P_DEFAULT)), H5Dclose};
  set_text_attr(ds.get(), kLayoutAttr, "columns");
  return true;
}

}  // namespace sb::results::h5
