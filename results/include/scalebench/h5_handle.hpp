#pragma once
/// @file h5_handle.hpp
/// The one owner of HDF5 identifiers in scalebench (the report writer and reader, datagen):
/// closes each with its matching H5?close function; close() reports a failure (a file: its data
/// did not reach the disk) as sb::LibraryError.

#include <hdf5.h>

#include <utility>

namespace sb::results::h5 {

/// Owns one HDF5 identifier and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() noexcept = default;
  Handle(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, -1)), closer_(o.closer_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, -1);
      closer_ = o.closer_;
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() noexcept {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = -1;
  }
  /// Closes now and throws sb::LibraryError when closing fails (files: data reaches the disk).
  void close();
  [[nodiscard]] hid_t get() const noexcept { return id_; }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

}  // namespace sb::results::h5
