#pragma once
/// @file scaling.hpp
/// Scaling studies (docs/batch.md, "Scaling studies"): one workload run at several node counts,
/// strong (the same problem on more nodes) or weak (the problem grown with the node count by its
/// workload's rule, Workload::weak_scale), merged into one report (merge.hpp). Each run records
/// `scaling_mode`, `scaling_nodes` and `weak_scale` in its attributes, and a weak run's cases
/// their `scaling_id` (the case id at the first node count).
///
/// Per case (multi-cpu and multi-gpu: the paths that spread over nodes) and node count K, against
/// the smallest node count K0 that ran it ok:
///  - speedup: strong T(K0) / T(K); weak, the throughput (work per second) ratio
///    (W(K) / T(K)) / (W(K0) / T(K0)), which is T(K0) / T(K) when the problem grew exactly K / K0
///    times;
///  - ideal: K / K0;
///  - efficiency: speedup / ideal (1 = perfect scaling).

#include <string>

#include <nlohmann/json.hpp>

namespace sb::results {

/// The scaling table of a merged model: {"mode": "strong"|"weak"|"mixed", "rows": [{case,
/// workload, path, nodes, workers, threads_per_worker, status, median_s, work_units, speedup,
/// ideal, efficiency}]} with rows per case in node order; null when no case carries a node count
/// (`scaling_nodes`, set by the merge from its report's attribute).
[[nodiscard]] nlohmann::json scaling_table(const nlohmann::json& model);

/// The table for a terminal ("" when the model has none): per case its node counts with time,
/// speedup, ideal and efficiency.
[[nodiscard]] std::string format_scaling_text(const nlohmann::json& model);

}  // namespace sb::results
