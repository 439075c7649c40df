// The fused kernels of a training step (forward and backward, bf16): each replaces a chain
// of autograd's elementwise operations over activations of every layer. No torch here: the
// caller passes raw pointers (cuda_ops.hpp wraps them, model.cpp's autograd functions call
// those).
#pragma once

#include <cstdint>

namespace policy {

// The backward of swiglu_launch, rounded as autograd's mul and silu_backward round: for
// the output's gradient g [rows, inner], dgu[r, i] = bf16(bf16(g * up) * silu'(gate)) and
// dgu[r, inner + i] = bf16(g * bf16(silu(gate))), dgu [rows, 2 * inner] contiguous.
void swiglu_backward_launch(const void* gu, const void* grad, void* dgu, int64_t rows,
                            int64_t inner, void* stream);

// RoPE of a training step over rows of d values: x [rows, d] contiguous, row r at
// position r / heads of cos and sin [positions, d] (sin with rotate_half's sign folded in).
// Forward: out = bf16(bf16(x * cos) + [x2, x1] * sin); backward (x is then the output's
// gradient): out = bf16(bf16(x * cos) + swap(bf16(x * sin))), as autograd rounds.
void rope_rows_launch(const void* x, const void* cos, const void* sin, void* out, int64_t rows,
                      int heads, int head_dim, bool backward, void* stream);

}  // namespace policy
