#pragma once
/// @file h5_tree_detail.hpp
/// (results internals) What h5_tree.cpp (writing) and h5_tree_read.cpp (reading) share: the
/// markers of scalebench's layouts and the string type and transfer buffers both use.

#include <cstddef>

#include "scalebench/h5_handle.hpp"

namespace sb::results::h5::detail {

/// An attribute on a group that holds a JSON array (its members are named 0, 1, ...).
inline constexpr const char* kArrayMarker = "_sb_array";
/// An attribute on a table: "columns" when it was written from a column object.
inline constexpr const char* kLayoutAttr = "layout";
/// Every compound field sits in an 8-byte slot of a table's records in memory.
inline constexpr std::size_t kSlot = 8;

/// A variable-length string type of `cset`.
[[nodiscard]] Handle str_type(H5T_cset_t cset = H5T_CSET_UTF8);

/// h5py's boolean type: an int8 enum {FALSE = 0, TRUE = 1}.
[[nodiscard]] Handle bool_type();

/// The string type of `cset` and the boolean type, made once per process (not to be closed).
[[nodiscard]] hid_t shared_str_type(H5T_cset_t cset = H5T_CSET_UTF8);
[[nodiscard]] hid_t shared_bool_type();

/// A transfer property list whose type-conversion buffers hold `n` elements of the larger of the
/// two types: HDF5's default is 1 MiB, allocated and cleared for every read or write that
/// converts, which cost a report of many small tables more than its data (bench/merge_fleet.sh).
[[nodiscard]] Handle transfer_plist(hid_t a, hid_t b, std::size_t n);

}  // namespace sb::results::h5::detail
