// Collectives over tensors for the ranks of a dist::Group (torch side).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "dist/group.hpp"

namespace dist {

// Replaces each tensor by its sum over the ranks, in place. The tensors travel as one
// buffer per dtype; on failure (a rank stopped, the timeout passed) throws
// std::runtime_error naming this rank.
void sum(Group& g, std::vector<at::Tensor>& tensors);

// Replaces each tensor by root's copy, in place.
void broadcast(Group& g, std::vector<at::Tensor>& tensors, int root);

}  // namespace dist
