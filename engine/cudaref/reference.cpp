#include "cudaref/reference.hpp"

#include "cuda/cuda.hpp"

#include <torch/torch.h>
#include <torch/version.h>

#include <functional>
#include <stdexcept>

namespace cudaref {

namespace {

using torch::Tensor;

struct Op {
  const char* name;
  const char* contract;
  std::vector<const char*> size_vars;
  std::function<std::vector<Tensor>(const Size&, const std::vector<Tensor>&)> fn;
  std::function<std::vector<std::vector<long long>>(const Size&)> input_shapes;
  // libtorch's fused op where it has one (the yardstick); fn otherwise
  std::function<std::vector<Tensor>(const Size&, const std::vector<Tensor>&)> fused = nullptr;
  // the yardstick's dtype, the task's buffers' (the reference is in double whatever it is)
  torch::Dtype dtype = torch::kFloat32;
};

long long var(const Size& s, const char* name) { return s.at(name); }

Tensor gelu_tanh(const Tensor& x) {
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1 + torch::tanh(c * (x + 0.044715 * x * x * x)));
}

const std::vector<Op>& table() {
  static const std::vector<Op> t = {
      {"vector_add", "x[n], y[n] -> z[n] = x + y", {"n"},
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; },
       [](const Size& s) { return std::vector<std::vector<long long>>{{var(s, "n")}, {var(s, "n")}}; }},
      {"relu_bias", "x[rows, cols], b[cols] -> y[rows, cols] = max(0, x + b)", {"rows", "cols"},
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{torch::relu(in[0] + in[1])}; },
       [](const Size& s) {
         return std::vector<std::vector<long long>>{{var(s, "rows"), var(s, "cols")}, {var(s, "cols")}};
       }},
      {"gelu_tanh", "x[n] -> y[n] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", {"n"},
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{gelu_tanh(in[0])}; },
       [](const Size& s) { return std::vector<std::vector<long long>>{{var(s, "n")}}; },
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{torch::gelu(in[0], "tanh")}; }},
      {"transpose", "x[rows, cols] -> y[cols, rows]", {"rows", "cols"},
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].t().contiguous()}; },
       [](const Size& s) { return std::vector<std::vector<long long>>{{var(s, "rows"), var(s, "cols")}}; }},
      {"sum_rows", "x[rows, cols] -> y[rows] = the sum of each row", {"rows", "cols"},
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].sum(1)}; },
       [](const Size& s) { return std::vector<std::vector<long long>>{{var(s, "rows"), var(s, "cols")}}; }},
      {"softmax_rows", "x[rows, cols] -> y[rows, cols] = softmax of each row", {"rows", "cols"},
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{torch::softmax(in[0], 1)}; },
       [](const Size& s) { return std::vector<std::vector<long long>>{{var(s, "rows"), var(s, "cols")}}; }},
      {"layernorm_rows", "x[rows, cols], gamma[cols], beta[cols] -> y[rows, cols], eps 1e-5, biased variance",
       {"rows", "cols"},
       [](const Size& s, const std::vector<Tensor>& in) {
         return std::vector<Tensor>{torch::layer_norm(in[0], {var(s, "cols")}, in[1], in[2], 1e-5)};
       },
       [](const Size& s) {
         return std::vector<std::vector<long long>>{{var(s, "rows"), var(s, "cols")}, {var(s, "cols")}, {var(s, "cols")}};
       }},
      {"rmsnorm_rows", "x[rows, cols], w[cols] -> y = x / sqrt(mean(x^2) + 1e-6) * w, per row", {"rows", "cols"},
       [](const Size&, const std::vector<Tensor>& in) {
         return std::vector<Tensor>{in[0] * torch::rsqrt(in[0].pow(2).mean(1, true) + 1e-6) * in[1]};
       },
       [](const Size& s) {
         return std::vector<std::vector<long long>>{{var(s, "rows"), var(s, "cols")}, {var(s, "cols")}};
       }},
      {"matmul", "a[m, k], b[k, n] -> c[m, n] = a b", {"m", "n", "k"},
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{torch::matmul(in[0], in[1])}; },
       [](const Size& s) {
         return std::vector<std::vector<long long>>{{var(s, "m"), var(s, "k")}, {var(s, "k"), var(s, "n")}};
       }},
      {"matmul_bf16", "a[m, k], b[k, n] -> c[m, n] = a b, bfloat16 buffers (the reference exact from their values)",
       {"m", "n", "k"},
       [](const Size&, const std::vector<Tensor>& in) { return std::vector<Tensor>{torch::matmul(in[0], in[1])}; },
       [](const Size& s) {
         return std::vector<std::vector<long long>>{{var(s, "m"), var(s, "k")}, {var(s, "k"), var(s, "n")}};
       },
       nullptr, torch::kBFloat16},
      {"conv2d_3x3", "x[cin, h, w], w[cout, cin, 3, 3] -> y[cout, h, w], stride 1, zero padding 1 (a correlation)",
       {"cin", "cout", "h", "w"},
       [](const Size&, const std::vector<Tensor>& in) {
         return std::vector<Tensor>{torch::conv2d(in[0].unsqueeze(0), in[1], {}, 1, 1).squeeze(0)};
       },
       [](const Size& s) {
         return std::vector<std::vector<long long>>{{var(s, "cin"), var(s, "h"), var(s, "w")},
                                                    {var(s, "cout"), var(s, "cin"), 3, 3}};
       }},
  };
  return t;
}

