// log pi(token) of chosen tokens from hidden states, through the output projection, without
// ever holding the [N, V] logits: both the forward and the backward run over chunks of
// rows, and the backward recomputes each chunk's logits from the hidden states. With a
// vocabulary of 152k, the logits of one micro-batch (8 x 1,024 tokens) would hold 12 GB
// in fp32 with their log-softmax and gradient; chunks hold one chunk's.
#pragma once

#include <ATen/ATen.h>

namespace train {

// hidden [N, H], weight [V, H] (the output projection; its gradient is accumulated when it
// requires one), targets [N] int64. Returns [N] fp32: log softmax(hidden W^T / temperature)
// at each target, the logits computed in the weight's dtype and normalised in fp32 (as
// log_softmax(logits.float() / temperature) would). chunk: rows per chunk, > 0.
at::Tensor token_logprobs(const at::Tensor& hidden, const at::Tensor& weight,
                          const at::Tensor& targets, double temperature, int64_t chunk);

}  // namespace train
