#pragma once
/// @file host_link_verdicts.hpp
/// (private) The verdict table's host-link rows: each GPU's host-to-device and device-to-host
/// copy bandwidth from pinned memory (/system/host_links, measured at the start of a run with
/// each-gpu cases), judged against the same model's GPUs in the run (lower is worse; with three
/// peers or more: under their median by more than the larger of 3.5 robust standard deviations
/// and 10%; with one or two: by more than 15%), against a reference file's `link/...` entry, and
/// against half the nominal rate of the GPU's PCIe link at its maximum generation and width.
/// The reason names the PCIe link read during the copies and the NUMA nodes of the host buffer
/// and of the GPU when they differ.

#include <nlohmann/json.hpp>

#include "scalebench/references.hpp"

namespace sb::results::detail {

inline constexpr double kLinkFloor = 0.10;        ///< never slow within 10% of the peers
inline constexpr double kLinkSmallFleet = 0.15;   ///< one or two peers
inline constexpr double kLinkNominalShare = 0.5;  ///< under half the PCIe link's nominal rate

/// PCIe's usable rate per lane and direction after line coding, bytes/s (Gen1-6); 0 when unknown.
[[nodiscard]] double pcie_lane_bytes_per_s(int generation);

/// Appends one row per GPU and direction: the columns of a device row, `case`
/// "link/host-to-device" or "link/device-to-host", `workload` "link", `value` and `expected` in
/// B/s (`unit` "B/s"), verdict ok, slow, busy (slow while another process was on the GPU) or not
/// judged (not measured, or nothing to compare with).
void add_host_link_verdicts(const nlohmann::json& model, const ReferenceSet& references,
                            nlohmann::json& rows);

}  // namespace sb::results::detail