const Op& find(const std::string& name) {
  for (const Op& op : table())
    if (name == op.name) return op;
  throw std::invalid_argument("no reference op '" + name + "'");
}

void check_size(const Op& op, const Size& size) {
  for (const char* v : op.size_vars)
    if (!size.count(v)) throw std::invalid_argument(std::string(op.name) + ": the size has no variable '" + v + "'");
}

// TF32 off while it lives, as it was afterwards: a single-precision yardstick in single
// precision (cuDNN's convolutions allow TF32 unless told).
class NoTF32 {
 public:
  NoTF32() : cublas_(at::globalContext().allowTF32CuBLAS()), cudnn_(at::globalContext().allowTF32CuDNN()) {
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
  }
  ~NoTF32() {
    at::globalContext().setAllowTF32CuBLAS(cublas_);
    at::globalContext().setAllowTF32CuDNN(cudnn_);
  }

 private:
  bool cublas_, cudnn_;
};

}  // namespace

std::vector<std::string> ops() {
  std::vector<std::string> out;
  for (const Op& op : table()) out.push_back(std::string(op.name) + ": " + op.contract);
  return out;
}

Buffers compute(const std::string& name, const Size& size, const Buffers& inputs) {
  const Op& op = find(name);
  check_size(op, size);
  const auto shapes = op.input_shapes(size);
  if (inputs.size() != shapes.size())
    throw std::invalid_argument(name + ": takes " + std::to_string(shapes.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  torch::NoGradGuard no_grad;
  std::vector<Tensor> in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    long long count = 1;
    for (long long d : shapes[i]) count *= d;
    if (static_cast<long long>(inputs[i].size()) != count)
      throw std::invalid_argument(name + ": input " + std::to_string(i + 1) + " has " +
                                  std::to_string(inputs[i].size()) + " values, the size asks " + std::to_string(count));
    std::vector<int64_t> shape(shapes[i].begin(), shapes[i].end());
    in.push_back(torch::from_blob(const_cast<double*>(inputs[i].data()), shape, torch::kFloat64).clone());
  }
  Buffers out;
  for (const Tensor& t : op.fn(size, in)) {
    Tensor c = t.contiguous().to(torch::kFloat64);
    out.emplace_back(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  }
  return out;
}

Timing time_op(const std::string& name, const Size& size, int warmup, int calls) {
  const Op& op = find(name);
  check_size(op, size);
  if (warmup < 0 || calls < 1)
    throw std::invalid_argument(name + ": warmup must be at least 0 and calls at least 1");
  if (!torch::cuda::is_available())
    throw std::runtime_error("this libtorch sees no CUDA device (torch::cuda::is_available() is false)");
  torch::NoGradGuard no_grad;
  NoTF32 ieee;
  const auto& run = op.fused ? op.fused : op.fn;
  const auto shapes = op.input_shapes(size);
  const auto on_gpu = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, 0);
  auto fresh = [&] {
    std::vector<Tensor> in;
    for (const auto& s : shapes)
      in.push_back((torch::rand(std::vector<int64_t>(s.begin(), s.end()), on_gpu) * 2 - 1).to(op.dtype));
    return in;
  };
  std::vector<Tensor> first = fresh();  // libtorch holds the device before the clock's driver calls
  cuda::EventClock clock;
  Timing t;
  t.library = std::string("libtorch ") + TORCH_VERSION;
  for (int call = 0; call < warmup + calls; ++call) {
    std::vector<Tensor> in = call == 0 ? std::move(first) : fresh();
    clock.start();
    std::vector<Tensor> out = run(size, in);
    const cuda::EventClock::Reading r = clock.stop();
    if (call >= warmup) {
      t.times_ms.push_back(r.events_ms);
      t.wall_ms.push_back(r.wall_ms);
    }
  }
  return t;
}

}  // namespace cudaref
