// One rank of the data-parallel tests: the training fixture's model, a fixed GRPO batch
// (two prompts, four completions each, micro-batches of two), two steps; then each step's
// loss and the trained model's log-probabilities of every completion, one per line.
//
//   dist_rank MODEL OUT RANK SIZE STORE [lora] [stop] [cuda] [nccl]
//
// SIZE 0 joins no group: the single trainer the ranks are compared with. With "stop" the
// rank exits after joining, before its first step, as a killed rank would. With "cuda"
// the replica lives on the GPU (its gradients cross ranks through host memory, or on the
// device with "nccl", which also forms a group of one).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "dist/group.hpp"
#include "policy/policy.hpp"
#include "train/trainer.hpp"

static std::vector<train::Group> fixed_batch(policy::Policy& pol) {
  const std::vector<std::vector<int>> prompts = {{5, 9, 14}, {20, 3}};
  const std::vector<double> rewards = {1.0, 0.0, 2.0, 0.5};
  std::vector<train::Group> groups;
  for (size_t g = 0; g < prompts.size(); ++g) {
    train::Group group{prompts[g], {}, rewards};
    for (int c = 0; c < 4; ++c) {
      policy::Completion comp;
      for (int t = 0; t < 3 + c; ++t) comp.tokens.push_back(3 + (7 * static_cast<int>(g) + 5 * c + 11 * t) % 90);
      comp.logprobs = pol.logprobs(prompts[g], comp.tokens);
      comp.finish_reason = "stop";
      group.completions.push_back(comp);
    }
    groups.push_back(group);
  }
  return groups;
}

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: dist_rank MODEL OUT RANK SIZE STORE [lora] [stop] [cuda] [nccl]\n");
    return 2;
  }
  try {
    const std::string model = argv[1], out = argv[2], store = argv[5];
    const int rank = std::atoi(argv[3]), size = std::atoi(argv[4]);
    bool lora = false, stop = false;
    dist::Rendezvous rv{rank, size, store, 20.0};
    policy::LoadOptions lo;
    for (int i = 6; i < argc; ++i) {
      lora = lora || std::string(argv[i]) == "lora";
      stop = stop || std::string(argv[i]) == "stop";
      if (std::string(argv[i]) == "cuda") lo.device = "cuda";
      if (std::string(argv[i]) == "nccl") rv.backend = "nccl";
    }
    auto pol = std::shared_ptr<policy::Policy>(policy::Policy::load(model, lo));
    train::GrpoOptions o;
    o.lr = 1e-2;
    o.micro_batch = 2;
    o.seed = 7;
    if (lora) o.lora = train::LoraSettings{4, 8, 0.0, {"q_proj", "v_proj", "down_proj"}};
    auto trainer = train::Trainer::grpo(pol, o);
    if (size > 0) trainer->join(dist::Group::join(rv));
    if (stop) std::_Exit(3);
    auto groups = fixed_batch(*pol);
    FILE* f = std::fopen(out.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + out);
    for (int step = 0; step < 2; ++step) std::fprintf(f, "%.12g\n", trainer->step(groups).loss);
    for (const auto& g : groups)
      for (const auto& c : g.completions)
        for (float lp : pol->logprobs(g.prompt, c.tokens)) std::fprintf(f, "%.9g\n", lp);
    std::fclose(f);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_rank: %s\n", e.what());
    return 1;
  }
}
