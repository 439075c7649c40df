"""The GRPO step of perf/train in plain PyTorch, for the comparison in the same session:
a transformers Qwen2 model with random weights, LoRA written by hand (r, alpha = 2r,
dropout 0.1 on q, k, v, o, gate, up, down), gradient checkpointing, AdamW, micro-batches.

    python3 grpo_step_bench.py CONFIG.json [completions tokens prompt micro r steps]
"""
import json
import math
import sys
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

cfg_path = sys.argv[1]
G, T, P, MICRO, R, STEPS = [int(x) for x in (sys.argv[2:8] + ["64", "1024", "128", "4", "32", "2"][len(sys.argv[2:8]):])]
with open(cfg_path) as f:
    cfg = Qwen2Config(**json.load(f))
torch.manual_seed(1)
with torch.device("cuda"):
    model = Qwen2ForCausalLM(cfg).to(torch.bfloat16)
model.requires_grad_(False)


class LoRA(torch.nn.Module):
    def __init__(self, base, r, alpha, dropout):
        super().__init__()
        self.base = base
        self.A = torch.nn.Parameter(torch.empty(r, base.in_features, device="cuda", dtype=torch.bfloat16).uniform_(-1 / math.sqrt(base.in_features), 1 / math.sqrt(base.in_features)))
        self.B = torch.nn.Parameter(torch.zeros(base.out_features, r, device="cuda", dtype=torch.bfloat16))
        self.scale = alpha / r
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x):
        return self.base(x) + (self.dropout(x) @ self.A.t() @ self.B.t()) * self.scale


targets = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
params = []
for layer in model.model.layers:
    for parent in (layer.self_attn, layer.mlp):
        for name in targets:
            if hasattr(parent, name):
                lora = LoRA(getattr(parent, name), R, 2 * R, 0.1)
                setattr(parent, name, lora)
                params += [lora.A, lora.B]
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
model.enable_input_require_grads()
model.train()
opt = torch.optim.AdamW(params, lr=5e-7)

gen = torch.Generator().manual_seed(7)
prompt = torch.randint(0, cfg.vocab_size, (P,), generator=gen)
completions = torch.randint(0, cfg.vocab_size, (G, T), generator=gen)
ids = torch.cat([prompt.expand(G, P), completions], 1).cuda()
old = torch.full((G, T), -math.log(cfg.vocab_size), device="cuda")
rewards = torch.tensor([float(i % 8) for i in range(G)], device="cuda")
adv = (rewards - rewards.mean()) / (rewards.std() + 1e-4)


def step():
    t0 = time.time()
    for i in range(0, G, MICRO):
        x = ids[i:i + MICRO]
        hidden = model.model(input_ids=x).last_hidden_state[:, P - 1:-1]
        logp = torch.log_softmax(model.lm_head(hidden).float(), -1).gather(-1, x[:, P:].unsqueeze(-1)).squeeze(-1)
        ratio = torch.exp(logp - old[i:i + MICRO])
        a = adv[i:i + MICRO].unsqueeze(-1)
        per_token = -torch.min(ratio * a, torch.clamp(ratio, 0.8, 1.2) * a)
        loss = per_token.mean(-1).sum() / G
        loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    opt.zero_grad()
    torch.cuda.synchronize()
    return time.time() - t0


seconds = [step() for _ in range(STEPS)]
best = min(seconds)
print(json.dumps({"impl": "pytorch", "config": cfg_path, "completions": G, "tokens": T, "prompt": P,
                  "micro_batch": MICRO, "lora_r": R, "step_seconds": seconds, "best_seconds": best,
                  "tokens_per_second": G * (T + P) / best,
                  "peak_gib": torch.cuda.max_memory_allocated() / 2**30, "torch": torch.__version__}))
