#pragma once
/// @file h5_tree.hpp
/// JSON <-> HDF5 mapping of the report writer and reader, the history store and datagen.
///
/// Generic rules (docs/report-schema.md, "Generic storage"):
///   scalar (number, string, bool, null) -> attribute (int64 / float64 / UTF-8 string /
///                                          enum{FALSE,TRUE} / null dataspace)
///   object                              -> group
///   array of numbers / strings / bools  -> 1-D dataset; equal-length number arrays -> 2-D
///   array of flat objects               -> compound dataset ("table"), one row per element
///   anything else                       -> group with attribute _sb_array, children "0", "1"..
/// Every HDF5 call goes through SB_HDF5_CHECK.

#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/h5_handle.hpp"

namespace sb::results::h5 {

using json = nlohmann::json;

/// Turns off HDF5's automatic error printing (once per process); errors become exceptions.
void quiet_errors();

/// Column type of a compound table.
enum class Kind { Int, Float, Str, Bool };
struct Column {
  std::string name;
  Kind kind;
};

/// Escapes a JSON key into an HDF5 name ('%' -> %25, '/' -> %2F, "." -> %2E, "" -> %).
[[nodiscard]] std::string escape_name(const std::string& key);
[[nodiscard]] std::string unescape_name(const std::string& name);

Handle create_group(hid_t parent, const std::string& key);
Handle open_group(hid_t parent, const std::string& key);
[[nodiscard]] bool has_link(hid_t parent, const std::string& key);

/// Writes one JSON value under `key` in `parent` following the generic rules.
void write_value(hid_t parent, const std::string& key, const json& value);
/// Writes every member of `object` into `group` (write_value per member), skipping `skip`.
void write_members(hid_t group, const json& object, const std::vector<std::string>& skip = {});
/// Writes a scalar attribute (null, bool, number or string).
void write_attr(hid_t obj, const std::string& key, const json& value);

/// Writes `rows` (array of objects with scalar values) as a compound dataset. `known` gives
/// column order first and the columns of an empty table. With `allow_missing`, rows may lack
/// keys (missing numbers become NaN, strings "", bools false); without it such rows make the
/// function return false without writing. Also false when values are not table-compatible.
bool write_table(hid_t parent, const std::string& name, const json& rows,
                 const std::vector<Column>& known, bool allow_missing);
/// Writes a column object {"a":[..], "b":[..]} (equal lengths, scalar values) as a compound
/// dataset with attribute layout="columns". False (nothing written) when not compatible.
bool write_columns(hid_t parent, const std::string& name, const json& columns,
                   const std::vector<Column>& known);
/// Sets a string attribute on a dataset or group (documentation: units, layout).
void set_text_attr(hid_t obj, const std::string& name, const std::string& text);

/// Reads a group back following the generic rules (inverse of write_members).
[[nodiscard]] json read_group(hid_t group);
/// Reads one link of `parent` (dataset or group) back into JSON.
[[nodiscard]] json read_link(hid_t parent, const std::string& key);
/// Reads every attribute of `obj` into a JSON object (names unescaped).
[[nodiscard]] json read_attrs(hid_t obj);
/// Link names of a group in name order (escaped, as stored).
[[nodiscard]] std::vector<std::string> link_names(hid_t group);

}  // namespace sb::results::h5
