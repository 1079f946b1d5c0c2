#pragma once
/// @file utc_time.hpp
/// The wall clock's time of day in UTC as ISO 8601 text, for records, reports and files.

#include <string>

namespace sb {

/// Now to the millisecond, "2026-11-22T10:00:00.123Z": the record stream, reports, caches.
[[nodiscard]] std::string utc_now();

/// Now to the second, "2026-11-22T10:00:00Z": datagen files and the history store.
[[nodiscard]] std::string utc_now_seconds();

}  // namespace sb
