// The objectives against a plain scalar implementation of the same formulas, written
// independently of the tensor code, on hand-picked values that hit both clip branches.
#include "../catch_torch.hpp"

#include <algorithm>
#include <cmath>

#include "train/objective.hpp"

using train::ObjectiveOptions;

namespace {

struct Batch {
  std::vector<std::vector<double>> logp, old_logp, ref_logp, mask;
  std::vector<double> adv;
};

// Ratios of 1.5 and 0.6 leave the [0.8, 1.2] band on both sides, for both signs of A.
Batch example() {
  Batch b;
  b.logp = {{-1.0, -2.0, -0.5}, {-1.5, -0.3, -0.7}};
  b.old_logp = {{-1.0 - std::log(1.5), -2.0, -0.5 - std::log(0.6)},
                {-1.5 - std::log(0.6), -0.3 - std::log(1.1), -0.7}};
  b.ref_logp = {{-1.2, -1.9, -0.4}, {-1.0, -0.5, -0.9}};
  b.mask = {{1, 1, 1}, {1, 1, 0}};
  b.adv = {0.7, -1.3};
  return b;
}

at::Tensor tensor(const std::vector<std::vector<double>>& rows) {
  std::vector<double> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return at::tensor(flat, at::kDouble).reshape({(int64_t)rows.size(), (int64_t)rows[0].size()});
}

// Per-token loss of the paper's objective, one token at a time.
double token_loss(double logp, double old, double ref, double a, const ObjectiveOptions& o,
                  double log_weight) {
  double ratio = std::exp(log_weight);
  double high = 1 + o.clip_high.value_or(o.clip);
  double clipped = std::clamp(ratio, 1 - o.clip, high);
  double l = -std::min(ratio * a, clipped * a);
  if (o.beta != 0) {
    double d = ref - logp;
    l += o.beta * (std::exp(d) - d - 1);
  }
  (void)old;
  return l;
}

double reference_loss(const Batch& b, const ObjectiveOptions& o) {
  double total = 0, tokens = 0, seq_mean_sum = 0;
  size_t B = b.logp.size(), T = b.logp[0].size();
  for (size_t i = 0; i < B; ++i) {
    double seq_log = 0, seq_n = 0;
    for (size_t t = 0; t < T; ++t)
      if (b.mask[i][t]) seq_log += b.logp[i][t] - b.old_logp[i][t], seq_n += 1;
    double seq_sum = 0;
    for (size_t t = 0; t < T; ++t) {
      if (!b.mask[i][t]) continue;
      double lw = o.importance == train::Importance::token ? b.logp[i][t] - b.old_logp[i][t]
                                                           : seq_log / seq_n;
      double l = token_loss(b.logp[i][t], b.old_logp[i][t], b.ref_logp[i][t], b.adv[i], o, lw);
      seq_sum += l;
      total += l;
      tokens += 1;
    }
    seq_mean_sum += seq_sum / seq_n;
  }
  switch (o.loss) {
    case train::LossType::grpo: return seq_mean_sum / B;
    case train::LossType::bnpo: return total / tokens;
    case train::LossType::dr_grpo: return total / (B * o.max_completion_length);
    case train::LossType::dapo: return total / tokens;
  }
  return 0;
}

double run(const Batch& b, const ObjectiveOptions& o, train::ObjectiveTerms* terms = nullptr) {
  auto t = train::grpo_objective(tensor(b.logp), tensor(b.old_logp), tensor(b.ref_logp),
                                 at::tensor(b.adv, at::kDouble), tensor(b.mask), o);
  if (terms) *terms = t;
  return t.loss.item<double>();
}

}  // namespace

TEST_CASE("grpo loss matches the scalar formula for every normalisation", "[objective]") {
  Batch b = example();
  for (auto loss : {train::LossType::grpo, train::LossType::bnpo, train::LossType::dr_grpo,
                    train::LossType::dapo}) {
    for (double beta : {0.0, 0.04}) {
      ObjectiveOptions o;
      o.loss = loss;
      o.beta = beta;
      o.max_completion_length = 4;
      CHECK(run(b, o) == Approx(reference_loss(b, o)).epsilon(1e-12));
    }
  }
}

TEST_CASE("the upper clip and sequence-level ratios change the loss as defined", "[objective]") {
  Batch b = example();
  ObjectiveOptions o;
  o.clip_high = 0.28;
  double asym = run(b, o);
  CHECK(asym == Approx(reference_loss(b, o)).epsilon(1e-12));
  o.clip_high.reset();
  CHECK(asym != Approx(run(b, o)));
  o.importance = train::Importance::sequence;
  CHECK(run(b, o) == Approx(reference_loss(b, o)).epsilon(1e-12));
}

