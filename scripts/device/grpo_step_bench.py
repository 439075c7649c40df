"""The GRPO step of perf/train in PyTorch, for the comparison in the same session: a
transformers Qwen2 model with random weights, LoRA (r, alpha = 2r, dropout 0.1 on q, k, v,
o, gate, up, down), AdamW, micro-batches of one group of completions after one prompt.

    python3 grpo_step_bench.py CONFIG.json [--completions 64 --tokens 1024 --prompt 128
        --micro 8 --lora_r 32 --steps 2] [--tuned] [--checkpoint all|none|N]

Plain (the default): LoRA written by hand, transformers' default attention, the whole
logits then log_softmax, every layer recomputed (non-reentrant checkpointing). --tuned is what a careful PyTorch user writes:
LoRA through peft (adapters kept in bf16), SDPA attention (flash on an H100), the
log-probabilities taken in chunks of 1,024 positions under checkpointing so the [rows,
vocabulary] logits are never all held, and --checkpoint choosing which layers recompute
(N: the first N), so that memory freed by the chunks buys back recomputation.
"""
import argparse
import json
import math
import time

import torch
import torch.utils.checkpoint
from transformers import Qwen2Config, Qwen2ForCausalLM

ap = argparse.ArgumentParser()
ap.add_argument("config")
ap.add_argument("--completions", type=int, default=64)
ap.add_argument("--tokens", type=int, default=1024)
ap.add_argument("--prompt", type=int, default=128)
ap.add_argument("--micro", type=int, default=8)
ap.add_argument("--lora_r", type=int, default=32)
ap.add_argument("--steps", type=int, default=2)
ap.add_argument("--tuned", action="store_true")
ap.add_argument("--checkpoint", default="all")
args = ap.parse_args()
G, T, P, MICRO, R = args.completions, args.tokens, args.prompt, args.micro, args.lora_r
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
CHUNK = 1024

with open(args.config) as f:
    cfg = Qwen2Config(**json.load(f))
if args.tuned:
    cfg._attn_implementation = "sdpa"
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


if args.tuned:
    from peft import LoraConfig, get_peft_model
    model = get_peft_model(model, LoraConfig(r=R, lora_alpha=2 * R, lora_dropout=0.1, target_modules=TARGETS),
                           autocast_adapter_dtype=False)
    params = [p for p in model.parameters() if p.requires_grad]
    inner = model.base_model.model
else:
    params = []
    for layer in model.model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for name in TARGETS:
                if hasattr(parent, name):
                    lora = LoRA(getattr(parent, name), R, 2 * R, 0.1)
                    setattr(parent, name, lora)
                    params += [lora.A, lora.B]
    inner = model

layers = inner.model.layers
recomputed = {"all": len(layers), "none": 0}.get(args.checkpoint)
if recomputed is None:
    recomputed = int(args.checkpoint)
if recomputed > 0:
    inner.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    inner.enable_input_require_grads()
    for i, layer in enumerate(layers):
        layer.gradient_checkpointing = i < recomputed
model.train()
opt = torch.optim.AdamW(params, lr=5e-7)

gen = torch.Generator().manual_seed(7)
prompt = torch.randint(0, cfg.vocab_size, (P,), generator=gen)
completions = torch.randint(0, cfg.vocab_size, (G, T), generator=gen)
ids = torch.cat([prompt.expand(G, P), completions], 1).cuda()
old = torch.full((G, T), -math.log(cfg.vocab_size), device="cuda")
rewards = torch.tensor([float(i % 8) for i in range(G)], device="cuda")
adv = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
head = inner.lm_head


def chosen_logprobs(h, targets):
    return torch.log_softmax(head(h).float(), -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def logprobs(hidden, targets):
    if not args.tuned:
        return chosen_logprobs(hidden, targets)
    h, t = hidden.reshape(-1, hidden.size(-1)), targets.reshape(-1)
    parts = [torch.utils.checkpoint.checkpoint(chosen_logprobs, h[i:i + CHUNK], t[i:i + CHUNK], use_reentrant=False)
             for i in range(0, h.size(0), CHUNK)]
    return torch.cat(parts).view(targets.shape)


def step():
    t0 = time.time()
    for i in range(0, G, MICRO):
        x = ids[i:i + MICRO]
        hidden = inner.model(input_ids=x).last_hidden_state[:, P - 1:-1]
        logp = logprobs(hidden, x[:, P:])
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


seconds = [step() for _ in range(args.steps)]
best = min(seconds)
print(json.dumps({"impl": "pytorch-tuned" if args.tuned else "pytorch", "config": args.config,
                  "completions": G, "tokens": T, "prompt": P, "micro_batch": MICRO, "lora_r": R,
                  "recomputed_layers": sum(bool(getattr(l, "gradient_checkpointing", False)) for l in layers),
                  "attention": inner.config._attn_implementation,
                  "step_seconds": seconds, "best_seconds": best, "tokens_per_second": G * (T + P) / best,
                  "peak_gib": torch.cuda.max_memory_allocated() / 2**30, "torch": torch.__version__}))
