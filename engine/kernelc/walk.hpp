#pragma once

#include <functional>

#include "kernelc/ast.hpp"

namespace kernelc {

// Calls f on n and, while f returns true, on its children (statements, expressions,
// initializers and OpenMP clause expressions).
void walk(Node* n, const std::function<bool(Node*)>& f);

// The variable an lvalue designates directly (x, x.f, v[i]), if any.
Obj* root_var(Node* n);

}  // namespace kernelc