TEST_CASE("clip fractions count tokens clipped on each side", "[objective]") {
  Batch b = example();
  ObjectiveOptions o;
  train::ObjectiveTerms terms;
  run(b, o, &terms);
  // Row 0 (A > 0): ratio 1.5 is clipped high; ratio 0.6 with A > 0 is not clipped.
  // Row 1 (A < 0): ratio 0.6 is clipped low; the masked token does not count.
  CHECK(terms.tokens == 5);
  CHECK(terms.clip_high == Approx(1.0 / 5));
  CHECK(terms.clip_low == Approx(1.0 / 5));
}

TEST_CASE("the gradient flows only through unclipped tokens and counted positions", "[objective]") {
  Batch b = example();
  at::Tensor logp = tensor(b.logp).requires_grad_(true);
  ObjectiveOptions o;
  o.loss = train::LossType::bnpo;
  auto terms = train::grpo_objective(logp, tensor(b.old_logp), std::nullopt,
                                     at::tensor(b.adv, at::kDouble), tensor(b.mask), o);
  terms.loss.backward();
  at::Tensor g = logp.grad();
  CHECK(g[0][0].item<double>() == 0.0);  // clipped high with A > 0
  CHECK(g[1][0].item<double>() == 0.0);  // clipped low with A < 0
  CHECK(g[1][2].item<double>() == 0.0);  // padding
  // Unclipped: d/dlogp of -ratio*A/5 = -ratio*A/5.
  CHECK(g[0][1].item<double>() == Approx(-1.0 * 0.7 / 5));
  CHECK(g[0][2].item<double>() == Approx(-0.6 * 0.7 / 5));
  // Finite differences agree on an unclipped token with the KL term on.
  o.beta = 0.1;
  auto f = [&](double eps) {
    Batch c = b;
    c.logp[1][1] += eps;
    return run(c, o);
  };
  at::Tensor lp = tensor(b.logp).requires_grad_(true);
  train::grpo_objective(lp, tensor(b.old_logp), tensor(b.ref_logp),
                        at::tensor(b.adv, at::kDouble), tensor(b.mask), o).loss.backward();
  CHECK(lp.grad()[1][1].item<double>() == Approx((f(1e-6) - f(-1e-6)) / 2e-6).epsilon(1e-6));
}

TEST_CASE("advantages are group-relative and flat groups give none", "[objective]") {
  auto a = train::compute_advantages({{1, 2, 3}, {5, 5}}, train::RewardScaling::group, 0.0);
  REQUIRE(a.values.size() == 5);
  CHECK(a.values[0] == Approx(-1.0));  // (1 - 2) / 1
  CHECK(a.values[2] == Approx(1.0));
  CHECK(a.values[3] == 0.0);
  CHECK(a.zero_variance_groups == 1);
  auto none = train::compute_advantages({{1, 2, 3}}, train::RewardScaling::none);
  CHECK(none.values[0] == Approx(-1.0));
  auto batch = train::compute_advantages({{0, 2}, {4, 6}}, train::RewardScaling::batch, 0.0);
  CHECK(batch.values[0] == Approx(-1.0 / std::sqrt(20.0 / 3.0)));
  CHECK_THROWS_WITH(train::loss_type_from("ppo"), Catch::Contains("unknown loss 'ppo'"));
}

TEST_CASE("given advantages are kept as they are, checked, with the rewards' statistics", "[objective]") {
  auto a = train::given_advantages({{1, 3}, {2}}, {{0.5, -0.5}, {0.0}});
  REQUIRE(a.values.size() == 3);
  CHECK(a.values[0] == 0.5);
  CHECK(a.values[1] == -0.5);
  CHECK(a.values[2] == 0.0);
  CHECK(a.zero_variance_groups == 1);  // the group of one with no advantage
  CHECK(a.reward_mean == Approx(2.0));
  CHECK_THROWS_WITH(train::given_advantages({{1, 3}}, {{0.5}}),
                    Catch::Contains("group 1 has 1 advantages for 2 completions"));
  CHECK_THROWS_WITH(train::given_advantages({{1}}, {{std::nan("")}}), Catch::Contains("not finite"));
  CHECK_THROWS_WITH(train::given_advantages({{1}, {2}}, {{0.5}}), Catch::Contains("advantages for 1 groups"));
}

TEST_CASE("sft averages the negative log-likelihood over counted tokens", "[objective]") {
  at::Tensor logp = tensor({{-1.0, -2.0}, {-3.0, -4.0}});
  at::Tensor mask = tensor({{0, 1}, {1, 1}});
  CHECK(train::sft_objective(logp, mask).item<double>() == Approx(3.0));
}
