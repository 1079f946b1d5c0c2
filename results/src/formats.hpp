#pragma once
/// @file formats.hpp
/// (private) One renderer per `scalebench report --format`; `summary` is summarize(model).

#include <string>

#include <nlohmann/json.hpp>

namespace sb::results::detail {

std::string format_table(const nlohmann::json& model, const nlohmann::json& summary);
std::string format_markdown(const nlohmann::json& model, const nlohmann::json& summary);
std::string format_csv(const nlohmann::json& summary);
std::string format_json(const nlohmann::json& model, const nlohmann::json& summary);
std::string format_gbench(const nlohmann::json& model, const nlohmann::json& summary);
std::string format_html(const nlohmann::json& model, const nlohmann::json& summary);

}  // namespace sb::results::detail
