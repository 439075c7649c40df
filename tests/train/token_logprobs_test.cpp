// The chunked log-probabilities against log_softmax over the whole logits: values and
// both gradients, with chunks that do not divide the rows, a temperature, and bf16.
#include "../catch_torch.hpp"

#include <torch/torch.h>

#include "train/token_logprobs.hpp"

namespace {

struct Case {
  torch::Tensor hidden, weight, targets, upstream;
};

Case make_case(torch::Dtype dtype) {
  torch::manual_seed(3);
  auto o = torch::TensorOptions().dtype(dtype);
  return {torch::randn({10, 16}, o).requires_grad_(true), torch::randn({37, 16}, o).requires_grad_(true),
          torch::randint(0, 37, {10}, torch::kInt64), torch::randn({10})};
}

torch::Tensor whole(const Case& c, double temperature) {
  auto z = torch::linear(c.hidden, c.weight).to(torch::kFloat32) / temperature;
  return torch::log_softmax(z, -1).gather(1, c.targets.unsqueeze(1)).squeeze(1);
}

}  // namespace

TEST_CASE("chunked token log-probs equal log_softmax over the whole logits, with gradients", "[train][logprobs]") {
  for (int64_t chunk : {1, 3, 10, 64})
    for (double temperature : {1.0, 0.7}) {
      INFO("chunk " << chunk << ", temperature " << temperature);
      Case a = make_case(torch::kFloat64), b = make_case(torch::kFloat64);
      auto want = whole(a, temperature);
      auto got = train::token_logprobs(b.hidden, b.weight, b.targets, temperature, chunk);
      REQUIRE(got.sizes() == want.sizes());
      CHECK(got.scalar_type() == torch::kFloat32);
      CHECK(torch::allclose(got, want, 1e-5, 1e-6));
      (want * a.upstream).sum().backward();
      (got * b.upstream).sum().backward();
      CHECK(torch::allclose(b.hidden.grad(), a.hidden.grad(), 1e-4, 1e-6));
      CHECK(torch::allclose(b.weight.grad(), a.weight.grad(), 1e-4, 1e-6));
    }
}

TEST_CASE("chunked token log-probs in bf16 follow the logits' rounding", "[train][logprobs]") {
  Case a = make_case(torch::kBFloat16), b = make_case(torch::kBFloat16);
  auto want = whole(a, 1.0);
  auto got = train::token_logprobs(b.hidden, b.weight, b.targets, 1.0, 4);
  CHECK(torch::allclose(got, want, 1e-5, 1e-5));
  (want * a.upstream).sum().backward();
  (got * b.upstream).sum().backward();
  CHECK(torch::allclose(b.hidden.grad().to(torch::kFloat32), a.hidden.grad().to(torch::kFloat32), 2e-2, 2e-2));
}

TEST_CASE("a frozen projection gets no gradient and bad shapes are named", "[train][logprobs]") {
  Case c = make_case(torch::kFloat32);
  c.weight.set_requires_grad(false);
  train::token_logprobs(c.hidden, c.weight, c.targets, 1.0, 4).sum().backward();
  CHECK(c.hidden.grad().defined());
  CHECK_FALSE(c.weight.grad().defined());
  CHECK_THROWS_WITH(train::token_logprobs(c.hidden, c.weight.t(), c.targets, 1.0, 4),
                    Catch::Contains("hidden [N, H] and weight [V, H]"));
  CHECK_THROWS_WITH(train::token_logprobs(c.hidden, c.weight, c.targets.narrow(0, 0, 5), 1.0, 4),
                    Catch::Contains("one target per row"));
  CHECK_THROWS_WITH(train::token_logprobs(c.hidden, c.weight, c.targets, 1.0, 0),
                    Catch::Contains("chunk must be positive"));
}
