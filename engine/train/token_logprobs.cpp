#include "train/token_logprobs.hpp"

#include <torch/torch.h>

#include <stdexcept>

namespace train {

using torch::Tensor;

namespace {

// Logits of rows [begin, begin + n) in fp32, divided by the temperature.
Tensor scaled_logits(const Tensor& hidden, const Tensor& weight, int64_t begin, int64_t n,
                     double temperature) {
  Tensor z = torch::linear(hidden.narrow(0, begin, n), weight).to(torch::kFloat32);
  return temperature == 1.0 ? z : z.div_(temperature);
}

struct ChunkedLogprobs : torch::autograd::Function<ChunkedLogprobs> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor hidden, Tensor weight,
                        Tensor targets, double temperature, int64_t chunk) {
    const int64_t N = hidden.size(0);
    Tensor out = torch::empty({N}, hidden.options().dtype(torch::kFloat32));
    Tensor lse = torch::empty({N}, out.options());
    for (int64_t b = 0; b < N; b += chunk) {
      const int64_t n = std::min(chunk, N - b);
      Tensor z = scaled_logits(hidden, weight, b, n, temperature);
      Tensor l = torch::logsumexp(z, -1);
      lse.narrow(0, b, n).copy_(l);
      out.narrow(0, b, n).copy_(z.gather(1, targets.narrow(0, b, n).unsqueeze(1)).squeeze(1) - l);
    }
    ctx->save_for_backward({hidden, weight, targets, lse});
    ctx->saved_data["temperature"] = temperature;
    ctx->saved_data["chunk"] = chunk;
    return out;
  }

  // d logp_i / d z_i = (onehot(target_i) - softmax(z_i)) / temperature, row by row.
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor &hidden = saved[0], &weight = saved[1], &targets = saved[2], &lse = saved[3];
    const double temperature = ctx->saved_data["temperature"].toDouble();
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const bool want_h = ctx->needs_input_grad(0), want_w = ctx->needs_input_grad(1);
    const int64_t N = hidden.size(0);
    Tensor g = grads[0].to(torch::kFloat32);
    Tensor dh = want_h ? torch::empty_like(hidden) : Tensor();
    // fp32 across chunks: a bf16 sum would round once per chunk.
    Tensor dw = want_w ? torch::zeros(weight.sizes(), weight.options().dtype(torch::kFloat32)) : Tensor();
    for (int64_t b = 0; b < N; b += chunk) {
      const int64_t n = std::min(chunk, N - b);
      Tensor gc = g.narrow(0, b, n);
      Tensor dz = scaled_logits(hidden, weight, b, n, temperature)
                      .sub_(lse.narrow(0, b, n).unsqueeze(1))
                      .exp_()
                      .mul_(gc.neg().unsqueeze(1));
      dz.scatter_add_(1, targets.narrow(0, b, n).unsqueeze(1), gc.unsqueeze(1));
      if (temperature != 1.0) dz.div_(temperature);
      dz = dz.to(hidden.scalar_type());
      if (want_h) dh.narrow(0, b, n).copy_(dz.mm(weight));
      if (want_w) dw.add_(dz.t().mm(hidden.narrow(0, b, n)));
    }
    return {dh, want_w ? dw.to(weight.scalar_type()) : dw, Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

Tensor token_logprobs(const Tensor& hidden, const Tensor& weight, const Tensor& targets,
                      double temperature, int64_t chunk) {
  if (hidden.dim() != 2 || weight.dim() != 2 || hidden.size(1) != weight.size(1))
    throw std::invalid_argument("token_logprobs: hidden [N, H] and weight [V, H] expected");
  if (targets.dim() != 1 || targets.size(0) != hidden.size(0))
    throw std::invalid_argument("token_logprobs: one target per row expected");
  if (chunk <= 0) throw std::invalid_argument("token_logprobs: chunk must be positive");
  if (temperature <= 0) throw std::invalid_argument("token_logprobs: temperature must be positive");
  return ChunkedLogprobs::apply(hidden, weight, targets.to(torch::kInt64), temperature, chunk);
}

}  // namespace train
