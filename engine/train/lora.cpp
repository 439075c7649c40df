#include "train/lora.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace train {

LoraAdapter::LoraAdapter(int64_t in, int64_t out, const LoraOptions& o,
                         const torch::TensorOptions& t)
    : scale(o.alpha / static_cast<double>(o.r)), dropout(o.dropout) {
  // A as nn.Linear's default (kaiming uniform, a = sqrt(5)): U(-1/sqrt(in), 1/sqrt(in)).
  double bound = 1.0 / std::sqrt(static_cast<double>(in));
  A = torch::empty({o.r, in}, t).uniform_(-bound, bound).requires_grad_(true);
  B = torch::zeros({out, o.r}, t).requires_grad_(true);
}

// The adapter's input: x with dropout inside a trainer's pass, x itself otherwise.
torch::Tensor LoraAdapter::dropped(const torch::Tensor& x) const {
  return training && dropout > 0 ? torch::dropout(x, dropout, true) : x;
}

// The scale multiplies the r columns of x A^T rather than the out columns of the term, and
// the GEMM by B accumulates into y (beta = 1): no pass over [rows, out] besides the GEMM's.
torch::Tensor LoraAdapter::add_to(torch::Tensor y, const torch::Tensor& x) {
  return y.addmm_(torch::linear(dropped(x), A).mul(scale), B.t());
}

torch::Tensor LoraAdapter::add_group_to(torch::Tensor y, const torch::Tensor& x,
                                        const std::vector<policy::Adapter*>& group) {
  std::vector<torch::Tensor> As, Bs;
  for (auto* a : group) {
    auto* l = dynamic_cast<LoraAdapter*>(a);
    if (!l || l->scale != scale || l->dropout != dropout || l->training != training) return {};
    As.push_back(l->A);
    Bs.push_back(l->B);
  }
  return y.addmm_(torch::linear(dropped(x), torch::cat(As, 0)).mul(scale), torch::block_diag(Bs).t());
}

Lora::Lora(policy::Transformer model, LoraOptions opts, uint64_t seed)
    : model_(std::move(model)), opts_(std::move(opts)) {
  if (opts_.r <= 0) throw std::invalid_argument("lora: r must be positive");
  if (opts_.dropout < 0 || opts_.dropout >= 1)
    throw std::invalid_argument("lora: dropout must be in [0, 1)");
  torch::manual_seed(seed);
  for (auto& p : model_->parameters()) p.set_requires_grad(false);
  for (const auto& item : model_->named_modules("model")) {
    auto linear = std::dynamic_pointer_cast<policy::LinearImpl>(item.value());
    if (!linear) continue;
    std::string leaf = item.key().substr(item.key().rfind('.') + 1);
    if (std::find(opts_.targets.begin(), opts_.targets.end(), leaf) == opts_.targets.end())
      continue;
    auto w = linear->weight;
    auto adapter = std::make_shared<LoraAdapter>(w.size(1), w.size(0), opts_, w.options());
    linear->adapter = adapter;
    sites_.push_back({item.key(), policy::Linear(linear), adapter});
  }
  if (sites_.empty()) {
    std::string names;
    for (const auto& t : opts_.targets) names += (names.empty() ? "" : ", ") + t;
    throw std::invalid_argument("lora: no projection matches the targets (" + names + ")");
  }
}

Lora::~Lora() {
  for (auto& s : sites_) s.linear->adapter.reset();
}

std::vector<torch::Tensor> Lora::parameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& s : sites_) {
    out.push_back(s.adapter->A);
    out.push_back(s.adapter->B);
  }
  return out;
}

void Lora::set_enabled(bool on) {
  for (auto& s : sites_) s.adapter->enabled = on;
}

void Lora::set_training(bool on) {
  for (auto& s : sites_) s.adapter->training = on;
}

std::vector<std::pair<std::string, torch::Tensor>> Lora::named_tensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& s : sites_) {
    out.emplace_back("base_model.model." + s.name + ".lora_A.weight", s.adapter->A);
    out.emplace_back("base_model.model." + s.name + ".lora_B.weight", s.adapter->B);
  }
  return out;
}

std::vector<std::pair<std::string, torch::Tensor>> Lora::merged_weights() const {
  torch::NoGradGuard no_grad;
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& s : sites_) {
    const auto& a = *s.adapter;
    torch::Tensor w = s.linear->weight + (a.B.matmul(a.A) * a.scale).to(s.linear->weight.dtype());
    out.emplace_back(s.name.substr(std::string("model.").size()) + ".weight", w);
  }
  return out;
}

void Lora::load(const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  std::map<std::string, torch::Tensor> by_name(tensors.begin(), tensors.end());
  torch::NoGradGuard no_grad;
  for (const auto& [name, target] : named_tensors()) {
    auto it = by_name.find(name);
    if (it == by_name.end()) throw std::runtime_error("lora: adapter tensor missing: " + name);
    if (it->second.sizes() != target.sizes())
      throw std::runtime_error("lora: adapter tensor " + name + " has the wrong shape");
    target.copy_(it->second);
  }
}

}  // namespace train
