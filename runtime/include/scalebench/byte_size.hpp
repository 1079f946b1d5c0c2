#pragma once
/// @file byte_size.hpp
/// Sizes in bytes as people read them. Sizes (memory, files) take binary prefixes, KiB = 1024
/// bytes, everywhere scalebench prints one; rates keep SI prefixes (GB/s = 10^9 bytes a
/// second), as nccl-tests and STREAM print them (docs/report-schema.md).

#include <string>

namespace sb {

/// "25.3 GiB", "512 MiB", "2.00 GiB", "17 B": three significant digits (all of a number of 100
/// or more); "-" for NaN.
[[nodiscard]] std::string human_bytes(double bytes);

}  // namespace sb
