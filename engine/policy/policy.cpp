#include "policy/policy.hpp"

#include "files/cores.hpp"
#include "policy/policy_impl.hpp"
#include "policy/torch_side.hpp"
#include "policy/safetensors.hpp"

namespace policy {

using torch::Tensor;

std::shared_ptr<TextCodec> load_tokenizer_codec(const std::string& dir);  // tokenizer_codec.cpp
// The checkpoint's own tokenizer.json unless a script or test registered another loader.
static CodecLoader g_codec_loader = load_tokenizer_codec;
void set_codec_loader(CodecLoader loader) { g_codec_loader = loader; }
CodecLoader codec_loader() { return g_codec_loader; }

bool cuda_available() { return torch::cuda::is_available(); }
int cuda_devices() { return cuda_available() ? static_cast<int>(torch::cuda::device_count()) : 0; }

// A libtorch whose GEMMs run in MKL shares one OpenMP pool with them: every core this
// process may use (its affinity, not the machine's count: on two of a GPU node's cores,
// given by taskset, 16 threads spinning made CPU sampling 8.7x slower). Another BLAS (Debian's
// libtorch uses OpenBLAS) keeps a thread pool of its own, and an OpenMP pool as wide as
// the machine beside it spins while the BLAS works: on two cores a decode step of the
// default model took 3.5x as long, a GRPO step 2.5x (docs/performance.md). Then the BLAS
// alone runs in parallel, and torch's own operations, small next to the GEMMs, run on one
// thread.
int default_threads() {
  return at::hasMKL() ? files::usable_cores() : 1;
}
int intra_op_threads() { return at::get_num_threads(); }

static std::unique_ptr<Policy::Impl> make_impl(const LoadOptions& o) {
  auto impl = std::make_unique<Policy::Impl>();
  impl->device = parse_device(o.device);
  impl->dtype = parse_dtype(o.dtype);
  impl->device_name = o.device;
  impl->dtype_name = o.dtype;
  impl->cuda_graphs = o.cuda_graphs;
  if (impl->device.is_cpu()) at::set_num_threads(std::max(1, o.threads > 0 ? o.threads : default_threads()));
  return impl;
}

std::unique_ptr<Policy> Policy::load(const std::string& dir, const LoadOptions& o) {
  std::unique_ptr<Policy> p;
  if (o.random_weights >= 0) {
    p = random(load_config(dir), o, static_cast<uint64_t>(o.random_weights));
  } else {
    p.reset(new Policy());
    p->impl_ = make_impl(o);
    p->impl_->model = load_transformer(dir, p->impl_->device, p->impl_->dtype);
  }
  p->dir_ = dir;
  if (auto loader = codec_loader()) p->set_codec(loader(dir));
  return p;
}

void Policy::set_codec(std::shared_ptr<TextCodec> c) {
  codec_ = std::move(c);
  const int64_t known = codec_ ? codec_->vocab_size() : 0;
  impl_->model->output_vocab = known > 0 && known < config().vocab_size ? known : 0;
}

int64_t Policy::output_vocab() const {
  return impl_->model->output_vocab > 0 ? impl_->model->output_vocab : config().vocab_size;
}

std::unique_ptr<Policy> Policy::random(const ModelConfig& cfg, const LoadOptions& o, uint64_t seed) {
  std::unique_ptr<Policy> p(new Policy());
  p->impl_ = make_impl(o);
  auto opts = torch::TensorOptions().dtype(p->impl_->dtype).device(p->impl_->device);
  const OnDevice on_device(p->impl_->device);
  p->impl_->model = Transformer(cfg, opts);
  p->impl_->model->init_random(seed);
  p->impl_->model->fuse();
  p->impl_->model->eval();
  return p;
}

Policy::~Policy() = default;

Transformer& TorchSide::model(Policy& p) { return p.impl_->model; }
torch::Device TorchSide::device(const Policy& p) { return p.impl_->device; }

const ModelConfig& Policy::config() const { return impl_->model->cfg; }
const std::string& Policy::device() const { return impl_->device_name; }
const std::string& Policy::dtype() const { return impl_->dtype_name; }

int64_t Policy::parameter_bytes() const {
  int64_t total = 0;
  for (auto& p : impl_->model->parameters()) total += p.numel() * p.element_size();
  return total;
}

std::vector<float> Policy::logprobs(const std::vector<int>& prompt, const std::vector<int>& completion,
                                    double temperature) {
  const auto& cfg = config();
  if (prompt.empty()) throw std::invalid_argument("policy:logprobs: the prompt is empty");
  if (!(temperature > 0)) throw std::invalid_argument("policy:logprobs: temperature must be > 0");
  if (completion.empty()) return {};
  std::vector<int64_t> all(prompt.begin(), prompt.end());
  all.insert(all.end(), completion.begin(), completion.end());
  for (auto t : all)
    if (t < 0 || t >= cfg.vocab_size)
      throw std::invalid_argument("policy:logprobs: token " + std::to_string(t) +
                                  " is outside the vocabulary of " + std::to_string(cfg.vocab_size));
  if (static_cast<int64_t>(all.size()) > cfg.max_position)
    throw std::invalid_argument("policy:logprobs: " + std::to_string(all.size()) +
                                " tokens exceed the context of " + std::to_string(cfg.max_position));
  c10::InferenceMode guard;
  const OnDevice on_device(impl_->device);
  auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  Tensor ids = torch::tensor(all, i64).unsqueeze(0).to(impl_->device);
  const int64_t L = static_cast<int64_t>(prompt.size()), C = static_cast<int64_t>(completion.size());
  // Only the positions that predict completion tokens go through the output projection.
  Tensor pos = torch::arange(static_cast<int64_t>(all.size()), i64.device(impl_->device)).unsqueeze(0);
  Tensor h = impl_->model->hidden(ids, pos, {}, nullptr).narrow(1, L - 1, C);
  Tensor logits = impl_->model->logits(h).squeeze(0).to(torch::kFloat32) / temperature;
  Tensor target = ids.squeeze(0).narrow(0, L, C).unsqueeze(1);
  Tensor lp = torch::log_softmax(logits, -1).gather(1, target).squeeze(1).cpu();
  return std::vector<float>(lp.data_ptr<float>(), lp.data_ptr<float>() + C);
}

}  // namespace policy
