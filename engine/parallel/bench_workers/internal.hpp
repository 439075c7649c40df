// Shared by the MPI and the single-process implementations of cluster.hpp.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cluster::detail {

std::string kind_of(const nlohmann::json& machine);   // the comparability key
std::string host_name();

}  // namespace cluster::detail
